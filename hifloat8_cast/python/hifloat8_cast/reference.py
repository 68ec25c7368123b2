"""Executable spec of HiFloat8 (HiF8): the test oracle for the ``hifloat8_cast`` operators.

This module is the format's executable definition; ``docs/hifloat8.md`` describes it in prose,
under the same section labels (A3, A4, ...) as the step comments here. It is pure PyTorch on
integer bit views: it calls no compiled code and no ``torch.ops.amct``, and it is deterministic.

* :func:`encode_to_hifloat8_ref` -- fp16/bf16 -> uint8 codes, the A4 bit-level algorithm.
* :func:`decode_from_hifloat8_ref` -- uint8 codes -> fp16/bf16/fp32, exact (A1, A3).
* :func:`hifloat8_fake_quant_ref` -- encode then decode in the input dtype (C4); fp32 runs the A4
  magnitude algorithm on the fp32 bits directly (no rounding through bf16).

All functions accept any shape (0-d and empty included) and any strides, and return a contiguous
tensor of the input's shape on the input's device. Wrong dtypes raise the RuntimeError messages of
docs/hifloat8.md C5. The functions never track gradients.

Internally every bit pattern is held in an int64 tensor as an *unsigned* value (an fp32 pattern
is in [0, 2**32)), so shifts and masks never meet a sign bit.
"""

import functools

import torch

__all__ = [
    "encode_to_hifloat8_ref",
    "decode_from_hifloat8_ref",
    "hifloat8_fake_quant_ref",
]

_I64 = torch.int64

# A2: special codes.
CODE_ZERO = 0x00
CODE_NAN = 0x80
CODE_POS_INF = 0x6F
CODE_MAX = 0x6E  # +32768 = 2^15, the largest finite magnitude (saturation target)
CODE_MIN_NORMAL = 0x7E  # 2^-15
# C3: the NaN patterns written on decode (upstream's; the payload is not part of the contract).
NAN_BITS_16 = 0x7FFF
NAN_BITS_32 = 0x7FFF0000

_DECODE_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _dtype_name(dtype):
    """torch dtype name without the ``torch.`` prefix, as in the C5 messages."""
    return str(dtype).replace("torch.", "")


# ---------------------------------------------------------------------------------------------
# Bit-view helpers
# ---------------------------------------------------------------------------------------------

def _bits_unsigned(x):
    """The bit patterns of a 16- or 32-bit float tensor as unsigned values in an int64 tensor."""
    x = x.detach().contiguous()
    if x.element_size() == 2:
        return x.view(torch.int16).to(_I64) & 0xFFFF
    return x.view(torch.int32).to(_I64) & 0xFFFFFFFF


def _from_unsigned_bits(bits, dtype):
    """Inverse of :func:`_bits_unsigned`: unsigned patterns (int64) -> a tensor of ``dtype``."""
    width = 16 if dtype in (torch.float16, torch.bfloat16) else 32
    signed = torch.where(bits >= (1 << (width - 1)), bits - (1 << width), bits)
    int_dtype = torch.int16 if width == 16 else torch.int32
    return signed.to(int_dtype).view(dtype)


# ---------------------------------------------------------------------------------------------
# A4 step 1: widen to an fp32 pattern
# ---------------------------------------------------------------------------------------------

def _widen_fp16(h):
    """A4 (widening), fp16: widen exactly. Subnormals are normalised; exponent 31 becomes 255.

    ``h`` holds fp16 patterns (0..0xFFFF); the result holds the fp32 patterns of the same values.
    """
    sign = h >> 15
    exp5 = (h >> 10) & 0x1F
    man10 = h & 0x3FF

    # Normal numbers: rebias the exponent (15 -> 127), left-align the 10-bit fraction.
    F = exp5 - 15 + 127
    f = man10 << 13

    # Exponent 31 (Inf / NaN) becomes 255, the fraction is kept (so NaN stays NaN).
    F = torch.where(exp5 == 31, torch.full_like(F, 255), F)

    # Subnormals: value = man10 * 2^-24. With p = index of the leading one of man10 (0..9),
    # value = 2^(p-24) * (1 + rest/2^p), so e = p - 24 and the fraction is man10 shifted so
    # that the leading one lands on the (implicit) bit 23, then dropped.
    p = torch.zeros_like(man10)
    for step in (8, 4, 2, 1):  # integer binary search for floor(log2(man10))
        p = p + torch.where((man10 >> (p + step)) != 0, step, 0)
    sub = (exp5 == 0) & (man10 != 0)
    F = torch.where(sub, p - 24 + 127, F)
    f = torch.where(sub, (man10 << (23 - p)) & 0x7FFFFF, f)

    # Zero (either sign) keeps exponent field 0 and fraction 0.
    zero = (exp5 == 0) & (man10 == 0)
    F = torch.where(zero, torch.zeros_like(F), F)

    return (sign << 31) | (F << 23) | f


