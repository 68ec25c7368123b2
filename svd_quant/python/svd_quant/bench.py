"""Benchmark of the svd_quant operators: ``python -m amct_ops bench svd_quant``.

In one run, samples interleaved:

* ``mxfp4_quantize(x)`` (rows of 2048, "round"; native on the CPU) per dtype and size (default
  1M, 4M, 16M elements) against, on the same input: torch's ``x.to(torch.float8_e4m3fn)`` (bar at
  16M bf16: at least as fast), ``mxfp4_quantize(x, out=(codes, scales))`` into warm buffers
  against ``buf16.copy_(x)`` (bar: <= 3x the copy), ``reference.mxfp4_quantize_ref(x)`` (bar:
  >= 200x; fewer samples, it takes seconds) and, on the CPU, the AscendC kernel through the
  kernel sim (``_mxfp4_quantize_emulated``, the previous CPU path);
* small calls: ``mxfp4_quantize`` of 1K elements vs ``x.to(torch.float8_e4m3fn)`` and
  ``mxfp4_dequantize`` of them vs ``y8.to(torch.bfloat16)`` of 1K fp8 values (bars: within 1.5x of
  torch's latency);
* ``svd_quant(x, codes, scales, down, up)`` vs the plain bf16 ATen matmul ``x @ w_hat.T`` of
  the same shape (w_hat = the dequantized weight), per (S, K, N, R) (default 256, 2048, 2816,
  32; the bar, at 2048, 2048, 2816, 32: svd_quant <= 1.5x the matmul's time);
* ``quant_dequant_mxfp4(x)`` (flat float32, s = 1) vs torch's float8 round trip
  ``x.to(torch.float8_e4m3fn).to(torch.float32)`` of the same tensor (16M elements; 1M with
  ``--quick``; bar: the round trip's time / ours >= 1.0), with min / median / max per call.

Times are the median (``--stat min``: minimum) per call over ``--repeat`` samples after
``--warmup`` calls. The sweep times reference.py up to 4M elements and svd_quant at
256x2048x2816x32; the bars (16M bf16 quantize against the fp8 cast, the copy and reference.py,
1K latency, quant_dequant_mxfp4 16M, svd_quant at 2048x2048x2816x32) are each measured in
``--runs`` back-to-back runs at torch's default thread count and at 1 thread, reported as
min / median / max of the per-run ratios and judged on the median (``--quick`` leaves out the
reference.py and svd_quant bars, whose calls last seconds).
This is a script, not a test: nothing here runs in the test suite.
"""
import json

import torch

import amct_ops
from amct_ops import _benchutil as bu
from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize, quant_dequant_mxfp4, svd_quant
from amct_ops.svd_quant import reference as ref

DESCRIPTION = "mxfp4_quantize throughput vs reference.py; svd_quant vs a plain bf16 matmul of the same shape"

DEFAULT_SIZES = "1M,4M,16M"
QUICK_SIZES = "1M"
ROW = 2048
QUANT_BAR = (16 << 20, "bfloat16", 200.0)   # x reference.py
CAST_BAR = 1.0                              # op time <= torch's fp8 cast
OUT_BAR = 3.0                               # out= time <= 3x buf16.copy_(x)
SMALL = 1024
SMALL_BAR = 1.5                             # 1K-element call <= 1.5x torch's cast
REFERENCE_REPEAT = 3
# The sweep's svd_quant shape; the bar's shape (MATMUL_BAR, seconds per call) is measured in the bar runs.
DEFAULT_SHAPES = ("256,2048,2816,32",)
QUICK_SHAPES = ("256,2048,2816,32",)
MATMUL_BAR = ((2048, 2048, 2816, 32), 1.5)
QDQ_SIZE, QDQ_QUICK_SIZE = 16 << 20, 1 << 20
QDQ_BAR = (16 << 20, 1.0)
SWEEP_REFERENCE_MAX = 4 << 20               # the sweep times reference.py up to here; 16M is in the bar runs
BAR_SIZE = 16 << 20
SLOW_RUNS = 3                               # runs of the bars whose calls last seconds
CAST = "torch x.to(torch.float8_e4m3fn)"
# The bars of the native MXFP4 kernels (and svd_quant's own), measured in --runs runs each (median judged).
QUANT_BARS = (
    bu.Bar("mxfp4_quantize 16M bf16 vs x.to(float8_e4m3fn)", "quantize", "torch fp8 cast", "faster", CAST_BAR, CAST,
           headline="mxfp4_quantize"),
    bu.Bar("mxfp4_quantize(x, out=) 16M bf16 vs buf16.copy_(x)", "quantize out=", "buf16.copy_(x)", "within", OUT_BAR,
           "buf16.copy_(x) into a warm buffer"),
)
REFERENCE_BAR = bu.Bar("mxfp4_quantize 16M bf16 vs reference.py", "quantize", "reference", "faster", QUANT_BAR[2],
                       "reference.py (pure PyTorch)")
