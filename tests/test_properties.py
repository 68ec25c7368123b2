"""Property-based tests (hypothesis) of every operator against its reference.py: random shapes with size-0 and size-1 dims, dtypes, strides (transposed, stepped
slices, expanded views), qdim values and special values; bit-exact where the spec says exact.

The examples are derandomised and bounded (profile ``amct``: fixed seed, no deadline,
``AMCT_HYPOTHESIS_EXAMPLES`` examples per test, default 200), so CI runs the same cases every
time. Set ``AMCT_HYPOTHESIS_EXAMPLES=1000`` for a longer local search.
"""
import importlib
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
EXAMPLES = int(os.environ.get("AMCT_HYPOTHESIS_EXAMPLES", "200"))
settings.register_profile("amct", derandomize=True, deadline=None, database=None, print_blob=True,
                          max_examples=EXAMPLES,
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


class PackageProperties(unittest.TestCase):
    """Base of the per-package classes: ``op`` is the built package ``amct_ops.<PACKAGE>``, ``ref``
    its reference.py from the source tree."""

    PACKAGE = None

    @classmethod
    def setUpClass(cls):
        cls.op = importlib.import_module(f"amct_ops.{cls.PACKAGE}")
        cls.ref = _reference(cls.PACKAGE)


@unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
class TestHifloat8Properties(PackageProperties):
    PACKAGE = "hifloat8_cast"

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
class TestHifloat4Properties(PackageProperties):
    PACKAGE = "hifloat4_cast"

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
                          f"identity unpack(pack(x)) == fake_quant(x) {tuple(shape)} {dtype}")

    @given(lead=st.lists(small_dim, min_size=0, max_size=2), groups=st.integers(0, 3),
           dtype=st.sampled_from([None, torch.float16, torch.bfloat16, torch.float32]), seed=st.integers(0, 2**31 - 1))
    def test_unpack_any_bytes(self, lead, groups, dtype, seed):
        gen = torch.Generator().manual_seed(seed)
        scale = torch.randint(0, 256, (*lead, groups, 4), generator=gen, dtype=torch.uint8)
        value = torch.randint(0, 256, (*lead, 32 * groups), generator=gen, dtype=torch.uint8)
        assert_bits_equal(self, self.op.hifloat4_unpack(scale, value, dtype),
                          self.ref.hifloat4_unpack_ref(scale, value, dtype), f"unpack {lead} {groups} {dtype}")


@st.composite
def mx_shape(draw):
    lead = draw(st.lists(small_dim, min_size=0, max_size=2))
    return [*lead, 32 * draw(st.integers(0, 5))]


