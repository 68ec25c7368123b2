"""An independent brute-force MXFP4 quantizer in plain Python floats (docs/mxfp4.md A2).

Written apart from ``reference.py`` on purpose: the block exponent comes from ``math.frexp``, the
element code from a nearest-grid search over the eight E2M1 magnitudes with the tie rules
stated in words ("round": ties to the larger magnitude; "rint": ties to the even code;
"floor": the largest grid value <= y, i.e. the smallest magnitude >= |y| for y < 0), not from
the decision-interval tables the reference uses. Python floats are float64, so every
fp16/bf16/fp32 input and every scaled value is exact.
"""
import math

GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def _nearest(a, mode):
    best = None
    for code, g in enumerate(GRID):
        d = abs(a - g)
        if best is None or d < best[0]:
            best = (d, code)
        elif d == best[0]:  # a tie between best[1] and code (code is the larger magnitude)
            if mode == "round" or (mode == "rint" and code % 2 == 0):
                best = (d, code)
    return best[1]


def magnitude_code(y, negative, mode):
    """The E2M1 magnitude code (0..7) of the scaled value y (x's sign given separately)."""
    a = abs(y)
    if mode in ("round", "rint"):
        return 7 if a > 6.0 else _nearest(a, mode)
    if not negative:  # toward -inf on y >= 0: the largest grid value <= a
        return max(code for code, g in enumerate(GRID) if g <= a)
    above = [code for code, g in enumerate(GRID) if g >= a]
    return min(above) if above else 7  # toward -inf on y < 0, saturated at -6


def quantize_block(values, mode="round"):
    """(scale byte, [32 codes]) of one block of Python floats."""
    if any(not math.isfinite(v) for v in values):
        return 255, [0] * len(values)
    exps = [math.frexp(v)[1] - 1 + 127 for v in values if v != 0.0]
    e = max(exps) if exps else -math.inf
    ec = int(min(max(e, 2), 254))
    multiplier = math.ldexp(1.0, 129 - ec)
    codes = []
    for v in values:
        negative = math.copysign(1.0, v) < 0
        code = magnitude_code(v * multiplier, negative and v != 0.0, mode)
        codes.append(code + (8 if negative else 0))
    return ec - 2, codes


def quantize_rows(rows, mode="round"):
    """Rows (lists of floats, length K % 32 == 0) -> (packed bytes per row, scale bytes per row
    with the pad byte 0 when K/32 is odd)."""
    packed, scales = [], []
    for row in rows:
        codes, sbs = [], []
        for b in range(0, len(row), 32):
            sb, c = quantize_block(row[b:b + 32], mode)
            sbs.append(sb)
            codes.extend(c)
        if len(sbs) % 2:
            sbs.append(0)
        packed.append([codes[2 * j] | (codes[2 * j + 1] << 4) for j in range(len(codes) // 2)])
        scales.append(sbs)
    return packed, scales


def decode(code):
    """The value of an E2M1 code (A1: e == 0 -> 0.5 m; else 2^(e-1) (1 + m/2)), -0.0 for 8."""
    s, e, m = code >> 3, (code >> 1) & 3, code & 1
    v = 0.5 * m if e == 0 else math.ldexp(1.0 + m / 2, e - 1)
    return -v if s else v