SMALL_BARS = (bu.Bar("mxfp4_quantize 1K bf16 latency vs x.to(float8_e4m3fn)", "quantize", "torch fp8 cast", "within",
                     SMALL_BAR, CAST + ", 1K bf16"),
              bu.Bar("mxfp4_dequantize 1K -> bf16 latency vs y8.to(bfloat16)", "dequantize", "torch fp8 decode",
                     "within", SMALL_BAR, "torch y8.to(torch.bfloat16), 1K float8_e4m3fn"))
MATMUL_BARS = (bu.Bar("svd_quant 2048x2048x2816x32 vs the bf16 matmul", "svd_quant", "bf16 matmul", "within",
                      MATMUL_BAR[1], "torch x @ w_hat.T (bf16, the same shape)", headline="svd_quant"),)
QDQ_BARS = (bu.Bar("quant_dequant_mxfp4 16M fp32 vs x.to(float8_e4m3fn).to(float32)", "quant_dequant_mxfp4",
                   "fp8 round trip", "faster", QDQ_BAR[1], "torch x.to(torch.float8_e4m3fn).to(torch.float32)",
                   headline="quant_dequant_mxfp4"),)


def _shape(text):
    parts = tuple(int(p) for p in text.split(","))
    if len(parts) != 4 or min(parts) < 1 or parts[1] % 32:
        raise ValueError(f"shape must be S,K,N,R with K a multiple of 32, got {text!r}")
    return parts


