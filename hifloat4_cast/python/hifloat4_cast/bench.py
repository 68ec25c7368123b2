"""Benchmark of the hifloat4_cast operators: ``python -m amct_ops bench hifloat4_cast``.

For each dtype (fp16, bf16, fp32) and size (64K ... 16M elements, rows of 1024) it times, in the
same run and with the samples interleaved:

* ``hifloat4_fake_quant(x)``            dtype -> dtype                 2 x element size bytes
* ``hifloat4_pack(x)``                  dtype -> scale + value bytes   element size + 9/16 bytes
* ``hifloat4_unpack(scale, value, dt)`` bytes -> dtype                 9/16 + element size bytes
* the same three through ``reference.py`` (the pure-PyTorch executable spec) on the same input

Times are the median (or, with ``--stat min``, the minimum) per call over ``--repeat`` samples
after ``--warmup`` calls; GB/s counts input + output bytes (1 GB = 1e9 B). Ratios: the
reference's time / the op's time (> 1: the op is faster). The reference is pure PyTorch with
OpenMP threads, so its time moves a lot with the load of the machine; the notes print the load
average.

Then the bars (4M bfloat16 elements, rows of 1024; the out= bar at 16M, near the
memory limit, as the issue states it; 1K elements for latency), each
measured in ``--bar-runs`` (default: the common ``--runs``) back-to-back runs of interleaved
samples, reported as min / median / max over the runs of the per-run ratio (the bar holds for
the median), with torch's default threads and with 1 thread:

* fake-quant >= 20x reference.py, and at most 3x the time of ``x.clone()`` (same bytes written
  to a fresh tensor);
* pack and unpack >= 20x reference.py;
* ``hifloat4_fake_quant(x, out=buf)`` into a warm buffer at most 3x ``buf.copy_(x)``, at 16M
  bfloat16 (64 MB read and written: beyond this machine's caches, where the copy runs at memory
  speed; at 4M both tensors fit in a 32 MB L3 and the copy measures the cache instead);
* 1K-element calls (fake-quant, pack, unpack) within 1.5x of torch's cast latency,
  ``x.to(torch.float8_e4m3fn)`` of the same 1K bfloat16 tensor.

The 1K calls are a group of their own (own warm-up, calibration and interleaved samples, as in
the hifloat8_cast and svd_quant benchmarks): among the 4M calls, the 1K call timed right after
the reference's 4M pass ran cold (its first calls a few hundred microseconds slower), and the
calibration, one call long, then chose a dozen calls per sample, so that 1K row measured a cold
start instead of the per-call cost (the first 1K callable in the list read ~2x the cast, the
others ~0.8-1.2x).

The reference is slow at 16M elements (seconds per call): ``--no-reference-above N`` skips it
above N elements (default 16M: never skipped); ``--sizes 4M --dtypes bf16`` with ``--bar-runs``
gives the bars alone quickly.

This is a script, not a test: nothing here runs in the test suite.
"""
import torch

from amct_ops import _benchutil as bu
from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
from amct_ops.hifloat4_cast import reference as ref

DESCRIPTION = "fake-quant / pack / unpack throughput, fp16, bf16 and fp32, 64K..16M elements, vs reference.py"

