"""Documented wrappers over ``torch.ops.amct`` for the HiFloat8 operators."""
import torch

#: The torch.ops.amct operators of this package.
OPS = ("encode_to_hifloat8", "decode_from_hifloat8", "hifloat8_fake_quant")


def encode_to_hifloat8(x, *, out=None):
    """Encode a float16 or bfloat16 tensor to HiFloat8 codes.

    Returns a contiguous uint8 tensor of ``x``'s shape on ``x``'s device. Each code is the
    nearest finite HiF8 value with ties away from zero; finite values of magnitude >= 28672
    saturate to +-32768 (0x6E/0xEE); a zero result is 0x00 (there is no -0); NaN gives 0x80,
    +-Inf give 0x6F/0xEF. float16 subnormal inputs are encoded by their value, bfloat16
    subnormals give 0x00. Any other dtype (float32 included) raises RuntimeError.
    Not differentiable.

    ``out``: an optional uint8 tensor on ``x``'s device to write the codes into and return, of
    ``x``'s shape or with no elements (then it is resized to ``x``'s shape); any other shape
    raises RuntimeError. Any strides; it may not share memory with ``x``. A warm ``out`` saves
    the page faults of a fresh output.
    """
    if out is None:
        return torch.ops.amct.encode_to_hifloat8(x)
    return torch.ops.amct.encode_to_hifloat8.out(x, out=out)


def decode_from_hifloat8(x, dtype=torch.bfloat16, *, out=None):
    """Decode uint8 HiFloat8 codes to ``dtype`` (float16, bfloat16 — the default — or float32).

    Decoding is exact: every finite HiF8 value is representable in all three dtypes (in
    float16 the 18 codes below 2^-14 become subnormals). Code 0x80 gives NaN, 0x6F/0xEF give
    +-Inf. ``dtype=None`` also means bfloat16. Returns a contiguous tensor of ``x``'s shape.

    ``out``: an optional tensor of dtype ``dtype`` to write into and return (shape rule as in
    :func:`encode_to_hifloat8`).
    """
    if out is None:
        return torch.ops.amct.decode_from_hifloat8(x, dtype)
    return torch.ops.amct.decode_from_hifloat8.out(x, dtype, out=out)


def hifloat8_fake_quant(x, *, out=None):
    """Round a float16, bfloat16 or float32 tensor to the nearest HiFloat8 value, same dtype.

    float16/bfloat16: bitwise ``decode_from_hifloat8(encode_to_hifloat8(x), x.dtype)``.
    float32 is encoded from its own bits (no rounding through bfloat16); float32 subnormals
    give +0. Saturation, NaN, +-Inf and +0 for zero results as in ``encode_to_hifloat8``.
    The gradient is straight-through: ``grad_input = grad_output`` everywhere.

    ``out``: an optional tensor of ``x``'s dtype to write into and return (shape rule as in
    :func:`encode_to_hifloat8`); ``out=x`` rounds in place. Like ATen's out= functions, the out=
    form does not record a gradient.
    """
    if out is None:
        return torch.ops.amct.hifloat8_fake_quant(x)
    return torch.ops.amct.hifloat8_fake_quant.out(x, out=out)
