"""Timing helpers shared by every operator's benchmark (``amct_ops.<pkg>.bench``).

Benchmarks are scripts, run by ``python -m amct_ops bench <pkg>``; they are never part of the
test suite. What this module gives them:

* :class:`Timer` -- a ``time.perf_counter`` stopwatch (context manager);
* :func:`measure` / :func:`measure_many` -- warm-up, then repeated samples; a sample is one
  ``timeit`` of the callable (garbage collection off), run enough times to last at least
  ``min_sample_s`` (so microsecond calls are not lost in timer noise), and records the time
  per call. :func:`measure_many` interleaves the callables
  round-robin, so that the ratios between them come from the same stretch of machine time;
* :class:`Stats` -- median / min / mean of the per-call samples;
* :class:`Bar` and :func:`measure_bars` -- a bar (a target ratio of one callable's time to a
  baseline's) measured in ``runs`` back-to-back runs, each its own :func:`measure_many`; the
  per-run ratios are reported as min / median / max and the bar is judged on the median
  (:func:`bar_record`, :func:`bar_table`);
* throughput helpers (Melem/s, GB/s with 1 GB = 1e9 bytes) and formatting;
* size and dtype parsing for ``--sizes 1K,64K,16M`` and ``--dtypes fp16,bf16``;
* :func:`machine_facts` -- CPU model, nproc, torch threads, versions (no host name);
* :func:`markdown_table` -- a table that can be pasted into a README.
"""
import math
import os
import platform
import re
import statistics
import time
import timeit

__all__ = [
    "Bar",
    "Stats",
    "Timer",
    "bar_record",
    "bar_table",
    "busy_warning",
    "format_bytes",
    "format_count",
    "format_float",
    "format_size",
    "load_average",
    "machine_facts",
    "markdown_table",
    "measure",
    "measure_bars",
    "measure_many",
    "parse_dtypes",
    "parse_sizes",
    "throughput",
]


class Timer:
    """Stopwatch: ``with Timer() as t: ...; t.elapsed`` (seconds, ``time.perf_counter``).

    ``sync`` (optional) is called before starting and before stopping, e.g.
    ``torch.npu.synchronize`` so that asynchronous device work is inside the interval.
    """

    def __init__(self, sync=None):
        self.sync = sync
        self.start = None
        self.elapsed = None

    def __enter__(self):
        if self.sync is not None:
            self.sync()
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.sync is not None:
            self.sync()
        self.elapsed = time.perf_counter() - self.start
        return False


class Stats:
    """Per-call times (seconds) of one measured callable."""

    def __init__(self, samples, inner=1):
        if not samples:
            raise ValueError("Stats needs at least one sample")
        self.samples = list(samples)
        self.inner = int(inner)

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def min(self):
        return min(self.samples)

    @property
    def mean(self):
        return statistics.fmean(self.samples)

    @property
    def median_ms(self):
        return self.median * 1e3

    def as_dict(self):
        return {
            "median_s": self.median,
            "min_s": self.min,
            "mean_s": self.mean,
            "samples": len(self.samples),
            "calls_per_sample": self.inner,
        }

    def __repr__(self):
        return f"Stats(median={self.median * 1e3:.4f} ms, min={self.min * 1e3:.4f} ms, n={len(self.samples)})"


def _benchmark_timer(fn, sync):
    """A ``timeit.Timer`` of ``fn()`` (garbage collection off while it runs); with ``sync``, the
    clock waits for the device before each reading.

    Not ``torch.utils.benchmark.Timer``: its ``timeit(n)`` first makes max(n // 100, 2) untimed
    calls, which triples the cost of every sample of a call lasting seconds (reference.py at
    16M, svd_quant at its bar shape); the warm-up here is ``measure_many``'s, once per
    measurement. The torch thread count is the caller's, as set by the benchmark.
    """
    clock = time.perf_counter
    if sync is not None:
        def clock():
            sync()
            return time.perf_counter()
    return timeit.Timer(stmt=fn, timer=clock)


def _sample(timer, inner):
    """Seconds per call of one sample of ``inner`` back-to-back calls."""
    return timer.timeit(inner) / inner


