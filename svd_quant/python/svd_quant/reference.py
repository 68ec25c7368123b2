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
