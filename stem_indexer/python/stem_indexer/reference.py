"""Executable specification of the StemIndexer operators (docs/stem_indexer.md §4, §5, §6).

Pure PyTorch and the standard library. This module is the test oracle: it transcribes the
per-row semantics (§4), the dynamic Top-K budget with its single-rounding fused step (§5) and
the metadata capacity (§6) directly, without the optimisations of the operator.
"""
import math
import struct

import torch

BLOCK = 128       # stem_block_size (tokens per block)
SINK = 4          # initial_blocks
WIN = 4           # window_size
MAXK = 256        # cap on the dynamic count
DIM = 2048        # last dim of qflat / kflat (stem_stride * 128)
SCALE = 2.0 ** -6  # 1/64: a row-row dot stands for 64 token pairs


def f32(x):
    """``x`` rounded to binary32, to nearest even (returned as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def cb(tokens):
    """Token count to block count: ceil(tokens / 128)."""
    return -(-int(tokens) // BLOCK)


def k_start(P, rate_medium=0.2, bias_medium=30, rate_large=0.1, bias_large=30):
    """The budget of the first rows (§5 tiers) for P prompt blocks."""
    P = int(P)
    if P < 56:
        return P
    rate, bias = (rate_medium, bias_medium) if P < 160 else (rate_large, bias_large)
    return math.trunc(f32(f32(f32(P) * f32(rate)) + bias))


def _fma_f32(t, d, c):
    """fmaf(t, d, c) for binary32 values: one rounding of the exact t*d + c.

    t*d is exact in float64 (two 24-bit significands). The sum is rounded to odd in float64
    (TwoSum gives the exact error; a non-zero error with an even last bit steps one ulp toward
    it), and rounding that to binary32 is then the correctly rounded result (53 >= 24 + 2).
    """
    p = t * d
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    if err != 0.0 and s != 0.0 and not math.isinf(s):
        mantissa_bits = struct.unpack("<Q", struct.pack("<d", s))[0]
        if mantissa_bits & 1 == 0:
            s = math.nextafter(s, math.inf if err > 0 else -math.inf)
    return f32(s)


def topk_budget(P, i, Qb, Kb, alpha=1.0, rate_medium=0.2, bias_medium=30, rate_large=0.1, bias_large=30):
    """K of row i (§5): the budget for P prompt blocks, Qb query and Kb key blocks, capped at 256."""
    ks = k_start(P, rate_medium, bias_medium, rate_large, bias_large)
    p = int(i) + int(Kb) - int(Qb)
    decay = int(P) - ks
    if p < ks or decay <= 1:
        budget = ks
    else:
        a = f32(alpha)
        k_end = f32(f32(ks) * a)
        t = f32(f32(p - ks) / f32(decay - 1))
        d = f32(k_end - f32(ks))
        v = _fma_f32(t, d, f32(ks))
        budget = 1 if v < 1 else min(math.floor(v), ks)
    return min(budget, MAXK)


def metadata_capacity(B, Nk):
    """int32 words of the metadata tensor (§6): AlignUp(16 + B*Nk*(36+72)*16, 4096)."""
    words = 16 + int(B) * int(Nk) * (36 + 72) * 16
    return -(-words // 4096) * 4096


def visible_blocks(i, Qb, Kb, causal):
    """Key blocks row i sees (§4 step 2): right-down aligned causal mask at block level."""
    if not causal:
        return Kb
    return max(Kb - Qb + i + 1, 0)


def _keys(scores, precision):
    """§4.1 sortable keys (int64 holding the unsigned key); NaN -> 0."""
    if precision == 1:
        u = scores.contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
        key = torch.where(u >= 0x80000000, (~u) & 0xFFFFFFFF, u ^ 0x80000000)
    else:
        v = scores.to(torch.bfloat16).view(torch.int16).to(torch.int64) & 0xFFFF
        key = torch.where(v >= 0x8000, (~v) & 0xFFFF, v ^ 0x8000)
    return torch.where(torch.isnan(scores), torch.zeros_like(key), key)


def _item_scores(qflat, kflat, vbias, b, n, G, Qb, vis_max):
    """f32(f32(dot * 2^-6) + vbias) for the G heads of kv head n, rows 0..Qb-1, blocks 0..vis_max-1."""
    q = qflat[b, n * G:(n + 1) * G, :Qb].to(torch.float32)
    k = kflat[b, n, :vis_max].to(torch.float32)
    dots = torch.matmul(q, k.transpose(0, 1))
    return dots * SCALE + vbias[b, n, :vis_max].to(torch.float32)


def row_scores(qflat, kflat, vbias, b, h, i, vis, precision):
    """fp32 scores of blocks 0..vis-1 of row (b, h, i) (the bf16-RNE values for precision 2)."""
    G = qflat.size(1) // kflat.size(1)
    n = h // G
    q = qflat[b, h, i].to(torch.float32)
    k = kflat[b, n, :vis].to(torch.float32)
    s = torch.matmul(k, q) * SCALE + vbias[b, n, :vis].to(torch.float32)
    return s.to(torch.bfloat16).to(torch.float32) if precision == 2 else s


def stem_indexer_reference(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, num_prompt_tokens=None, metadata=None,
                           causal=True, stem_block_size=128, stem_stride=16, alpha=1.0, initial_blocks=4,
                           window_size=4, k_block_num_rate_medium=0.2, k_block_num_bias_medium=30,
                           k_block_num_rate_large=0.1, k_block_num_bias_large=30, topk_score_precision=1):
    """(sparse_indices, sparse_seq_len) of §4, on the CPU. Ignores metadata; does not validate."""
    B, Nq, maxQb, _ = qflat.shape
    Nk, maxKb = kflat.size(1), kflat.size(2)
    G = Nq // Nk
    q_lens = [int(x) for x in q_seq_lens.cpu()]
    kv_lens = [int(x) for x in kv_seq_lens.cpu()]
    prompt = [int(x) for x in (num_prompt_tokens if num_prompt_tokens is not None else kv_seq_lens).cpu()]
    indices = torch.full((B, Nq, maxQb, maxKb), -1, dtype=torch.int32)
    seq_len = torch.zeros((B, Nq, maxQb), dtype=torch.int32)
    budget_args = (k_block_num_rate_medium, k_block_num_bias_medium, k_block_num_rate_large, k_block_num_bias_large)
    for b in range(B):
        Qb, Kb, P = cb(q_lens[b]), cb(kv_lens[b]), cb(prompt[b])
        if Qb == 0 or Kb == 0:
            continue
        rows = []  # (i, vis, K) of the Top-K rows
        for i in range(Qb):
            vis = visible_blocks(i, Qb, Kb, causal)
            if vis == 0:
                continue
            K = topk_budget(P, i, Qb, Kb, alpha, *budget_args)
            if vis <= K + SINK + WIN:
                indices[b, :, i, :vis] = torch.arange(vis, dtype=torch.int32)
                seq_len[b, :, i] = vis
            else:
                rows.append((i, vis, K))
        if not rows:
            continue
        vis_max = max(vis for _, vis, _ in rows)
        for n in range(Nk):
            keys = _keys(_item_scores(qflat, kflat, vbias, b, n, G, Qb, vis_max), topk_score_precision)
            for i, vis, K in rows:
                row_keys = keys[:, i, :].clone()  # [G, vis_max]
                row_keys[:, :SINK] = -1
                row_keys[:, vis - WIN:] = -1
                order = torch.sort(row_keys, dim=1, descending=True, stable=True).indices[:, :K]
                for g in range(G):
                    chosen = torch.sort(order[g]).values.to(torch.int32)
                    prefix = torch.cat([torch.arange(SINK, dtype=torch.int32), chosen,
                                        torch.arange(vis - WIN, vis, dtype=torch.int32)])
                    h = n * G + g
                    indices[b, h, i, :prefix.numel()] = prefix
                    seq_len[b, h, i] = prefix.numel()
    return indices, seq_len


def _visible(q_lens, kv_lens, b, i, causal):
    Qb, Kb = cb(q_lens[b]), cb(kv_lens[b])
    if i >= Qb or Kb == 0:
        return 0
    return visible_blocks(i, Qb, Kb, causal)


def compare_stem_indexer_outputs(actual, expected, qflat, kflat, vbias, q_seq_lens, kv_seq_lens, *,
                                 num_prompt_tokens=None, causal=True, topk_score_precision=1, exact=False,
                                 abs_tol=2.5e-5, rel_tol=1e-3, max_exceed_ratio=5e-3):
    """Checks ``actual`` against ``expected`` (both (sparse_indices, sparse_seq_len)).

    Raises AssertionError naming the first bad row. ``exact=True`` requires identical ordered
    prefixes; otherwise Top-K set differences are tolerated near the boundary score.
    """
    a_idx, a_len = (t.cpu() for t in actual)
    e_idx, e_len = (t.cpu() for t in expected)
    assert a_idx.shape == e_idx.shape, f"sparse_indices shape {tuple(a_idx.shape)} != {tuple(e_idx.shape)}"
    assert a_len.shape == e_len.shape, f"sparse_seq_len shape {tuple(a_len.shape)} != {tuple(e_len.shape)}"
    bad = (a_len != e_len).nonzero()
    assert bad.numel() == 0, f"sparse_seq_len differs first at row {tuple(bad[0].tolist())}: " \
                             f"{int(a_len[tuple(bad[0])])} != {int(e_len[tuple(bad[0])])}"
    B, Nq, maxQb, maxKb = a_idx.shape
    q_lens = [int(x) for x in q_seq_lens.cpu()]
    kv_lens = [int(x) for x in kv_seq_lens.cpu()]
    exceeded, total = 0, 0
    for b in range(B):
        for h in range(Nq):
            for i in range(maxQb):
                L = int(e_len[b, h, i])
                row, ref_row = a_idx[b, h, i], e_idx[b, h, i]
                where = f"row (b={b}, h={h}, i={i})"
                assert bool((row[L:] == -1).all()), f"{where}: tail after L={L} is not all -1"
                total += L
                if exact:
                    assert torch.equal(row[:L], ref_row[:L]), \
                        f"{where}: prefix {row[:L].tolist()} != expected {ref_row[:L].tolist()}"
                    continue
                if L == 0:
                    continue
                prefix = row[:L]
                vis = _visible(q_lens, kv_lens, b, i, causal)
                assert bool((prefix[1:] > prefix[:-1]).all()), f"{where}: prefix not strictly ascending"
                assert 0 <= int(prefix[0]) and int(prefix[-1]) < vis, f"{where}: index outside [0, {vis})"
                if L == vis:  # short path
                    assert torch.equal(prefix, ref_row[:L]), f"{where}: short-path prefix differs"
                    continue
                forced = set(range(SINK)) | set(range(vis - WIN, vis))
                got = set(prefix.tolist())
                want = set(ref_row[:L].tolist())
                assert forced <= got, f"{where}: forced indices {sorted(forced - got)} missing"
                diff = got ^ want
                if not diff:
                    continue
                s = row_scores(qflat, kflat, vbias, b, h, i, vis, topk_score_precision)
                boundary = float(min(s[j] for j in want - forced))
                for j in diff:
                    dist = abs(float(s[j]) - boundary)
                    if not (dist <= abs_tol or dist <= rel_tol * abs(boundary)):
                        exceeded += 1
    if not exact and total > 0:
        assert exceeded / total <= max_exceed_ratio, \
            f"{exceeded} of {total} selected indices differ beyond tolerance (ratio {exceeded / total:.3g})"