DEFAULT_SIZES = "64K,256K,1M,4M,16M"
QUICK_SIZES = "64K,1M"
BAR_SIZE = 4 << 20
OUT_BAR_SIZE = 16 << 20  # the out= bar: "near the memory limit", like hifloat8_cast's and svd_quant's
BAR_RUNS = 5
SMALL = 1024
# "faster" bars need baseline / ours >= target, "within" bars ours / baseline <= target.
REF = "reference.py (pure PyTorch)"
CAST_1K = "torch x.to(torch.float8_e4m3fn), 1K bf16"
CLONE_BAR = "fake-quant vs x.clone()"
BIG_BARS = (
    bu.Bar("fake-quant vs reference.py", "fake_quant", "ref_fake_quant", "faster", 20.0, REF,
           headline="hifloat4_fake_quant"),
    bu.Bar("pack vs reference.py", "pack", "ref_pack", "faster", 20.0, REF, headline="hifloat4_pack"),
    bu.Bar("unpack vs reference.py", "unpack", "ref_unpack", "faster", 20.0, REF, headline="hifloat4_unpack"),
    bu.Bar(CLONE_BAR, "fake_quant", "clone", "within", 3.0, "torch x.clone()"),
)
OUT_BARS = (
    bu.Bar("16M fake-quant(x, out=buf) vs buf.copy_(x)", "fake_quant_out", "copy", "within", 3.0,
           "buf.copy_(x) into a warm buffer, 16M bf16"),
)
SMALL_BARS = (
    bu.Bar("1K fake-quant vs 1K x.to(float8_e4m3fn)", "small_fake_quant", "small_cast", "within", 1.5, CAST_1K),
    bu.Bar("1K pack vs 1K x.to(float8_e4m3fn)", "small_pack", "small_cast", "within", 1.5, CAST_1K),
    bu.Bar("1K unpack vs 1K x.to(float8_e4m3fn)", "small_unpack", "small_cast", "within", 1.5, CAST_1K),
)
BARS = BIG_BARS + OUT_BARS + SMALL_BARS
ROW = 1024  # elements per row (a multiple of 64)

# name -> (label, bytes moved per element given the dtype's element size)
KERNELS = {
    "fake_quant": ("fake-quant", lambda es: 2 * es),
    "pack": ("pack", lambda es: es + 9 / 16),
    "unpack": ("unpack", lambda es: 9 / 16 + es),
    "ref_fake_quant": ("reference fake-quant", lambda es: 2 * es),
    "ref_pack": ("reference pack", lambda es: es + 9 / 16),
    "ref_unpack": ("reference unpack", lambda es: 9 / 16 + es),
}
PAIRS = (("fake_quant", "ref_fake_quant"), ("pack", "ref_pack"), ("unpack", "ref_unpack"))