def add_arguments(parser):
    parser.add_argument("--sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help=f"quantize element counts, multiples of {ROW} (default {DEFAULT_SIZES}; {QUICK_SIZES} "
                             "with --quick)")
    parser.add_argument("--dtypes", nargs="+", default=None,
                        type=bu.argparse_type(lambda s: bu.parse_dtypes(
                            s, allowed=(torch.float16, torch.bfloat16, torch.float32))),
                        help="quantize input dtypes (default bf16)")
    parser.add_argument("--shapes", nargs="+", default=None, type=bu.argparse_type(lambda s: [_shape(s)]),
                        help=f"svd_quant shapes S,K,N,R (default {' '.join(DEFAULT_SHAPES)})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")


def _quantize_fns(x, on_cpu):
    codes = torch.empty(x.shape[0], x.shape[1] // 2, dtype=torch.uint8, device=x.device)
    scales = torch.empty(x.shape[0], (x.shape[1] + 63) // 64, 2, dtype=torch.uint8, device=x.device)
    buf16 = torch.empty_like(x)
    fns = {"quantize": lambda: mxfp4_quantize(x),
           "quantize out=": lambda: mxfp4_quantize(x, out=(codes, scales)),
           "torch fp8 cast": lambda: x.to(torch.float8_e4m3fn),
           "buf16.copy_(x)": lambda: buf16.copy_(x)}
    if on_cpu:
        fns["AscendC kernel (sim)"] = lambda: torch.ops.amct._mxfp4_quantize_emulated(x)
    return fns


def _stats_row(part, dtype, n, name, st, stat, nbytes):
    seconds = getattr(st, stat)
    melem, gbs = bu.throughput(n, nbytes, seconds)
    return {"part": part, "dtype": bu.dtype_label(dtype), "elements": n, "kernel": name, "time_s": seconds,
            "max_s": max(st.samples), "melem_per_s": melem, "gb_per_s": gbs, **st.as_dict()}


def _quantize_results(sizes, dtypes, args, min_sample, stat):
    results = []
    on_cpu = torch.empty(0, device=args.device).device.type == "cpu"
    for dtype in dtypes:
        for n in sizes:
            g = torch.Generator().manual_seed(args.seed)
            cx = torch.randn(n // ROW, ROW, generator=g).to(dtype)
            x = cx.to(args.device)
            stats = bu.measure_many(_quantize_fns(x, on_cpu), repeat=args.repeat, warmup=args.warmup,
                                    min_sample_s=min_sample, sync=args.sync)
            if n <= SWEEP_REFERENCE_MAX:
                stats["reference"] = bu.measure(lambda: ref.mxfp4_quantize_ref(cx),
                                                repeat=min(args.repeat, REFERENCE_REPEAT), warmup=0, min_sample_s=0.0)
            for name, st in stats.items():
                results.append(_stats_row("quantize", dtype, n, name, st, stat, n * (cx.element_size() + 0.5 + 1 / 32)))
        x = torch.randn(1, SMALL, generator=torch.Generator().manual_seed(args.seed)).to(dtype).to(args.device)
        small = bu.measure_many({"quantize": lambda: mxfp4_quantize(x), "torch fp8 cast": lambda: x.to(torch.float8_e4m3fn)},
                                repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample, sync=args.sync)
        for name, st in small.items():
            results.append(_stats_row("small", dtype, SMALL, name, st, stat, SMALL * (x.element_size() + 0.5 + 1 / 32)))
    return results


def _svd_fns(shape, args):
    """svd_quant of one (S, K, N, R) shape and the bf16 matmul of the same shape."""
    s, k, n, r = shape
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(s, k, generator=g).to(torch.bfloat16).to(args.device)
    codes, scales = mxfp4_quantize(torch.randn(n, k, generator=g).to(args.device))
    w_hat = mxfp4_dequantize(codes, scales)
    down = (torch.randn(k, r, generator=g) / k ** 0.5).to(torch.bfloat16).to(args.device)
    up = torch.randn(r, n, generator=g).to(torch.bfloat16).to(args.device)
    return {"svd_quant": lambda: svd_quant(x, codes, scales, down, up), "bf16 matmul": lambda: x @ w_hat.T}


def _svd_results(shapes, args, min_sample, stat):
    results = []
    for s, k, n, r in shapes:
        fns = _svd_fns((s, k, n, r), args)
        stats = bu.measure_many(fns, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample, sync=args.sync)
        for name, st in stats.items():
            seconds = getattr(st, stat)
            results.append({"part": "svd_quant", "shape": (s, k, n, r), "kernel": name, "time_s": seconds,
                            "gflops": 2.0 * s * k * n / seconds / 1e9, **st.as_dict()})
    return results


def run(args):
    from amct_ops._cli import BenchUnavailable

    sizes = (list(dict.fromkeys(n for group in args.sizes for n in group)) if args.sizes is not None
             else bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    if any(n % ROW or n == 0 for n in sizes):
        raise BenchUnavailable(f"sizes must be positive multiples of {ROW}, got {sizes}")
    dtypes = (list(dict.fromkeys(d for group in args.dtypes for d in group)) if args.dtypes is not None
              else [torch.bfloat16])
    shapes = ([s for group in args.shapes for s in group] if args.shapes is not None
              else [_shape(t) for t in (QUICK_SHAPES if args.quick else DEFAULT_SHAPES)])
    stat = getattr(args, "stat", "median")
    min_sample = 0.0005 if args.quick else 0.002
    quant = _quantize_results(sizes, dtypes, args, min_sample, stat)
    svd = _svd_results(shapes, args, min_sample, stat)
    qdq = _qdq_results(QDQ_QUICK_SIZE if args.quick else QDQ_SIZE, args, min_sample, stat)
    bars = []
    default_threads = torch.get_num_threads()
    try:
        for threads in dict.fromkeys((default_threads, 1)):
            torch.set_num_threads(threads)
            bars += _measure_bars(args, threads, min_sample)
    finally:
        torch.set_num_threads(default_threads)
    tables = _tables(quant, svd, stat) + [_qdq_table(qdq, stat)]
    tables.append(bu.bar_table(bars, "bars: per-run ratios (\"faster\": baseline time / ours; \"within\": our time / "
                                     "baseline time)"))
    return {"tables": tables, "notes": _notes(args) + _bar_notes(args), "results": quant + svd + qdq,
            "bars": bars}


def _measure_bars(args, threads, min_sample):
    """The bar records at the current thread count. --quick leaves out the bars whose calls
    last seconds (reference.py at 16M, svd_quant at 2048x2048x2816x32)."""
    g = torch.Generator().manual_seed(args.seed)
    cx = torch.randn(BAR_SIZE // ROW, ROW, generator=g).to(torch.bfloat16)
    x = cx.to(args.device)
    on_cpu = x.device.type == "cpu"
    fns = _quantize_fns(x, on_cpu)
    groups = [({k: fns[k] for k in ("quantize", "quantize out=", "torch fp8 cast", "buf16.copy_(x)")}, QUANT_BARS)]
    small = x.reshape(-1)[:SMALL].reshape(1, SMALL).clone()
    small_codes, small_scales = mxfp4_quantize(small)
    small_y8 = small.to(torch.float8_e4m3fn)
    groups.append(({"quantize": lambda: mxfp4_quantize(small), "torch fp8 cast": lambda: small.to(torch.float8_e4m3fn),
                    "dequantize": lambda: mxfp4_dequantize(small_codes, small_scales),
                    "torch fp8 decode": lambda: small_y8.to(torch.bfloat16)}, SMALL_BARS))
    x32 = torch.randn(QDQ_SIZE, generator=g).to(args.device)
    groups.append(({"quant_dequant_mxfp4": lambda: quant_dequant_mxfp4(x32),
                    "fp8 round trip": lambda: x32.to(torch.float8_e4m3fn).to(torch.float32)}, QDQ_BARS))
    if not args.quick:
        # Calls of seconds: at most SLOW_RUNS runs; the reference one sample per run (at 16M its
        # ratio's margin is wide), svd_quant 3.
        groups.append(({"quantize": fns["quantize"], "reference": lambda: ref.mxfp4_quantize_ref(cx)}, (REFERENCE_BAR,),
                       {"repeat": 1, "warmup": 0, "min_sample_s": 0.0, "runs": SLOW_RUNS}))
        groups.append((_svd_fns(MATMUL_BAR[0], args), MATMUL_BARS, {"repeat": min(args.repeat, 3), "warmup": 1,
                                                                   "min_sample_s": 0.0, "runs": SLOW_RUNS}))
    ratios = bu.measure_bars(groups, args.runs, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample,
                             sync=args.sync)
    return [bu.bar_record("svd_quant", b, threads, ratios[b.label]) for _fns, bars, *_ in groups for b in bars]


def _bar_notes(args):
    notes = [f"bars: {args.runs} back-to-back runs per thread count, each timing one bar's callables with "
             f"{args.repeat} interleaved samples (the reference at 16M: one sample per run; svd_quant at "
             f"2048x2048x2816x32: 3; both in at most {SLOW_RUNS} runs); a run's ratio is that of the medians; judged on the median over the runs."]
    if args.quick:
        notes.append("--quick: the 16M reference.py bar and the 2048x2048x2816x32 svd_quant bar are not measured.")
    return notes


def _qdq_results(n, args, min_sample, stat):
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(n, generator=g).to(args.device)
    fns = {"quant_dequant_mxfp4": lambda: quant_dequant_mxfp4(x),
           "fp8 round trip": lambda: x.to(torch.float8_e4m3fn).to(torch.float32)}
    stats = bu.measure_many(fns, repeat=args.repeat, warmup=args.warmup, min_sample_s=min_sample, sync=args.sync)
    return [{"part": "quant_dequant_mxfp4", "elements": n, "kernel": name, "time_s": getattr(st, stat),
             "max_s": max(st.samples), **st.as_dict()} for name, st in stats.items()]


def _qdq_table(qdq, stat):
    by = {r["kernel"]: r for r in qdq}
    ours, base = by["quant_dequant_mxfp4"], by["fp8 round trip"]
    row = [bu.format_size(ours["elements"])]
    for r in (ours, base):
        row += [f"{r['min_s'] * 1e3:.2f} / {r['median_s'] * 1e3:.2f} / {r['max_s'] * 1e3:.2f}"]
    row.append(f"{base['time_s'] / ours['time_s']:.2f}x")
    return {"title": f"quant_dequant_mxfp4 (float32, flat) vs x.to(float8_e4m3fn).to(float32) (min / median / max ms "
                     f"per call; ratio of the {stat}s)",
            "columns": ["elements", "quant_dequant_mxfp4 ms", "fp8 round trip ms", "round trip / ours"], "rows": [row]}


def _index(results, key):
    return {(tuple(r[k] for k in key), r["kernel"]): r for r in results}


def _ms3(r):
    return f"{r['min_s'] * 1e3:.3g} / {r['median_s'] * 1e3:.3g} / {r['max_s'] * 1e3:.3g}"


def _tables(quant, svd, stat):
    q = _index([r for r in quant if r["part"] == "quantize"], ("dtype", "elements"))
    q_rows = []
    for (dt, n), _ in sorted({(key, 0) for key, _k in q}, key=lambda t: (t[0][0], t[0][1])):
        ours, out = q[((dt, n), "quantize")], q[((dt, n), "quantize out=")]
        cast, copy, theirs = q[((dt, n), "torch fp8 cast")], q[((dt, n), "buf16.copy_(x)")], q.get(((dt, n), "reference"))
        sim = q.get(((dt, n), "AscendC kernel (sim)"))
        q_rows.append([dt, bu.format_size(n), _ms3(ours), ours["gb_per_s"], _ms3(out), _ms3(cast), _ms3(copy),
                       f"{cast['time_s'] / ours['time_s']:.2f}x", f"{out['time_s'] / copy['time_s']:.2f}x",
                       f"{theirs['time_s'] / ours['time_s']:.0f}x" if theirs else "see the bars",
                       "-" if sim is None else f"{sim['time_s'] / ours['time_s']:.1f}x"])
    s = _index([r for r in quant if r["part"] == "small"], ("dtype",))
    s_rows = [[dt, s[((dt,), "quantize")]["time_s"] * 1e6, s[((dt,), "torch fp8 cast")]["time_s"] * 1e6,
               f"{s[((dt,), 'quantize')]['time_s'] / s[((dt,), 'torch fp8 cast')]['time_s']:.2f}x"]
              for (dt,) in dict.fromkeys(k for k, _ in s)]
    m = _index(svd, ("shape",))
    m_rows = []
    for shape in dict.fromkeys(r["shape"] for r in svd):
        ours, base = m[((shape,), "svd_quant")], m[((shape,), "bf16 matmul")]
        m_rows.append(["x".join(map(str, shape)), ours["time_s"] * 1e3, base["time_s"] * 1e3,
                       f"{ours['time_s'] / base['time_s']:.2f}x"])
    return [
        {"title": "mxfp4_quantize (ms per call, min / median / max; GB/s of input + codes + scales at the "
                  f"{stat}); ratios of the {stat}s",
         "columns": ["dtype", "elements", "op ms", "op GB/s", "out= ms", "fp8 cast ms", "copy_ ms",
                     "cast / op", "out= / copy_", "reference / op", "sim kernel / op"], "rows": q_rows},
        {"title": f"mxfp4_quantize of {SMALL} elements vs torch's fp8 cast ({stat} us per call)",
         "columns": ["dtype", "op us", "fp8 cast us", "op / cast"], "rows": s_rows},
        {"title": f"svd_quant vs the plain bf16 ATen matmul x @ w_hat.T of the same shape ({stat} ms per call)",
         "columns": ["S x K x N x R", "svd_quant ms", "bf16 matmul ms", "svd_quant / matmul"], "rows": m_rows},
    ]


def _notes(args):
    notes = [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} warm-up "
             f"call(s), op and baseline samples interleaved; {torch.get_num_threads()} torch threads."]
    load = bu.load_average()
    if load is not None:
        notes.append(f"load average at the end: {load}")
    return notes


# The shape of the bar: the fused kernel's estimate <= 0.7x a plain bf16 matmul's (upstream
# publishes 2188 us vs 3446 us for MatMulV3 on Ascend 950).
NPU_BAR_SHAPE, NPU_BAR = (32768, 2048, 10944, 32), 0.7


def npu_estimate(args):
    """``--npu-estimate``: the AscendC kernels, estimated by the kernel sim's cost model: the MXFP4
    quantizer of mxfp4_quantize, and svd_quant's fused kernel (MIX: the quantizer on the AIV cores,
    the three matmuls on the AIC; cost-only, so the Matmul arithmetic is skipped) beside a plain bf16
    matmul of the same shape (``_sim_matmul_estimate``). The fused kernel is dav-3510 code, run in
    the sim by every build (docs/kernel_sim.md); estimate it with ``--soc ascend950``."""
    sizes = (list(dict.fromkeys(n for group in args.sizes for n in group)) if args.sizes is not None
             else bu.parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES))
    dtypes = (list(dict.fromkeys(d for group in args.dtypes for d in group)) if args.dtypes is not None
              else [torch.bfloat16])
    shapes = ([s for group in args.shapes for s in group] if args.shapes is not None
              else [_shape(t) for t in (QUICK_SHAPES if args.quick else DEFAULT_SHAPES)] + [NPU_BAR_SHAPE])
    cases = []
    for dtype in dtypes:
        for n in sizes:
            def quantize(n=n, dtype=dtype):
                x = torch.randn(n // ROW, ROW, generator=torch.Generator().manual_seed(args.seed)).to(dtype)
                torch.ops.amct._mxfp4_quantize_emulated(x, "round")  # the AscendC kernel in the sim
            cases.append((f"mxfp4_quantize {bu.dtype_label(dtype)} {bu.format_size(n)}", quantize))
    result = bu.npu_estimate_tables(cases, args, "svd_quant: estimated NPU time of the AscendC kernels per call")
    info = amct_ops.build_info()
    fused_available = "dav-3510" in info.get("sim_archs", {}).get("svd_quant", [info["npu_arch"]])
    rows = result["tables"][0]["rows"]
    for s, k, n, r in shapes:
        label = f"svd_quant S,K,N,R={s},{k},{n},{r}"
        records = []
        if fused_available and args.soc == "ascend950":
            g = torch.Generator().manual_seed(args.seed)
            x = torch.randn(s, k, generator=g).to(torch.bfloat16)
            codes, scales = mxfp4_quantize(torch.randn(n, k, generator=g))
            down = (torch.randn(k, r, generator=g) / k ** 0.5).to(torch.bfloat16)
            up = torch.randn(r, n, generator=g).to(torch.bfloat16)
            sample = args.sample_blocks if args.sample_blocks is not None else 0
            records = bu.estimate_launches(lambda: torch.ops.amct._svd_quant_emulated(x, codes, scales, down, up),
                                           args.soc, sample, cost_only=True)
            rows += bu._estimate_rows(f"{label} (fused kernel, cost-only)", records)
            result["results"] += [{"case": label, **rec} for rec in records]
        plain = json.loads(torch.ops.amct._sim_matmul_estimate(args.soc, s, k, n, "bfloat16"))
        rows += bu._estimate_rows(f"bf16 matmul {s}x{k} . {k}x{n} (cost-only)", [plain])
        result["results"] += [{"case": f"bf16 matmul {s},{k},{n}", **plain}]
        if records:
            ratio = records[0]["estimate_us"] / plain["estimate_us"]
            bar = ""
            if (s, k, n, r) == NPU_BAR_SHAPE:
                record = bu.estimate_bar(f"svd_quant fused kernel vs bf16 matmul, S,K,N,R={s},{k},{n},{r}",
                                         records[0], plain, NPU_BAR, args.soc)
                result["bars"].append(record)
                bar = f" (bar <= {NPU_BAR}x: {'met' if record['met'] else 'NOT met'})"
            result["notes"].append(f"svd_quant {s},{k},{n},{r}: fused kernel / bf16 matmul = {ratio:.2f}x{bar}; bound "
                                   f"pipes {bu.bound_pipe(records[0])} and {bu.bound_pipe(plain)} (estimates)")
    if args.soc == "ascend910b":
        result["notes"].append("svd_quant: the mxfp4_quantize rows are the MXFP4 activation quantizer kernel alone; "
                               "on 910B the NPU svd_quant is a host composition of that kernel and torch_npu "
                               "matmuls (outside the model), so there the quantizer's row is a lower bound of the op.")
    if not fused_available:
        result["notes"].append("svd_quant: this build has no dav-3510 sim kernels (build_info()['sim_archs']): "
                               "only the bf16 matmul rows.")
    elif args.soc != "ascend950":
        result["notes"].append(f"svd_quant: the fused kernel is dav-3510 code (Ascend 950 only), not estimated on "
                               f"{args.soc}: only the bf16 matmul rows; --soc ascend950 for the fused kernel's.")
    return result
