"""``python -m amct_ops``: ``info``, ``selftest`` and ``bench``.

Commands
========

``info [--json]``
    Version, torch, build facts (SOC, NPU arch, backend, revision, compiler), the operators and
    libraries of every built package, which backends are usable (cpu; npu with the reason when
    not) and the kernel sim's platform facts. Exit 0.

``selftest [--device cpu|npu|npu:N] [--package PKG ...] [--json]``
    Runs every built operator on deterministic inputs and checks its contracts (shape, dtype,
    device, contiguous output, bit-exactness against the package's ``reference.py``). Prints a
    table, or with ``--json`` exactly one JSON object on stdout::

        {"requested_device": "cpu", "hardware_path_verified": false,
         "environment": {...}, "probe": {...}, "results": [{...}, ...]}

    ``probe`` comes first: the probe kernel's device facts (``amct_ops._probe``: saturation flag
    at launch, GetRuntimeUBSize, subnormal behaviour of Cast and Mul, the build's kernel flags),
    from the device on an NPU, from the kernel sim on the CPU (with its emulated modes).
    ``hardware_path_verified`` is true only when the device is an NPU and every case ran on it.
    Exit 0 when every contract holds, 1 when one fails (or when no case ran at all), 2 when the
    requested device or backend is unavailable (then a JSON object
    ``{"error": ..., "requested_device": ...}`` is printed on stderr, as its last line, with or
    without ``--json``).

``bench [<pkg> [options]]``
    Without ``<pkg>``: lists the packages that have a benchmark. With it: runs
    ``amct_ops.<pkg>.bench`` and prints markdown tables plus the machine facts (``--json`` for
    a JSON object). Common options: ``--repeat N`` (timed samples per measurement),
    ``--runs N`` (back-to-back runs of every bar measurement: each bar's ratio is reported as
    min / median / max over the runs and judged on the median), ``--warmup N``, ``--quick``,
    ``--stat``, ``--threads N``, ``--device``, ``--json``; the package adds its own (e.g.
    ``--sizes``, ``--dtypes``).
    ``--plot out.png`` also draws throughput against size, each operator beside its baselines
    (needs matplotlib: ``pip install amct_ops[plot]``).
    ``--npu-estimate [--soc ascend910b|ascend950] [--sample-blocks K]`` times
    nothing: it runs each case once on the kernel sim with the SOC's core count and UB and prints
    the cost model's estimate per kernel launch (slowest core, bound pipe, each pipe's busy share).
    Benchmarks are scripts: they never run inside the test suite.

``bench --all [--markdown] [--output FILE] [--plot-dir DIR] [--readme README] [common options]``
    Runs every package's benchmark in turn (the common options, e.g. ``--quick`` or
    ``--repeat``, are given to each) and prints their tables; with ``--markdown`` one document
    with the date, the command, the machine, the method and every table, which is
    ``docs/performance.md``; with ``--output X.md`` it also writes the results document
    ``X.json`` the page is rendered from; ``--readme README.md`` rewrites the README's summary
    table (the block between its two marker comments) from the same results; ``--plot-dir``
    also draws every package's ``--plot`` figure from the same run.
    ``bench --all --render X.json [--output X.md] [--readme README.md]`` measures nothing and
    renders both texts from a results document again.

``bench --all --npu-estimate [--markdown] [--output FILE] [common options]``
    Every package's ``--npu-estimate`` for every SOC (ascend910b, ascend950) from this build, with
    the cost model's tables and the bars the benchmarks compute from their rows
    (``amct_ops._estimatepage``); with ``--markdown`` the page ``docs/npu_estimates.md``, with
    ``--output X.md`` also its results document ``X.json``; without ``--markdown`` the results
    document. The common options (``--cost-only``, ``--sample-blocks K``, ``--quick``) go to every
    package.

torch_npu is never imported when this module is imported; it is imported only when an NPU
device is requested (``--device npu``), or by ``info`` to say whether the NPU backend works.

Protocol for operator packages
==============================

Every name in ``amct_ops.OPERATOR_PACKAGES`` is a sub-package ``amct_ops.<pkg>``. To take part in
``selftest`` and ``bench`` it provides two optional modules; nothing else has to be registered.

``amct_ops/<pkg>/selftest.py``
    ``run(device: torch.device) -> list[dict]``. One dict per (op, case, dtype)::

        {"op": "encode_to_hifloat8", "case": "exhaustive", "dtype": "float16",
         "passed": True, "detail": "65536 elements", "device": "cpu"}

    ``op``, ``case``, ``dtype`` (torch dtype name without ``torch.``, or a short description),
    ``passed`` (bool) and ``detail`` (str; on failure the first mismatch: index, input, got and
    expected bits) are required. ``device`` is the device the op's output was on (``None`` when
    the op produced none); ``hardware_path_verified`` needs every result's ``device`` to be the
    NPU. Extra JSON-serialisable keys are allowed; the framework adds ``"package"``.

    ``run`` must not raise for a failing case: it reports it. Inputs are built on the CPU,
    moved to ``device``; the reference runs on the CPU. :func:`check_case` below does all of
    that for one case (contracts, bitwise comparison, no-launch check for empty inputs) and is
    what an op's selftest normally calls; :func:`from_bits` and :func:`bitwise_mismatch` are
    the building blocks. "Bitwise equal" means identical bits wherever the expected value is
    not NaN, and NaN exactly where it is NaN (payloads are not compared).

    If ``run`` raises anyway, the framework records one failed result for the package. If
    ``amct_ops.<pkg>`` itself fails to import, that is a failed result too (a built package
    that does not load is a defect). If only the ``selftest`` module is missing or fails to
    import, the package is skipped: a ``SKIP`` line in the table and its reason in
    ``environment["skipped"]``; a skip does not change the exit code.

``amct_ops/<pkg>/bench.py``
    ``DESCRIPTION: str`` (one line, shown by ``python -m amct_ops bench``);
    optional ``add_arguments(parser)`` to add package options to the argparse parser (which
    already has the common ones above; ``args.device`` is a ``torch.device`` and ``args.sync``
    a callable that waits for the device, or None on the CPU; ``args.stat`` is "median" or "min",
    the statistic to report);
    ``run(args) -> dict`` with::

        {"tables": [{"title": str, "columns": [str, ...], "rows": [[cell, ...], ...]}, ...],
         "notes": [str, ...],          # optional lines printed after the tables
         "results": [dict, ...],       # optional raw measurements, for --json
         "bars": [dict, ...]}          # optional: _benchutil.bar_record of every bar measured

    Cells are numbers or strings; floats are formatted by the framework. Timing helpers are in
    ``amct_ops._benchutil``. Optional ``npu_estimate(args) -> dict`` (same shape as ``run``'s) serves
    ``--npu-estimate``, normally through ``_benchutil.npu_estimate_tables``. ``run`` may raise ``BenchUnavailable(reason)`` for a device or
    baseline that cannot run (exit 2).
"""
import argparse
import contextlib
import io
import json
import os
import platform
import re
import sys
import time
import traceback