def _widen_bf16(b):
    """A4 (widening), bf16: append 16 zero bits, except that bf16 subnormals (and -0) become +0."""
    subnormal_or_zero = (b & 0x7F80) == 0
    return torch.where(subnormal_or_zero, torch.zeros_like(b), b << 16)


# ---------------------------------------------------------------------------------------------
# A4 steps 2-4: magnitude code and sign
# ---------------------------------------------------------------------------------------------

def _mantissa_bits(abs_e):
    """A1 / A4 normal rounding: w = 3 for |e| <= 3, 2 for |e| <= 7, 1 otherwise."""
    return torch.where(abs_e <= 3, 3, torch.where(abs_e <= 7, 2, 1))


def _dot_width(abs_e):
    """A1 / A4 assembly: d = 1, 2, 3, 4 for |e| = 1, 2-3, 4-7, 8-15."""
    return torch.where(abs_e <= 1, 1, torch.where(abs_e <= 3, 2, torch.where(abs_e <= 7, 3, 4)))


def _assemble_normal(e, q):
    """A4 assembly of a normal magnitude code from the final exponent e and mantissa q.

    For e = 0: MAG = 08 | q. Otherwise
    MAG = (D << 3) | (neg(e) << (d+w-1)) | ((|e| - 2^(d-1)) << w) | q, with the dot prefix
    D = 0b0010, 0b0100, 0b1000, 0b1100 for d = 1, 2, 3, 4.
    """
    abs_e = e.abs()
    w = _mantissa_bits(abs_e)
    d = _dot_width(abs_e)
    D = torch.where(d == 1, 0b0010, torch.where(d == 2, 0b0100, torch.where(d == 3, 0b1000, 0b1100)))
    neg = (e < 0).to(_I64)
    implicit_one = 1 << (d - 1)  # the leading 1 of |E| is implicit (A1)
    mag = (D << 3) | (neg << (d + w - 1)) | ((abs_e - implicit_one) << w) | q
    return torch.where(e == 0, 0x08 | q, mag)


def _magnitude_code(u):
    """A4 steps 2-3: the magnitude code MAG (0..0x7F, or 0x80 for NaN) of fp32 patterns ``u``."""
    # A4 (split) Split.
    F = (u >> 23) & 0xFF
    f = u & 0x7FFFFF
    e = F - 127

    # A4 (denormal band) Normal rounding, for -15 <= e <= 14.
    w = _mantissa_bits(e.abs())
    t = f >> (22 - w)                  # the top w+1 fraction bits; the low bit is the guard bit
    guard = t & 1                      # nothing below the guard bit is examined
    all_ones = t == (2 << w) - 1       # rounding up would overflow the w mantissa bits
    # Carry into the next binade: e <- e+1, q = 0 (w and d are recomputed in the assembly).
    e_round = torch.where(all_ones, e + 1, e)
    q = torch.where(guard == 1, (t + 1) >> 1, t >> 1)
    q = torch.where(all_ones, torch.zeros_like(q), q)
    mag_normal = _assemble_normal(e_round, q)
    # A carry from 14 to 15 gives 6E (the assembly would produce it too; spelled out here).
    mag_normal = torch.where(e_round == 15, CODE_MAX, mag_normal)

    # A4 (denormal band) Denormal band, -22 <= e <= -16: k = e + 23 + g (g = bit 22 of f); k = 8 means 7E.
    g = (f >> 22) & 1
    k = e + 23 + g
    mag_denormal = torch.where(k == 8, CODE_MIN_NORMAL, k)

    # A4 (denormal band) condition table, applied from the bottom row up so that earlier rows take priority.
    mag = mag_normal                                                    # -15 <= e <= 14
    mag = torch.where((e >= -22) & (e <= -16), mag_denormal, mag)       # denormal band
    mag = torch.where(e == -23, 0x01, mag)                              # e = -23 -> 01
    mag = torch.where(e <= -24, CODE_ZERO, mag)                         # e <= -24 -> 00
    mag = torch.where(e >= 15, CODE_MAX, mag)                           # saturate
    mag = torch.where(F == 255, torch.where(f != 0, CODE_NAN, CODE_POS_INF), mag)  # NaN / Inf
    mag = torch.where(F == 0, CODE_ZERO, mag)                           # zero, fp32 subnormal
    return mag


