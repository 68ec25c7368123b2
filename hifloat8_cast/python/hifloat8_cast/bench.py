"""Benchmark of the hifloat8_cast operators: ``python -m amct_ops bench hifloat8_cast``.

For each dtype (fp16, bf16) and size (1K ... 16M elements) it times, in the same run and with
the samples interleaved:

* ``encode_to_hifloat8(x)``           x: dtype -> uint8           3 bytes per element
* ``decode_from_hifloat8(c, dtype)``  uint8 -> dtype              3 bytes per element
* ``hifloat8_fake_quant(x)``          dtype -> dtype              4 bytes per element
* torch ``x.to(torch.float8_e4m3fn)``  the nearest stock 8-bit cast (3 bytes per element)
* torch ``y8.to(x.dtype)``             y8 a float8_e4m3fn tensor   (3 bytes per element)
* torch ``x.clone()``                  a memory-bound copy         (4 bytes per element)

Times are the median (or, with ``--stat min``, the minimum) per call over ``--repeat`` samples
after ``--warmup`` calls; GB/s counts
input + output bytes (1 GB = 1e9 B). Ratios: encode speed / torch dtype->fp8 speed, and decode
speed / torch fp8->dtype speed. The bars this project sets (at 16M elements, bf16, default
threads): encode >= 1.0x, decode >= 3.0x.

This is a script, not a test: nothing here runs in the test suite.
"""
import torch

from amct_ops import _benchutil as bu
from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant

DESCRIPTION = ("encode / decode / fake-quant throughput, fp16 and bf16, 1K..16M elements, "
               "vs torch's float8_e4m3fn casts and clone")

DEFAULT_SIZES = "1K,4K,16K,64K,256K,1M,4M,16M"
QUICK_SIZES = "1K,64K,1M"
BAR_SIZE = 16 << 20
BARS = (("encode", "torch_to_fp8", 1.0, "bf16 -> float8_e4m3fn"),
        ("decode", "torch_from_fp8", 3.0, "float8_e4m3fn -> bf16"))

# name -> (label, bytes moved per element given the dtype's element size)
KERNELS = {
    "encode": ("encode", lambda es: es + 1),
    "decode": ("decode", lambda es: 1 + es),
    "fake_quant": ("fake-quant", lambda es: 2 * es),
    "torch_to_fp8": ("torch x.to(fp8)", lambda es: es + 1),
    "torch_from_fp8": ("torch fp8.to(x.dtype)", lambda es: 1 + es),
    "clone": ("torch x.clone()", lambda es: 2 * es),
}


