"""Executable spec of HiFloat4 (HiF4): the test oracle for the ``hifloat4_cast`` operators.

This module is the format's executable definition; ``docs/hifloat4.md`` describes it in prose,
under the same section labels (A2, A3, ...) as the step comments here. It is pure PyTorch: it
calls no compiled code and no ``torch.ops.amct``, and it is deterministic. All arithmetic is IEEE fp32 with round-to-nearest-even, as in A2; powers
of two are built from their bit patterns, so no scaling depends on a ``pow`` implementation.

* :func:`hifloat4_fake_quant_ref` -- A2: 64-element blocks along ``qdim``, same shape and dtype.
* :func:`hifloat4_pack_ref` -- A3: blocks along the last dim -> ``(scale, value)`` uint8 bytes.
* :func:`hifloat4_unpack_ref` -- A4: bytes -> float32 (default), float16 or bfloat16.

All three accept any strides, return contiguous tensors on the input's device, never track
gradients, and raise the RuntimeError texts of docs/hifloat4.md C6 (checks in the C2 order: dtype, rank,
qdim range, multiple of 64). Empty inputs give empty outputs.

C5 identity: ``hifloat4_unpack_ref(*hifloat4_pack_ref(x)).to(x.dtype)`` is bitwise equal to
``hifloat4_fake_quant_ref(x)`` for every accepted ``x``.
"""

import torch

__all__ = [
    "hifloat4_fake_quant_ref",
    "hifloat4_pack_ref",
    "hifloat4_unpack_ref",
]

_F32 = torch.float32
_I32 = torch.int32
_I64 = torch.int64
_U8 = torch.uint8

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# A1: a block is 64 elements = 8 groups x 2 subgroups x 4 elements.
BLOCK = 64
GROUPS = 8
SUBGROUPS = 2
SUBGROUP_SIZE = 4

# A2 constants.
C7 = 0.142578125            # bf16(1/7), fp32 pattern 3E120000 (A2 step 3)
S_MIN = 2.0 ** -48          # 27800000 (A2 step 3)
S_MAX = 49152.0             # 1.5 * 2^15 = 47400000 (A2 step 3)
L2_THRESHOLD = 4.0          # A2 step 5
L3_THRESHOLD = 2.0          # A2 step 6
CODE_MAX = 7.0              # A2 step 7: the code clamp, 1.75
E6M2_BIAS = 48              # A3: byte 0 = (e + 48) * 4 + (q - 4)
POISON_BYTE = 0xFF          # A3: byte 0 of a poisoned block
_NAN = float("nan")         # C2: written as the canonical quiet NaN 7FC00000


def _dtype_name(dtype):
    """torch dtype name without the ``torch.`` prefix, as in the C6 messages."""
    return str(dtype).replace("torch.", "")


def _shape_text(shape):
    """``torch.Size([3, 4])`` -> ``"[3, 4]"``, as in the C6 unpack message."""
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def _pow2(k):
    """2^k as fp32, exactly, for an integer tensor k in the fp32 normal range [-126, 127].

    Built from the bit pattern (biased exponent k + 127, zero fraction), not from pow().
    """
    return ((k.to(_I32) + 127) << 23).view(_F32)


def _bf16(v):
    """A2 notation bf16(v): round fp32 v to bf16 (RNE) and widen it back exactly (C7)."""
    return v.to(torch.bfloat16).to(_F32)


def _exponent(p):
    """A2 step 3: floor(log2 p) of positive normal fp32 values, from the exponent bits."""
    return ((p.view(_I32) >> 23) & 0xFF) - 127


# ---------------------------------------------------------------------------------------------
# Input checks (C2, C3, C6)
# ---------------------------------------------------------------------------------------------

def _check_input(x, op):
    """C2 / C3 checks shared by fake-quant and pack, in order: dtype, then rank."""
    if x.dtype not in _FLOAT_DTYPES:
        raise RuntimeError(
            f"{op}: input dtype must be float16, bfloat16 or float32, got {_dtype_name(x.dtype)}"
        )
    if x.dim() < 1:
        raise RuntimeError(f"{op}: input must have at least 1 dimension, got {x.dim()}")


def _normalise_qdim(qdim, rank):
    """A2 / C2: qdim in [-rank, rank - 1]; a negative qdim has the rank added."""
    qdim = int(qdim)
    if qdim < -rank or qdim > rank - 1:
        raise RuntimeError(
            "hifloat4_fake_quant: qdim out of range, expected a value in "
            f"[{-rank}, {rank - 1}], got {qdim}"
        )
    return qdim + rank if qdim < 0 else qdim


# ---------------------------------------------------------------------------------------------
# A2 steps 1-8 on blocks
# ---------------------------------------------------------------------------------------------