def add_arguments(parser):
    parser.add_argument("--sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help=f"element counts, multiples of {ROW}, K/M = 1024/1048576 (default {DEFAULT_SIZES}; "
                             f"{QUICK_SIZES} with --quick)")
    parser.add_argument("--dtypes", nargs="+", default=None,
                        type=bu.argparse_type(lambda s: bu.parse_dtypes(s, allowed=(torch.float16, torch.bfloat16,
                                                                              torch.float32))),
                        help="fp16, bf16 and/or fp32 (default all three)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--bar-runs", type=int, default=None,
                        help="runs of the bar measurements (default: --runs; 0: none)")
    parser.add_argument("--no-reference-above", type=bu.argparse_type(lambda s: bu.parse_sizes(s)[0]), default=None,
                        help="skip the reference above this many elements (default: never)")


def _inputs(n, dtype, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n // ROW, ROW, generator=g, dtype=torch.float32).to(dtype)
    scale, value = ref.hifloat4_pack_ref(x)
    return x.to(device), scale.to(device), value.to(device), x, scale, value


def _kernels(x, scale, value, cx, cscale, cvalue, dtype, with_reference):
    fns = {
        "fake_quant": lambda: hifloat4_fake_quant(x),
        "pack": lambda: hifloat4_pack(x),
        "unpack": lambda: hifloat4_unpack(scale, value, dtype),
    }
    if with_reference:  # always on the CPU copies: the executable spec is the oracle
        fns.update({
            "ref_fake_quant": lambda: ref.hifloat4_fake_quant_ref(cx),
            "ref_pack": lambda: ref.hifloat4_pack_ref(cx),
            "ref_unpack": lambda: ref.hifloat4_unpack_ref(cscale, cvalue, dtype),
        })
    return fns


def run(args):
    from amct_ops._cli import BenchUnavailable

    if args.sizes is not None:
        sizes = list(dict.fromkeys(n for group in args.sizes for n in group))
    else:
        sizes = bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    bad = [n for n in sizes if n % ROW != 0 or n == 0]
    if bad:
        raise BenchUnavailable(f"sizes must be positive multiples of {ROW}, got {bad}")
    if args.dtypes is not None:
        dtypes = list(dict.fromkeys(d for group in args.dtypes for d in group))
    else:
        dtypes = [torch.float16, torch.bfloat16, torch.float32]
    device, sync = args.device, args.sync
    stat = getattr(args, "stat", "median")
    min_sample = 0.0005 if args.quick else 0.002
    limit = getattr(args, "no_reference_above", None)

    results = []
    for dtype in dtypes:
        es = torch.empty((), dtype=dtype).element_size()
        for n in sizes:
            inputs = _inputs(n, dtype, device, args.seed)
            fns = _kernels(*inputs, dtype, limit is None or n <= limit)
            for fn in fns.values():
                fn()
            stats = bu.measure_many(fns, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample, sync=sync)
            bu.record(results, stats, stat, dtype, n, lambda name: KERNELS[name][1](es))
            del inputs, fns

    runs = getattr(args, "bar_runs", None)
    runs = getattr(args, "runs", BAR_RUNS) if runs is None else max(0, runs)
    bars = []
    if runs:
        for threads in dict.fromkeys((torch.get_num_threads(), 1)):
            bars += _bar_runs(args, runs, threads)
    tables = _tables(results, dtypes, sizes, stat)
    if bars:
        tables.append(bu.bar_table(bars, "bars at 4M bfloat16 (out= at 16M, 1K for latency): per-run ratios "
                                         "(\"faster\": baseline time / op time; \"within\": op time / baseline time)"))
    return {"tables": tables, "notes": _notes(results, args, bars), "results": results, "bars": bars}


def _bar_kernels(device):
    """The callables of the bar measurements, bfloat16: ``(4M kernels, 16M out= kernels, 1K kernels)``."""
    x, scale, value, cx, cscale, cvalue = _inputs(BAR_SIZE, torch.bfloat16, device, 0)
    x16 = torch.randn(OUT_BAR_SIZE // ROW, ROW, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    x16 = x16.to(device)
    buf, buf16 = torch.empty_like(x16), torch.empty_like(x16)
    hifloat4_fake_quant(x16, out=buf)  # warm buffers: their pages are mapped before the timing
    buf16.copy_(x16)
    small = x.reshape(-1)[:SMALL].reshape(1, SMALL).clone()
    s_scale, s_value = hifloat4_pack(small)
    big = {
        "fake_quant": lambda: hifloat4_fake_quant(x),
        "clone": lambda: x.clone(),
        "pack": lambda: hifloat4_pack(x),
        "unpack": lambda: hifloat4_unpack(scale, value, torch.bfloat16),
        "ref_fake_quant": lambda: ref.hifloat4_fake_quant_ref(cx),
        "ref_pack": lambda: ref.hifloat4_pack_ref(cx),
        "ref_unpack": lambda: ref.hifloat4_unpack_ref(cscale, cvalue, torch.bfloat16),
    }
    out_fns = {
        "fake_quant_out": lambda: hifloat4_fake_quant(x16, out=buf),
        "copy": lambda: buf16.copy_(x16),
    }
    small_fns = {
        "small_fake_quant": lambda: hifloat4_fake_quant(small),
        "small_pack": lambda: hifloat4_pack(small),
        "small_unpack": lambda: hifloat4_unpack(s_scale, s_value, torch.bfloat16),
        "small_cast": lambda: small.to(torch.float8_e4m3fn),
    }
    return big, out_fns, small_fns


def _bar_runs(args, runs, threads):
    """The bar records at ``threads`` torch threads (each run: all kernels' samples interleaved)."""
    saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        big, out, small = _bar_kernels(args.device)
        ratios = bu.measure_bars([(big, BIG_BARS), (out, OUT_BARS), (small, SMALL_BARS)], runs, repeat=args.repeat,
                                 warmup=args.warmup, min_sample_s=0.002, sync=args.sync)
        records = [bu.bar_record("hifloat4_cast", bar, threads, ratios[bar.label]) for bar in BARS]
        # Why the clone bar swings between runs and machines: whether the fresh 8 MB outputs of
        # fake-quant and clone fault (new pages) or reuse freed heap memory (none).
        faults = bu.faults_per_call({k: big[k] for k in ("fake_quant", "clone")})
        for r in records:
            if r["label"] == CLONE_BAR and faults is not None:
                r["faults_per_call"] = {k: v[0] for k, v in faults.items()}
        return records
    finally:
        torch.set_num_threads(saved)


def _tables(results, dtypes, sizes, stat):
    t = bu.index_results(results)
    ops_rows, ref_rows = [], []
    for dtype in dtypes:
        dt = bu.dtype_label(dtype)
        for n in sizes:
            row = [dt, bu.format_size(n)]
            row += bu.throughput_cells(t, dt, n, ("fake_quant", "pack", "unpack"))
            ops_rows.append(row)
            row = [dt, bu.format_size(n)]
            for ours, theirs in PAIRS:
                r = t.get((dt, n, theirs))
                ratio = bu.time_ratio(t, dt, n, ours, theirs)
                row += [r["time_s"] * 1e3 if r else "n/a", f"{ratio:.1f}x" if ratio is not None else "n/a"]
            ref_rows.append(row)
    return [
        {"title": f"hifloat4_cast operators ({stat} ms per call, Melem/s, GB/s of input+output)",
         "columns": ["dtype", "elements", "fake-quant ms", "Melem/s", "GB/s", "pack ms", "Melem/s", "GB/s",
                     "unpack ms", "Melem/s", "GB/s"],
         "rows": ops_rows},
        {"title": "reference.py on the same input in the same run, and speed ratios (reference time / op time)",
         "columns": ["dtype", "elements", "ref fake-quant ms", "fake-quant speed-up", "ref pack ms", "pack speed-up",
                     "ref unpack ms", "unpack speed-up"],
         "rows": ref_rows},
    ]


def _notes(results, args, bars):
    t = bu.index_results(results)
    load = bu.load_average()
    notes = [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} warm-up "
             "call(s), the samples of the op and of the reference interleaved; GB/s = (input + output bytes) / "
             "time, 1 GB = 1e9 B; speed-up = reference time / op time (> 1 means the op is faster)."]
    if load is not None:
        notes.append(f"load average at the end: {load}: the reference's OpenMP threads slow down a lot on a "
                     "busy machine, so the speed-ups are only comparable within one run.")
    if bars:
        notes.append("bars: each run times every bar kernel with interleaved samples (median of --repeat); "
                     "the spread of the per-run ratios shows the noise of this machine.")
        for r in bars:
            f = r.get("faults_per_call")
            if f:
                notes.append(f"{CLONE_BAR} at {r['threads']} thread(s): after the runs, minor page faults per 4M "
                             f"call: fake-quant {f['fake_quant']}, x.clone() {f['clone']} (the 8 MB outputs "
                             "are new pages, 2048 4-KiB faults each or fewer huge ones, or freed heap memory "
                             "reused, none, as glibc's dynamic mmap threshold stands at that moment; with "
                             "faults both calls pay them and the ratio falls, without them the bar compares "
                             "fake-quant's arithmetic with an in-cache copy).")
    return notes


def npu_estimate(args):
    """``--npu-estimate``: each op at each size and dtype, estimated by the kernel sim's cost model."""
    sizes = (list(dict.fromkeys(n for group in args.sizes for n in group)) if args.sizes is not None
             else bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    dtypes = (list(dict.fromkeys(d for group in args.dtypes for d in group)) if args.dtypes is not None
              else [torch.float16, torch.bfloat16, torch.float32])
    cases = []
    for dtype in dtypes:
        for n in sizes:
            def make(n=n, dtype=dtype):
                x, scale, value, _cx, _cs, _cv = _inputs(n, dtype, "cpu", args.seed)
                ops = torch.ops.amct  # the AscendC kernels in the sim: what the NPU runs
                return {"fake-quant": lambda: ops._hifloat4_fake_quant_emulated(x, -1),
                        "pack": lambda: ops._hifloat4_pack_emulated(x),
                        "unpack": lambda: ops._hifloat4_unpack_emulated(scale, value, dtype)}
            for name in ("fake-quant", "pack", "unpack"):
                cases.append((f"{name} {bu.dtype_label(dtype)} {bu.format_size(n)}",
                              lambda make=make, name=name: make()[name]()))
    return bu.npu_estimate_tables(cases, args, "hifloat4_cast: estimated NPU kernel time per call")