def _sign_code(u, mag):
    """A4 step 4: code = 00 if MAG = 00, otherwise MAG | s<<7 (so every NaN gives 80)."""
    s = (u >> 31) & 1
    return torch.where(mag == CODE_ZERO, torch.zeros_like(mag), mag | (s << 7))


def _encode_fp32_patterns(u):
    """A4 steps 2-4 on fp32 patterns (int64, unsigned): HiF8 codes as int64 in 0..255."""
    return _sign_code(u, _magnitude_code(u))


# ---------------------------------------------------------------------------------------------
# A1 / A3: decode tables
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _decode_tables():
    """The 256-entry decode tables (unsigned patterns, int64) for fp16, bf16 and fp32.

    Computed from the A1 bit layout for every code at once; cached, and never handed out
    (lookups index into them, which copies).
    """
    c = torch.arange(256, dtype=_I64)
    s = c >> 7
    m = c & 0x7F

    # A1: the dot field is prefix-coded from bit 6.
    top2 = m >> 5
    is_d4 = top2 == 0b11
    is_d3 = top2 == 0b10
    is_d2 = top2 == 0b01
    is_d1 = (m >> 4) == 0b001
    is_dml = (m >> 3) == 0b0000          # denormal (or 00 / 80)
    # What is left, prefix 0001, is d = 0.

    def pick(v4, v3, v2, v1, v0):
        """Per-code value by dot class; d = 0 and the denormal prefix get v0."""
        out = torch.full_like(c, v0)
        for cond, v in ((is_d1, v1), (is_d2, v2), (is_d3, v3), (is_d4, v4)):
            out = torch.where(cond, v, out)
        return out

    d = pick(4, 3, 2, 1, 0)               # exponent field width
    w = pick(1, 2, 3, 3, 3)               # mantissa field width
    d_safe = torch.clamp(d, min=1)        # avoids 1 << -1 for d = 0 (masked out below)

    # A1 exponent field: the first bit is the sign, the other d-1 bits hold |E| - 2^(d-1).
    exp_field = (m >> w) & ((1 << d) - 1)
    e_neg = (exp_field >> (d_safe - 1)) & 1
    e_abs = (1 << (d_safe - 1)) + (exp_field & ((1 << (d_safe - 1)) - 1))
    E = torch.where(e_neg == 1, -e_abs, e_abs)
    E = torch.where(d == 0, 0, E)         # d = 0 means E = 0
    M = m & ((1 << w) - 1)

    # A1 normal value (-1)^s * 2^E * (1 + M/2^w) as an fp32 pattern.
    normal32 = (s << 31) | ((E + 127) << 23) | (M << (23 - w))
    # A1 denormal value (-1)^s * 2^(M-23), M = 1..7 (M = 0 is 00 / 80 below): a power of two.
    dml_M = m & 0x7
    denormal32 = (s << 31) | ((dml_M - 23 + 127) << 23)
    f32 = torch.where(is_dml, denormal32, normal32)

    # fp16: E >= -14 is an fp16 normal; E < -14 lands on an exact fp16 subnormal (A3), whose
    # pattern is the value in units of 2^-24.
    normal16_big = (s << 15) | ((E + 15) << 10) | (M << (10 - w))
    normal16_small = (s << 15) | (((1 << w) + M) << (E + 24 - w).clamp(min=0))
    normal16 = torch.where(E >= -14, normal16_big, normal16_small)
    denormal16 = (s << 15) | (1 << (dml_M + 1))   # 2^(M-23) = 2^(M+1) units of 2^-24
    f16 = torch.where(is_dml, denormal16, normal16)

    # bf16: the fp32 value has at most 3 fraction bits, so truncating to the top half is exact.
    b16 = f32 >> 16

    # A2 / A3 special codes: 00 -> +0, 80 -> NaN (C3 patterns), 6F / EF -> +-Inf.
    for code, v16, vb16, v32 in (
        (CODE_ZERO, 0x0000, 0x0000, 0x00000000),
        (CODE_NAN, NAN_BITS_16, NAN_BITS_16, NAN_BITS_32),
        (CODE_POS_INF, 0x7C00, 0x7F80, 0x7F800000),
        (CODE_POS_INF | 0x80, 0xFC00, 0xFF80, 0xFF800000),
    ):
        f16[code], b16[code], f32[code] = v16, vb16, v32

    return {torch.float16: f16, torch.bfloat16: b16, torch.float32: f32}


