"""Benchmark of the hifloat8_cast operators: ``python -m amct_ops bench hifloat8_cast``.

For each torch thread count (``--thread-counts``, default: the current count and 1), dtype (fp16, bf16,
fp32) and size (1K ... 16M elements) it times, in the same run and with the samples interleaved:

* ours: ``encode_to_hifloat8(x)``, ``decode_from_hifloat8(c, dtype)``, ``hifloat8_fake_quant(x)``,
  each also with ``out=`` into a warm (already written) buffer, and, on the CPU, the AscendC
  kernel through the kernel sim (``_<op>_emulated``, unless ``--no-emulated``);
* torch: ``x.to(torch.float8_e4m3fn)``, ``y8.to(dtype)`` (y8 a float8_e4m3fn tensor),
  ``x.to(float8_e4m3fn).to(dtype)``, ``buf.copy_(x)`` into a warm buffer and ``x.clone()``.

Each figure is the statistic of ``--stat`` (median by default) of ``--repeat`` samples after
``--warmup`` calls, reported with the samples' min and max. GB/s counts input + output bytes
(1 GB = 1e9 B). Ratios are speed of ours / speed of torch's cast (> 1: ours is faster), except
for the out= bar, which is time(encode out=) / time(copy_) (<= 2 wanted: the same bytes read as
the copy, half the bytes written).

The bars (16M elements unless said), each measured in ``--runs`` back-to-back runs
at every thread count, reported as min / median / max of the per-run ratios and judged on the
median: encode bf16 and fp16 >= 2.0x ``x.to(float8_e4m3fn)``; decode -> bf16 >= 6x
``y8.to(bfloat16)`` (also with out=, which shows the kernel without the fresh output's page
faults); fake-quant fp32 >= 1.0x ``x.to(float8_e4m3fn).to(float32)``; ``encode(x, out=buf)`` bf16
<= 2x ``buf16.copy_(x)``; 1K elements: encode (bf16, fp16), decode and fake-quant (bf16, fp16) within
1.5x the latency of torch's cast, fp32 fake-quant within 1.5x that of the cast's round trip.
The bars are measured at 16M in ``--quick`` too (they take seconds).

Fresh outputs (``encode(x)``, ``x.clone()``, torch's casts) pay the page faults of new memory on
every call; the out= rows and ``copy_`` do not. The gap between the two is the allocation cost.

This is a script, not a test: nothing here runs in the test suite.
"""
import torch

from amct_ops import _benchutil as bu
from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant

DESCRIPTION = ("encode / decode / fake-quant throughput (fresh and out=), fp16/bf16/fp32, 1K..16M elements, "
               "1 and default threads, vs torch's float8_e4m3fn casts, copy_ and clone")

DEFAULT_SIZES = "1K,64K,1M,16M"
QUICK_SIZES = "1K,64K,1M"
BAR_SIZE = 16 << 20
SMALL_SIZE = 1 << 10
FP8 = torch.float8_e4m3fn if hasattr(torch, "float8_e4m3fn") else None

OURS = ("encode", "encode_out", "decode", "decode_out", "fake_quant", "fake_quant_out")
EMULATED = ("encode_emulated", "decode_emulated", "fake_quant_emulated")
BASELINES = ("torch_to_fp8", "torch_from_fp8", "torch_fake_quant", "copy", "clone")