def _quantise_blocks(x32):
    """A2 steps 1-8 for fp32 blocks ``x32`` of shape (..., 8, 2, 4) (one block per leading index).

    Returns a dict of the intermediate results (all fp32 unless said otherwise):

    * ``poisoned`` (bool, (...)): the block holds a NaN or an Inf (A2 step 1);
    * ``e`` (int32, (...)), ``q`` (fp32 in {4..8}, (...)), ``S`` (...): the block scale (A2 step 3);
    * ``rec`` (...): bf16(1/S) (A2 step 4);
    * ``l2`` (fp32 0/1, (..., 8)), ``l3`` (fp32 0/1, (..., 8, 2)): the flags (A2 step 5, A2 step 6);
    * ``code`` (fp32 in {0..7}, (..., 8, 2, 4)): the in-group codes c (A2 step 7);
    * ``negative`` (bool, (..., 8, 2, 4)): x' < 0, the sign used by pack (A3);
    * ``out`` (..., 8, 2, 4): the reconstructed fp32 values, NaN in poisoned blocks (A2 steps 8-9).
    """
    # A2 step 1 Mask non-finite values: x' = 0 where bad; a block with any bad element is poisoned.
    bad = ~torch.isfinite(x32)
    poisoned = bad.flatten(-3).any(dim=-1)
    xm = torch.where(bad, torch.zeros_like(x32), x32)
    a = xm.abs()
    # sgn = +1 / -1 / 0 for x' > 0 / x' < 0 / x' = +-0 (torch.sign: -0.0 gives +0, A2 step 1).
    sgn = torch.sign(xm)
    negative = xm < 0

    # A2 step 2 Maxima: per subgroup of 4, per group of 8, per block.
    m4 = a.amax(dim=-1)                 # (..., 8, 2)
    m8 = m4.amax(dim=-1)                # (..., 8)
    vmax = m8.amax(dim=-1)              # (...)

    # A2 step 3 p = vmax * C7 (fp32 product, RNE).
    p = vmax * C7
    # A2 step 3 p = bf16(p): round to 8 significant bits.
    p = _bf16(p)
    # A2 step 3 clamp to [2^-48, 49152] (a zero block lands on 2^-48).
    p = p.clamp(min=S_MIN, max=S_MAX)
    # A2 step 3 e = floor(log2 p), exactly, from the bits (p is a positive normal here).
    e = _exponent(p)
    # A2 step 3 q = RNE(p / 2^(e-2)) in {4..8} (torch.round is ties-to-even; the scaling is exact),
    # then S = q * 2^(e-2). q = 8 means S = 2^(e+1).
    q = torch.round(p * _pow2(2 - e))
    S = q * _pow2(e - 2)

    # A2 step 4 rec = bf16(1/S): the fp32 quotient (a true division), then bf16.
    rec = _bf16(torch.ones_like(S) / S)

    # A2 step 5 L2 test per group: fp32(m8 * rec) >= 4.
    l2 = ((m8 * rec[..., None]) >= L2_THRESHOLD).to(_F32)                       # (..., 8)
    # A2 step 6 L3 test per subgroup: fp32(m4 * rec) * 2^-l2 >= 2.
    inv_l2 = _pow2(-l2.to(_I32))                                                  # 2^-l2
    l3 = (((m4 * rec[..., None, None]) * inv_l2[..., None]) >= L3_THRESHOLD).to(_F32)

    # A2 step 7 In-group value, de = l2 + l3.
    de = l2[..., None] + l3                                                       # (..., 8, 2)
    # t = fp32(a * rec) * 2^-de; then t = bf16(t).
    t = (a * rec[..., None, None, None]) * _pow2(-de.to(_I32))[..., None]
    t = _bf16(t)
    # c = floor(4t + 0.5) in fp32 (round half up on the magnitude), then min(c, 7).
    code = torch.floor(t * 4.0 + 0.5).clamp(max=CODE_MAX)

    # A2 step 8 Reconstruct, left to right: sgn * (c/4) * 2^l2 * 2^l3 * S (every product exact).
    out = sgn * (code * 0.25)
    out = out * _pow2(l2.to(_I32))[..., None, None]
    out = out * _pow2(l3.to(_I32))[..., None]
    out = out * S[..., None, None, None]

    # A2 step 9 Poison: every element of a poisoned block becomes NaN (Python's NaN is the
    # canonical quiet NaN 7FC00000, C2).
    out = out.masked_fill(poisoned[..., None, None, None], _NAN)

    return {
        "poisoned": poisoned, "e": e, "q": q, "S": S, "rec": rec, "l2": l2, "l3": l3,
        "code": code, "negative": negative, "out": out,
    }