def _calibrate(timer, min_sample_s, max_inner):
    """Calls per sample so that one sample lasts at least ``min_sample_s`` (0: one call, no
    calibration call). Judged by the fastest of three single calls: a call right after another
    callable's large one runs with cold caches, and sizing every sample by it would keep each
    sample mostly cold."""
    if min_sample_s <= 0:
        return 1
    once = min(_sample(timer, 1) for _ in range(3))
    if once >= min_sample_s:
        return 1
    inner = int(math.ceil(min_sample_s / max(once, 1e-9)))
    return max(1, min(inner, max_inner))


def measure(fn, repeat=10, warmup=2, min_sample_s=0.002, sync=None, max_inner=10000):
    """Time ``fn()``: ``warmup`` discarded calls, then ``repeat`` samples -> :class:`Stats`."""
    return measure_many({"fn": fn}, repeat, warmup, min_sample_s, sync, max_inner)["fn"]


def measure_many(fns, repeat=10, warmup=2, min_sample_s=0.002, sync=None, max_inner=10000):
    """Time several callables (``{name: fn}``) with their samples interleaved round-robin.

    Returns ``{name: Stats}``. Interleaving spreads slow drifts of the machine (frequency,
    other load) over all callables evenly, which keeps the ratios between them honest.
    """
    repeat = max(1, int(repeat))
    for _ in range(max(0, int(warmup))):
        for fn in fns.values():
            fn()
    if sync is not None:
        sync()
    timers = {name: _benchmark_timer(fn, sync) for name, fn in fns.items()}
    inner = {name: _calibrate(timer, min_sample_s, max_inner) for name, timer in timers.items()}
    samples = {name: [] for name in fns}
    for _ in range(repeat):
        for name, timer in timers.items():
            samples[name].append(_sample(timer, inner[name]))
    return {name: Stats(samples[name], inner[name]) for name in fns}


class Bar:
    """A target of one callable against a baseline callable, both measured in the same run.

    ``kind`` "faster": the bar holds when baseline time / ours >= ``target``; "within": when
    ours / baseline time <= ``target``. ``baseline`` names the baseline for readers (e.g.
    "torch y8.to(torch.bfloat16)"); ``headline``, an operator name, makes the bar that
    operator's figure in the README's summary table.
    """

    def __init__(self, label, ours, base, kind, target, baseline, headline=None):
        if kind not in ("faster", "within"):
            raise ValueError(f"bar kind must be 'faster' or 'within', got {kind!r}")
        self.label, self.ours, self.base, self.kind = label, ours, base, kind
        self.target, self.baseline, self.headline = float(target), baseline, headline

    def ratio(self, times):
        """The bar's ratio from ``{callable name: seconds}``."""
        ours, base = times[self.ours], times[self.base]
        return base / ours if self.kind == "faster" else ours / base

    def met(self, ratio):
        return ratio >= self.target if self.kind == "faster" else ratio <= self.target

    def describe(self):
        return (">= " if self.kind == "faster" else "<= ") + f"{self.target:g}x"


def measure_bars(groups, runs, repeat=10, warmup=2, min_sample_s=0.002, sync=None):
    """Per-run ratios of every bar: ``{label: [ratio of run 1, ...]}``.

    ``groups``: ``[(fns, bars), ...]`` or ``[(fns, bars, options), ...]`` where ``fns``
    (``{name: callable}``) holds the callables of ``bars`` (same inputs) and ``options``
    overrides ``repeat`` / ``warmup`` / ``min_sample_s`` for that group, and ``runs`` caps its
    runs (e.g. fewer runs and samples of a call lasting seconds). Each run measures every group
    in turn with :func:`measure_many` (its samples interleaved) and takes each bar's ratio of the
    medians, so the spread over the runs is the run-to-run noise of the same measurement.
    """
    ratios = {bar.label: [] for fns, bars, *_ in groups for bar in bars}
    defaults = {"repeat": repeat, "warmup": warmup, "min_sample_s": min_sample_s}
    for run in range(max(1, int(runs))):
        for fns, bars, *options in groups:
            opts = dict(defaults, **(options[0] if options else {}))
            if run >= opts.pop("runs", runs):
                continue
            stats = measure_many(fns, sync=sync, **opts)
            times = {name: st.median for name, st in stats.items()}
            for bar in bars:
                ratios[bar.label].append(bar.ratio(times))
    return ratios


