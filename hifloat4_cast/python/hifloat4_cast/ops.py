"""Documented wrappers over ``torch.ops.amct`` for the HiFloat4 operators."""
import torch

#: The torch.ops.amct operators of this package.
OPS = ("hifloat4_fake_quant", "hifloat4_pack", "hifloat4_unpack")

_OUT_RULE = """
    With ``out=``, the result is written into the given tensor(s) and returned, as ATen's ``.out``
    overloads do (``torch.ops.amct.<op>.out``): each must have the result's dtype and the inputs'
    device, and either the result's shape or no elements (it is then resized); any strides are
    accepted. An out may not share memory with the inputs (fake-quant's may be its input itself:
    it rounds in place). Like ATen's out= functions, these do not support autograd."""


# The overloads, resolved once at import: a call on torch.ops.amct.<op> (the overload packet)
# matches the arguments against every overload's schema first (0.4-1 us of a 4-9 us 1K call on a
# 2-core AMD EPYC).
_ops = torch.ops.amct
_FAKE_QUANT, _FAKE_QUANT_OUT = _ops.hifloat4_fake_quant.default, _ops.hifloat4_fake_quant.out
_PACK, _PACK_OUT = _ops.hifloat4_pack.default, _ops.hifloat4_pack.out
_UNPACK, _UNPACK_OUT = _ops.hifloat4_unpack.default, _ops.hifloat4_unpack.out


def _no_grad_with_out(op, *tensors):
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"{op}: out= does not support automatic differentiation, but an input requires grad")


def hifloat4_fake_quant(x, qdim=-1, *, out=None):
    """Round ``x`` (float16, bfloat16 or float32) to HiFloat4 along ``qdim``; same shape and dtype.

    Blocks of 64 consecutive elements along ``qdim`` (its length must be a multiple of 64;
    negative ``qdim`` counts from the end) share an E6M2 block scale S, a per-8 and a per-4
    exponent flag, and 3-bit codes: each value becomes ``sign * c/4 * 2^(l2 + l3) * S`` with
    c in 0..7 (docs/hifloat4.md). Results are bit-exact on every backend and for every
    thread count, core count and tile size. -0.0 gives +0.0; a negative value that quantises to
    zero gives -0.0. A block holding a NaN or +-Inf becomes all NaN (quiet NaN); the other
    blocks are unaffected. Returns a contiguous tensor on ``x``'s device.

    The gradient is straight-through: ``grad_input = grad_output`` everywhere, and gradients
    still pass through NaN-poisoned blocks unchanged (a finite upstream gradient stays finite).
    """
    if out is None:
        return _FAKE_QUANT(x, qdim)
    _no_grad_with_out("hifloat4_fake_quant", x)
    return _FAKE_QUANT_OUT(x, qdim, out=out)


def hifloat4_pack(x, *, out=None):
    """Pack ``x`` (float16, bfloat16 or float32) into HiFloat4 bytes along the last dimension.

    The last dimension n must be a multiple of 64. Returns ``(scale, value)``, contiguous uint8
    tensors on ``x``'s device: ``scale`` of shape (*lead, n/64, 4) holds per block the E6M2 byte
    (0xFF for a block holding NaN or +-Inf), the per-8 flags and the two per-4 flag bytes (most
    significant bit first); ``value`` of shape (*lead, n/2) holds two codes per byte, the even
    element in the low nibble, nibble = 8 * [x < 0] + c. float16 and bfloat16 inputs give the
    bytes of their exact float32 widening. Not differentiable. ``out``: a ``(scale, value)`` pair.
    """
    if out is None:
        return _PACK(x)
    scale, value = out
    _no_grad_with_out("hifloat4_pack", x)
    return _PACK_OUT(x, scale=scale, value=value)


def hifloat4_unpack(scale, value, dtype=None, *, out=None):
    """Decode HiFloat4 bytes (as made by :func:`hifloat4_pack`) to ``dtype``.

    ``scale``: uint8 (*lead, g, 4); ``value``: uint8 (*lead, 32 g), on the same device. Returns
    (*lead, 64 g) values ``(1 - 2 s) * S * 2^(l2 + l3) * c / 4``, computed exactly in float32 and
    cast with round-to-nearest-even to ``dtype`` (float16, bfloat16 or float32; None means
    float32). A block whose E6M2 byte is 0xFF decodes to NaN. Every byte pattern is valid.
    ``hifloat4_unpack(*hifloat4_pack(x)).to(x.dtype)`` equals ``hifloat4_fake_quant(x)`` bitwise.
    Not differentiable. With ``out=``, ``dtype`` None still means float32 (``out`` must match).
    """
    if out is None:
        return _UNPACK(scale, value, dtype)
    return _UNPACK_OUT(scale, value, dtype, out=out)


for _fn in (hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack):
    if _fn.__doc__:  # None under python -OO
        _fn.__doc__ += _OUT_RULE