# ---------------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------------

def encode_to_hifloat8_ref(x):
    """Encode fp16/bf16 ``x`` to HiF8 codes (uint8), by the A4 bit-level algorithm.

    Nearest HiF8 value with ties away from zero; a zero result is 00 whatever the sign; NaN
    gives 80; +-Inf give 6F / EF; finite |x| >= 28672 saturates to +-32768 (6E / EE).
    """
    if x.dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError(
            "encode_to_hifloat8: input dtype must be float16 or bfloat16, "
            f"got {_dtype_name(x.dtype)}"
        )
    h = _bits_unsigned(x)
    # A4 (widening) widen to an fp32 pattern.
    u = _widen_fp16(h) if x.dtype == torch.float16 else _widen_bf16(h)
    # A4 (split)-4 split, magnitude code, sign.
    return _encode_fp32_patterns(u).to(torch.uint8)


def decode_from_hifloat8_ref(codes, dtype=torch.bfloat16):
    """Decode uint8 HiF8 ``codes`` to fp16, bf16 (default; None also means bf16) or fp32, exactly.

    A3: 00 -> +0, 80 -> NaN (7FFF in fp16/bf16, 7FFF0000 in fp32), 6F / EF -> +-Inf, every
    other code -> its exact value (the 18 codes below 2^-14 are exact fp16 subnormals).
    """
    if codes.dtype != torch.uint8:
        raise RuntimeError(
            f"decode_from_hifloat8: input dtype must be uint8, got {_dtype_name(codes.dtype)}"
        )
    if dtype is None:
        dtype = torch.bfloat16
    if dtype not in _DECODE_DTYPES:
        raise RuntimeError(
            "decode_from_hifloat8: dtype must be float16, bfloat16 or float32, "
            f"got {_dtype_name(dtype)}"
        )
    table = _decode_tables()[dtype].to(codes.device)
    idx = codes.detach().contiguous().to(_I64)
    return _from_unsigned_bits(table[idx], dtype)


def hifloat8_fake_quant_ref(x):
    """Round ``x`` to the nearest HiF8 value in its own dtype (C4).

    fp16 / bf16: ``decode(encode(x), x.dtype)``. fp32: the A4 magnitude algorithm runs on the fp32
    bits directly (no rounding through bf16; fp32 subnormals give 0), then the code is decoded to
    fp32. A zero result is +0.0, +-Inf is kept and NaN stays NaN.
    """
    if x.dtype in (torch.float16, torch.bfloat16):
        return decode_from_hifloat8_ref(encode_to_hifloat8_ref(x), x.dtype)
    if x.dtype != torch.float32:
        raise RuntimeError(
            "hifloat8_fake_quant: input dtype must be float16, bfloat16 or float32, "
            f"got {_dtype_name(x.dtype)}"
        )
    # C4 fp32: A4 steps 2-4 on the fp32 pattern as it is (A4 (widening), "fp32 is used as it is").
    codes = _encode_fp32_patterns(_bits_unsigned(x))
    table = _decode_tables()[torch.float32].to(x.device)
    return _from_unsigned_bits(table[codes], torch.float32)