def faults_per_call(fns, calls=5):
    """Minor page faults and seconds per call of each callable: ``{name: (faults, seconds)}``, the
    medians over ``calls`` calls of each, interleaved, after one untimed call each (Linux: the
    process's ``ru_minflt``; ``None`` where ``resource`` is missing). A fresh output that faults
    on its first write costs a fault per page, one that reuses freed memory none."""
    try:
        import resource
    except ImportError:
        return None
    for fn in fns.values():
        fn()
    faults = {name: [] for name in fns}
    times = {name: [] for name in fns}
    for _ in range(calls):
        for name, fn in fns.items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
            faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return {name: (int(statistics.median(faults[name])), statistics.median(times[name])) for name in fns}


def bar_record(package, bar, threads, ratios):
    """One measured bar as a JSON-serialisable dict (min / median / max over the runs)."""
    ordered = sorted(ratios)
    median = statistics.median(ordered)
    return {"package": package, "label": bar.label, "kind": bar.kind, "target": bar.target,
            "baseline": bar.baseline, "headline": bar.headline, "threads": threads,
            "ratios": list(ratios), "min": ordered[0], "median": median, "max": ordered[-1],
            "met": bar.met(median)}


def bar_table(records, title):
    """A table of bar records: one row per bar, min / median / max and the verdict per thread count."""
    threads = sorted({r["threads"] for r in records}, reverse=True)
    by = {(r["label"], r["threads"]): r for r in records}
    labels = list(dict.fromkeys(r["label"] for r in records))
    runs = max((len(r["ratios"]) for r in records), default=0)
    rows = []
    for label in labels:
        first = next(r for r in records if r["label"] == label)
        row = [label, (">= " if first["kind"] == "faster" else "<= ") + f"{first['target']:g}x"]
        for n in threads:
            r = by.get((label, n))
            row += ([f"{r['min']:.2f}x / {r['median']:.2f}x / {r['max']:.2f}x", "met" if r["met"] else "NOT met"]
                    if r else ["n/a", "n/a"])
        rows.append(row)
    columns = ["bar", "target"]
    for n in threads:
        columns += [f"{n} thread(s): min / median / max over {runs} runs", "median"]
    return {"title": title, "columns": columns, "rows": rows}


def throughput(elements, nbytes, seconds):
    """(Melem/s, GB/s) for ``elements`` processed and ``nbytes`` moved in ``seconds``."""
    if seconds <= 0:
        return float("inf"), float("inf")
    return elements / seconds / 1e6, nbytes / seconds / 1e9


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*$")
_SIZE_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_sizes(values):
    """``["1K,4K", "16M", "1000"]`` -> ``[1024, 4096, 16777216, 1000]`` (K/M/G are powers of 1024)."""
    sizes = []
    for value in values if isinstance(values, (list, tuple)) else [values]:
        for part in str(value).split(","):
            if not part.strip():
                continue
            m = _SIZE_RE.match(part)
            if not m:
                raise ValueError(
                    f"invalid size {part!r}: expected an integer with an optional K, M or G suffix")
            n = float(m.group(1)) * _SIZE_MULT[m.group(2).lower()]
            if n != int(n) or n < 0:
                raise ValueError(f"invalid size {part!r}: not a whole number of elements")
            sizes.append(int(n))
    if not sizes:
        raise ValueError("no sizes given")
    return sizes


def format_size(n):
    """1024 -> '1K', 16777216 -> '16M', 1000 -> '1000'."""
    for suffix, mult in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult}{suffix}"
    return str(n)


_DTYPE_ALIASES = {
    "fp16": "float16", "float16": "float16", "half": "float16", "f16": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp32": "float32", "float32": "float32", "float": "float32", "f32": "float32",
}