__all__ = [
    "BenchUnavailable",
    "DeviceUnavailable",
    "bitwise_mismatch",
    "check_case",
    "from_bits",
    "main",
    "result",
]

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_UNAVAILABLE = 2

# Default runs of each bar measurement (``bench --runs``).
BENCH_RUNS = 5
BENCH_QUICK_RUNS = 3


class DeviceUnavailable(Exception):
    """The requested device or backend cannot be used (exit code 2)."""


class BenchUnavailable(Exception):
    """A benchmark cannot run here (exit code 2)."""


# ----------------------------------------------------------------------------------------------
# package facts (tolerant of a partial build: every lookup has a fallback)
# ----------------------------------------------------------------------------------------------


def _amct():
    import amct_ops

    return amct_ops


def _version():
    return getattr(_amct(), "__version__", "unknown")


def _build_info():
    fn = getattr(_amct(), "build_info", None)
    try:
        return dict(fn()) if fn is not None else {}
    except Exception:  # a broken _build_info must not hide the rest
        return {}


def _packages():
    return tuple(getattr(_amct(), "OPERATOR_PACKAGES", ()))


def _available_ops():
    fn = getattr(_amct(), "available_ops", None)
    if fn is None:
        return {}
    try:
        return dict(fn())
    except Exception as exc:
        return {"<error>": [f"available_ops() failed: {exc}"]}


def _sim_platform():
    try:
        from amct_ops import _sim

        cores, ub = _sim.get_platform()
        return {"aiv_cores": int(cores), "ub_bytes": int(ub)}
    except Exception:
        return None


def _sim_launch_count():
    try:
        from amct_ops import _sim

        return _sim.launch_count()
    except Exception:
        return None


def _npu_status():
    """(usable: bool, reason: str). Imports torch_npu only when it is installed."""
    import importlib.util

    if importlib.util.find_spec("torch_npu") is None:
        return False, "torch_npu is not installed"
    backend = _build_info().get("backend")
    if backend == "cpu":
        return False, "this build has the CPU backend only (built with --backend cpu or without CANN)"
    try:
        import torch_npu  # noqa: F401
    except Exception as exc:
        return False, f"torch_npu does not import: {type(exc).__name__}: {exc}"
    fn = getattr(_amct(), "npu_available", None)
    try:
        ok = bool(fn()) if fn is not None else False
    except Exception as exc:
        return False, f"npu_available() failed: {exc}"
    if not ok:
        return False, "the NPU libraries are not loaded or torch_npu sees no device"
    import torch

    return True, f"{torch.npu.device_count()} device(s)"


# ----------------------------------------------------------------------------------------------
# devices
# ----------------------------------------------------------------------------------------------

_DEVICE_RE = re.compile(r"^(cpu|npu)(?::(\d+))?$")


def resolve_device(spec):
    """'cpu' | 'npu' | 'npu:N' -> torch.device, importing torch_npu for an NPU.

    Raises :class:`DeviceUnavailable` with a one-line reason.
    """
    import torch

    m = _DEVICE_RE.match(spec.strip().lower())
    if not m:
        raise DeviceUnavailable(f"unsupported device {spec!r}: expected cpu, npu or npu:N")
    kind, index = m.group(1), m.group(2)
    if kind == "cpu":
        return torch.device("cpu")
    try:
        import torch_npu  # noqa: F401
    except Exception as exc:
        raise DeviceUnavailable(f"torch_npu cannot be imported: {type(exc).__name__}: {exc}") from None
    fn = getattr(_amct(), "npu_available", None)
    try:
        ok = bool(fn()) if fn is not None else False
    except Exception as exc:
        raise DeviceUnavailable(f"amct_ops.npu_available() failed: {exc}") from None
    if not ok:
        raise DeviceUnavailable(
            "the NPU backend is unavailable: this build's NPU libraries are not loaded"
            " or torch_npu sees no device"
            f" (build backend: {_build_info().get('backend', 'unknown')})"
        )
    count = int(torch.npu.device_count())
    n = int(index) if index is not None else int(torch.npu.current_device())
    if not 0 <= n < count:
        raise DeviceUnavailable(f"NPU index {n} is out of range: torch_npu sees {count} device(s)")
    return torch.device("npu", n)


def _device_sync(device):
    if device.type == "npu":
        import torch

        return lambda: torch.npu.synchronize(device)
    return None


