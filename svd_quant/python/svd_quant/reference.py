"""Executable spec of the svd_quant package (docs/mxfp4.md A2, A3, A5).

Pure PyTorch, no amct_ops operator: the oracle of the tests. Literal transcriptions of the
spec: exponents via ``torch.frexp`` on float64 (exact for every fp16/bf16/fp32 value), the
round modes as compares of the exact ``|y|`` against the decision intervals of A2 step 6, the
matmuls of svd_quant in ``accum_dtype`` with the A5 rounding points. No validation.
"""
import torch

BLOCK = 32
#: E2M1 magnitudes of codes 0..7 (codes 8..15 are their negatives).
E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
ROUND_MODES = ("round", "rint", "floor")

# A2 step 6: the magnitude index is the number of thresholds passed. "ge" thresholds count when
# a >= t, "gt" thresholds when a > t.
_ROUND = {"ge": (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0), "gt": ()}
_RINT = {"ge": (0.75, 1.75, 3.5), "gt": (0.25, 1.25, 2.5, 5.0)}
_FLOOR_POSITIVE = {"ge": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0), "gt": ()}
_FLOOR_NEGATIVE = {"ge": (), "gt": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)}


def _count_passed(a, thresholds):
    index = torch.zeros(a.shape, dtype=torch.int64)
    for t in thresholds["ge"]:
        index += (a >= t).to(torch.int64)
    for t in thresholds["gt"]:
        index += (a > t).to(torch.int64)
    return index


def _magnitude_index(y, x, round_mode):
    a = y.abs()
    if round_mode == "round":
        return _count_passed(a, _ROUND)
    if round_mode == "rint":
        return _count_passed(a, _RINT)
    negative = x < 0  # decided on x (A2 step 5): y may be tiny but is never needed
    return torch.where(negative, _count_passed(a, _FLOOR_NEGATIVE), _count_passed(a, _FLOOR_POSITIVE))


def _pad_scales(sb, k):
    """(rows, K/32) scale bytes -> (rows, ceil(K/64), 2), the pad byte 0x00 (A1)."""
    rows, blocks = sb.shape
    pairs = (k + 63) // 64
    out = torch.zeros(rows, 2 * pairs, dtype=torch.uint8)
    out[:, :blocks] = sb
    return out.view(rows, pairs, 2)