def parse_dtypes(values, allowed=None):
    """``["fp16,bf16"]`` -> ``[torch.float16, torch.bfloat16]``; ``allowed`` limits the choice."""
    import torch

    dtypes = []
    for value in values if isinstance(values, (list, tuple)) else [values]:
        for part in str(value).split(","):
            part = part.strip().lower()
            if not part:
                continue
            if part.startswith("torch."):
                part = part[len("torch."):]
            name = _DTYPE_ALIASES.get(part)
            if name is None:
                raise ValueError(f"unknown dtype {part!r}: expected one of fp16, bf16, fp32")
            dtype = getattr(torch, name)
            if allowed is not None and dtype not in allowed:
                names = ", ".join(str(d).replace("torch.", "") for d in allowed)
                raise ValueError(f"dtype {name} is not benchmarked here: expected one of {names}")
            if dtype not in dtypes:
                dtypes.append(dtype)
    if not dtypes:
        raise ValueError("no dtypes given")
    return dtypes


def format_float(value, digits=3):
    """Fixed significant-looking formatting for table cells: 0.0123, 1.23, 123, 12345."""
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf"
    a = abs(value)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{value:.0f}"
    if a >= 100:
        return f"{value:.1f}"
    if a >= 1:
        return f"{value:.{max(0, digits - 1)}f}"
    return f"{value:.{digits + 1}f}"


def format_count(n):
    return f"{n:,}"


def format_bytes(n):
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult:
            return f"{n / mult:.1f} {unit}"
    return f"{n} B"