def _report_unavailable(command, requested, reason, as_json):
    if not as_json:
        print(f"amct_ops {command}: error: {reason}", file=sys.stderr)
    print(json.dumps({"error": reason, "requested_device": requested}), file=sys.stderr)
    return EXIT_UNAVAILABLE


# ----------------------------------------------------------------------------------------------
# selftest helpers for op packages
# ----------------------------------------------------------------------------------------------


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def from_bits(patterns, dtype):
    """A 1-d CPU tensor of ``dtype`` from unsigned bit patterns (ints such as 0xFBFF)."""
    import torch

    width = torch.empty((), dtype=dtype).element_size()
    int_dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[width]
    bits = 8 * width
    if int_dtype is torch.uint8:
        values = [int(p) & 0xFF for p in patterns]
    else:
        mask = (1 << bits) - 1
        half = 1 << (bits - 1)
        values = [(int(p) & mask) - ((int(p) & mask) >= half) * (1 << bits) for p in patterns]
    t = torch.tensor(values, dtype=int_dtype)
    return t if dtype == int_dtype else t.view(dtype)


def _bits(t):
    """Flattened unsigned bit patterns of a CPU tensor as int64."""
    import torch

    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.bool:
        return t.to(torch.int64)
    size = t.element_size()
    if t.dtype == torch.uint8:
        return t.to(torch.int64)
    if size == 1:
        return t.view(torch.uint8).to(torch.int64)
    if size == 2:
        return t.view(torch.int16).to(torch.int64) & 0xFFFF
    if size == 4:
        return t.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return t.view(torch.int64)


def _isnan(t):
    import torch

    t = t.detach().contiguous().reshape(-1)
    if t.is_floating_point():
        return torch.isnan(t)
    return torch.zeros(t.shape, dtype=torch.bool)


def _hex(bits, width):
    return f"0x{int(bits):0{2 * width}X}"


def bitwise_mismatch(got, expected):
    """Positions (flat, as a 1-d bool tensor) where ``got`` is not bitwise equal to ``expected``.

    Both are CPU tensors of the same dtype and number of elements. Bitwise equal: identical bits
    where ``expected`` is not NaN, NaN exactly where it is NaN.
    """
    exp_nan = _isnan(expected)
    got_nan = _isnan(got)
    return (exp_nan != got_nan) | (~exp_nan & (_bits(got) != _bits(expected)))


def _describe_mismatch(inp, got, expected, bad, label="expected"):
    import torch

    idx = torch.nonzero(bad).reshape(-1)
    i = int(idx[0])
    count = int(idx.numel())
    g_w, e_w = got.element_size(), expected.element_size()
    g_bits, e_bits = int(_bits(got)[i]), int(_bits(expected)[i])
    g_val = got.detach().reshape(-1)[i].item()
    e_val = expected.detach().reshape(-1)[i].item()
    text = f"{count} mismatch(es); first at flat index {i}"
    if inp is not None and inp.numel() == got.numel():
        in_bits = int(_bits(inp)[i])
        in_val = inp.detach().reshape(-1)[i].item()
        text += f": input {_hex(in_bits, inp.element_size())} ({in_val!r})"
    text += f", got {_hex(g_bits, g_w)} ({g_val!r}), {label} {_hex(e_bits, e_w)} ({e_val!r})"
    return text


def result(op, case, dtype, passed, detail, device=None, **extra):
    """A selftest result dict in the protocol's form."""
    d = {
        "op": op,
        "case": case,
        "dtype": dtype if isinstance(dtype, str) else dtype_name(dtype),
        "passed": bool(passed),
        "detail": str(detail),
        "device": None if device is None else str(device),
    }
    d.update(extra)
    return d


