"""Benchmark of npu_stem_indexer: ``python -m amct_ops bench stem_indexer``.

Case (the CPU time limits of docs/stem_indexer.md §7.1): B=1, Nq=32, Nk=4, q = kv = prompt tokens (8K, 32K, 128K by
default), random inputs, causal (``--non-causal`` for the full mask), alpha 0.5. In the same run,
with samples interleaved, it times:

* ``op``        npu_stem_indexer (metadata made once, outside the timing);
* ``matmul``    the bare fp32 score matmul of the visible blocks: per kv head and query tile of
                256 query rows, ``torch.mm(Q, K[:vis_max]^T)`` on fp32 copies made before timing
                (no bf16 conversion, no bias, no selection), the tiles spread over one thread per
                torch thread with single-threaded mm: the floor any implementation pays;
* ``reference`` reference.stem_indexer_reference, at the sizes of ``--reference-sizes`` (8K).

Each sample is the mean time of as many back-to-back calls of one callable as last at least
``--min-sample-ms`` (default 20 ms: about 10 calls of the op at 8K, one call of everything at
128K and of the reference), so that a short call is timed in its own steady state rather than
as the first call after the 45 ms reference, which on these VMs costs it 0.5-1.5 ms more
(caches, and the machine's own wake-up after the reference's Python loop). ``--min-sample-ms 0``
times single calls, each right after the previous callable's.

Bars: at 128K tokens, op <= 1.5x matmul; at 8K, op >= 20x faster than the reference.
This is a script, not a test: nothing here runs in the test suite.
"""
import concurrent.futures
import json

import torch

from amct_ops import _benchutil as bu
from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
from amct_ops.stem_indexer import reference as ref

DESCRIPTION = "StemIndexer wall time at 8K/32K/128K tokens (B=1, 32/4 heads) vs the bare score matmul and reference.py"

DEFAULT_SIZES = "8K,32K,128K"
QUICK_SIZES = "8K,32K"
B, NQ, NK = 1, 32, 4
MATMUL_BAR = (128 << 10, 1.5)     # tokens, max op / matmul
REFERENCE_BAR = (8 << 10, 20.0)   # tokens, min reference / op
SLOW_RUNS = 3                     # runs of the 128K bar (about a second per call)
# Measured in --runs runs each (min / median / max of the per-run ratios; judged on the median).
BARS = {
    REFERENCE_BAR[0]: (bu.Bar("npu_stem_indexer 8K tokens vs reference.py", "op", "reference", "faster",
                              REFERENCE_BAR[1], "reference.py (pure PyTorch)", headline="npu_stem_indexer"),),
    MATMUL_BAR[0]: (bu.Bar("npu_stem_indexer 128K tokens vs the bare score matmul", "op", "matmul", "within",
                           MATMUL_BAR[1], "fp32 torch.mm of the visible blocks' scores", headline="npu_stem_indexer"),),
}