def markdown_table(columns, rows):
    """A GitHub-markdown table; numbers are formatted with :func:`format_float`."""
    cells = [[format_float(c) if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [len(str(c)) for c in columns]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    def is_number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    numeric = [bool(rows) and all(is_number(row[i]) for row in rows) for i in range(len(columns))]

    def line(values, header=False):
        out = []
        for i, v in enumerate(values):
            out.append(v.rjust(widths[i]) if numeric[i] and not header else v.ljust(widths[i]))
        return "| " + " | ".join(out) + " |"

    rules = [("-" * (w + 1) + ":") if numeric[i] else ("-" * (w + 2)) for i, w in enumerate(widths)]
    sep = "|" + "|".join(rules) + "|"
    return "\n".join([line([str(c) for c in columns], header=True), sep] + [line(r) for r in cells])


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Processor"):
                    if value.strip():
                        return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


# cpuinfo flags that decide which code runs: the native kernels' copies (avx2, avx512f) and
# torch's own reduced-precision GEMMs (avx512_bf16, amx_bf16), the baseline of some bars.
_SIMD_FLAGS = ("avx2", "avx512f", "avx512bw", "avx512_bf16", "amx_bf16")


def _cpu_flags():
    """The _SIMD_FLAGS this CPU reports in /proc/cpuinfo (empty where it does not tell)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    present = set(value.split())
                    return [flag for flag in _SIMD_FLAGS if flag in present]
    except OSError:
        pass
    return []


def simd_facts():
    """Which copy of the native CPU kernels runs (``_cpu_capability``: the active one, lowered by
    AMCT_CPU_CAPABILITY, and the best this CPU supports), or None before amct_ops is loaded."""
    import torch

    try:
        active, detected = torch.ops.amct._cpu_capability()
    except (AttributeError, RuntimeError):
        return None
    return {"active": active, "detected": detected, "cpu_flags": _cpu_flags()}


def simd_text(simd):
    """``simd_facts()`` as words for a page's machine line."""
    names = {"avx512": "AVX-512", "avx2": "AVX2", "default": "portable"}
    active, detected = simd["active"], simd["detected"]
    text = f"native CPU kernels ran their {names.get(active, active)} copy"
    if active != detected:
        text += f" (forced; this CPU supports {names.get(detected, detected)})"
    flags = simd.get("cpu_flags")
    return text + (f"; cpu flags {' '.join(flags)}" if flags else "; cpu flags unknown")


def load_average():
    """The 1-minute load average, or None where the OS does not tell."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _busy_cpu_seconds():
    """CPU-seconds all CPUs have spent busy since boot (``/proc/stat``), or None off Linux."""
    try:
        with open("/proc/stat", encoding="utf-8") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 8:
        return None
    # user nice system idle iowait irq softirq [steal ...]: everything but idle and iowait is busy.
    ticks = [int(v) for v in fields[1:]]
    busy = sum(ticks[:3]) + sum(ticks[5:8])
    return busy / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds():
    t = os.times()
    return t.user + t.system


def other_work_load(window_s=1.0):
    """CPUs kept busy by *other* processes over the next ``window_s`` seconds, or None off Linux.

    The load average cannot tell other work from ours: right after one package of ``bench --all``
    it still counts that package's two torch threads. This samples the busy time of all CPUs
    and subtracts this process's own CPU time over the same window.
    """
    before, own_before = _busy_cpu_seconds(), _own_cpu_seconds()
    if before is None:
        return None
    time.sleep(window_s)
    after, own_after = _busy_cpu_seconds(), _own_cpu_seconds()
    other = (after - before) - (own_after - own_before)
    return round(max(other, 0.0) / window_s, 2)


def busy_warning(facts):
    """A warning line when other work kept >= half the CPUs busy as the benchmark started, else ''.

    ``facts``: a benchmark's machine facts. It is judged by their ``other_load_before``
    (``other_work_load()``'s measure), not by the load average, which counts the benchmark's own
    threads too.
    """
    load, nproc = facts.get("other_load_before"), facts.get("nproc")
    if load is None or not nproc or load < 0.5 * nproc:
        return ""
    return (f"warning: other work kept {load} of {nproc} CPUs busy as the benchmark started; work "
            f"competing with torch's worker threads makes the numbers noisy.")


def load_averages():
    """The 1-, 5- and 15-minute load averages (what ``uptime`` prints), or None."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _sysfs_choice(path):
    """The bracketed choice of a sysfs setting such as ``always [madvise] never``, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"\[(\w[\w+]*)\]", text)
    return m.group(1) if m else text.strip() or None


def huge_page_facts():
    """Transparent huge pages: the ``enabled`` and ``defrag`` modes (Linux), else None.

    They decide how much a large fresh output costs: with "madvise", only memory advised
    MADV_HUGEPAGE (our fresh outputs of >= 8 MiB) is faulted in 2 MiB pages; the rest, torch's
    outputs included, in 4 KiB pages.
    """
    base = "/sys/kernel/mm/transparent_hugepage/"
    enabled = _sysfs_choice(base + "enabled")
    if enabled is None:
        return None
    return {"enabled": enabled, "defrag": _sysfs_choice(base + "defrag")}


def machine_facts():
    """Facts about this machine that explain the numbers (no host name)."""
    import torch

    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = os.cpu_count()
    return {
        "cpu_model": _cpu_model(),
        "machine": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        "nproc": affinity,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "load_average": load_average(),
        "load_averages": load_averages(),
        "transparent_hugepages": huge_page_facts(),
        "simd": simd_facts(),
    }


def dtype_label(dtype):
    """``torch.bfloat16`` -> ``"bfloat16"``."""
    return str(dtype).replace("torch.", "")


def index_results(results):
    """Measured result rows keyed by (dtype label, elements, kernel name)."""
    return {(r["dtype"], r["elements"], r["kernel"]): r for r in results if "time_s" in r}


def record(results, stats, stat, dtype, elements, bytes_of):
    """Append one result row per measured kernel of ``stats`` (name -> Stats) at ``elements``
    elements of ``dtype``; ``bytes_of(name)`` is the bytes the kernel moves per element."""
    for name, st in stats.items():
        nbytes = bytes_of(name) * elements
        seconds = getattr(st, stat)
        melem, gbs = throughput(elements, nbytes, seconds)
        results.append({"dtype": dtype_label(dtype), "elements": elements, "kernel": name, "bytes": nbytes,
                        "time_s": seconds, "stat": stat, "melem_per_s": melem, "gb_per_s": gbs, **st.as_dict()})


def throughput_cells(index, dtype, elements, kernels):
    """ms, Melem/s and GB/s of each kernel in turn ("n/a" where it was not measured)."""
    cells = []
    for k in kernels:
        r = index.get((dtype, elements, k))
        cells += [r["time_s"] * 1e3, r["melem_per_s"], r["gb_per_s"]] if r else ["n/a"] * 3
    return cells


def time_ratio(index, dtype, elements, ours, theirs):
    """How many times faster kernel ``ours`` ran than ``theirs`` (None if either is missing)."""
    a, b = index.get((dtype, elements, ours)), index.get((dtype, elements, theirs))
    if a is None or b is None:
        return None
    return b["time_s"] / a["time_s"]


def argparse_type(parse):
    """An argparse ``type=`` from a parser raising ValueError (reported as a usage error)."""
    import argparse

    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


# ----------------------------------------------------------------------------------------------
# NPU time estimates (``bench <pkg> --npu-estimate``): the kernel sim's cost model
# ----------------------------------------------------------------------------------------------
#
# A benchmark's ``npu_estimate(args)`` lists its cases as (label, callable) and returns
# :func:`npu_estimate_tables`. Each callable runs the op on the CPU once, with the kernel sim's
# platform set to the SOC's AIV cores and UB (so the host tiles as it would on the NPU) and the
# cost model on: every kernel launch of the call is estimated from its emulated instruction
# stream. These are estimates of cost model version N, never measurements.

NPU_SOCS = ("ascend910b", "ascend950")
ESTIMATE_PIPES = ("S", "V", "MTE2", "MTE3", "MTE1", "M", "FIX")  # MTE1/M/FIX: the cube (MIX kernels)


def npu_cost_table(soc):
    """The cost model's table for ``soc`` (every number with its source), as a dict."""
    import json

    import torch

    return json.loads(torch.ops.amct._sim_cost_table(soc))


def _build_arch_ub():
    import amct_ops

    info = dict(getattr(amct_ops, "build_info", lambda: {})())
    arch = info.get("npu_arch", "dav-2201")
    return arch, (253952 if arch == "dav-3510" else 196608)


def estimate_launches(fn, soc, sample_blocks=0, cost_only=False):
    """Runs ``fn()`` once with the cost model on for ``soc``: the list of launch records.

    cost_only: the Matmul API skips its arithmetic (outputs are garbage), for large cube shapes."""
    import json

    import torch

    from amct_ops import _sim

    table = npu_cost_table(soc)
    _arch, build_ub = _build_arch_ub()
    cores = int(table["aiv_cores"]["value"])
    # The SOC's UB where it is smaller than the build arch's; else no override, so that every
    # kernel (the dav-3510 ones of a dav-2201 build too) tiles with its own arch's usable UB.
    table_ub = int(table["ub_bytes"]["value"])
    ub = table_ub if table_ub < build_ub else 0
    with _sim.sim_platform(cores, ub):
        torch.ops.amct._sim_cost_begin(soc, int(sample_blocks), bool(cost_only))
        try:
            fn()
        finally:
            records = json.loads(torch.ops.amct._sim_cost_end())
    return records


def bound_pipe(record):
    busy = record["busy_cycles"]
    return max(busy, key=lambda p: busy[p])


def code_arch(record):
    """Which arch's instruction stream a launch ran (``dav-2201``), and whether it is the SOC's own.

    A kernel sim launch runs the code its library was compiled for (the build's arch, or dav-3510
    for the KERNEL_3510 kernels of a dav-2201 build: ``amct_ops.build_info()["sim_archs"]``),
    whatever cost table times it; a row timed with the 950's table but run as dav-2201 code is
    the dav-2201 kernel on 950 numbers, not the 950 kernel, and says so."""
    code, table = int(record["build_arch"]), int(record["table_arch"])
    label = f"dav-{code}"
    return label if code == table else f"{label}, not the SOC's dav-{table}"


def _sampled(record):
    """True when only some blocks ran (``--sample-blocks``). A MIX launch counts its AIC and AIV
    cores as blocks run (3 per block at 1:2) against blockDim AI cores, so more is all of them."""
    return record["blocks_run"] < record["block_dim"]


def _estimate_rows(label, records):
    rows = []
    for r in records:
        cycles = r["slowest_cycles"] or 1.0
        shares = [f"{100 * r['busy_cycles'][p] / cycles:.0f}%" for p in ESTIMATE_PIPES]
        sampled = f"{r['blocks_run']} of {r['block_dim']}" if _sampled(r) else "all"
        rows.append([label, r["kernel"], code_arch(r), r["block_dim"], sampled, r["estimate_us"], bound_pipe(r),
                     *shares])
    if len(records) > 1:
        total = sum(r["estimate_us"] for r in records)
        rows.append([label, f"all {len(records)} launches (serial)", "", "", "", total, ""]
                    + [""] * len(ESTIMATE_PIPES))
    if not records:
        rows.append([label, "no kernel launch", "", "", "", "n/a", ""] + [""] * len(ESTIMATE_PIPES))
    return rows


def estimate_bar(label, ours, base, target, soc):
    """A bar on two launch records of one ``--npu-estimate`` run: ours / base <= ``target``.

    The verdict is the cost model's (an estimate against an estimate), never a measurement."""
    ratio = ours["estimate_us"] / base["estimate_us"]
    return {"label": label, "soc": soc, "ours_us": ours["estimate_us"], "base_us": base["estimate_us"],
            "ours_code": code_arch(ours), "base_code": code_arch(base), "ours_bound": bound_pipe(ours),
            "base_bound": bound_pipe(base), "ratio": ratio, "target": float(target), "met": ratio <= target}


def npu_estimate_tables(cases, args, title, notes=(), sample_blocks=0, cost_only=False, needs_arithmetic=False):
    """Estimate every case (label, fn) on ``args.soc``: {"tables", "notes", "results"}.

    needs_arithmetic: the kernels' later work depends on the matmul outputs (a selection on
    scores), so ``--cost-only`` is ignored: garbage outputs would time another path of the kernel."""
    soc = args.soc
    table = npu_cost_table(soc)
    sample = args.sample_blocks if args.sample_blocks is not None else sample_blocks
    skip_arithmetic = not needs_arithmetic and (cost_only or bool(getattr(args, "cost_only", False)))
    rows, results = [], []
    for label, fn in cases:
        records = estimate_launches(fn, soc, sample, skip_arithmetic)
        rows += _estimate_rows(label, records)
        results += [{"case": label, **r} for r in records]
    cores, table_ub = int(table["aiv_cores"]["value"]), int(table["ub_bytes"]["value"])
    out_notes = [
        f"ESTIMATES of the kernel sim's NPU cost model version {table['model_version']} for {table['chip']} "
        "(never measurements: no NPU ran). Time = the slowest core's timeline plus "
        f"{table['launch_us']['value']:g} us launch; S/V/MTE2/MTE3 (vector core) and MTE1/M/FIX (cube) = each "
        "pipe's busy share of the slowest core's time (MIX kernels: the busiest core of each pipe); "
        "bound = the busiest pipe.",
        f"tiling as on the NPU: {cores} AIV cores; UB per core the smaller of the SOC's {table_ub} B and the code "
        "arch's usable UB (the sim platform during the estimate).",
        "code = the arch whose instruction stream ran (the kernel's library in the sim); a row run as another "
        f"arch's code than {table['soc']}'s dav-{table['arch']} says so: rebuild with --soc {table['soc']} "
        "for its own kernels.",
    ]
    if any(_sampled(r) for r in results):
        out_notes.append("'blocks emulated' k of n: only k blocks ran (the first, the last and evenly spaced ones); "
                         "the estimate is the slowest of them (the kernels split work evenly, the last block "
                         "takes the remainder).")
    common = len(out_notes)
    out_notes += list(notes)
    columns = ["case", "kernel", "code", "blockDim", "blocks emulated", "est. us", "bound", *ESTIMATE_PIPES]
    # common_notes: how many leading notes are the model's, the same for every package (the page of
    # ``bench --all --npu-estimate`` says them once).
    return {"tables": [{"title": title, "columns": columns, "rows": rows}], "notes": out_notes,
            "common_notes": common, "results": results, "bars": []}