def check_case(op, case, fn, inp, reference, device, out_dtype, dtype=None, view=None, golden=None,
               expect_no_launch=None, min_elements=None):
    """Run one selftest case and check every contract. Returns a result dict (never raises).

    * ``fn(x)`` -- the op under test; ``reference(x)`` -- the oracle, always run on the CPU on
      the contiguous input;
    * ``inp`` -- the CPU input (base) tensor; ``view(t)`` (optional) makes the tested layout from
      the base, applied on the device, so non-contiguous inputs stay non-contiguous there;
    * ``out_dtype`` -- the contract dtype of the output; ``dtype`` -- label (default: input dtype);
    * ``golden`` -- optional CPU tensor of known-correct outputs (e.g. from the spec tables),
      compared bitwise in addition to the reference;
    * ``expect_no_launch`` -- for empty inputs: assert the kernel sim's launch counter did not
      move (CPU only; default: when the input is empty and the device is the CPU).
    """
    import torch

    label = dtype if dtype is not None else dtype_name(inp.dtype)
    try:
        dev_base = inp.to(device)
        dev_in = view(dev_base) if view is not None else dev_base
        cpu_in = view(inp) if view is not None else inp
    except Exception as exc:
        return result(op, case, label, False, f"could not build the input: {type(exc).__name__}: {exc}")
    n = cpu_in.numel()
    if expect_no_launch is None:
        expect_no_launch = n == 0 and device.type == "cpu"
    before = _sim_launch_count() if expect_no_launch else None
    try:
        out = fn(dev_in)
        if device.type != "cpu":
            _device_sync(device)()
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        return result(op, case, label, False, f"raised {type(exc).__name__}: {msg[0] if msg else ''}")
    if not isinstance(out, torch.Tensor):
        return result(op, case, label, False, f"returned {type(out).__name__}, not a Tensor")
    problems = []
    if tuple(out.shape) != tuple(cpu_in.shape):
        problems.append(f"shape {tuple(out.shape)} != input shape {tuple(cpu_in.shape)}")
    if out.dtype != out_dtype:
        problems.append(f"dtype {dtype_name(out.dtype)} != {dtype_name(out_dtype)}")
    if out.device != dev_in.device:
        problems.append(f"device {out.device} != input device {dev_in.device}")
    if not out.is_contiguous():
        problems.append(f"output not contiguous (strides {tuple(out.stride())})")
    if before is not None:
        after = _sim_launch_count()
        if after is not None and after != before:
            problems.append(f"{after - before} kernel launch(es) for an empty input")
    if problems:
        return result(op, case, label, False, "; ".join(problems), out.device)
    try:
        expected = reference(cpu_in.contiguous())
    except Exception as exc:
        return result(op, case, label, False, f"reference raised {type(exc).__name__}: {exc}", out.device)
    got = out.detach().to("cpu")
    if expected.dtype != got.dtype or expected.numel() != got.numel():
        return result(op, case, label, False,
                      f"reference gave {dtype_name(expected.dtype)}{tuple(expected.shape)}", out.device)
    bad = bitwise_mismatch(got, expected)
    if bool(bad.any()):
        return result(op, case, label, False, _describe_mismatch(cpu_in, got, expected, bad), out.device)
    if golden is not None:
        golden = golden.reshape(-1)
        if golden.numel() != got.numel() or golden.dtype != got.dtype:
            return result(op, case, label, False, "golden table does not match the input", out.device)
        bad = bitwise_mismatch(got, golden)
        if bool(bad.any()):
            return result(op, case, label, False,
                          _describe_mismatch(cpu_in, got, golden, bad, label="spec says"), out.device)
    shape = "x".join(str(s) for s in cpu_in.shape) or "0-d"
    detail = f"{n} elements, shape {shape}"
    if view is not None:
        detail += f", input strides {tuple(dev_in.stride())}"
    if golden is not None:
        detail += ", matches the spec table"
    if before is not None:
        detail += ", no kernel launch"
    return result(op, case, label, True, detail, out.device)


# ----------------------------------------------------------------------------------------------
# info
# ----------------------------------------------------------------------------------------------


