"""Independent HiFloat8 oracle (docs/hifloat8.md D2) and shared test data helpers.

The oracle knows nothing about the HiF8 bit layout or the A4 algorithm. It takes the 253 finite
HiF8 values from the golden vectors (``decode`` entries, Appendix A), and encodes by a float64
nearest-value search over them (numpy ``searchsorted`` on |x|, then a distance comparison):

* ties go to the larger magnitude (round to nearest, ties away from zero);
* |x| above the largest value lands on 32768 (saturation); +-Inf -> 6F / EF; NaN -> 80;
* a nearest value of 0 gives 00 whatever the sign of x.

Float64 distances decide every case correctly: near a tie, x and both neighbours are within a
factor of two of each other and have few significant bits, so both differences are exact; far
from a tie the comparison is not close.

It must stay independent of ``reference.py``: no import of it, no bit-level HiF8 logic here.
"""

import functools
import math

import numpy as np

from amct_testing import INT_VIEW, assert_bits_equal, bitwise_mismatches, load_vector_file, to_tensor  # noqa: F401,E501

__all__ = [
    "load_vectors",
    "Hif8Oracle",
    "oracle",
    "fp16_values",
    "bf16_values",
    "fp32_values",
    "all_fp16_bits",
    "all_bf16_bits",
]


@functools.lru_cache(maxsize=None)
def load_vectors():
    """The parsed ``hif8_vectors.json`` (Appendix B)."""
    return load_vector_file("hif8_vectors.json")


def hexint(s):
    """``"0x7E"`` -> 126."""
    return int(s, 16)


def parse_exact(s):
    """The vectors' ``exact`` field (``"n*2^e"``, ``"0"``, ``"inf"``, ``"nan"``) as a float64."""
    s = s.strip()
    if s in ("0", "-0"):
        return 0.0
    if s in ("inf", "+inf", "-inf", "nan"):
        return float(s)
    n, e = s.split("*2^")
    return math.ldexp(int(n), int(e))


# --- bit patterns -> float64 values, without torch (numpy only) -----------------------------

def all_fp16_bits():
    """All 65536 fp16/bf16 patterns, as uint16."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


all_bf16_bits = all_fp16_bits


def fp16_values(bits):
    """fp16 patterns (uint16 array) -> exact float64 values (numpy's own fp16 conversion)."""
    return np.asarray(bits, dtype=np.uint16).view(np.float16).astype(np.float64)


def bf16_values(bits):
    """bf16 patterns (uint16 array) -> exact float64 values (bf16 is the top half of fp32)."""
    b32 = np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)
    with np.errstate(invalid="ignore"):  # signalling NaNs
        return b32.view(np.float32).astype(np.float64)


def fp32_values(bits):
    """fp32 patterns (uint32 array) -> exact float64 values."""
    with np.errstate(invalid="ignore"):
        return np.asarray(bits, dtype=np.uint32).view(np.float32).astype(np.float64)


class Hif8Oracle:
    """Nearest-value search over the finite HiF8 values (D2)."""

    def __init__(self, vectors):
        decode = vectors["decode"]
        finite = [v for v in decode if v["kind"] in ("zero", "denormal", "normal")]
        if len(finite) != 253:
            raise AssertionError(f"expected 253 finite HiF8 values, got {len(finite)}")
        # Every code's value, for decode (NaN at 80, +-Inf at 6F / EF).
        self.code_values = np.full(256, np.nan, dtype=np.float64)
        for v in decode:
            val = parse_exact(v["exact"])
            if not math.isnan(val) and float(v["value"]) != val:
                raise AssertionError(f"vector {v['code']}: value and exact disagree")
            self.code_values[hexint(v["code"])] = val
        # The 127 non-negative finite magnitudes in increasing order, with their codes.
        pos = sorted((parse_exact(v["exact"]), hexint(v["code"]))
                     for v in finite if parse_exact(v["exact"]) >= 0.0)
        self.mags = np.array([m for m, _ in pos], dtype=np.float64)
        self.mag_codes = np.array([c for _, c in pos], dtype=np.uint8)
        # The code of -m for each magnitude m, looked up by value (0 has the single code 00).
        by_value = {parse_exact(v["exact"]): hexint(v["code"]) for v in finite}
        self.neg_codes = np.array([by_value[-m] if m > 0 else by_value[0.0] for m, _ in pos],
                                  dtype=np.uint8)
        if len(self.mags) != 127 or np.any(np.diff(self.mags) <= 0):
            raise AssertionError("the non-negative finite HiF8 magnitudes are not 127 distinct values")
        self.max_finite = float(self.mags[-1])
        # The special codes, also taken from the vectors.
        (self.nan_code,) = [hexint(v["code"]) for v in decode if v["kind"] == "nan"]
        (self.pos_inf_code,) = [hexint(v["code"]) for v in decode
                                if v["kind"] == "inf" and parse_exact(v["exact"]) > 0]
        (self.neg_inf_code,) = [hexint(v["code"]) for v in decode
                                if v["kind"] == "inf" and parse_exact(v["exact"]) < 0]
        # The 126 midpoints between consecutive magnitudes (the rounding thresholds).
        self.midpoints = (self.mags[:-1] + self.mags[1:]) / 2.0

    def _nearest_index(self, a):
        """Index into ``mags`` of the nearest magnitude to |x| = a (finite, >= 0); ties -> larger."""
        n = len(self.mags)
        idx = np.searchsorted(self.mags, a, side="left")  # mags[idx-1] < a <= mags[idx]
        hi = np.minimum(idx, n - 1)
        lo = np.maximum(idx - 1, 0)
        d_hi = self.mags[hi] - a
        d_lo = a - self.mags[lo]
        return np.where(d_hi <= d_lo, hi, lo)

    def encode(self, x):
        """float64 array -> uint8 HiF8 codes."""
        x = np.asarray(x, dtype=np.float64)
        a = np.abs(x)
        nan = np.isnan(x)
        inf = np.isinf(x)
        safe = np.where(nan | inf, 0.0, a)
        nearest = self._nearest_index(safe)
        # Negative x takes the code of the negative value; a zero result is 00 for either sign.
        code = np.where(np.signbit(x), self.neg_codes[nearest], self.mag_codes[nearest])
        code = np.where(inf, np.where(np.signbit(x), self.neg_inf_code, self.pos_inf_code), code)
        code = np.where(nan, self.nan_code, code)
        return code.astype(np.uint8)

    def decode(self, codes):
        """uint8 codes -> float64 values (NaN for 80)."""
        return self.code_values[np.asarray(codes, dtype=np.uint8).astype(np.int64)]

    def quantize(self, x):
        """float64 array -> float64 nearest HiF8 value (the fake-quant result); zero is +0.0."""
        v = self.decode(self.encode(x))
        return np.where(v == 0.0, 0.0, v)

    def fake_quant_fp32(self, x32):
        """float32 array -> float32 fake-quant result (C4 fp32 semantics)."""
        with np.errstate(invalid="ignore"):  # signalling NaNs
            x64 = np.asarray(x32, dtype=np.float32).astype(np.float64)
            return self.quantize(x64).astype(np.float32)