def mxfp4_quantize_ref(input, round_mode="round"):
    """A2: ``(codes, scales)`` uint8 ``(*lead, K/2)`` and ``(*lead, ceil(K/64), 2)``."""
    if round_mode not in ROUND_MODES:
        raise ValueError(f"round_mode must be one of {ROUND_MODES}, got {round_mode!r}")
    lead, k = tuple(input.shape[:-1]), input.shape[-1]
    if input.numel() == 0:
        return (torch.zeros(lead + (k // 2,), dtype=torch.uint8),
                torch.zeros(lead + ((k + 63) // 64, 2), dtype=torch.uint8))
    x = input.detach().cpu().to(torch.float64).reshape(-1, k // BLOCK, BLOCK)
    finite = torch.isfinite(x).all(dim=-1)                                  # step 1
    _, exponent = torch.frexp(torch.where(torch.isfinite(x), x, torch.zeros_like(x)))
    f = torch.where(x != 0, exponent.to(torch.int64) - 1 + 127, torch.full_like(exponent, -(10 ** 6), dtype=torch.int64))
    e = f.max(dim=-1).values                                                 # step 2
    ec = e.clamp(2, 254)                                                     # step 3
    sb = torch.where(finite, ec - 2, torch.full_like(ec, 255))               # step 4
    xs = torch.where(finite.unsqueeze(-1), x, torch.zeros_like(x))
    y = xs * torch.exp2((129 - ec).to(torch.float64)).unsqueeze(-1)         # step 5, exact
    index = _magnitude_index(y, xs, round_mode)                              # step 6
    sign = torch.signbit(xs).to(torch.int64)
    codes = torch.where(finite.unsqueeze(-1), index + 8 * sign, torch.zeros_like(index))
    codes = codes.reshape(-1, k)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).to(torch.uint8)
    scales = _pad_scales(sb.to(torch.uint8), k)
    return packed.reshape(lead + (k // 2,)), scales.reshape(lead + ((k + 63) // 64, 2))


def _code_values(codes):
    """Float64 values of the two nibbles of every byte, low nibble first; code 8 is -0."""
    table = torch.tensor(E2M1 + tuple(-v for v in E2M1), dtype=torch.float64)
    b = codes.to(torch.int64)
    nibbles = torch.stack((b & 15, b >> 4), dim=-1).reshape(b.shape[:-1] + (2 * b.shape[-1],))
    return table[nibbles]


def mxfp4_dequantize_ref(codes, scales, dtype=None):
    """A3: ``(*lead, K)`` of ``dtype`` (bfloat16 when None)."""
    dtype = torch.bfloat16 if dtype is None else dtype
    codes = codes.detach().cpu()
    scales = scales.detach().cpu()
    if codes.dtype != torch.uint8:
        codes = codes.view(torch.uint8)
    if scales.dtype != torch.uint8:
        scales = scales.view(torch.uint8)
    lead, k = tuple(codes.shape[:-1]), 2 * codes.shape[-1]
    if codes.numel() == 0:
        return torch.zeros(lead + (k,), dtype=dtype)
    values = _code_values(codes).reshape(-1, k // BLOCK, BLOCK)
    sb = scales.reshape(-1, scales.shape[-2] * 2)[:, : k // BLOCK].to(torch.int64)
    scale = torch.where(sb == 255, torch.full(sb.shape, float("nan"), dtype=torch.float64),
                        torch.exp2((sb - 127).to(torch.float64)))
    exact = (values * scale.unsqueeze(-1)).reshape(lead + (k,))
    # The exact value is an fp32 value (or beyond its range: Inf in every output dtype), so
    # going through float32 rounds once.
    return exact.to(torch.float32).to(dtype)


def bf16_rne(v):
    """IEEE round-to-nearest-even of float64 ``v`` to bfloat16, in one rounding (no fp32 step)."""
    v = v.to(torch.float64)
    mantissa, exponent = torch.frexp(v)                    # v = m * 2^e, 0.5 <= |m| < 1
    exponent = exponent.clamp(min=-125)                    # below 2^-126: the subnormal grid 2^-133
    scaled = torch.ldexp(v, (8 - exponent).to(torch.float64))  # exact: |scaled| < 256 significant
    rounded = torch.ldexp(torch.round(scaled), (exponent - 8).to(torch.float64))  # torch.round: ties to even
    rounded = torch.where(torch.isfinite(v), rounded, v)
    return rounded.to(torch.bfloat16)  # exact for finite values up to bf16 max; beyond it Inf


def svd_quant_ref(activation, weights, scales, down, up, accum_dtype=torch.float64):
    """A5: ``bf16(bf16(bf16(X D) U) + bf16(Q(X) Q(W)^T))`` with matmuls in ``accum_dtype``."""
    lead, k = tuple(activation.shape[:-1]), activation.shape[-1]
    n = up.shape[1]
    x = activation.detach().cpu().reshape(-1, k)
    acc = accum_dtype

    def rne(v):
        return bf16_rne(v) if acc == torch.float64 else v.to(torch.bfloat16)

    xd = rne(x.to(acc) @ down.detach().cpu().to(acc))
    low_rank = rne(xd.to(acc) @ up.detach().cpu().to(acc))
    x_codes, x_scales = mxfp4_quantize_ref(x, "round")
    xq = mxfp4_dequantize_ref(x_codes, x_scales, torch.float32).to(acc)
    wq = mxfp4_dequantize_ref(weights, scales, torch.float32).to(acc)
    fp4 = rne(xq @ wq.T)
    out = rne(low_rank.to(acc) + fp4.to(acc))
    return out.reshape(lead + (n,))


# quant_dequant_mxfp4 (the activation fake-quant of upstream's experimental ops; README section
# "quant_dequant_mxfp4"). Per block of 32 along the last dimension: m = max|x|, raw = max(m * s / 6,
# 2^-30) with s = float32(inv_scale_factor_scale), scale = 2^E with E the integer nearest to
# log2(raw), out = sign(x) * e2m1_round_half_up(|x| / scale) * scale, then rounded to x's dtype.
#
# Exactness: m * s is exact in float64 (two 24-bit significands). log2(raw) is never a tie: a tie
# needs raw = 2^(k + 1/2), irrational, while raw is rational. So E = floor(log2(raw * sqrt(2))) =
# floor(log2(m * s)) - 3 + [M >= 3 sqrt(2) / 4] for m * s = M * 2^k (M in [1, 2)), and M >= c for
# the irrational c is M >= the smallest double above c, found with exact rational arithmetic.
QDQ_MIN_EXPONENT = -30
QDQ_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)  # |y| >= t moves up to the next value


def _smallest_double_at_least(square):
    """The smallest float64 d > 0 with d * d >= square (a Fraction), by exact comparison."""
    import math
    from fractions import Fraction

    d = math.sqrt(float(square))
    while Fraction(d) ** 2 >= square:
        d = math.nextafter(d, 0.0)
    while Fraction(d) ** 2 < square:
        d = math.nextafter(d, math.inf)
    return d


def _qdq_mantissa_threshold():
    from fractions import Fraction

    return _smallest_double_at_least(Fraction(9, 8))  # (3 sqrt(2) / 4)^2 = 9 / 8


def qdq_exponent_ref(m, s):
    """The exact scale exponent E (int64) of blocks with maxima ``m`` (float32 >= 0, finite)."""
    prod = m.double() * qdq_scale_float32(s)  # exact
    mant, exp = torch.frexp(prod)  # prod = mant * 2^exp, mant in [0.5, 1)
    e = (exp.to(torch.int64) - 1) - 3 + (mant * 2 >= _qdq_mantissa_threshold()).to(torch.int64)
    e = torch.where(prod > 0, e, torch.full_like(e, QDQ_MIN_EXPONENT))
    return e.clamp_min(QDQ_MIN_EXPONENT)


def qdq_scale_float32(inv_scale_factor_scale):
    """The float32 value of the op's scalar (the op computes in float32)."""
    return float(torch.tensor(float(inv_scale_factor_scale), dtype=torch.float32))


def quant_dequant_mxfp4_ref(x, block_size=32, inv_scale_factor_scale=1.0):
    """The exact reference of ``quant_dequant_mxfp4`` (no validation; any rank >= 1, any last dim).

    A block holding NaN or +-Inf becomes all NaN. Signs follow the formula's sign(y): +-0 give +0,
    a negative value that quantizes to zero gives -0. float16 results are the float32 ones rounded
    to nearest-even (they can underflow or overflow there); bfloat16 ones are exact.
    """
    assert block_size == BLOCK
    s = qdq_scale_float32(inv_scale_factor_scale)
    shape, dtype = x.shape, x.dtype
    n = shape[-1]
    rows = x.reshape(-1, n).float()
    pad = (-n) % BLOCK
    padded = torch.nn.functional.pad(rows, (0, pad))
    blocks = padded.reshape(rows.shape[0], -1, BLOCK)
    finite = torch.isfinite(blocks).all(-1, keepdim=True)
    m = torch.where(finite, blocks, torch.zeros_like(blocks)).abs().amax(-1, keepdim=True)
    e = qdq_exponent_ref(m, s)
    a = blocks.double().abs() * torch.pow(2.0, (-e).double())  # exact
    q = torch.zeros_like(a)
    grid = (0.0,) + E2M1[1:]
    for i, t in enumerate(QDQ_MIDPOINTS):
        q = torch.where(a >= t, torch.full_like(a, grid[i + 1]), q)
    out = (q * torch.pow(2.0, e.double())).float()  # exact, or +Inf past float32's range
    out = torch.copysign(out, torch.where(blocks == 0, torch.zeros_like(blocks), blocks))  # sign(+-0) = 0
    out = torch.where(finite, out, torch.full_like(out, float("nan")))
    out = out.reshape(rows.shape[0], -1)[:, :n]
    return out.to(dtype).reshape(shape)