def _to_blocks(x_last):
    """A2: widen exactly to fp32 and split the last dim n into (n/64, 8, 2, 4)."""
    n = x_last.shape[-1]
    # Exact for fp16, bf16 (subnormals included) and fp32; contiguous, so that every result
    # derived from it is contiguous too (C1: outputs are contiguous for any input strides).
    x32 = x_last.to(_F32).contiguous()
    return x32.reshape(*x_last.shape[:-1], n // BLOCK, GROUPS, SUBGROUPS, SUBGROUP_SIZE)


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------

def hifloat4_fake_quant_ref(x, qdim=-1):
    """HiF4 fake-quant of ``x`` (float16, bfloat16 or float32) along ``qdim`` (docs/hifloat4.md A2, C2).

    Blocks of 64 consecutive elements along ``qdim`` (its length must be a multiple of 64)
    share an E6M2 scale, per-8 and per-4 exponent flags, and S1P2 element codes. Output:
    same shape and dtype, contiguous. A block holding a NaN or +-Inf becomes all NaN. Signed
    zeros: -0.0 gives +0.0; a negative value that quantises to zero gives -0.0.
    """
    # C2 checks, in order: dtype, rank, qdim range, multiple of 64.
    _check_input(x, "hifloat4_fake_quant")
    rank = x.dim()
    dim = _normalise_qdim(qdim, rank)
    length = x.shape[dim]
    if length % BLOCK != 0:
        raise RuntimeError(
            "hifloat4_fake_quant: quant dim length must be a multiple of 64, got " f"{length}"
        )
    x = x.detach()
    # C2: an empty input gives an empty (contiguous) output.
    if x.numel() == 0:
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)

    # A2 Move qdim last (C8 host step 2) and split it into blocks.
    x_last = x.movedim(dim, -1)
    blocks = _to_blocks(x_last)
    # A2 steps 1-9.
    out = _quantise_blocks(blocks)["out"]
    # A2 step 10 Undo the split, cast to the input dtype with RNE (fp16: re-rounded onto the fp16
    # subnormal grid below 2^-14), move qdim back, and return a contiguous tensor.
    out = out.reshape(x_last.shape).to(x.dtype)
    return out.movedim(-1, dim).contiguous()


def _flag_byte(bits):
    """A3: 8 flags (fp32 0/1, last dim 8) -> one byte, MSB first: bit 7-i holds flag i."""
    shifts = torch.arange(7, -1, -1, dtype=_I64, device=bits.device)    # 7, 6, ..., 0
    return (bits.to(_I64) << shifts).sum(dim=-1)


