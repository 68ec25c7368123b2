"""Exact oracles of the CPU StemIndexer op on random data, shared by the operator tests.

The CPU op sums each score's 2048 products in order d = 0..2047 in fp32 (every product of two
bf16 values is exact in fp32), so its scores are deterministic. ``sequential_dots`` computes that
sum independently (numpy's sequential accumulate), and ``sequential_reference`` is reference.py's
selection (docs/stem_indexer.md §4) fed with those scores instead of its torch.matmul ones: the op must equal it bit
for bit, Top-K sets included. ``topk_rows`` counts the rows that reach the Top-K selection from
the lengths alone, by the §5 rule (short path when vis <= K + 8).
"""
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
_REFERENCE = REPO / "stem_indexer" / "python" / "stem_indexer" / "reference.py"
ref = load_source_module("stem_indexer_reference_oracle", _REFERENCE)

PRODUCTS_PER_CHUNK = 1 << 24  # bounds the [rows, keys, 2048] products array to 64 MB


def sequential_dots(queries, keys):
    """[rows, keys] fp32: per (query row, key), the running fp32 sum over d in order of the
    products (each exact in fp32: two bf16 significands; no overflow or underflow in the tests'
    values), with numpy's sequential accumulate. ``queries`` [..., 2048], ``keys`` [keys, 2048]."""
    q = queries.float().reshape(-1, queries.size(-1)).numpy()
    k = keys.float().numpy()
    out = np.empty((q.shape[0], k.shape[0]), dtype=np.float32)
    rows = max(1, PRODUCTS_PER_CHUNK // max(1, k.size))
    with np.errstate(invalid="ignore"):  # inf - inf in the special-value tests
        for r in range(0, q.shape[0], rows):
            products = q[r:r + rows, None, :] * k[None, :, :]
            out[r:r + rows] = np.add.accumulate(products, axis=-1, dtype=np.float32)[..., -1]
    return torch.from_numpy(out)


def _sequential_item_scores(qflat, kflat, vbias, b, n, G, Qb, vis_max):
    """reference._item_scores with the dots summed in the CPU op's order: f32(f32(dot * 2^-6) + vbias)."""
    q = qflat[b, n * G:(n + 1) * G, :Qb]
    dots = sequential_dots(q, kflat[b, n, :vis_max]).reshape(G, Qb, vis_max)
    return dots * ref.SCALE + vbias[b, n, :vis_max].to(torch.float32)


_sequential = load_source_module("stem_indexer_reference_sequential", _REFERENCE)
_sequential._item_scores = _sequential_item_scores


def sequential_reference(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, **kwargs):
    """(sparse_indices, sparse_seq_len) of reference.stem_indexer_reference with sequential scores."""
    return _sequential.stem_indexer_reference(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, **kwargs)


def topk_rows(q_lens, kv_lens, prompt, causal, alpha=1.0, heads=1):
    """(Top-K rows, all valid rows) of a call, from the lengths by §4/§5: row (b, i) with vis > 0
    visible blocks is a Top-K row when vis > K + 8 (K its budget), counted once per query head."""
    top = total = 0
    for b, (q, kv) in enumerate(zip(q_lens, kv_lens)):
        Qb, Kb = ref.cb(q), ref.cb(kv)
        P = ref.cb(prompt[b] if prompt is not None else kv)
        if Qb == 0 or Kb == 0:
            continue
        for i in range(Qb):
            vis = ref.visible_blocks(i, Qb, Kb, causal)
            if vis == 0:
                continue
            total += 1
            top += vis > ref.topk_budget(P, i, Qb, Kb, alpha) + ref.SINK + ref.WIN
    return top * heads, total * heads


def forced_count(sparse_seq_len, q_lens, kv_lens, causal):
    """Selected indices of Top-K rows that the rules force (sink 0..3 and window vis-4..vis-1)."""
    count = 0
    B, _, maxQb = sparse_seq_len.shape
    for b in range(B):
        Qb, Kb = ref.cb(q_lens[b]), ref.cb(kv_lens[b])
        for i in range(min(Qb, maxQb)):
            vis = ref.visible_blocks(i, Qb, Kb, causal) if Kb else 0
            lens = sparse_seq_len[b, :, i]
            count += int(((lens > 0) & (lens < vis)).sum()) * (ref.SINK + ref.WIN)
    return count


def compare_within_tolerance(actual, expected, qflat, kflat, vbias, q_seq_lens, kv_seq_lens, *, causal=True,
                             max_exceed_ratio=5e-3, **kwargs):
    """reference.compare_stem_indexer_outputs (exact=False) with its ratio taken over the selected
    indices that are not forced: it divides by all of ΣL, so the allowed count is scaled by
    (ΣL - forced) / ΣL (the forced ones are compared exactly by it in any case)."""
    lens = expected[1]
    total = int(lens.sum())
    forced = forced_count(lens, [int(v) for v in q_seq_lens], [int(v) for v in kv_seq_lens], causal)
    ratio = max_exceed_ratio * (total - forced) / total if total else max_exceed_ratio
    ref.compare_stem_indexer_outputs(actual, expected, qflat, kflat, vbias, q_seq_lens, kv_seq_lens, causal=causal,
                                     max_exceed_ratio=ratio, **kwargs)
