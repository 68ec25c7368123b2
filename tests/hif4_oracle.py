"""Independent HiFloat4 oracle (docs/hifloat4.md A2-A4) and shared test-data helpers.

The oracle is scalar Python, one 64-element block at a time, and shares no code with
``reference.py`` (it must never import it). It follows the spec's math with a different
structure:

* inputs are decoded from their IEEE bit fields into exact float64 values (no torch, no numpy
  casts);
* every fp32 / bf16 / fp16 rounding is done by :func:`round_even`, an integer
  round-to-nearest-even onto the target precision with its subnormal grid; float64 holds every
  intermediate exactly (at most 32 significant bits: an fp32 times a bf16), except 1/S, which
  is rounded from an exact ``Fraction``;
* the block scale S is a nearest-value search over the 255-value E6M2 grid of A1 (ties to the
  even byte, which is A2 step 3's ties-to-even q, carries included);
* each element's code is a nearest-value search over the S1P2 grid {0, 0.25, ..., 1.75} (ties
  to the larger code, anything above 1.75 -> 1.75), which is A2 step 7's floor(4t + 0.5) clamp;
* outputs are encoded to bit patterns by :func:`encode_bits`, written here.

The same module holds the torch-side comparison helpers (bit views, ``assertBitsEqual``) and
the block generators of D3 (numpy), used by both test modules.
"""

import bisect
import functools
import math
from fractions import Fraction

import numpy as np

from amct_testing import INT_VIEW, assert_bits_equal, bitwise_mismatches, load_vector_file, to_tensor  # noqa: F401,E501

__all__ = [
    "load_vectors", "hexint", "FORMATS", "decode_bits", "round_even",
    "encode_bits", "E6M2_VALUES", "block_scale", "quantise_block", "pack_block",
    "unpack_block", "fake_quant_blocks", "BlockGen", "BitsMixin",
]


# ---------------------------------------------------------------------------------------------
# Vectors
# ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def load_vectors():
    """The ``vectors`` list of ``hif4_vectors.json`` (spec Appendix)."""
    return load_vector_file("hif4_vectors.json")["vectors"]


def hexint(s):
    """``"0x7E"`` -> 126."""
    return int(s, 16)


# ---------------------------------------------------------------------------------------------
# IEEE formats, written out: decode bits, round, encode bits
# ---------------------------------------------------------------------------------------------

class Fmt:
    """A binary floating-point format: precision p (with the implicit bit), exponent bits."""

    def __init__(self, name, width, ebits, precision):
        self.name = name
        self.width = width
        self.ebits = ebits
        self.mbits = precision - 1
        self.precision = precision
        self.bias = (1 << (ebits - 1)) - 1
        self.emin = 1 - self.bias                 # exponent of the smallest normal
        self.emax = self.bias
        self.max_finite = math.ldexp(2.0 - math.ldexp(1.0, -self.mbits), self.emax)


FORMATS = {
    "float16": Fmt("float16", 16, 5, 11),
    "bfloat16": Fmt("bfloat16", 16, 8, 8),
    "float32": Fmt("float32", 32, 8, 24),
}
FP32, BF16, FP16 = FORMATS["float32"], FORMATS["bfloat16"], FORMATS["float16"]