def _info_dict():
    import torch

    info = _build_info()
    npu_ok, npu_reason = _npu_status()
    ops = _available_ops()
    libraries = info.get("libraries", {}) or {}
    packages = {}
    for pkg in _packages():
        packages[pkg] = {"ops": list(ops.get(pkg, [])), "libraries": list(libraries.get(pkg, []))}
    sim = _sim_platform()
    n_ops = sum(len(p["ops"]) for p in packages.values())
    if sim is None:
        cpu_ok, cpu_reason = False, "the kernel sim (libamct_common.so) is not loaded"
    elif packages and not n_ops:
        cpu_ok, cpu_reason = False, "no operator is registered"
    else:
        cpu_ok, cpu_reason = True, f"kernel sim (AscendC emulation on the host), {n_ops} op(s) registered"
    return {
        "version": _version(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "build": {k: info.get(k) for k in
                  ("version", "soc", "npu_arch", "backend", "torch_version", "compiler", "revision")},
        "packages": packages,
        "backends": {
            "cpu": {"available": cpu_ok, "reason": cpu_reason},
            "npu": {"available": npu_ok, "reason": npu_reason},
        },
        "sim_platform": sim,
        "torch_threads": torch.get_num_threads(),
    }


def cmd_info(args):
    d = _info_dict()
    if args.json:
        print(json.dumps(d, indent=2))
        return EXIT_OK
    b = d["build"]
    print(f"amct_ops {d['version']}")
    print(f"  python        {d['python']}")
    built = b.get("torch_version")
    torch_line = d["torch"] + (f" (built against {built})" if built and built != d["torch"] else "")
    print(f"  torch         {torch_line}")
    for key in ("soc", "npu_arch", "backend", "revision", "compiler"):
        print(f"  {key:<13} {b.get(key) if b.get(key) is not None else 'unknown'}")
    print("backends:")
    for name, st in d["backends"].items():
        print(f"  {name:<4} {'yes' if st['available'] else 'no ':<3}  {st['reason']}")
    sim = d["sim_platform"]
    if sim:
        print(f"kernel sim platform: {sim['aiv_cores']} AIV cores, {sim['ub_bytes']} B UB per core"
              f" ({sim['ub_bytes'] // 1024} KB); torch threads {d['torch_threads']}")
    else:
        print("kernel sim platform: unavailable (the common library is not loaded)")
    print("operator packages:")
    if not d["packages"]:
        print("  (none built)")
    for pkg, p in d["packages"].items():
        print(f"  {pkg}")
        print(f"    ops        {', '.join(p['ops']) if p['ops'] else '(none registered)'}")
        print(f"    libraries  {', '.join(p['libraries']) if p['libraries'] else '(none)'}")
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# selftest
# ----------------------------------------------------------------------------------------------


def _environment(device):
    import torch

    info = _build_info()
    env = {
        "python": platform.python_version(),
        "os": f"{platform.system()} {platform.machine()}",
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "amct_ops": _version(),
        "build": {k: info.get(k) for k in
                  ("soc", "npu_arch", "backend", "torch_version", "compiler", "revision")},
        "device": str(device),
    }
    if device.type == "cpu":
        sim = _sim_platform()
        env["platform"] = {"kind": "kernel sim", **(sim or {})}
    else:
        plat = {"kind": "npu"}
        try:
            import torch_npu

            plat["torch_npu"] = getattr(torch_npu, "__version__", "unknown")
            plat["device_name"] = torch.npu.get_device_name(device)
            plat["device_count"] = int(torch.npu.device_count())
        except Exception as exc:
            plat["error"] = str(exc)
        env["platform"] = plat
    return env


def _run_selftests(device, packages):
    import importlib

    results, skipped = [], {}
    for pkg in packages:
        try:
            importlib.import_module(f"amct_ops.{pkg}")
        except Exception as exc:
            results.append(result(pkg, "import", "-", False, f"amct_ops.{pkg} does not import: "
                                  f"{type(exc).__name__}: {exc}", package=pkg))
            continue
        modname = f"amct_ops.{pkg}.selftest"
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            reason = (f"{pkg} has no selftest module" if exc.name == modname
                      else f"{modname} does not import: {exc}")
            skipped[pkg] = reason
            continue
        except Exception as exc:
            skipped[pkg] = f"{modname} does not import: {type(exc).__name__}: {exc}"
            continue
        run = getattr(mod, "run", None)
        if run is None:
            skipped[pkg] = f"{modname} has no run(device)"
            continue
        try:
            rows = list(run(device))
        except Exception as exc:
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            results.append(result(pkg, "selftest", "-", False, f"run() raised {last}", package=pkg))
            continue
        for r in rows:
            r = dict(r)
            r.setdefault("device", None)
            r["passed"] = bool(r.get("passed"))
            r.setdefault("detail", "")
            r["package"] = pkg
            results.append(r)
    return results, skipped


def _print_table(results, skipped, device):
    cols = ("op", "case", "dtype")
    widths = [max([len(c)] + [len(str(r.get(c, ""))) for r in results]) for c in cols]
    widths[0] = max([widths[0]] + [len(pkg) for pkg in skipped])
    header = "  ".join(c.ljust(w) for c, w in zip(cols, widths)) + "  result  detail"
    print(header)
    print("-" * len(header))
    for r in results:
        status = "PASS" if r["passed"] else "FAIL"
        key = "  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(cols, widths))
        print(f"{key}  {status:<6}  {r['detail']}")
    for pkg, reason in skipped.items():
        print("  ".join(s.ljust(w) for s, w in zip((pkg, "-", "-"), widths)) + f"  {'SKIP':<6}  {reason}")
    failed = sum(1 for r in results if not r["passed"])
    total = len(results)
    where = f"on {device}"
    skip = f"; {len(skipped)} package(s) skipped" if skipped else ""
    if not total:
        print(f"selftest {where}: FAILED, no operator was tested{skip}")
    elif failed:
        print(f"selftest {where}: FAILED, {failed} of {total} cases failed{skip}")
    else:
        print(f"selftest {where}: OK, all {total} cases passed{skip}")


def _probe_line(probe):
    if "error" in probe:
        return f"probe ({probe['source']}): failed: {probe['error']}"
    sub = ", ".join(f"{k} {v}" for k, v in probe["subnormals"].items())
    return (f"probe ({probe['source']}): saturation flag at launch {probe['saturation_flag_at_launch']}, "
            f"runtime UB {probe['runtime_ub_bytes']} B; subnormals: {sub}")


def cmd_selftest(args):
    requested = args.device
    try:
        device = resolve_device(requested)
    except DeviceUnavailable as exc:
        return _report_unavailable("selftest", requested, str(exc), args.json)
    packages = _packages()
    if args.package:
        unknown = [p for p in args.package if p not in packages]
        if unknown:
            msg = f"unknown package(s) {', '.join(unknown)}: this build has {', '.join(packages) or 'none'}"
            print(f"amct_ops selftest: error: {msg}", file=sys.stderr)
            return EXIT_FAIL
        packages = tuple(p for p in packages if p in args.package)
    from . import _probe

    probe = _probe.run(device, _build_info())  # first: the device facts (amct_ops._probe)
    results, skipped = _run_selftests(device, packages)
    env = _environment(device)
    env["packages"] = list(packages)
    env["skipped"] = skipped
    verified = (device.type == "npu" and bool(results)
                and all(str(r.get("device") or "").startswith("npu") for r in results))
    # Nothing tested is not a pass: a build whose packages all lack a selftest proves nothing.
    failed = not results or any(not r["passed"] for r in results)
    if args.json:
        print(json.dumps({
            "requested_device": requested,
            "hardware_path_verified": verified,
            "environment": env,
            "probe": probe,
            "results": results,
        }, indent=1))
    else:
        b = env["build"]
        print(f"amct_ops {env['amct_ops']} selftest on {device} "
              f"(backend {b.get('backend')}, soc {b.get('soc')}, "
              f"npu_arch {b.get('npu_arch')}; torch {env['torch']}, {env['torch_threads']} threads)")
        plat = env.get("platform", {})
        if plat.get("kind") == "kernel sim" and "aiv_cores" in plat:
            print(f"kernel sim: {plat['aiv_cores']} AIV cores, {plat['ub_bytes']} B UB per core")
        print(_probe_line(probe))
        _print_table(results, skipped, device)
        print(f"hardware path verified: {'yes' if verified else 'no'}")
    return EXIT_FAIL if failed else EXIT_OK


# ----------------------------------------------------------------------------------------------
# bench
# ----------------------------------------------------------------------------------------------


def _bench_modules():
    """{pkg: (module or None, description or reason)} for every built package."""
    import importlib

    found = {}
    for pkg in _packages():
        modname = f"amct_ops.{pkg}.bench"
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                continue
            found[pkg] = (None, f"does not import: {exc}")
            continue
        except Exception as exc:
            found[pkg] = (None, f"does not import: {type(exc).__name__}: {exc}")
            continue
        found[pkg] = (mod, getattr(mod, "DESCRIPTION", "").strip() or "(no description)")
    return found


def _bench_parser(pkg, mod):
    p = argparse.ArgumentParser(prog=f"python -m amct_ops bench {pkg}",
                                description=getattr(mod, "DESCRIPTION", None))
    p.add_argument("--repeat", type=int, default=None,
                   help="timed samples per measurement (default 10; 3 with --quick)")
    p.add_argument("--warmup", type=int, default=None,
                   help="discarded calls before timing (default 2; 1 with --quick)")
    p.add_argument("--runs", type=int, default=None,
                   help="back-to-back runs of every bar measurement, reported as min / median / max of the "
                        f"per-run ratios, the bar judged on the median (default {BENCH_RUNS}; "
                        f"{BENCH_QUICK_RUNS} with --quick)")
    p.add_argument("--quick", action="store_true", help="a short run: fewer sizes and samples")
    p.add_argument("--stat", choices=("median", "min"), default="median",
                   help="per-call time reported (default median; min is steadier on a busy machine)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads (default: torch's default)")
    p.add_argument("--device", default="cpu", help="cpu (default), npu or npu:N")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of markdown")
    p.add_argument("--plot", metavar="PNG", default=None,
                   help="also write a figure of throughput against size (needs matplotlib)")
    p.add_argument("--npu-estimate", action="store_true",
                   help="instead of timing: estimate each case's NPU kernel time with the kernel sim's cost model")
    p.add_argument("--soc", choices=("ascend910b", "ascend950"), default=None,
                   help="SOC of --npu-estimate (default: this build's, else ascend910b)")
    p.add_argument("--sample-blocks", type=int, default=None,
                   help="--npu-estimate: emulate only about this many blocks per launch (default: the benchmark's)")
    p.add_argument("--cost-only", action="store_true",
                   help="--npu-estimate: the cube's Matmul API times its work but skips the arithmetic (outputs "
                        "are garbage; for large matmul shapes)")
    add = getattr(mod, "add_arguments", None)
    if add is not None:
        add(p)
    return p


def cmd_bench(args):
    from amct_ops import _benchutil

    if getattr(args, "all", False):
        return cmd_bench_all(args)
    mods = _bench_modules()
    if not args.op:
        if not mods:
            print("no benchmarks in this build")
            return EXIT_OK
        print("available benchmarks (python -m amct_ops bench <name> [--help]):")
        for pkg, (mod, text) in mods.items():
            print(f"  {pkg:<16} {text if mod is not None else 'unavailable: ' + text}")
        return EXIT_OK
    if args.op not in mods:
        names = ", ".join(mods) or "none"
        print(f"amct_ops bench: error: no benchmark named {args.op!r} (available: {names})", file=sys.stderr)
        return EXIT_UNAVAILABLE
    mod, text = mods[args.op]
    if mod is None:
        print(f"amct_ops bench: error: {args.op} benchmark {text}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    parser = _bench_parser(args.op, mod)
    bargs = parser.parse_args(args.rest)
    if bargs.repeat is None:
        bargs.repeat = 3 if bargs.quick else 10
    if bargs.warmup is None:
        bargs.warmup = 1 if bargs.quick else 2
    if bargs.runs is None:
        bargs.runs = BENCH_QUICK_RUNS if bargs.quick else BENCH_RUNS
    if bargs.repeat < 1 or bargs.warmup < 0 or bargs.runs < 1:
        parser.error("--repeat and --runs must be >= 1 and --warmup >= 0")
    import torch

    if bargs.threads is not None:
        if bargs.threads < 1:
            parser.error("--threads must be >= 1")
        torch.set_num_threads(bargs.threads)
    requested = bargs.device
    try:
        bargs.device = resolve_device(requested)
    except DeviceUnavailable as exc:
        return _report_unavailable("bench", requested, str(exc), bargs.json)
    bargs.sync = _device_sync(bargs.device)
    if bargs.plot and not _plotting_available():
        return EXIT_UNAVAILABLE
    load_before, loads_before = _benchutil.load_average(), _benchutil.load_averages()
    if bargs.npu_estimate:
        return _bench_npu_estimate(args.op, mod, bargs)
    other_load = _benchutil.other_work_load()
    started = time.perf_counter()
    try:
        out = mod.run(bargs) or {}
    except BenchUnavailable as exc:
        return _report_unavailable("bench", requested, str(exc), bargs.json)
    facts = _benchutil.machine_facts()
    facts["load_average_before"] = load_before
    facts["load_averages_before"] = loads_before
    facts["other_load_before"] = other_load
    facts["duration_s"] = round(time.perf_counter() - started, 1)
    facts["amct_ops"] = _version()
    info = _build_info()
    facts["backend"] = info.get("backend")
    facts["soc"] = info.get("soc")
    facts["device"] = str(bargs.device)
    if bargs.device.type == "cpu":
        facts["sim_platform"] = _sim_platform()
    if bargs.plot:
        from amct_ops import _benchplot

        _benchplot.plot_results(args.op, out.get("results", []), bargs.plot, facts)
        print(f"amct_ops bench: wrote {bargs.plot}", file=sys.stderr)
    if bargs.json:
        print(json.dumps({"bench": args.op, "machine": facts, "tables": out.get("tables", []),
                          "notes": out.get("notes", []), "results": out.get("results", []),
                          "bars": out.get("bars", [])}, indent=1))
        return EXIT_OK
    sim = facts.get("sim_platform")
    print(f"# amct_ops {facts['amct_ops']} bench {args.op}")
    print()
    print(f"machine: {facts['cpu_model']} ({facts['machine']}), nproc {facts['nproc']}, "
          f"torch threads {facts['torch_threads']}; python {facts['python']}, torch {facts['torch']}; "
          f"amct_ops backend {facts['backend']}, soc {facts['soc']}, device {facts['device']}"
          + (f"; sim {sim['aiv_cores']} AIV cores, {sim['ub_bytes']} B UB" if sim else ""))
    busy = _benchutil.busy_warning(facts)
    if busy:
        print()
        print(busy)
    _print_tables_and_notes(out)
    return EXIT_OK


def _print_tables_and_notes(out):
    """A benchmark's ``{"tables", "notes"}`` as markdown."""
    from amct_ops import _benchutil

    for table in out.get("tables", []):
        print()
        if table.get("title"):
            print(f"## {table['title']}")
            print()
        print(_benchutil.markdown_table(table["columns"], table["rows"]))
    notes = out.get("notes", [])
    if notes:
        print()
        for line in notes:
            print(line)


def _bench_npu_estimate(pkg, mod, bargs):
    """``bench <pkg> --npu-estimate``: the package's ``npu_estimate(args)`` (same output shape as
    ``run``), printed as estimates of the kernel sim's cost model."""
    from amct_ops import _benchutil

    estimate = getattr(mod, "npu_estimate", None)
    if estimate is None:
        return _report_unavailable("bench", str(bargs.device), f"the {pkg} benchmark has no --npu-estimate",
                                   bargs.json)
    if bargs.device.type != "cpu":
        return _report_unavailable("bench", str(bargs.device), "--npu-estimate runs the kernel sim: use --device cpu",
                                   bargs.json)
    if bargs.soc is None:
        built = _build_info().get("soc")
        bargs.soc = "ascend950" if built == "ascend950" else "ascend910b"
    out = estimate(bargs) or {}
    if bargs.json:
        print(json.dumps({"bench": pkg, "npu_estimate": True, "soc": bargs.soc,
                          "cost_table": _benchutil.npu_cost_table(bargs.soc), "tables": out.get("tables", []),
                          "notes": out.get("notes", []), "common_notes": out.get("common_notes", 0),
                          "results": out.get("results", []), "bars": out.get("bars", [])}, indent=1))
        return EXIT_OK
    print(f"# amct_ops {_version()} bench {pkg} --npu-estimate --soc {bargs.soc}")
    _print_tables_and_notes(out)
    return EXIT_OK


def _plotting_available():
    """True when matplotlib imports; otherwise says how to install it (on stderr)."""
    from amct_ops import _benchplot

    try:
        _benchplot.require_matplotlib()
        return True
    except _benchplot.MatplotlibMissing as exc:
        print(f"amct_ops bench: error: {exc}", file=sys.stderr)
        return False


def _bench_payload(pkg, rest):
    """One package's benchmark as its ``--json`` object: (exit code, object or None)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cmd_bench(argparse.Namespace(op=pkg, rest=list(rest) + ["--json"], all=False))
    return code, (json.loads(buf.getvalue()) if code == EXIT_OK else None)


def results_path(output):
    """Where ``bench --all --output X.md`` writes its results document: ``X.json``."""
    root, _ext = os.path.splitext(output)
    return root + ".json"


def _write_text(path, text):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"amct_ops bench --all: wrote {path}", file=sys.stderr)


def _write_readme_summary(path, document):
    from amct_ops import _benchplot

    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        text = _benchplot.replace_summary_block(text, _benchplot.summary_block(document))
    except ValueError as exc:
        print(f"amct_ops bench: error: {path}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    _write_text(path, text)
    return EXIT_OK


def cmd_bench_render(args):
    """``bench --render RESULTS.json``: the page (and ``--readme``'s summary) from a results
    document, without measuring anything."""
    from amct_ops import _benchplot

    with open(args.render, encoding="utf-8") as fh:
        document = json.load(fh)
    text = _benchplot.render_report(document)
    if args.output:
        _write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return _write_readme_summary(args.readme, document) if args.readme else EXIT_OK


def cmd_bench_all(args):
    """``bench --all``: every package's benchmark, printed one after the other or as one
    markdown document (``--markdown``), to stdout or ``--output``; with ``--markdown --output
    X.md`` also the results document ``X.json`` it is rendered from, and with ``--readme FILE``
    the summary table in FILE, rendered from the same results."""
    from amct_ops import _benchplot, _benchutil

    if getattr(args, "render", None):
        return cmd_bench_render(args)
    if getattr(args, "npu_estimate", False):
        return cmd_bench_all_estimates(args)
    if args.plot_dir and not _plotting_available():
        return EXIT_UNAVAILABLE
    if "--json" in args.rest or "--plot" in args.rest:
        print("amct_ops bench: error: --all takes the common options but not --json or --plot",
              file=sys.stderr)
        return EXIT_FAIL
    if args.readme and not args.markdown:
        print("amct_ops bench: error: --readme needs --markdown", file=sys.stderr)
        return EXIT_FAIL
    started = time.perf_counter()
    runs, worst = [], EXIT_OK
    for pkg, (mod, text) in _bench_modules().items():
        if mod is None:
            runs.append((pkg, "", None, f"the benchmark module {text}"))
            worst = max(worst, EXIT_UNAVAILABLE)
            continue
        print(f"amct_ops bench --all: {pkg} ...", file=sys.stderr)
        code, payload = _bench_payload(pkg, args.rest)
        worst = max(worst, code)
        if payload is not None and args.plot_dir:
            path = os.path.join(args.plot_dir, f"bench_{pkg}.png")
            _benchplot.plot_results(pkg, payload.get("results", []), path, payload.get("machine"))
            print(f"amct_ops bench --all: wrote {path}", file=sys.stderr)
        runs.append((pkg, text, payload, f"the benchmark exited with {code}"))
    duration = round(time.perf_counter() - started, 1)
    command = " ".join(["python -m amct_ops bench --all"] + (["--markdown"] if args.markdown else [])
                       + list(args.rest) + (["--output", args.output] if args.output else [])
                       + (["--plot-dir", args.plot_dir] if args.plot_dir else [])
                       + (["--readme", args.readme] if args.readme else []))
    if args.markdown:
        document = _benchplot.results_document(command, runs, duration_s=duration)
        text = _benchplot.render_report(document)
        if args.output:
            _write_text(results_path(args.output), json.dumps(document, indent=1) + "\n")
        if args.readme:
            worst = max(worst, _write_readme_summary(args.readme, document))
    else:
        chunks = []
        for pkg, _, payload, reason in runs:
            chunks.append(f"# {pkg}\n")
            if payload is None:
                chunks.append(f"not measured: {reason}\n")
                continue
            chunks.append(_benchplot.machine_line(payload["machine"]) + "\n")
            for table in payload.get("tables", []):
                chunks.append(f"## {table.get('title', '')}\n\n"
                              + _benchutil.markdown_table(table["columns"], table["rows"]) + "\n")
            chunks.append("\n".join(payload.get("notes", [])) + "\n")
        text = "\n".join(chunks)
    if args.output:
        _write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return worst


def cmd_bench_all_estimates(args):
    """``bench --all --npu-estimate``: every package's ``--npu-estimate`` for every SOC, as the page
    ``docs/npu_estimates.md`` (with ``--markdown``; ``--output X.md`` also writes the results
    document ``X.json``) or as the results document on stdout."""
    from amct_ops import _estimatepage

    if args.plot_dir or args.readme or "--json" in args.rest or "--plot" in args.rest or "--soc" in args.rest:
        print("amct_ops bench: error: --all --npu-estimate runs every SOC and takes neither --soc, --json, --plot, "
              "--plot-dir nor --readme", file=sys.stderr)
        return EXIT_FAIL
    command = " ".join(["python -m amct_ops bench --all --npu-estimate"] + list(args.rest)
                       + (["--markdown"] if args.markdown else []) + (["--output", args.output] if args.output else []))
    document = _estimatepage.collect(
        command, _bench_modules(), _bench_payload, args.rest,
        progress=lambda what: print(f"amct_ops bench --all --npu-estimate: {what} ...", file=sys.stderr))
    if not args.markdown:
        text = json.dumps(document, indent=1) + "\n"
    else:
        text = _estimatepage.render(document)
        if args.output:
            _write_text(results_path(args.output), json.dumps(document, indent=1) + "\n")
    if args.output:
        _write_text(args.output, text)
    else:
        sys.stdout.write(text)
    return document["exit_code"]


# ----------------------------------------------------------------------------------------------
# entry point
# ----------------------------------------------------------------------------------------------


def _bench_all_args(argv):
    """``bench --all ...``: its own options; everything else, in order, goes to every package."""
    p = argparse.ArgumentParser(prog="python -m amct_ops bench --all", allow_abbrev=False)
    p.add_argument("--all", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--output", default=None)
    p.add_argument("--plot-dir", default=None)
    p.add_argument("--readme", default=None)
    p.add_argument("--render", default=None)
    p.add_argument("--npu-estimate", action="store_true")
    args, rest = p.parse_known_args(argv)
    args.op, args.rest = None, rest
    return args


def _parser():
    p = argparse.ArgumentParser(prog="python -m amct_ops",
                                description="amct_ops: build facts, self-test and benchmarks.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="{info,selftest,bench}")

    pi = sub.add_parser("info", help="version, build, backends and operators")
    pi.add_argument("--json", action="store_true", help="print one JSON object")

    ps = sub.add_parser("selftest", help="check every operator's contracts against its reference")
    ps.add_argument("--device", default="cpu", help="cpu (default), npu or npu:N")
    ps.add_argument("--package", action="append", metavar="PKG",
                    help="only this operator package (repeatable)")
    ps.add_argument("--json", action="store_true",
                    help='print {"requested_device", "hardware_path_verified", "environment", "probe", "results"}')

    pb = sub.add_parser("bench", help="benchmarks: without a name, list them",
                        description="Run `python -m amct_ops bench <name> --help` for a benchmark's options.")
    pb.add_argument("op", nargs="?", help="operator package to benchmark")
    pb.add_argument("--all", action="store_true", help="every package's benchmark in turn")
    pb.add_argument("--markdown", action="store_true",
                    help="with --all: one markdown document (date, command, machine, all tables)")
    pb.add_argument("--output", metavar="FILE", default=None, help="with --all: write to FILE")
    pb.add_argument("--plot-dir", metavar="DIR", default=None,
                    help="with --all: also write DIR/bench_<pkg>.png for every package (needs matplotlib)")
    pb.add_argument("--readme", metavar="FILE", default=None,
                    help="with --all --markdown: also rewrite FILE's performance summary block from the same results")
    pb.add_argument("--render", metavar="RESULTS_JSON", default=None,
                    help="with --all: measure nothing; render the page (--output) and the --readme summary "
                         "from a results document written by an earlier --all --markdown --output run")
    pb.add_argument("--npu-estimate", action="store_true",
                    help="with --all: every package's --npu-estimate for every SOC; with --markdown the page "
                         "docs/npu_estimates.md (and, with --output X.md, its results document X.json)")
    pb.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv[:1] == ["bench"] and "--all" in argv[1:]:
        return cmd_bench(_bench_all_args(argv[1:]))
    args = parser.parse_args(argv)
    if args.version:
        print(_version())
        return EXIT_OK
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_UNAVAILABLE
    handler = {"info": cmd_info, "selftest": cmd_selftest, "bench": cmd_bench}[args.command]
    try:
        return handler(args)
    except BrokenPipeError:  # `... | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