# The bars of the native CPU kernels, by the (dtype, elements) of the inputs they share. Each is measured in
# --runs back-to-back runs (min / median / max of the per-run ratios; judged on the median).
TO_FP8, FROM_FP8 = "torch x.to(torch.float8_e4m3fn)", "torch y8.to(torch.bfloat16)"
BAR_GROUPS = (
    ("bfloat16", BAR_SIZE, (
        bu.Bar("encode_to_hifloat8 16M bf16 vs x.to(float8_e4m3fn)", "encode", "torch_to_fp8", "faster", 2.0,
               TO_FP8, headline="encode_to_hifloat8"),
        bu.Bar("decode_from_hifloat8 16M -> bf16 vs y8.to(bfloat16)", "decode", "torch_from_fp8", "faster", 6.0,
               FROM_FP8, headline="decode_from_hifloat8"),
        bu.Bar("encode_to_hifloat8(x, out=buf) 16M bf16 vs buf16.copy_(x)", "encode_out", "copy", "within", 2.0,
               "buf16.copy_(x) into a warm buffer"),
        bu.Bar("decode_from_hifloat8(c, out=buf) 16M -> bf16 vs y8.to(bfloat16)", "decode_out", "torch_from_fp8",
               "faster", 6.0, FROM_FP8))),
    ("float16", BAR_SIZE, (
        bu.Bar("encode_to_hifloat8 16M fp16 vs x.to(float8_e4m3fn)", "encode", "torch_to_fp8", "faster", 2.0,
               TO_FP8),)),
    ("float32", BAR_SIZE, (
        bu.Bar("hifloat8_fake_quant 16M fp32 vs x.to(float8_e4m3fn).to(float32)", "fake_quant", "torch_fake_quant",
               "faster", 1.0, "torch x.to(torch.float8_e4m3fn).to(torch.float32)", headline="hifloat8_fake_quant"),)),
    ("bfloat16", SMALL_SIZE, (
        bu.Bar("encode_to_hifloat8 1K bf16 latency vs x.to(float8_e4m3fn)", "encode", "torch_to_fp8", "within", 1.5,
               TO_FP8),
        bu.Bar("decode_from_hifloat8 1K -> bf16 latency vs y8.to(bfloat16)", "decode", "torch_from_fp8", "within",
               1.5, FROM_FP8),
        bu.Bar("hifloat8_fake_quant 1K bf16 latency vs x.to(float8_e4m3fn)", "fake_quant", "torch_to_fp8", "within",
               1.5, TO_FP8))),
    ("float16", SMALL_SIZE, (
        bu.Bar("encode_to_hifloat8 1K fp16 latency vs x.to(float8_e4m3fn)", "encode", "torch_to_fp8", "within", 1.5,
               TO_FP8),
        bu.Bar("hifloat8_fake_quant 1K fp16 latency vs x.to(float8_e4m3fn)", "fake_quant", "torch_to_fp8", "within",
               1.5, TO_FP8))),
    ("float32", SMALL_SIZE, (
        bu.Bar("hifloat8_fake_quant 1K fp32 latency vs x.to(float8_e4m3fn).to(float32)", "fake_quant",
               "torch_fake_quant", "within", 1.5, "torch x.to(torch.float8_e4m3fn).to(torch.float32)"),)),
)


