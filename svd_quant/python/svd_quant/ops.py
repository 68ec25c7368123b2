"""Documented wrappers over ``torch.ops.amct`` for the MXFP4 and SVDQuant operators."""
import torch

#: The torch.ops.amct operators of this package.
OPS = ("mxfp4_quantize", "mxfp4_dequantize", "svd_quant", "quant_dequant_mxfp4")


def mxfp4_quantize(input, round_mode="round", *, out=None):
    """Quantize ``input`` (float16, bfloat16 or float32) to MXFP4 along its last dimension.

    Blocks of 32 consecutive elements share an E8M0 scale ``2^(sb - 127)`` with
    ``sb = clamp(E, 2, 254) - 2`` (E = the largest biased binary exponent of the block, taken
    exactly, fp16/fp32 never pre-rounded); elements become E2M1 codes of ``x / scale`` rounded by
    ``round_mode``: ``"round"`` (nearest, ties away), ``"rint"`` (ties to even) or ``"floor"``
    (toward -inf), saturating at 6. A block holding NaN or +-Inf gets scale 0xFF and codes 0.
    The last dimension K must be a multiple of 32 (K = 0 allowed).

    Returns ``(codes, scales)``: contiguous uint8 tensors on ``input``'s device, ``codes`` of shape
    ``(*lead, K/2)`` (two codes per byte, the even element in the low nibble) and ``scales`` of
    shape ``(*lead, ceil(K/64), 2)`` (one byte per block; a pad byte 0x00 ends each row when K/32
    is odd). Bit-exact on every backend. Not differentiable.

    ``out=(codes, scales)`` writes into existing tensors and returns them: on ``input``'s device,
    codes uint8 or ``torch.float4_e2m1fn_x2``, scales uint8 or ``torch.float8_e8m0fnu``, each of
    exactly the result's shape or without elements (then resized), any strides, sharing no memory
    with ``input`` or each other.
    """
    if out is not None:
        codes, scales = out
        return torch.ops.amct.mxfp4_quantize.out(input, round_mode, codes=codes, scales=scales)
    return torch.ops.amct.mxfp4_quantize(input, round_mode)


def mxfp4_dequantize(codes, scales, dtype=None, *, out=None):
    """Decode MXFP4 ``codes`` / ``scales`` (as made by :func:`mxfp4_quantize`) to ``dtype``.

    ``codes``: uint8 or ``torch.float4_e2m1fn_x2``, ``(*lead, K/2)``; ``scales``: uint8 or
    ``torch.float8_e8m0fnu``, ``(*lead, ceil(K/64), 2)``. Each value is ``e2m1(code) * 2^(sb-127)``,
    exact in float32 and rounded to nearest-even to ``dtype`` (bfloat16 when None, float16 or
    float32); scale 0xFF gives NaN, the pad byte is ignored. Not differentiable.

    ``out=`` writes into an existing tensor and returns it: on ``codes``' device, of dtype
    ``dtype`` (bfloat16 when None), of exactly the result's shape or without elements (then
    resized), any strides, sharing no memory with ``codes`` or ``scales``.
    """
    if out is not None:
        return torch.ops.amct.mxfp4_dequantize.out(codes, scales, dtype, out=out)
    return torch.ops.amct.mxfp4_dequantize(codes, scales, dtype)


def svd_quant(activation, weights, scales, down, up):
    """SVDQuant matmul: ``bf16(bf16(bf16(X @ down) @ up) + bf16(Q(X) @ Q(W).T))``.

    ``activation`` X: bfloat16 ``(*B, S, K)``; ``weights``: packed E2M1 ``(N, K/2)`` and ``scales``
    ``(N, ceil(K/64), 2)`` (uint8, or float4_e2m1fn_x2 / float8_e8m0fnu); ``down``: bfloat16
    ``(K, R)``; ``up``: bfloat16 ``(R, N)``. ``Q(X)`` is :func:`mxfp4_quantize` in "round" mode;
    the low-rank branch uses the unquantized X. Returns bfloat16 ``(*B, S, N)``, contiguous, on
    ``activation``'s device. K must be a multiple of 32 (any such K). Not differentiable.
    """
    return torch.ops.amct.svd_quant(activation, weights, scales, down, up)


def quant_dequant_mxfp4(x, block_size=32, inv_scale_factor_scale=1.0):
    """MXFP4 fake-quant of ``x`` (float16, bfloat16 or float32, rank >= 1) along its last dimension.

    Upstream's activation quant-dequant (CANN AMCT experimental ``quant_dequant_mxfp4``), computed
    exactly: per block of 32 elements (a last dimension that is not a multiple of 32 is zero-padded
    per row, the padding dropped), ``m = max|x|``, ``raw = max(m * s / 6, 2^-30)`` with ``s`` =
    ``inv_scale_factor_scale`` rounded to float32, ``scale = 2^E`` with E the integer nearest to
    ``log2(raw)`` (never a tie), ``out = sign(x) * q * scale`` with ``q`` the E2M1 value nearest
    ``|x| / scale``, midpoints rounding up, saturating at 6. ``block_size`` must be 32 and ``s``
    positive and finite. A block holding NaN or +-Inf becomes all NaN; +-0 give +0. Computed in
    float32 and rounded to x's dtype (exact for bfloat16; float16 can underflow or overflow).
    Returns a contiguous tensor of x's shape and dtype on x's device.

    The gradient is straight-through: ``grad_x = grad_output``.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"quant_dequant_mxfp4: x must be a torch.Tensor, got {type(x).__name__}")
    return torch.ops.amct.quant_dequant_mxfp4.last_dim(x, block_size, inv_scale_factor_scale)