def add_arguments(parser):
    parser.add_argument("--sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help=f"token counts, multiples of 128 (default {DEFAULT_SIZES}; {QUICK_SIZES} with --quick)")
    parser.add_argument("--reference-sizes", nargs="+", default=None, type=bu.argparse_type(bu.parse_sizes),
                        help="token counts at which reference.py is timed too (default 8K)")
    parser.add_argument("--non-causal", action="store_true", help="the full mask instead of the causal one")
    parser.add_argument("--alpha", type=float, default=0.5, help="the decay target alpha (default 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--min-sample-ms", type=float, default=20.0,
                        help="each sample averages back-to-back calls lasting at least this long (default 20; "
                             "0: single calls)")


def _inputs(tokens, seed):
    blocks = tokens // 128
    g = torch.Generator().manual_seed(seed)
    qflat = (torch.rand(B, NQ, blocks, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
    kflat = (torch.rand(B, NK, blocks, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
    vbias = torch.rand(B, NK, blocks, generator=g) * 2 - 1
    lens = torch.tensor([tokens], dtype=torch.int32)
    return qflat, kflat, vbias, lens


def _bare_matmul(qflat, kflat, causal):
    """Closure timing the fp32 matmuls of the visible blocks, tile by tile (256 query rows).

    The tiles are spread over one Python thread per torch thread, each running single-threaded
    torch.mm (which releases the GIL): on this kind of small GEMM that is much faster than
    torch.mm's own threading, so the baseline is not handicapped.
    """
    G = NQ // NK
    tq = max(1, 256 // G)
    blocks = qflat.size(2)
    q32 = qflat.float()
    k32 = kflat.float()
    tiles = [(n, i0, min(blocks, i0 + tq)) for n in range(NK) for i0 in range(0, blocks, tq)]
    workers = max(1, torch.get_num_threads())
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)

    def part(w):
        for n, i0, i1 in tiles[w::workers]:
            vis = i1 if causal else blocks
            torch.mm(q32[0, n * G:(n + 1) * G, i0:i1].reshape(-1, 2048), k32[0, n, :vis].t())

    def fn():
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            list(pool.map(part, range(workers)))
        finally:
            torch.set_num_threads(threads)
    return fn


def _flop(blocks, causal):
    rows = NQ * blocks
    vis = blocks * (blocks + 1) / 2 if causal else blocks * blocks
    return 2.0 * 2048 * NQ * vis if rows else 0.0


def run(args):
    from amct_ops._cli import BenchUnavailable

    sizes = sorted({n for g in args.sizes for n in g}) if args.sizes else bu.parse_sizes(
        QUICK_SIZES if args.quick else DEFAULT_SIZES)
    ref_sizes = {n for g in args.reference_sizes for n in g} if args.reference_sizes else {REFERENCE_BAR[0]}
    if any(n % 128 or n <= 0 for n in sizes):
        raise BenchUnavailable(f"sizes must be positive multiples of 128 tokens, got {sizes}")
    device, sync, stat = args.device, args.sync, getattr(args, "stat", "median")
    causal = not args.non_causal
    results = []
    for tokens in sizes:
        fns = _fns(tokens, args, causal, with_reference=tokens in ref_sizes)
        stats = bu.measure_many(fns, repeat=args.repeat, warmup=args.warmup,
                                min_sample_s=max(0.0, args.min_sample_ms) / 1e3, sync=sync)
        for name, st in stats.items():
            results.append({"tokens": tokens, "kernel": name, "time_s": getattr(st, stat), "stat": stat,
                            "gflop": _flop(tokens // 128, causal) / 1e9, **st.as_dict()})
    bars = _measure_bars(args, causal) if causal else []
    tables = _tables(results, sizes, stat, causal)
    if bars:
        tables.append(bu.bar_table(bars, "bars: per-run ratios (\"faster\": baseline time / op time; \"within\": "
                                         "op time / baseline time)"))
    return {"tables": tables, "notes": _notes(results, args, causal), "results": results, "bars": bars}


def _fns(tokens, args, causal, with_reference):
    """The op, the bare matmul and (optionally) the reference on one random input of ``tokens``."""
    qflat, kflat, vbias, lens = _inputs(tokens, args.seed)
    md = npu_stem_indexer_metadata(lens, lens, NQ, NK, causal=causal)
    dq, dk, dv, dl, dmd = (t.to(args.device) for t in (qflat, kflat, vbias, lens, md))
    fns = {
        "op": lambda: npu_stem_indexer(dq, dk, dv, dl, dl, metadata=dmd, causal=causal, alpha=args.alpha),
        "matmul": _bare_matmul(dq, dk, causal),
    }
    if with_reference:
        fns["reference"] = lambda: ref.stem_indexer_reference(qflat, kflat, vbias, lens, lens, causal=causal,
                                                              alpha=args.alpha)
    return fns


def _measure_bars(args, causal):
    """The causal bars at torch's default thread count and at 1 thread; --quick leaves out 128K."""
    records = []
    default_threads = torch.get_num_threads()
    try:
        for threads in dict.fromkeys((default_threads, 1)):
            torch.set_num_threads(threads)
            groups = []
            for tokens, bars in BARS.items():
                if args.quick and tokens > REFERENCE_BAR[0]:
                    continue
                fns = _fns(tokens, args, causal, with_reference=tokens == REFERENCE_BAR[0])
                names = {b.ours for b in bars} | {b.base for b in bars}
                options = {"min_sample_s": max(0.0, args.min_sample_ms) / 1e3}
                if tokens > REFERENCE_BAR[0]:  # about a second per call: fewer samples and runs
                    options.update(repeat=min(args.repeat, 3), warmup=1, runs=SLOW_RUNS)
                groups.append(({k: f for k, f in fns.items() if k in names}, bars, options))
            ratios = bu.measure_bars(groups, args.runs, repeat=args.repeat, warmup=args.warmup, sync=args.sync)
            records += [bu.bar_record("stem_indexer", b, threads, ratios[b.label]) for _f, bars, _o in groups
                        for b in bars]
    finally:
        torch.set_num_threads(default_threads)
    return records


def _get(results, tokens, kernel):
    for r in results:
        if r["tokens"] == tokens and r["kernel"] == kernel:
            return r
    return None


def _tables(results, sizes, stat, causal):
    rows = []
    for tokens in sizes:
        op, mm, rf = (_get(results, tokens, k) for k in ("op", "matmul", "reference"))
        rows.append([bu.format_size(tokens), tokens // 128, op["gflop"], op["time_s"] * 1e3, mm["time_s"] * 1e3,
                     f"{op['time_s'] / mm['time_s']:.2f}x",
                     rf["time_s"] * 1e3 if rf else "n/a", f"{rf['time_s'] / op['time_s']:.1f}x" if rf else "n/a"])
    mask = "causal" if causal else "non-causal"
    return [{"title": f"npu_stem_indexer, B=1, Nq=32, Nk=4, {mask} ({stat} ms per call)",
             "columns": ["tokens", "blocks", "score GFLOP", "op ms", "bare matmul ms", "op / matmul", "reference ms",
                         "reference / op"],
             "rows": rows}]


def _notes(results, args, causal):
    calls = ", ".join(f"{bu.format_size(r['tokens'])} {r['kernel']} {r['calls_per_sample']}" for r in results)
    notes = [f"timing: {getattr(args, 'stat', 'median')} of {args.repeat} samples after {args.warmup} warm-up "
             f"call(s), samples interleaved; each sample the mean of back-to-back calls lasting at least "
             f"{args.min_sample_ms:g} ms (calls per sample: {calls}); {torch.get_num_threads()} torch threads; "
             f"alpha {args.alpha}."]
    load = bu.load_average()
    if load is not None:
        notes.append(f"load average at the end: {load} (the machine may be shared: ratios are only comparable "
                     "within one run).")
    if causal:
        notes.append(f"bars (causal): {args.runs} back-to-back runs per thread count of the op against its baseline "
                     f"on the same input, {args.repeat} interleaved samples per run (128K: 3 samples in at most "
                     f"{SLOW_RUNS} runs); a run's ratio is that "
                     "of the medians; judged on the median over the runs"
                     + ("; --quick leaves out 128K." if args.quick else "."))
    return notes


DECODE_BATCH, DECODE_KV = 32, 64 << 10  # the decode case of --npu-estimate: B=32, one query token, kv 64K


def _decode_inputs(seed):
    blocks = DECODE_KV // 128
    g = torch.Generator().manual_seed(seed)
    qflat = (torch.rand(DECODE_BATCH, NQ, 1, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
    kflat = (torch.rand(DECODE_BATCH, NK, blocks, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
    vbias = torch.rand(DECODE_BATCH, NK, blocks, generator=g) * 2 - 1
    q_lens = torch.ones(DECODE_BATCH, dtype=torch.int32)
    kv_lens = torch.full((DECODE_BATCH,), DECODE_KV, dtype=torch.int32)
    return qflat, kflat, vbias, q_lens, kv_lens


def npu_estimate(args):
    """``--npu-estimate``: the fused AscendC kernel (cube scores and vector selection, run by
    ``_npu_stem_indexer_emulated``) at each prefill size and at a decode shape (B=32, one query token,
    kv 64K), estimated by the kernel sim's cost model, beside the estimated bare bf16 score matmul of the
    same visible blocks; the causal 128K row's ratio to its matmul is the issue's bar (<= 1.5x)."""
    sizes = sorted({n for g in args.sizes for n in g}) if args.sizes else bu.parse_sizes(
        QUICK_SIZES if args.quick else DEFAULT_SIZES)
    causal = not args.non_causal
    emulated = torch.ops.amct._npu_stem_indexer_emulated
    cases = []
    for tokens in sizes:
        qflat, kflat, vbias, lens = _inputs(tokens, args.seed)
        md = npu_stem_indexer_metadata(lens, lens, NQ, NK, causal=causal)
        cases.append((f"{tokens // 1024}K tokens{'' if causal else ' non-causal'}",
                      lambda q=qflat, k=kflat, v=vbias, ln=lens, m=md: emulated(
                          q, k, v, ln, ln, metadata=m, causal=causal, alpha=args.alpha)))
    qflat, kflat, vbias, q_lens, kv_lens = _decode_inputs(args.seed)
    md = npu_stem_indexer_metadata(q_lens, kv_lens, NQ, NK, causal=causal)
    cases.append((f"decode B={DECODE_BATCH} kv {DECODE_KV // 1024}K",
                  lambda q=qflat, k=kflat, v=vbias, ql=q_lens, kl=kv_lens, m=md: emulated(
                      q, k, v, ql, kl, metadata=m, causal=causal, alpha=args.alpha)))
    out = bu.npu_estimate_tables(
        cases, args, "stem_indexer: estimated NPU time of the fused AscendC kernel per call", needs_arithmetic=True,
        notes=["stem_indexer runs with the cube's arithmetic even under --cost-only: its selection works on the "
               "scores, and without them (UB poison, NaN) every row would be one NaN bucket and skip the search.",
               "stem_indexer: the fused MIX 1:2 kernel whole: the AIC's own program (basic cube API: DataCopy "
               "ND2NZ, LoadData, Mmad, Fixpipe) scores per 256-block chunk the pair of Top-K row groups (up to 32 "
               "rows each) of its two AIVs' halves of a tile in one matmul, its keys read once, fp32 C by one "
               "dual-destination Fixpipe into both AIVs' UB score slots (2 per AIV, so the cube runs up to 2 "
               "chunks ahead); the AIVs add vbias, build the keys, select Top-K and emit by GatherMask; 'bound' "
               "of a MIX row is the busiest pipe of any of its cores.",
               "stem_indexer 'bare score matmul' rows: torch.ops.amct._sim_matmul_estimate of one plain bf16 "
               "(M x 2048) x (2048 x N) matmul with the FLOPs of the case's visible blocks (M = Nq * query blocks, "
               "N = the mean visible key blocks per row); it shares one B across all rows, so it reads less GM "
               "than the per-kv-head, per-batch score matmuls do (decode above all): a compute floor."])
    cases_mm = [(f"{t // 1024}K tokens", NQ * (t // 128), _mean_visible(t // 128, causal)) for t in sizes]
    cases_mm.append((f"decode B={DECODE_BATCH} kv {DECODE_KV // 1024}K", DECODE_BATCH * NQ, DECODE_KV // 128))
    fused = {r["case"]: r["estimate_us"] for r in out["results"]}
    fused_records = {r["case"]: r for r in out["results"]}
    bar_case = f"{MATMUL_BAR[0] // 1024}K tokens"  # the bar's case: causal prefill at MATMUL_BAR's tokens
    for label, m, n in cases_mm:
        record = json.loads(torch.ops.amct._sim_matmul_estimate(args.soc, m, 2048, n))
        out["tables"][0]["rows"] += bu._estimate_rows(f"{label}: bare score matmul {m}x2048x{n}", [record])
        out["results"].append({"case": f"{label}: bare score matmul", **record})
        if label in fused and record["estimate_us"]:
            out["notes"].append(f"{label}: fused kernel / bare score matmul = {fused[label]:.4g} / "
                                f"{record['estimate_us']:.4g} us = {fused[label] / record['estimate_us']:.3g}x "
                                "(bar at 128K causal: <= 1.5x).")
        if label == bar_case and label in fused_records:
            out["bars"].append(bu.estimate_bar(f"stem_indexer {bar_case} causal prefill vs the bare score matmul",
                                               fused_records[label], record, MATMUL_BAR[1], args.soc))
    return out


def _mean_visible(blocks, causal):
    """Mean visible key blocks per query-block row (q = kv = blocks), rounded to the nearest block."""
    if not causal:
        return blocks
    return (blocks + 1) // 2