def add_arguments(parser):
    parser.add_argument("--sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help=f"element counts, K/M = 1024/1048576 (default {DEFAULT_SIZES}; "
                             f"{QUICK_SIZES} with --quick)")
    parser.add_argument("--dtypes", nargs="+", default=None,
                        type=bu.argparse_type(lambda s: bu.parse_dtypes(s, allowed=(torch.float16, torch.bfloat16))),
                        help="fp16 and/or bf16 (default both)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def _inputs(n, dtype, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g, dtype=torch.float32).to(dtype)
    codes = torch.randint(0, 256, (n,), generator=g, dtype=torch.int64).to(torch.uint8)
    y8 = (torch.randn(n, generator=g, dtype=torch.float32) * 8).to(torch.float8_e4m3fn)
    return x.to(device), codes.to(device), y8.to(device)


def _kernels(x, codes, y8, dtype):
    return {
        "encode": lambda: encode_to_hifloat8(x),
        "decode": lambda: decode_from_hifloat8(codes, dtype=dtype),
        "fake_quant": lambda: hifloat8_fake_quant(x),
        "torch_to_fp8": lambda: x.to(torch.float8_e4m3fn),
        "torch_from_fp8": lambda: y8.to(dtype),
        "clone": lambda: x.clone(),
    }


def run(args):
    from amct_ops._cli import BenchUnavailable

    if args.sizes is not None:
        sizes = list(dict.fromkeys(n for group in args.sizes for n in group))
    else:
        sizes = bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    if args.dtypes is not None:
        dtypes = list(dict.fromkeys(d for group in args.dtypes for d in group))
    else:
        dtypes = [torch.float16, torch.bfloat16]
    if not hasattr(torch, "float8_e4m3fn"):
        raise BenchUnavailable(f"torch {torch.__version__} has no float8_e4m3fn baseline")
    device, sync = args.device, args.sync
    stat = getattr(args, "stat", "median")
    min_sample = 0.0005 if args.quick else 0.002

    results = []
    for dtype in dtypes:
        es = torch.empty((), dtype=dtype).element_size()
        for n in sizes:
            x, codes, y8 = _inputs(n, dtype, device, args.seed)
            fns = _kernels(x, codes, y8, dtype)
            # Baselines that this device cannot run are reported as n/a, not as a failure.
            usable = {}
            for name, fn in fns.items():
                try:
                    fn()
                    usable[name] = fn
                except (RuntimeError, NotImplementedError, TypeError) as exc:
                    if name in ("encode", "decode", "fake_quant"):
                        raise
                    results.append({"dtype": bu.dtype_label(dtype), "elements": n, "kernel": name,
                                    "error": str(exc).splitlines()[0] if str(exc) else type(exc).__name__})
            stats = bu.measure_many(usable, repeat=args.repeat, warmup=args.warmup,
                                    min_sample_s=min_sample, sync=sync)
            bu.record(results, stats, stat, dtype, n, lambda name: KERNELS[name][1](es))
            del x, codes, y8, fns, usable

    return {"tables": _tables(results, dtypes, sizes, stat), "notes": _notes(results, args),
            "results": results}


def _tables(results, dtypes, sizes, stat):
    t = bu.index_results(results)
    ops_rows, base_rows = [], []
    for dtype in dtypes:
        dt = bu.dtype_label(dtype)
        for n in sizes:
            row = [dt, bu.format_size(n)]
            row += bu.throughput_cells(t, dt, n, ("encode", "decode", "fake_quant"))
            ops_rows.append(row)
            row = [dt, bu.format_size(n)]
            for k in ("torch_to_fp8", "torch_from_fp8", "clone"):
                r = t.get((dt, n, k))
                row += [r["time_s"] * 1e3, r["gb_per_s"]] if r else ["n/a"] * 2
            for ours, theirs in (("encode", "torch_to_fp8"), ("decode", "torch_from_fp8")):
                ratio = bu.time_ratio(t, dt, n, ours, theirs)
                row.append(f"{ratio:.2f}x" if ratio is not None else "n/a")
            base_rows.append(row)
    return [
        {"title": f"hifloat8_cast operators ({stat} ms per call, Melem/s, GB/s of input+output)",
         "columns": ["dtype", "elements", "encode ms", "Melem/s", "GB/s", "decode ms", "Melem/s", "GB/s",
                     "fake-quant ms", "Melem/s", "GB/s"],
         "rows": ops_rows},
        {"title": "torch baselines in the same run, and speed ratios",
         "columns": ["dtype", "elements", "x.to(fp8) ms", "GB/s", "fp8.to(dtype) ms", "GB/s", "x.clone() ms",
                     "GB/s", "encode / x.to(fp8)", "decode / fp8.to(dtype)"],
         "rows": base_rows},
    ]


def _notes(results, args):
    t = bu.index_results(results)
    notes = [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} "
             "warm-up call(s), "
             "samples of the six "
             "kernels interleaved; GB/s = (input + output bytes) / time, 1 GB = 1e9 B; ratio = speed of "
             "ours / speed of torch's cast (> 1 means faster)."]
    notes.append("")
    notes.append(f"performance bars (16M elements, bfloat16, {torch.get_num_threads()} torch threads):")
    for ours, theirs, bar, what in BARS:
        ratio = bu.time_ratio(t, "bfloat16", BAR_SIZE, ours, theirs)
        if ratio is None:
            notes.append(f"- {ours} vs torch {what}: not measured (needs --sizes 16M --dtypes bf16)")
        else:
            verdict = "met" if ratio >= bar else "NOT met"
            notes.append(f"- {ours} vs torch {what}: {ratio:.2f}x (bar >= {bar:.1f}x): {verdict}")
    errors = [r for r in results if "error" in r]
    for r in errors:
        notes.append(f"- baseline {r['kernel']} ({r['dtype']}, {r['elements']}) unavailable: {r['error']}")
    return notes


def npu_estimate(args):
    """``--npu-estimate``: each op at each size and dtype, estimated by the kernel sim's cost model."""
    sizes = (list(dict.fromkeys(n for group in args.sizes for n in group)) if args.sizes is not None
             else bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    dtypes = (list(dict.fromkeys(d for group in args.dtypes for d in group)) if args.dtypes is not None
              else [torch.float16, torch.bfloat16])
    cases = []
    for dtype in dtypes:
        for n in sizes:
            def make(n=n, dtype=dtype):
                x, codes, _y8 = _inputs(n, dtype, "cpu", args.seed)
                return {"encode": lambda: encode_to_hifloat8(x), "decode": lambda: decode_from_hifloat8(codes, dtype=dtype),
                        "fake-quant": lambda: hifloat8_fake_quant(x)}
            for name in ("encode", "decode", "fake-quant"):
                cases.append((f"{name} {bu.dtype_label(dtype)} {bu.format_size(n)}",
                              lambda make=make, name=name: make()[name]()))
    return bu.npu_estimate_tables(cases, args, "hifloat8_cast: estimated NPU kernel time per call",
                                  notes=["upstream's published 910B3 times for comparison (fp16 encode, CANN 9.0.0, "
                                         "including ~0.2 ms of per-call host work): 1M 0.867 ms, 16M 12.236 ms."])