def decode_bits(bits, fmt):
    """An IEEE bit pattern -> its exact float64 value (-0.0, +-inf and nan included)."""
    bits = int(bits)
    sign = -1.0 if (bits >> (fmt.width - 1)) & 1 else 1.0
    exp = (bits >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    frac = bits & ((1 << fmt.mbits) - 1)
    if exp == (1 << fmt.ebits) - 1:
        return math.nan if frac else sign * math.inf
    if exp == 0:   # zero or subnormal: frac units of 2^(emin - mbits)
        return sign * math.ldexp(float(frac), fmt.emin - fmt.mbits)
    return sign * math.ldexp(float((1 << fmt.mbits) | frac), exp - fmt.bias - fmt.mbits)


def _round_int_even(n, rem_twice, unit_twice):
    """n + round-half-even of a remainder: rem_twice / unit_twice compared with 1/2."""
    if rem_twice > unit_twice or (rem_twice == unit_twice and n % 2 == 1):
        return n + 1
    return n


def round_even(v, fmt, overflow_to_inf=False):
    """Round the exact non-negative value ``v`` (a float64) to ``fmt``, ties to even.

    The quantum is 2^(E - p + 1) for a normal result of exponent E and 2^(emin - p + 1) below
    the normal range (the subnormal grid). A result above the largest finite value is +inf
    with ``overflow_to_inf`` (IEEE RNE overflow); otherwise it is unexpected and raises.
    """
    if v < 0 or math.isnan(v) or math.isinf(v):
        raise ValueError(f"round_even needs a finite v >= 0, got {v!r}")
    if v == 0.0:
        return 0.0
    _, e = math.frexp(v)                    # v = m * 2^e, 0.5 <= m < 1, so floor(log2 v) = e - 1
    quantum_exp = max(e - 1, fmt.emin) - fmt.mbits
    scaled = math.ldexp(v, -quantum_exp)    # exact: a power-of-two scaling in float64
    n = math.floor(scaled)
    rem = scaled - n                        # exact: scaled has few bits above the binary point
    n = _round_int_even(n, 2 * rem, 1.0)
    out = math.ldexp(float(n), quantum_exp)
    if out > fmt.max_finite:
        if overflow_to_inf:
            return math.inf
        raise OverflowError(f"{v!r} overflows {fmt.name}")
    return out


def round_even_fraction(r, fmt):
    """Round an exact positive ``Fraction`` to ``fmt``, ties to even (used for 1/S)."""
    if r <= 0:
        raise ValueError("round_even_fraction needs r > 0")
    # floor(log2 r) from the bit lengths, then corrected by one step either way.
    e = r.numerator.bit_length() - r.denominator.bit_length()
    while Fraction(2) ** e > r:
        e -= 1
    while Fraction(2) ** (e + 1) <= r:
        e += 1
    quantum_exp = max(e, fmt.emin) - fmt.mbits
    scaled = r / Fraction(2) ** quantum_exp
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    n = _round_int_even(n, 2 * rem, 1)
    return math.ldexp(float(n), quantum_exp)


def encode_bits(v, fmt):
    """An exactly representable float64 ``v`` (signed zeros and infinities too) -> its pattern.

    NaN gives None (payloads are never compared). Raises if ``v`` is not exact in ``fmt``.
    """
    if math.isnan(v):
        return None
    sign = 1 if math.copysign(1.0, v) < 0 else 0
    a = abs(v)
    top = sign << (fmt.width - 1)
    if math.isinf(a):
        return top | (((1 << fmt.ebits) - 1) << fmt.mbits)
    if a == 0.0:
        return top
    _, e = math.frexp(a)
    E = e - 1
    if E >= fmt.emin:
        frac = math.ldexp(a, fmt.mbits - E) - (1 << fmt.mbits)
        biased = E + fmt.bias
    else:
        frac = math.ldexp(a, fmt.mbits - fmt.emin)
        biased = 0
    if frac != math.floor(frac) or biased >= (1 << fmt.ebits) - 1:
        raise ValueError(f"{v!r} is not exactly representable in {fmt.name}")
    return top | (biased << fmt.mbits) | int(frac)


# ---------------------------------------------------------------------------------------------
# HiF4 grids (A1)
# ---------------------------------------------------------------------------------------------

#: A1: S = (1 + m/4) * 2^E for E in [-48, 15], m in 0..3: byte (E + 48) * 4 + m, in byte order
#: (increasing). Byte FF is not a scale (it marks a poisoned block), so the grid has 255 values.
E6M2_VALUES = [math.ldexp(1.0 + (b % 4) / 4.0, b // 4 - 48) for b in range(255)]

#: A1: the S1P2 magnitudes c/4.
S1P2_VALUES = [c / 4.0 for c in range(8)]

C7 = 0.142578125  # bf16(1/7), A2 step 3


def _nearest_e6m2(p):
    """Byte of the E6M2 value nearest to p (within the grid), ties to the even byte."""
    i = bisect.bisect_left(E6M2_VALUES, p)
    if i < len(E6M2_VALUES) and E6M2_VALUES[i] == p:
        return i
    lo, hi = i - 1, i                     # E6M2_VALUES[lo] < p < E6M2_VALUES[hi]
    d_lo, d_hi = p - E6M2_VALUES[lo], E6M2_VALUES[hi] - p
    if d_lo < d_hi:
        return lo
    if d_hi < d_lo:
        return hi
    return lo if lo % 2 == 0 else hi


def _nearest_code(t):
    """Index c of the S1P2 magnitude nearest to t >= 0, ties up; t above 1.75 gives 7."""
    best = 0
    for c in range(1, 8):
        # c is at least as near as c - 1 once t reaches their midpoint (ties go to c).
        if t >= (S1P2_VALUES[c - 1] + S1P2_VALUES[c]) / 2.0:
            best = c
    return best


def block_scale(vmax):
    """A2 step 3-4 for a block maximum ``vmax`` (exact float64, >= 0): (S, E6M2 byte, rec, p).

    p is the clamped bf16 value of step 3.3, before the E6M2 rounding.
    """
    p = round_even(vmax * C7, FP32)        # fp32 product (exact in float64 first)
    p = round_even(p, BF16)                # bf16
    p = min(max(p, 2.0 ** -48), 49152.0)   # clamp
    byte = _nearest_e6m2(p)
    S = E6M2_VALUES[byte]
    rec = round_even(round_even_fraction(1 / Fraction(S), FP32), BF16)
    return S, byte, rec, p


class BlockResult:
    """The oracle's view of one block: flags, codes, pack bytes and output patterns."""

    __slots__ = ("poisoned", "S", "byte0", "rec", "p", "l2", "l3", "codes", "neg", "out_f64",
                 "out_bits")


def quantise_block(bits, dtype, skip_in_group_bf16=False):
    """A2 on one block given as 64 input bit patterns of ``dtype`` ("float16", ...).

    ``skip_in_group_bf16`` drops the ``t = bf16(t)`` step of A2 step 7 (A6 ex. 7 check only).
    Returns a :class:`BlockResult`; ``out_bits`` holds the output patterns in ``dtype``
    (None where NaN).
    """
    fmt = FORMATS[dtype]
    if len(bits) != 64:
        raise ValueError("a block has 64 elements")
    x = [decode_bits(b, fmt) for b in bits]
    r = BlockResult()
    r.poisoned = any(math.isnan(v) or math.isinf(v) for v in x)
    # Masked values x' (non-finite -> +0), magnitudes, signs (A2 step 1).
    xm = [0.0 if (math.isnan(v) or math.isinf(v)) else v for v in x]
    mag = [abs(v) for v in xm]
    sgn = [1 if v > 0 else (-1 if v < 0 else 0) for v in xm]
    r.neg = [v < 0 for v in xm]

    # Block scale from the maximum over all 64 magnitudes (A2 step 2-4).
    r.S, r.byte0, r.rec, r.p = block_scale(max(mag))
    S, rec = r.S, r.rec

    # Flags. Element i = 8j + 4k + l (A1).
    r.l2 = []
    r.l3 = []
    for j in range(8):
        group = mag[8 * j: 8 * j + 8]
        l2 = 1 if round_even(max(group) * rec, FP32) >= 4.0 else 0
        r.l2.append(l2)
        for k in range(2):
            sub = mag[8 * j + 4 * k: 8 * j + 4 * k + 4]
            prod = round_even(max(sub) * rec, FP32)
            r.l3.append(1 if round_even(prod * 2.0 ** -l2, FP32) >= 2.0 else 0)

    # Codes and outputs, one element at a time.
    r.codes = []
    r.out_f64 = []
    r.out_bits = []
    for i in range(64):
        j, k = i // 8, (i % 8) // 4
        de = r.l2[j] + r.l3[2 * j + k]
        t = round_even(round_even(mag[i] * rec, FP32) * 2.0 ** -de, FP32)
        if not skip_in_group_bf16:
            t = round_even(t, BF16)
        c = _nearest_code(t)
        r.codes.append(c)
        value = S1P2_VALUES[c] * 2.0 ** de * S            # exact: at most 6 significant bits
        if sgn[i] < 0:
            value = -value                                # a zero code gives -0.0
        if r.poisoned:
            value = math.nan
        elif round_even(abs(value), FP32) != abs(value):
            raise AssertionError("a reconstructed value is not exact in fp32")
        r.out_f64.append(value)
        # Output cast to the input dtype, RNE (fp16: onto its subnormal grid).
        if math.isnan(value):
            r.out_bits.append(None)
        else:
            rounded = math.copysign(round_even(abs(value), fmt), value)
            r.out_bits.append(encode_bits(rounded, fmt))
    return r


def pack_block(r):
    """A3 bytes of a :class:`BlockResult`: (4 scale bytes, 32 value bytes), as int lists."""
    byte0 = 0xFF if r.poisoned else r.byte0
    byte1 = sum(bit << (7 - j) for j, bit in enumerate(r.l2))
    byte2 = sum(r.l3[idx] << (7 - idx) for idx in range(8))
    byte3 = sum(r.l3[8 + idx] << (7 - idx) for idx in range(8))
    nibbles = [(8 if r.neg[i] else 0) + r.codes[i] for i in range(64)]
    values = [nibbles[2 * b] | (nibbles[2 * b + 1] << 4) for b in range(32)]
    return [byte0, byte1, byte2, byte3], values


def unpack_block(scale4, value32, dtype="float32"):
    """A4 on one block's bytes: 64 output patterns of ``dtype`` (None for NaN)."""
    fmt = FORMATS[dtype]
    b0, b1, b2, b3 = (int(b) for b in scale4)
    if b0 == 0xFF:
        return [None] * 64
    S = math.ldexp(1.0 + (b0 & 3) / 4.0, (b0 >> 2) - 48)
    out = []
    for i in range(64):
        j, k = i // 8, (i % 8) // 4
        l2 = (b1 >> (7 - j)) & 1
        idx = 2 * j + k
        l3 = ((b2 >> (7 - idx)) & 1) if idx < 8 else ((b3 >> (15 - idx)) & 1)
        byte = int(value32[i // 2])
        nib = (byte >> 4) if i % 2 else (byte & 0xF)
        c = nib & 7
        v = S * 2.0 ** (l2 + l3) * (c / 4.0)               # exact fp32 value (A4)
        if round_even(v, FP32) != v:
            raise AssertionError("an unpacked value is not exact in fp32")
        v = round_even(v, fmt, overflow_to_inf=True)       # the dtype cast, RNE (fp16 may overflow)
        out.append(encode_bits(-v if nib & 8 else v, fmt))
    return out


def fake_quant_blocks(block_bits, dtype):
    """:func:`quantise_block` over an (n, 64) array of patterns: list of BlockResult."""
    return [quantise_block(row, dtype) for row in np.asarray(block_bits).tolist()]


# ---------------------------------------------------------------------------------------------
# D3 block generators (numpy; they decide inputs only, never expected values)
# ---------------------------------------------------------------------------------------------

_UINT = {16: np.uint16, 32: np.uint32}


def _f32_to_bf16_bits(v32):
    """float32 array -> bf16 patterns, RNE (finite inputs)."""
    u = np.asarray(v32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def values_to_bits(v, dtype):
    """float64 values -> patterns of ``dtype`` (clipped to its finite range, RNE)."""
    fmt = FORMATS[dtype]
    v = np.clip(np.asarray(v, dtype=np.float64), -fmt.max_finite, fmt.max_finite)
    if dtype == "float16":
        return v.astype(np.float16).view(np.uint16)
    v32 = v.astype(np.float32)
    if dtype == "float32":
        return v32.view(np.uint32)
    return _f32_to_bf16_bits(v32)


def bits_to_f64(bits, dtype):
    """Patterns -> float64 values via numpy (for generators and sanity counts only)."""
    bits = np.asarray(bits)
    with np.errstate(invalid="ignore"):
        if dtype == "float16":
            return bits.astype(np.uint16).view(np.float16).astype(np.float64)
        if dtype == "bfloat16":
            return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)


class BlockGen:
    """Generators of (n, 64) input patterns for one dtype, one per D3 data kind."""

    KINDS = ("normal", "wide", "bits", "finite_bits", "sparse_poison", "all_equal", "outlier",
             "zeros", "tiny_negative", "clamp_high", "clamp_low", "e6m2_tie", "in_group_tie")

    def __init__(self, dtype, seed):
        self.dtype = dtype
        self.fmt = FORMATS[dtype]
        self.rng = np.random.default_rng(seed)
        self.width = self.fmt.width

    # -- helpers --------------------------------------------------------------------------

    def _bits(self, v):
        return values_to_bits(v, self.dtype)

    def _random_patterns(self, shape):
        hi = 1 << self.width
        return self.rng.integers(0, hi, shape, dtype=np.uint64).astype(_UINT[self.width])

    def _is_nonfinite(self, bits):
        exp_mask = ((1 << self.fmt.ebits) - 1) << self.fmt.mbits
        return (bits.astype(np.uint64) & exp_mask) == exp_mask

    def _signs(self, shape):
        return np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)

    # -- kinds ----------------------------------------------------------------------------

    def normal(self, n):
        """randn times a per-block 10^U(-3, 3)."""
        scale = 10.0 ** self.rng.uniform(-3, 3, (n, 1))
        return self._bits(self.rng.standard_normal((n, 64)) * scale)

    def wide(self, n):
        """randn * 2^U(a, b) per element * 2^U(a, b) per block (a, b = -60, 20; wider for fp32)."""
        lo, hi = (-90, 40) if self.dtype == "float32" else (-60, 20)
        e = self.rng.uniform(lo, hi, (n, 64)) + self.rng.uniform(lo, hi, (n, 1))
        return self._bits(self.rng.standard_normal((n, 64)) * np.exp2(e))

    def bits(self, n):
        """Uniformly random patterns: subnormals, NaN and +-Inf included."""
        return self._random_patterns((n, 64))

    def finite_bits(self, n):
        """Random patterns with the non-finite ones redrawn as random finite patterns."""
        b = self._random_patterns((n, 64))
        bad = self._is_nonfinite(b)
        # Clear the top exponent bit: the exponent field is then never all ones.
        top_exp_bit = np.uint64(1 << (self.width - 2))
        b = np.where(bad, (b.astype(np.uint64) & ~top_exp_bit).astype(b.dtype), b)
        return b

    def sparse_poison(self, n):
        """Normal or finite-pattern blocks with one NaN / +-Inf (random payload and sign)."""
        b = np.where(self.rng.random((n, 1)) < 0.5, self.normal(n), self.finite_bits(n))
        specials = self._special_patterns()
        col = self.rng.integers(0, 64, n)
        b[np.arange(n), col] = self.rng.choice(specials, n)
        return b

    def _special_patterns(self):
        f = self.fmt
        exp_all = ((1 << f.ebits) - 1) << f.mbits
        sign = 1 << (self.width - 1)
        quiet = 1 << (f.mbits - 1)
        pats = [exp_all, sign | exp_all, exp_all | quiet, sign | exp_all | quiet, exp_all | 1,
                sign | exp_all | 1, exp_all | ((1 << f.mbits) - 1), sign | exp_all | ((1 << f.mbits) - 1)]
        return np.array(pats, dtype=_UINT[self.width])

    def all_equal(self, n):
        """All 64 elements equal (2.0 among them), random sign and magnitude."""
        mags = np.exp2(self.rng.uniform(-20, 14, (n, 1))) * self._signs((n, 1))
        mags[:: max(1, n // 4)] = 2.0
        return self._bits(np.repeat(mags, 64, axis=1))

    def outlier(self, n):
        """Small values and one outlier 2^U(3, 30) times larger, at a random position."""
        base = self.rng.standard_normal((n, 64)) * np.exp2(self.rng.uniform(-16, 0, (n, 1)))
        col = self.rng.integers(0, 64, n)
        base[np.arange(n), col] = (np.abs(base).max(axis=1) * np.exp2(self.rng.uniform(3, 30, n))
                                   * self._signs(n))
        return self._bits(base)

    def zeros(self, n):
        """Zero blocks of +0 and -0.0 mixed; some with a few tiny subnormal-range values."""
        b = np.where(self.rng.random((n, 64)) < 0.5, 0, 1 << (self.width - 1)).astype(_UINT[self.width])
        some = self.rng.random(n) < 0.5
        tiny = self._bits(self.rng.standard_normal((n, 64))
                          * math.ldexp(1.0, self.fmt.emin - self.fmt.mbits + 3))
        keep = (self.rng.random((n, 64)) < 0.1) & some[:, None]
        return np.where(keep, tiny, b)

    def tiny_negative(self, n):
        """One large positive value; the rest tiny negatives that quantise to -0.0."""
        big = np.exp2(self.rng.uniform(-10, 12, (n, 1)))
        v = -big * np.exp2(self.rng.uniform(-40, -5, (n, 64)))
        v[:, 0] = big[:, 0]
        perm = np.argsort(self.rng.random((n, 64)), axis=1)
        return self._bits(np.take_along_axis(v, perm, axis=1))

    def clamp_high(self, n):
        """Block maxima large enough for the S = 49152 clamp (not reachable in fp16)."""
        lo, hi = (19, 127) if self.dtype != "float16" else (13, 15.9)
        e = self.rng.uniform(lo, hi, (n, 1))
        v = self.rng.standard_normal((n, 64)) * np.exp2(e - 2)
        v[:, 0] = np.exp2(e[:, 0]) * self._signs(n)
        return self._bits(v)

    def clamp_low(self, n):
        """Block maxima below ~2^-45.2, for the S = 2^-48 clamp.

        fp16 cannot reach that clamp with a non-zero block (its smallest value is 2^-24); its
        blocks here are made of the smallest subnormals instead."""
        lo, hi = (-140, -45.5) if self.dtype != "float16" else (-25, -18)
        e = self.rng.uniform(lo, hi, (n, 1))
        return self._bits(self.rng.standard_normal((n, 64)) * np.exp2(e))

    @functools.cached_property
    def _tie_maxima(self):
        """Input values v of this dtype whose block scale step 3.5 is an exact q tie.

        A tie: bf16(fp32(v * C7)) = (q + 0.5) * 2^(e - 2) with q in 4..7 (q = 7 carries).
        Found by scanning the dtype's neighbours of the exact solution, checked with the
        oracle's own rounding. The list mixes exponents over the dtype's range.
        """
        found = []
        exps = range(-14, 15) if self.dtype == "float16" else range(-40, 40, 3)
        for e in exps:
            for q in (4, 5, 6, 7):
                target = math.ldexp(q + 0.5, e - 2)
                centre = target / C7
                if centre > self.fmt.max_finite or centre < math.ldexp(1.0, self.fmt.emin):
                    continue
                c_bits = int(self._bits(np.array([centre]))[0])
                for d in range(-40, 41):
                    b = c_bits + d
                    v = decode_bits(b, self.fmt)
                    if not (v > 0 and math.isfinite(v)):
                        continue
                    p = round_even(round_even(v * C7, FP32), BF16)
                    if p == target:
                        found.append(b)
        if not found:
            raise AssertionError(f"no E6M2 ties found for {self.dtype}")
        return np.array(sorted(set(found)), dtype=_UINT[self.width])

    def e6m2_tie(self, n):
        """Block maximum on an E6M2 tie (incl. the q = 7.5 carry), the rest below it."""
        vmax_bits = self.rng.choice(self._tie_maxima, n)
        vmax = bits_to_f64(vmax_bits, self.dtype)
        v = self.rng.uniform(-1, 1, (n, 64)) * vmax[:, None]
        b = self._bits(v)
        col = self.rng.integers(0, 64, n)
        sign = np.where(self.rng.random(n) < 0.5, 1 << (self.width - 1), 0).astype(_UINT[self.width])
        b[np.arange(n), col] = vmax_bits | sign
        return b

    def in_group_tie(self, n):
        """Elements near the S1P2 midpoints (c + 1/2)/4 * 2^de / rec, a few ulps either side.

        Element 0 of the block carries the maximum (so S and rec are known); the other
        elements sit within +-3 ulps of a midpoint for a random de in 0..2 (flags decide
        which de really applies; many land on or next to a bf16 tie of A2 step 7).
        """
        out = np.empty((n, 64), dtype=_UINT[self.width])
        vmax_e = self.rng.uniform(-12, 12, n)
        for r in range(n):
            vmax = float(bits_to_f64(self._bits(np.array([math.exp2(vmax_e[r])])), self.dtype)[0])
            S, _, rec, _ = block_scale(vmax)
            c = self.rng.integers(0, 7, 63)
            de = self.rng.integers(0, 3, 63)
            mid = (c + 0.5) / 4.0 * np.exp2(de) / rec
            mid = np.minimum(mid, vmax)
            bits = self._bits(mid).astype(np.int64) + self.rng.integers(-3, 4, 63)
            bits = np.clip(bits, 0, (1 << (self.width - 1)) - 1)
            # Keep them finite and non-negative; sign at random.
            bits = np.where(self._is_nonfinite(bits.astype(_UINT[self.width])), 0, bits)
            sign = np.where(self.rng.random(63) < 0.5, 1 << (self.width - 1), 0)
            out[r, 1:] = (bits | sign).astype(_UINT[self.width])
            out[r, 0] = self._bits(np.array([vmax]))[0]
        return out

    def kind(self, name, n):
        return getattr(self, name)(n)

    def mixture(self, n, weights=None):
        """n blocks drawn from every kind (shuffled), the structured kinds well represented."""
        if weights is None:
            weights = {k: 1.0 for k in self.KINDS}
            weights.update(normal=3.0, wide=3.0, bits=2.0, finite_bits=2.0)
        names = list(weights)
        w = np.array([weights[k] for k in names], dtype=np.float64)
        counts = np.floor(w / w.sum() * n).astype(int)
        counts[0] += n - counts.sum()
        parts = [self.kind(k, int(c)) for k, c in zip(names, counts) if c > 0]
        b = np.concatenate(parts, axis=0)
        return b[self.rng.permutation(len(b))]


# ---------------------------------------------------------------------------------------------
# torch-side helpers (bit views, bitwise comparison). Kept apart from the oracle above.
# ---------------------------------------------------------------------------------------------

import torch  # noqa: E402

TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
_INT_VIEW = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
             torch.float64: torch.int64}


def to_torch(bits, dtype):
    """Unsigned patterns (numpy or list) -> a torch tensor of ``dtype`` with exactly those bits."""
    if isinstance(dtype, str):
        dtype = TORCH_DTYPES[dtype]
    if dtype in (torch.float16, torch.bfloat16):
        arr = np.ascontiguousarray(np.asarray(bits, dtype=np.uint16)).view(np.int16).copy()
        return torch.from_numpy(arr).view(dtype)
    arr = np.ascontiguousarray(np.asarray(bits, dtype=np.uint32)).view(np.int32).copy()
    return torch.from_numpy(arr).view(torch.float32)


def ubits(t):
    """Unsigned bit patterns of a CPU float tensor, as a numpy uint16 / uint32 array."""
    t = t.detach().cpu().contiguous()
    iv = _INT_VIEW[t.dtype]
    np_u = {torch.int16: np.uint16, torch.int32: np.uint32, torch.int64: np.uint64}[iv]
    return t.view(iv).numpy().view(np_u)


def expected_tensor(bits_or_none, dtype):
    """A list of patterns (None = NaN) -> a tensor of ``dtype`` (NaN as the canonical qNaN)."""
    fmt = FORMATS[dtype if isinstance(dtype, str) else DTYPE_NAMES[dtype]]
    qnan = (((1 << fmt.ebits) - 1) << fmt.mbits) | (1 << (fmt.mbits - 1))
    return to_torch([qnan if b is None else b for b in bits_or_none], dtype)


class BitsMixin:
    """``assertBitsEqual`` for unittest.TestCase subclasses."""

    def assertBitsEqual(self, actual, expected, what="", inputs=None):
        assert_bits_equal(self, actual, expected, what=what, inputs=inputs)
