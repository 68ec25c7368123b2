"""Documented wrappers over ``torch.ops.amct`` for the StemIndexer operators (docs/stem_indexer.md)."""
import torch

#: The torch.ops.amct operators of this package.
OPS = ("npu_stem_indexer", "npu_stem_indexer_metadata")


def npu_stem_indexer(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, *, num_prompt_tokens=None, metadata=None,
                     causal=True, stem_block_size=128, stem_stride=16, alpha=1.0, initial_blocks=4, window_size=4,
                     k_block_num_rate_medium=0.2, k_block_num_bias_medium=30, k_block_num_rate_large=0.1,
                     k_block_num_bias_large=30, topk_score_precision=1):
    """Score query/key blocks and select a dynamic Top-K set of key blocks per query block.

    ``qflat`` bf16 [B, Nq, maxQb, 2048] and ``kflat`` bf16 [B, Nk, maxKb, 2048] hold one row per
    128-token block (16 representatives of 8 tokens); ``vbias`` fp32 [B, Nk, maxKb] is added to
    every score; the lengths are int32 token counts [B]; ``metadata`` (required) comes from
    :func:`npu_stem_indexer_metadata`. Row (b, h, i) scores the blocks it sees,
    ``s_j = f32(f32(dot_j * 2^-6) + vbias[b, h // G, j])`` with fp32 accumulation, and selects
    blocks 0..3, the K best candidates of [4, vis - 4) (ties to the smaller index; ranked on the
    bf16 values with ``topk_score_precision=2``) and the last 4 visible blocks, in ascending order;
    rows with vis <= K + 8 take all visible blocks. K follows the spec's dynamic budget (rates
    0.2 / 0.1, biases 30, decay to ``alpha``, cap 256).

    Returns ``(sparse_indices, sparse_seq_len)``: int32 [B, Nq, maxQb, maxKb] (valid prefix,
    then -1) and int32 [B, Nq, maxQb] (prefix lengths), contiguous, on ``qflat``'s device.
    Not differentiable.
    """
    return torch.ops.amct.npu_stem_indexer(
        qflat, kflat, vbias, q_seq_lens, kv_seq_lens, num_prompt_tokens=num_prompt_tokens, metadata=metadata,
        causal=causal, stem_block_size=stem_block_size, stem_stride=stem_stride, alpha=alpha,
        initial_blocks=initial_blocks, window_size=window_size, k_block_num_rate_medium=k_block_num_rate_medium,
        k_block_num_bias_medium=k_block_num_bias_medium, k_block_num_rate_large=k_block_num_rate_large,
        k_block_num_bias_large=k_block_num_bias_large, topk_score_precision=topk_score_precision)


def npu_stem_indexer_metadata(q_seq_lens, kv_seq_lens, q_heads, kv_heads, *, causal=True, stem_block_size=128,
                              dim_qkflat=2048, window_size=4):
    """The core-split table of :func:`npu_stem_indexer`: int32 [capacity(B, kv_heads)].

    capacity = AlignUp(16 + B * kv_heads * 108 * 16, 4096) words; word 0 is the section count,
    then 36 records of 16 words per section (spec §6). The content depends only on the lengths,
    the head counts and ``causal``, never on the device. The CPU op never reads it; on the NPU
    metadata made from other lengths gives unspecified results.
    """
    return torch.ops.amct.npu_stem_indexer_metadata(
        q_seq_lens, kv_seq_lens, q_heads, kv_heads, causal=causal, stem_block_size=stem_block_size,
        dim_qkflat=dim_qkflat, window_size=window_size)
