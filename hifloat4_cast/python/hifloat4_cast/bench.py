"""Benchmark of the hifloat4_cast operators: ``python -m amct_ops bench hifloat4_cast``.

For each dtype (fp16, bf16, fp32) and size (64K ... 16M elements, rows of 1024) it times, in the
same run and with the samples interleaved:

* ``hifloat4_fake_quant(x)``            dtype -> dtype                 2 x element size bytes
* ``hifloat4_pack(x)``                  dtype -> scale + value bytes   element size + 9/16 bytes
* ``hifloat4_unpack(scale, value, dt)`` bytes -> dtype                 9/16 + element size bytes
* the same three through ``reference.py`` (the pure-PyTorch executable spec) on the same input

Times are the median (or, with ``--stat min``, the minimum) per call over ``--repeat`` samples
after ``--warmup`` calls; GB/s counts input + output bytes (1 GB = 1e9 B). Ratios: the
reference's time / the op's time (> 1: the op is faster). The bar this project sets (4M
elements, bf16, default threads): fake-quant >= 50x the reference. The reference is pure
PyTorch with OpenMP threads, so its time moves a lot with the load of the machine; the notes
print the load average.

The reference is slow at 16M elements (seconds per call): ``--no-reference-above N`` skips it
above N elements (default 16M: never skipped).

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
BARS = (("fake_quant", "ref_fake_quant", 50.0, "bfloat16"),)
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

    return {"tables": _tables(results, dtypes, sizes, stat), "notes": _notes(results, args), "results": results}


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


def _notes(results, args):
    t = bu.index_results(results)
    load = bu.load_average()
    notes = [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} warm-up "
             "call(s), the samples of the op and of the reference interleaved; GB/s = (input + output bytes) / "
             "time, 1 GB = 1e9 B; speed-up = reference time / op time (> 1 means the op is faster)."]
    if load is not None:
        notes.append(f"load average at the end: {load}: the reference's OpenMP threads slow down a lot on a "
                     "busy machine, so the speed-ups are only comparable within one run.")
    notes.append("")
    notes.append(f"performance bar ({bu.format_size(BAR_SIZE)} elements, {torch.get_num_threads()} torch threads):")
    for ours, theirs, bar, dt in BARS:
        ratio = bu.time_ratio(t, dt, BAR_SIZE, ours, theirs)
        if ratio is None:
            notes.append(f"- {ours} vs reference.py ({dt}): not measured (needs --sizes 4M --dtypes bf16)")
        else:
            verdict = "met" if ratio >= bar else "NOT met"
            notes.append(f"- {ours} vs reference.py ({dt}): {ratio:.1f}x (bar >= {bar:.0f}x): {verdict}")
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
                return {"fake-quant": lambda: hifloat4_fake_quant(x), "pack": lambda: hifloat4_pack(x),
                        "unpack": lambda: hifloat4_unpack(scale, value, dtype)}
            for name in ("fake-quant", "pack", "unpack"):
                cases.append((f"{name} {bu.dtype_label(dtype)} {bu.format_size(n)}",
                              lambda make=make, name=name: make()[name]()))
    return bu.npu_estimate_tables(cases, args, "hifloat4_cast: estimated NPU kernel time per call")
