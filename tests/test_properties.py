"""Property-based tests (hypothesis) of every operator against its reference.py (issue:
hardening): random shapes with size-0 and size-1 dims, dtypes, strides (transposed, stepped
slices, expanded views), qdim values and special values; bit-exact where the spec says exact.

The examples are derandomised and bounded (profile ``amct``: fixed seed, no deadline,
``AMCT_HYPOTHESIS_EXAMPLES`` examples per test, default 200), so CI runs the same cases every
time. Set ``AMCT_HYPOTHESIS_EXAMPLES=1000`` for a longer local search.
"""
import os
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal, load_source_module  # noqa: E402

try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is in the README's set-up command
    raise unittest.SkipTest("hypothesis is not installed (see README set-up)")

try:
    import amct_ops
except ImportError:  # pragma: no cover
    amct_ops = None

REPO = Path(__file__).resolve().parents[1]
settings.register_profile("amct", derandomize=True, deadline=None, database=None, print_blob=True,
                          max_examples=int(os.environ.get("AMCT_HYPOTHESIS_EXAMPLES", "200")),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("amct")


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


def _reference(package):
    return load_source_module(f"{package}_reference_props", REPO / package / "python" / package / "reference.py")


BITS = {torch.float16: (torch.int16, 16), torch.bfloat16: (torch.int16, 16), torch.float32: (torch.int32, 32)}
SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, -1e-40, 6e-8, 65504.0, 3.4e38, 1.875]


def values(shape, dtype, kind, seed):
    """A tensor of `shape` and `dtype`: normal, wide dynamic range, random bit patterns, or
    normal data sprinkled with special values (kind 0-3)."""
    gen = torch.Generator().manual_seed(seed)
    n = 1
    for d in shape:
        n *= d
    if kind == 0:
        x = torch.randn(n, generator=gen)
    elif kind == 1:
        x = torch.randn(n, generator=gen) * torch.exp2(torch.randint(-60, 40, (n,), generator=gen).float())
    elif kind == 2:
        ivt, bits = BITS[dtype]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1))
        return torch.randint(lo, hi, (n,), generator=gen, dtype=torch.int64).to(ivt).view(dtype).reshape(shape)
    else:
        x = torch.randn(n, generator=gen)
        pick = torch.randint(0, 4 * len(SPECIALS), (n,), generator=gen)
        for i, v in enumerate(SPECIALS):
            x[pick == i] = v
    return x.to(dtype).reshape(shape)


def with_layout(x, layout, seed):
    """The same values as `x` in a non-contiguous layout: 0 contiguous, 1 transposed storage,
    2 a stepped slice of a larger tensor (expanded views: `expanded_variant`)."""
    if layout == 0 or x.dim() == 0:
        return x
    if layout == 1 and x.dim() >= 2:
        return x.transpose(0, -1).contiguous().transpose(0, -1)
    if layout == 2:
        d = seed % x.dim()
        shape = list(x.shape)
        shape[d] *= 2
        big = torch.zeros(shape, dtype=x.dtype)
        idx = [slice(None)] * x.dim()
        idx[d] = slice(0, None, 2)
        big[tuple(idx)] = x
        return big[tuple(idx)]
    return x


def expanded_variant(x, seed):
    """An expanded (stride-0) view and its contiguous copy, or None when no dim can be expanded."""
    if x.dim() == 0:
        return None
    d = seed % x.dim()
    base = x.narrow(d, 0, 1) if x.shape[d] > 0 else None
    if base is None:
        return None
    shape = list(x.shape)
    shape[d] = max(2, shape[d])
    view = base.expand(shape)
    return view, view.contiguous()


small_dim = st.integers(0, 6) | st.just(1)
shapes = st.lists(small_dim, min_size=0, max_size=4)


@unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
class TestHifloat8Properties(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from amct_ops import hifloat8_cast
        cls.op = hifloat8_cast
        cls.ref = _reference("hifloat8_cast")

    @given(shape=shapes, dtype=st.sampled_from([torch.float16, torch.bfloat16]), kind=st.integers(0, 3),
           layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_encode(self, shape, dtype, kind, layout, seed):
        x = with_layout(values(shape, dtype, kind, seed), layout, seed)
        assert_bits_equal(self, self.op.encode_to_hifloat8(x), self.ref.encode_to_hifloat8_ref(x.contiguous()),
                          f"encode {tuple(shape)} {dtype} kind {kind} layout {layout}")
        ex = expanded_variant(x, seed)
        if ex is not None:
            assert_bits_equal(self, self.op.encode_to_hifloat8(ex[0]), self.op.encode_to_hifloat8(ex[1]),
                              "encode of an expanded view")

    @given(shape=shapes, dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
           layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_decode(self, shape, dtype, layout, seed):
        gen = torch.Generator().manual_seed(seed)
        codes = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)
        codes = with_layout(codes, layout, seed)
        assert_bits_equal(self, self.op.decode_from_hifloat8(codes, dtype),
                          self.ref.decode_from_hifloat8_ref(codes.contiguous(), dtype), f"decode {tuple(shape)}")

    @given(shape=shapes, dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
           kind=st.integers(0, 3), layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_fake_quant(self, shape, dtype, kind, layout, seed):
        x = with_layout(values(shape, dtype, kind, seed), layout, seed)
        assert_bits_equal(self, self.op.hifloat8_fake_quant(x), self.ref.hifloat8_fake_quant_ref(x.contiguous()),
                          f"fake_quant {tuple(shape)} {dtype} kind {kind} layout {layout}")


@st.composite
def hif4_case(draw):
    """(shape, qdim) with the qdim length a multiple of 64 (0 allowed) and small other dims."""
    rank = draw(st.integers(1, 4))
    qdim = draw(st.integers(-rank, rank - 1))
    shape = [draw(small_dim) for _ in range(rank)]
    shape[qdim] = 64 * draw(st.integers(0, 3))
    return shape, qdim


@unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
class TestHifloat4Properties(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from amct_ops import hifloat4_cast
        cls.op = hifloat4_cast
        cls.ref = _reference("hifloat4_cast")

    @given(case=hif4_case(), dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
           kind=st.integers(0, 3), layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_fake_quant(self, case, dtype, kind, layout, seed):
        shape, qdim = case
        x = with_layout(values(shape, dtype, kind, seed), layout, seed)
        assert_bits_equal(self, self.op.hifloat4_fake_quant(x, qdim),
                          self.ref.hifloat4_fake_quant_ref(x.contiguous(), qdim),
                          f"fake_quant {tuple(shape)} qdim {qdim} {dtype} kind {kind} layout {layout}")
        ex = expanded_variant(x, seed)
        if ex is not None and ex[0].shape[qdim] % 64 == 0:
            assert_bits_equal(self, self.op.hifloat4_fake_quant(ex[0], qdim), self.op.hifloat4_fake_quant(ex[1], qdim),
                              "fake_quant of an expanded view")

    @given(case=hif4_case(), dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
           kind=st.integers(0, 3), layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_pack_unpack(self, case, dtype, kind, layout, seed):
        shape, qdim = case
        shape[qdim], shape[-1] = shape[-1], shape[qdim]  # pack blocks run along the last dim
        x = with_layout(values(shape, dtype, kind, seed), layout, seed)
        scale, value = self.op.hifloat4_pack(x)
        want_scale, want_value = self.ref.hifloat4_pack_ref(x.contiguous())
        assert_bits_equal(self, scale, want_scale, f"pack scale {tuple(shape)} {dtype}")
        assert_bits_equal(self, value, want_value, f"pack value {tuple(shape)} {dtype}")
        assert_bits_equal(self, self.op.hifloat4_unpack(scale, value).to(dtype), self.op.hifloat4_fake_quant(x),
                          f"identity C5 {tuple(shape)} {dtype}")

    @given(lead=st.lists(small_dim, min_size=0, max_size=2), groups=st.integers(0, 3),
           dtype=st.sampled_from([None, torch.float16, torch.bfloat16, torch.float32]), seed=st.integers(0, 2**31 - 1))
    def test_unpack_any_bytes(self, lead, groups, dtype, seed):
        gen = torch.Generator().manual_seed(seed)
        scale = torch.randint(0, 256, (*lead, groups, 4), generator=gen, dtype=torch.uint8)
        value = torch.randint(0, 256, (*lead, 32 * groups), generator=gen, dtype=torch.uint8)
        assert_bits_equal(self, self.op.hifloat4_unpack(scale, value, dtype),
                          self.ref.hifloat4_unpack_ref(scale, value, dtype), f"unpack {lead} {groups} {dtype}")


if __name__ == "__main__":
    unittest.main()