def hifloat4_pack_ref(x):
    """Pack ``x`` (float16, bfloat16 or float32) into HiF4 bytes along the last dim (A3, C3).

    Returns ``(scale, value)``: ``scale`` uint8 of shape (*lead, n/64, 4) holds per block the
    E6M2 byte (0xFF for a poisoned block), the per-8 flags and the two per-4 flag bytes;
    ``value`` uint8 of shape (*lead, n/2) holds two 4-bit codes per byte (even element in the
    low nibble), nibble = 8 * [x' < 0] + c.
    """
    # C3 checks: dtype, rank, last dim a multiple of 64.
    _check_input(x, "hifloat4_pack")
    n = x.shape[-1]
    if n % BLOCK != 0:
        raise RuntimeError(f"hifloat4_pack: last dim length must be a multiple of 64, got {n}")
    x = x.detach()
    lead = tuple(x.shape[:-1])
    # C3: empty inputs give the empty shapes (*lead, n/64, 4) and (*lead, n/2).
    if x.numel() == 0:
        return (torch.empty(lead + (n // BLOCK, 4), dtype=_U8, device=x.device),
                torch.empty(lead + (n // 2,), dtype=_U8, device=x.device))

    # A2 (steps 1-8) on the exact fp32 widening (C3: fp16 / bf16 give the bytes of their widening).
    r = _quantise_blocks(_to_blocks(x))

    # A3 byte 0: E6M2 = (e + 48) * 4 + (q - 4); q = 8 gives (e + 49) * 4. FF when poisoned.
    e6m2 = (r["e"].to(_I64) + E6M2_BIAS) * 4 + (r["q"].to(_I64) - 4)
    byte0 = torch.where(r["poisoned"], torch.full_like(e6m2, POISON_BYTE), e6m2)
    # A3 byte 1: per-8 flags l2[j], MSB first (bit 7 - j).
    byte1 = _flag_byte(r["l2"])
    # A3 bytes 2 and 3: per-4 flags l3[j][k] at bit 7 - (2j + k) of groups 0-3 and 4-7.
    l3 = r["l3"].flatten(-2)                               # (..., 16), index 2j + k
    byte2 = _flag_byte(l3[..., :8])
    byte3 = _flag_byte(l3[..., 8:])
    scale = torch.stack([byte0, byte1, byte2, byte3], dim=-1).to(_U8)

    # A3 value bytes: nibble = 8 * [x' < 0] + c (masked x', so -0.0 and -Inf pack with sign 0);
    # element 2b in the low nibble, element 2b + 1 in the high nibble.
    nibble = r["negative"].to(_I64) * 8 + r["code"].to(_I64)
    nibble = nibble.reshape(*lead, n // 2, 2)
    value = (nibble[..., 0] | (nibble[..., 1] << 4)).to(_U8)
    return scale, value


def hifloat4_unpack_ref(scale, value, dtype=None):
    """Decode HiF4 bytes (A4, C4) to float32 (``dtype=None``), float16 or bfloat16.

    ``scale``: uint8 (*lead, g, 4); ``value``: uint8 (*lead, 32 g). Output (*lead, 64 g):
    ``(1 - 2 s) * S * 2^(l2 + l3) * c / 4`` exactly in fp32, NaN for a block whose byte 0 is
    0xFF, then cast to ``dtype`` with RNE. Every byte pattern is valid input.
    """
    # C4 checks.
    if scale.dtype != _U8:
        raise RuntimeError(f"hifloat4_unpack: scale dtype must be uint8, got {_dtype_name(scale.dtype)}")
    if value.dtype != _U8:
        raise RuntimeError(f"hifloat4_unpack: value dtype must be uint8, got {_dtype_name(value.dtype)}")
    if dtype is None:
        dtype = _F32  # C4: None means float32
    if dtype not in _FLOAT_DTYPES:
        raise RuntimeError(
            f"hifloat4_unpack: dtype must be float16, bfloat16 or float32, got {_dtype_name(dtype)}"
        )
    if value.device != scale.device:
        raise RuntimeError(
            f"hifloat4_unpack: value device must be {scale.device} to match scale, "
            f"got {value.device}"
        )
    if scale.dim() < 2:
        raise RuntimeError(f"hifloat4_unpack: scale must have at least 2 dimensions, got {scale.dim()}")
    if scale.shape[-1] != 4:
        raise RuntimeError(f"hifloat4_unpack: scale last dim must be 4, got {scale.shape[-1]}")
    lead = tuple(scale.shape[:-2])
    g = scale.shape[-2]
    want_value = lead + (32 * g,)
    if tuple(value.shape) != want_value:
        raise RuntimeError(
            f"hifloat4_unpack: value shape must be {_shape_text(want_value)} to match scale "
            f"{_shape_text(scale.shape)}, got {_shape_text(value.shape)}"
        )
    if value.numel() == 0 or scale.numel() == 0:
        return torch.empty(lead + (BLOCK * g,), dtype=dtype, device=scale.device)

    s = scale.detach().to(_I64)                     # (*lead, g, 4)
    v = value.detach().to(_I64).reshape(*lead, g, 32)

    # A4: S = 2^((b >> 2) - 48) * (1 + (b & 3)/4) from byte 0 (exact in fp32).
    b0 = s[..., 0]
    S = (1.0 + (b0 & 3).to(_F32) * 0.25) * _pow2((b0 >> 2) - E6M2_BIAS)       # (*lead, g)

    # A3 flags: l2[j] = bit 7-j of byte 1; l3[j][k] = bit 7-(2j+k) of byte 2 (groups 0-3)
    # and byte 3 (groups 4-7), i.e. the 16 bits of bytes 2, 3 MSB first, indexed by 2j + k.
    shifts = torch.arange(7, -1, -1, dtype=_I64, device=scale.device)
    l2 = (s[..., 1, None] >> shifts) & 1                                       # (*lead, g, 8)
    l3 = torch.cat([(s[..., 2, None] >> shifts) & 1, (s[..., 3, None] >> shifts) & 1], dim=-1)
    l3 = l3.reshape(*lead, g, GROUPS, SUBGROUPS)                               # (*lead, g, 8, 2)
    de = l2[..., None] + l3                                                    # (*lead, g, 8, 2)

    # A3 nibbles: the even element in the low nibble, the odd one in the high nibble.
    nibble = torch.stack([v & 0xF, v >> 4], dim=-1)                            # (*lead, g, 32, 2)
    nibble = nibble.reshape(*lead, g, GROUPS, SUBGROUPS, SUBGROUP_SIZE)
    sign = (nibble >> 3).to(_F32)
    code = (nibble & 7).to(_F32)

    # A4: out = (1 - 2 * signbit) * (S * 2^de * c/4), exact; nibble 8 gives -1 * +0 = -0.0.
    mag = S[..., None, None, None] * _pow2(de)[..., None] * (code * 0.25)
    out = (1.0 - 2.0 * sign) * mag
    # A4: byte 0 = FF -> all 64 outputs NaN.
    out = out.masked_fill((b0 == POISON_BYTE)[..., None, None, None], _NAN)
    # C4: the fp32 values cast with RNE to the requested dtype.
    return out.reshape(lead + (BLOCK * g,)).to(dtype).contiguous()