@unittest.skipUnless(_has("svd_quant"), "svd_quant not built")
class TestSvdQuantProperties(PackageProperties):
    PACKAGE = "svd_quant"

    @given(shape=mx_shape(), dtype=st.sampled_from([torch.float16, torch.bfloat16, torch.float32]),
           mode=st.sampled_from(["round", "rint", "floor"]), kind=st.integers(0, 3), layout=st.integers(0, 2),
           seed=st.integers(0, 2**31 - 1))
    def test_quantize(self, shape, dtype, mode, kind, layout, seed):
        x = with_layout(values(shape, dtype, kind, seed), layout, seed)
        codes, scales = self.op.mxfp4_quantize(x, mode)
        want_codes, want_scales = self.ref.mxfp4_quantize_ref(x.contiguous(), mode)
        assert_bits_equal(self, codes, want_codes, f"codes {tuple(shape)} {dtype} {mode}")
        assert_bits_equal(self, scales, want_scales, f"scales {tuple(shape)} {dtype} {mode}")

    @given(shape=mx_shape(), dtype=st.sampled_from([None, torch.float16, torch.bfloat16, torch.float32]),
           seed=st.integers(0, 2**31 - 1))
    def test_dequantize_any_bytes(self, shape, dtype, seed):
        gen = torch.Generator().manual_seed(seed)
        k = shape[-1]
        codes = torch.randint(0, 256, (*shape[:-1], k // 2), generator=gen, dtype=torch.uint8)
        scales = torch.randint(0, 256, (*shape[:-1], -(-k // 64), 2), generator=gen, dtype=torch.uint8)
        assert_bits_equal(self, self.op.mxfp4_dequantize(codes, scales, dtype),
                          self.ref.mxfp4_dequantize_ref(codes, scales, dtype), f"dequantize {tuple(shape)} {dtype}")

    @given(batch=st.lists(st.integers(0, 3), min_size=0, max_size=2), s=st.integers(0, 9),
           k=st.integers(1, 4).map(lambda v: 32 * v), n=st.integers(1, 24), r=st.integers(1, 6),
           layout=st.integers(0, 2), seed=st.integers(0, 2**31 - 1))
    def test_svd_quant_layouts_and_fp4_branch(self, batch, s, k, n, r, layout, seed):
        """Any layout of X gives the result of its contiguous copy, bit for bit; with down = up = 0
        the output is the FP4 branch: bf16 of Q(X) Q(W)^T, bit-exact with the float64 one (the
        fp32 accumulation of N(0, 1) data with K <= 128 is exact, docs/mxfp4.md A7)."""
        gen = torch.Generator().manual_seed(seed)
        x = with_layout(torch.randn(*batch, s, k, generator=gen).to(torch.bfloat16), layout, seed)
        codes, scales = self.op.mxfp4_quantize(torch.randn(n, k, generator=gen).to(torch.bfloat16))
        down = (torch.randn(k, r, generator=gen) * 0.1).to(torch.bfloat16)
        up = (torch.randn(r, n, generator=gen) * 0.1).to(torch.bfloat16)
        got = self.op.svd_quant(x, codes, scales, down, up)
        self.assertEqual(tuple(got.shape), (*batch, s, n))
        self.assertTrue(torch.equal(got, self.op.svd_quant(x.contiguous(), codes, scales, down, up)))
        zd, zu = torch.zeros_like(down), torch.zeros_like(up)
        assert_bits_equal(self, self.op.svd_quant(x, codes, scales, zd, zu),
                          self.ref.svd_quant_ref(x.contiguous(), codes, scales, zd, zu), "FP4 branch")


# Token lengths (q, kv, extra prompt in units of 20 tokens) of a batch. The first batch's kv of
# 71-94 blocks exceeds every budget it can get plus 8 (kStart <= 61 for P <= 313 blocks, docs/stem_indexer.md §5), so
# its last rows always take the Top-K path; the second batch may be anything, empty included.
long_batch = st.tuples(st.integers(1, 1400), st.integers(70 * 128 + 1, 12000), st.integers(0, 1400))
any_batch = st.tuples(st.integers(0, 1400), st.integers(0, 12000), st.integers(0, 1400))


@unittest.skipUnless(_has("stem_indexer"), "stem_indexer not built")
class TestStemIndexerProperties(PackageProperties):
    PACKAGE = "stem_indexer"

    def test_matches_reference(self):
        """Random lengths, heads, attributes and scores: the CPU op and the AscendC kernel in the
        sim equal, bit for bit, the reference's selection of the sequential fp32 scores (the CPU
        op's summation order; tests/stem_oracle.py). Top-K rows are counted from the lengths by
        the §5 rule; every example has some, and the run reports their fraction."""
        from stem_oracle import sequential_reference, topk_rows
        counts = [0, 0]

        # A quarter of the profile's examples: each one scores and selects up to ~1400 rows.
        @settings(max_examples=max(10, EXAMPLES // 4))
        @given(heads=st.sampled_from([(32, 2), (32, 4), (32, 8), (64, 4), (64, 8)]), b=st.integers(1, 2),
               lens=st.tuples(long_batch, any_batch), causal=st.booleans(),
               alpha=st.sampled_from([1.0, 0.5, 0.05, 0.77]), precision=st.sampled_from([1, 2]),
               with_prompt=st.booleans(), seed=st.integers(0, 2**31 - 1))
        def check(heads, b, lens, causal, alpha, precision, with_prompt, seed):
            nq, nk = heads
            lens = lens[:b]
            q = [qq for qq, _, _ in lens]
            kv = [max(kk, qq) if causal else kk for qq, kk, _ in lens]
            prompt = [k + 20 * pp for (_, _, pp), k in zip(lens, kv)]  # >= kv (docs/stem_indexer.md S11); up to ~220 blocks more
            top, rows = topk_rows(q, kv, prompt if with_prompt else None, causal, alpha, nq)
            self.assertGreater(top, 0, f"no Top-K row: q {q}, kv {kv}, prompt {prompt if with_prompt else None}")
            counts[0] += top
            counts[1] += rows
            cb = lambda t: max(1, -(-t // 128))  # noqa: E731
            maxqb, maxkb = cb(max(q)), cb(max(kv))
            gen = torch.Generator().manual_seed(seed)
            qflat = (torch.rand(b, nq, maxqb, 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
            kflat = (torch.rand(b, nk, maxkb, 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
            vbias = torch.rand(b, nk, maxkb, generator=gen) * 2 - 1
            ql, kl = torch.tensor(q, dtype=torch.int32), torch.tensor(kv, dtype=torch.int32)
            pt = torch.tensor(prompt, dtype=torch.int32) if with_prompt else None
            md = self.op.npu_stem_indexer_metadata(ql, kl, nq, nk, causal=causal)
            kw = dict(num_prompt_tokens=pt, metadata=md, causal=causal, alpha=alpha, topk_score_precision=precision)
            want = sequential_reference(qflat, kflat, vbias, ql, kl, **kw)
            for op in (self.op.npu_stem_indexer, torch.ops.amct._npu_stem_indexer_emulated):
                got = op(qflat, kflat, vbias, ql, kl, **kw)
                for name, g, w in zip(("sparse_indices", "sparse_seq_len"), got, want):
                    if not torch.equal(g, w):
                        at = tuple((g != w).nonzero()[0].tolist())
                        self.fail(f"{op}: {name} differs first at {at}: q {q}, kv {kv}, causal {causal}, "
                                  f"alpha {alpha}, precision {precision}")

        check()
        print(f"\nstem_indexer properties: {counts[0]} of {counts[1]} rows Top-K ({counts[0] / counts[1]:.1%})")
        self.assertGreater(counts[0] / counts[1], 0)

    @given(heads=st.sampled_from([(32, 2), (32, 4), (32, 8), (64, 2), (64, 8)]),
           lens=st.lists(st.tuples(st.integers(0, 40000), st.integers(0, 140000)), min_size=1, max_size=4),
           causal=st.booleans())
    def test_metadata_covers_every_tile_once(self, heads, lens, causal):
        """The metadata op on random lengths: the reference's capacity, the header, and every
        (head, m-tile) of the spec's grid covered exactly once by the records (section 6)."""
        from test_stem_indexer import covered_tiles
        nq, nk = heads
        q, kv = [a for a, _ in lens], [b for _, b in lens]
        words = self.op.npu_stem_indexer_metadata(torch.tensor(q, dtype=torch.int32),
                                                  torch.tensor(kv, dtype=torch.int32), nq, nk, causal=causal)
        self.assertEqual((words.dtype, words.numel()), (torch.int32, self.ref.metadata_capacity(len(q), nk)))
        words = words.tolist()
        self.assertTrue(1 <= words[0] <= len(q) * nk)
        grid, seen = covered_tiles(words, len(q), nk, nq // nk, q, kv)
        self.assertEqual(sorted(seen), grid)


if __name__ == "__main__":
    unittest.main()