@functools.lru_cache(maxsize=None)
def oracle():
    """The oracle built from the golden vectors (cached)."""
    return Hif8Oracle(load_vectors())


def fp32_edge_set():
    """The D6 fp32 edge set, as a float32 array.

    Every finite HiF8 value and every midpoint between neighbours, each with its fp32 neighbours,
    in both signs; 2^-23 and its neighbours; 28672; 40960; FLT_MAX; the smallest subnormal;
    +-0; +-Inf; and NaNs of both signs (quiet, signalling, all-ones).
    """
    o = oracle()
    centres = np.concatenate([o.mags, o.midpoints, [2.0 ** -23, 28672.0, 40960.0]])
    c32 = centres.astype(np.float32)
    if not np.array_equal(c32.astype(np.float64), centres):
        raise AssertionError("an edge-set centre is not exact in fp32")
    up = np.nextafter(c32, np.float32(np.inf))
    down = np.nextafter(c32, np.float32(-np.inf))
    tiny = np.array([np.finfo(np.float32).max, np.finfo(np.float32).smallest_subnormal,
                     np.finfo(np.float32).tiny], dtype=np.float32)
    tiny = np.concatenate([tiny, np.nextafter(tiny, np.float32(0))])
    mags = np.concatenate([c32, up, down, tiny])
    both = np.concatenate([mags, -mags])
    specials = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
                         0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
                         0x7FFFFFFF, 0xFFFFFFFF, 0xFFC00001, 0x7FFF0000], dtype=np.uint32)
    return np.concatenate([both, specials.view(np.float32)])


# --- torch-side test helpers (bit views and bitwise comparison) ------------------------------
# Kept apart from the oracle above, which uses numpy only.

import torch  # noqa: E402

_INT_VIEW = INT_VIEW


def patterns16(bits, dtype):
    """uint16 patterns (numpy) -> a torch fp16/bf16 tensor with exactly those bits."""
    arr = np.ascontiguousarray(np.asarray(bits, dtype=np.uint16)).view(np.int16).copy()
    return torch.from_numpy(arr).view(dtype)


def patterns32(bits):
    """uint32 patterns (numpy) -> a torch fp32 tensor with exactly those bits."""
    arr = np.ascontiguousarray(np.asarray(bits, dtype=np.uint32)).view(np.int32).copy()
    return torch.from_numpy(arr).view(torch.float32)


def ubits(t):
    """The unsigned bit patterns of a CPU float tensor, as numpy uint16 / uint32 / uint64."""
    t = t.detach().contiguous()
    iv = _INT_VIEW[t.dtype]
    return t.view(iv).numpy().view({torch.int16: np.uint16, torch.int32: np.uint32,
                                    torch.int64: np.uint64}[iv])


def _fmt_input(v):
    """Integer inputs (bit patterns) in hex, anything else by repr."""
    if isinstance(v, (int, np.integer)):
        return hex(int(v))
    return repr(v)


class BitsMixin:
    """``assertBitsEqual`` for unittest.TestCase subclasses."""

    def assertBitsEqual(self, actual, expected, inputs=None, what=""):
        assert_bits_equal(self, actual, expected, what=what, inputs=inputs, show_input=_fmt_input)