def add_arguments(parser):
    parser.add_argument("--sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help=f"element counts, K/M = 1024/1048576 (default {DEFAULT_SIZES}; "
                             f"{QUICK_SIZES} with --quick)")
    parser.add_argument("--dtypes", nargs="+", default=None,
                        type=bu.argparse_type(lambda s: bu.parse_dtypes(
                            s, allowed=(torch.float16, torch.bfloat16, torch.float32))),
                        help="fp16, bf16 and/or fp32 (default all; fp32 has no encode)")
    parser.add_argument("--thread-counts", nargs="+", type=int, default=None,
                        help="torch thread counts to run at, in turn (default: the current count, "
                             "i.e. torch's default or --threads, then 1)")
    parser.add_argument("--no-emulated", action="store_true",
                        help="skip the emulated-kernel rows (the AscendC kernel through the kernel sim)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def _inputs(n, dtype, device, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g, dtype=torch.float32).to(dtype)
    codes = torch.randint(0, 256, (n,), generator=g, dtype=torch.int64).to(torch.uint8)
    y8 = (torch.randn(n, generator=g, dtype=torch.float32) * 8).to(FP8)
    return x.to(device), codes.to(device), y8.to(device)


def _kernels(x, codes, y8, dtype, emulated):
    """name -> (callable, bytes moved per element)."""
    es = x.element_size()
    ops = torch.ops.amct
    dec_buf, fq_buf, copy_buf = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    k = {
        "decode": (lambda: decode_from_hifloat8(codes, dtype), 1 + es),
        "decode_out": (lambda: decode_from_hifloat8(codes, dtype, out=dec_buf), 1 + es),
        "fake_quant": (lambda: hifloat8_fake_quant(x), 2 * es),
        "fake_quant_out": (lambda: hifloat8_fake_quant(x, out=fq_buf), 2 * es),
        "torch_from_fp8": (lambda: y8.to(dtype), 1 + es),
        "torch_fake_quant": (lambda: x.to(FP8).to(dtype), 2 * es),
        "copy": (lambda: copy_buf.copy_(x), 2 * es),
        "clone": (lambda: x.clone(), 2 * es),
    }
    if dtype != torch.float32:
        code_buf = torch.empty_like(codes)
        k["encode"] = (lambda: encode_to_hifloat8(x), es + 1)
        k["encode_out"] = (lambda: encode_to_hifloat8(x, out=code_buf), es + 1)
        k["torch_to_fp8"] = (lambda: x.to(FP8), es + 1)
    if emulated and x.device.type == "cpu":
        k["decode_emulated"] = (lambda: ops._decode_from_hifloat8_emulated(codes, dtype), 1 + es)
        k["fake_quant_emulated"] = (lambda: ops._hifloat8_fake_quant_emulated(x), 2 * es)
        if dtype != torch.float32:
            k["encode_emulated"] = (lambda: ops._encode_to_hifloat8_emulated(x), es + 1)
    return k


def run(args):
    from amct_ops._cli import BenchUnavailable

    if FP8 is None:
        raise BenchUnavailable(f"torch {torch.__version__} has no float8_e4m3fn baseline")
    if args.sizes is not None:
        sizes = list(dict.fromkeys(n for group in args.sizes for n in group))
    else:
        sizes = bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    if args.dtypes is not None:
        dtypes = list(dict.fromkeys(d for group in args.dtypes for d in group))
    else:
        dtypes = [torch.float16, torch.bfloat16, torch.float32]
    default_threads = torch.get_num_threads()
    threads = list(dict.fromkeys(args.thread_counts or [default_threads, 1]))
    if min(threads) < 1:
        raise ValueError("--thread-counts must be >= 1")
    device, sync = args.device, args.sync
    stat = getattr(args, "stat", "median")
    min_sample = 0.0005 if args.quick else 0.002
    emulated = not getattr(args, "no_emulated", False)

    results, bars = [], []
    try:
        for nthreads in threads:
            torch.set_num_threads(nthreads)
            for dtype in dtypes:
                for n in sizes:
                    x, codes, y8 = _inputs(n, dtype, device, args.seed)
                    kernels = _kernels(x, codes, y8, dtype, emulated)
                    fns = {name: fn for name, (fn, _) in kernels.items()}
                    stats = bu.measure_many(fns, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample,
                                            sync=sync)
                    start = len(results)
                    bu.record(results, stats, stat, dtype, n, lambda name: kernels[name][1])
                    for row in results[start:]:
                        row["threads"] = nthreads
                        row["max_s"] = max(stats[row["kernel"]].samples)
                    del x, codes, y8, kernels, fns
            bars += _measure_bars(args, nthreads, min_sample)
    finally:
        torch.set_num_threads(default_threads)

    faults = _fault_table(args) if args.device.type == "cpu" else None
    tables = _tables(results, threads, dtypes, sizes, stat)
    if faults:
        tables.append(faults)
    if bars:
        tables.append(bu.bar_table(bars, "bars: per-run ratios (\"faster\": baseline time / ours; "
                                         "\"within\": our time / baseline time)"))
    return {"tables": tables, "notes": _notes(args), "results": results, "bars": bars}


def _measure_bars(args, nthreads, min_sample):
    """Every bar of BAR_GROUPS at the current thread count, in --runs runs: bar records."""
    groups = []
    for dt, n, group_bars in BAR_GROUPS:
        dtype = getattr(torch, dt)
        x, codes, y8 = _inputs(n, dtype, args.device, args.seed)
        kernels = _kernels(x, codes, y8, dtype, emulated=False)
        names = {b.ours for b in group_bars} | {b.base for b in group_bars}
        groups.append(({k: fn for k, (fn, _) in kernels.items() if k in names}, group_bars))
    ratios = bu.measure_bars(groups, args.runs, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample,
                             sync=args.sync)
    return [bu.bar_record("hifloat8_cast", b, nthreads, ratios[b.label]) for _, _, group in BAR_GROUPS for b in group]


FAULT_KERNELS = (("decode", "decode_from_hifloat8(c) (fresh output)"),
                 ("decode_out", "decode_from_hifloat8(c, out=buf) (warm buffer)"),
                 ("torch_from_fp8", "torch y8.to(torch.bfloat16) (fresh output)"),
                 ("encode", "encode_to_hifloat8(x) (fresh output)"),
                 ("torch_to_fp8", "torch x.to(torch.float8_e4m3fn) (fresh output)"),
                 ("copy", "buf16.copy_(x) (warm buffer)"))
FAULT_CALLS = 5


def _fault_table(args):
    """Minor page faults and time per call at 16M bf16 (Linux, CPU): what a fresh output costs."""
    x, codes, y8 = _inputs(BAR_SIZE, torch.bfloat16, args.device, args.seed)
    kernels = _kernels(x, codes, y8, torch.bfloat16, emulated=False)
    counted = bu.faults_per_call({k: kernels[k][0] for k, _ in FAULT_KERNELS}, FAULT_CALLS)
    if counted is None:
        return None
    rows = [[label, counted[k][0], counted[k][1] * 1e3] for k, label in FAULT_KERNELS]
    return {"title": f"page faults of fresh outputs: 16M bfloat16, {torch.get_num_threads()} torch thread(s), median of "
                     f"{FAULT_CALLS} calls",
            "columns": ["call", "minor page faults per call", "ms per call"], "rows": rows}


def _index(results, nthreads):
    return bu.index_results([r for r in results if r["threads"] == nthreads])


def _cell(r):
    """'median [min-max]' in ms."""
    if r is None:
        return "n/a"
    return f"{r['time_s'] * 1e3:.3f} [{r['min_s'] * 1e3:.3f}-{r['max_s'] * 1e3:.3f}]"


def _tables(results, threads, dtypes, sizes, stat):
    tables = []
    for nthreads in threads:
        t = _index(results, nthreads)
        rows = []
        for dtype in dtypes:
            dt = bu.dtype_label(dtype)
            for n in sizes:
                row = [dt, bu.format_size(n)]
                for k in OURS + EMULATED + BASELINES:
                    row.append(_cell(t.get((dt, n, k))))
                for ours, theirs in (("encode", "torch_to_fp8"), ("decode", "torch_from_fp8"),
                                     ("fake_quant", "torch_fake_quant")):
                    ratio = bu.time_ratio(t, dt, n, ours, theirs)
                    row.append(f"{ratio:.2f}x" if ratio is not None else "n/a")
                a, b = t.get((dt, n, "encode_out")), t.get((dt, n, "copy"))
                row.append(f"{a['time_s'] / b['time_s']:.2f}" if a and b else "n/a")
                rows.append(row)
        tables.append({
            "title": f"hifloat8_cast, {nthreads} torch thread(s): {stat} ms per call [min-max of the samples]",
            "columns": ["dtype", "elements", "encode ms", "encode out= ms", "decode ms", "decode out= ms",
                        "fake-quant ms", "fake-quant out= ms", "encode (emulated) ms", "decode (emulated) ms",
                        "fake-quant (emulated) ms", "x.to(fp8) ms", "y8.to(dtype) ms", "x.to(fp8).to(dtype) ms",
                        "buf.copy_(x) ms", "x.clone() ms",
                        "encode / x.to(fp8)", "decode / y8.to(dtype)", "fake-quant / torch",
                        "t(encode out=) / t(copy_)"],
            "rows": rows})
    return tables


def _notes(args):
    return [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} warm-up "
            "call(s), the samples of all kernels of a (threads, dtype, size) interleaved; [min-max] are the "
            "samples' extremes; ratios = speed of ours / speed of torch's (> 1: ours faster); "
            "the out= ratio is a time ratio (<= 2 wanted).",
            f"bars: {args.runs} back-to-back runs per thread count, each run timing the kernels of a bar's inputs "
            f"with {args.repeat} interleaved samples; a run's ratio is that of the medians; min / median / max "
            "are over the runs and the bar is judged on the median."]


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
                ops = torch.ops.amct  # the AscendC kernels in the sim: what the NPU runs
                return {"encode": lambda: ops._encode_to_hifloat8_emulated(x),
                        "decode": lambda: ops._decode_from_hifloat8_emulated(codes, dtype),
                        "fake-quant": lambda: ops._hifloat8_fake_quant_emulated(x)}
            for name in ("encode", "decode", "fake-quant"):
                cases.append((f"{name} {bu.dtype_label(dtype)} {bu.format_size(n)}",
                              lambda make=make, name=name: make()[name]()))
    return bu.npu_estimate_tables(cases, args, "hifloat8_cast: estimated NPU kernel time per call",
                                  notes=["upstream's published 910B3 times for comparison (fp16 encode, CANN 9.0.0, "
                                         "including ~0.2 ms of per-call host work): 1M 0.867 ms, 16M 12.236 ms."])
