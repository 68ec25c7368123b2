"""svd_quant's two CPU GEMM paths (docs/mxfp4.md A5, the CPU paragraph): bf16 ATen GEMMs, taken on
CPUs with bf16 dot products (the FP4 one only where the gate says their flush of subnormals cannot
act), and fp32 GEMMs of exactly widened operands. The test hook AMCT_SVD_QUANT_GEMM
(svd_quant/README.md, read per call) forces each path on any machine, so both are held here to
the A7 criteria wherever the tests run.

Oracles as in test_svd_quant.py: the float64 golden of ``reference.py``, the elementwise bounds
of every fp32 summation order (``pinned_check``), bit-exactness where every fp32 sum is exact,
exact values built from the E2M1/E8M0 definitions, and, for the flush itself, torch's own bf16
GEMM observed directly (``BF16_GEMM_FLUSHES``) -- never the operator under test.

Run from the repository root, after ``bash ops_build.sh svd_quant``::

    PYTHONPATH=staging python -m pytest tests/test_svd_quant_gemm.py
"""
import contextlib
import os
import sys
import unittest
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal  # noqa: E402
from test_svd_quant import (BF16, U8, golden_check, integer_inputs, pinned_check, ref, requires_op,  # noqa: E402
                            rounding_point_cases, sq, svd_inputs, ulp_check)

ENV = "AMCT_SVD_QUANT_GEMM"
PATHS = ("fp32", "bf16")


@contextlib.contextmanager
def gemm_path(mode):
    """svd_quant's GEMMs forced to ``mode`` (None: unset, the CPU decides) within the block."""
    old = os.environ.pop(ENV, None)
    if mode is not None:
        os.environ[ENV] = mode
    try:
        yield
    finally:
        os.environ.pop(ENV, None)
        if old is not None:
            os.environ[ENV] = old


def _bf16_gemm_flushes():
    """Whether torch's bf16 GEMM on this machine flushes a subnormal product to zero (bf16 dot
    products under oneDNN do; ATen's fallback GEMM does not). 32x64 @ 64x32 is past the size
    below which ATen skips oneDNN."""
    a = torch.zeros(32, 64, dtype=BF16)
    b = torch.zeros(64, 32, dtype=BF16)
    a[0, 0] = b[0, 0] = 2.0 ** -65  # product 2^-130: a bf16 subnormal
    return float((a @ b)[0, 0]) == 0.0


BF16_GEMM_FLUSHES = _bf16_gemm_flushes()
requires_flush = unittest.skipUnless(BF16_GEMM_FLUSHES, "torch's bf16 GEMM does not flush subnormals on this CPU")


def svd(*args, mode):
    with gemm_path(mode):
        return sq.svd_quant(*args)


def zero_low_rank(x, codes, scales, down, up):
    return x, codes, scales, torch.zeros_like(down), torch.zeros_like(up)


def weights_of(n, k, code_byte, scale_byte):
    """MXFP4 weights of n rows, every code byte ``code_byte``, every block scale ``scale_byte``."""
    codes = torch.full((n, k // 2), code_byte, dtype=U8)
    scales = torch.full((n, (k + 63) // 64, 2), scale_byte, dtype=U8)
    return codes, scales


def block_with_scale(sx, k):
    """An activation row whose every block quantizes (A2, "round") to scale byte sx >= 0 with
    element 0 coded 6 (value 4) and element 1 coded 1 (value 0.5): 4 * 2^(sx-127) is the block
    maximum, so E = sx + 2 and sb = sx."""
    row = torch.zeros(k, dtype=torch.float64)
    row[0::32] = 2.0 ** (sx - 125)
    row[1::32] = 2.0 ** (sx - 128)
    return row.to(BF16)


@requires_op
class TestBothPaths(unittest.TestCase):
    """Every A7 criterion on each forced path."""

    def test_golden_criteria(self):
        shapes = [((1, 64), 32, 1), ((7, 96), 40, 32), ((128, 2048), 2816, 32), ((33, 4096), 512, 128),
                  ((1, 2048), 2816, 32), ((2, 3, 160), 8, 4), ((2, 5, 32), 24, 4), ((17, 128), 1, 24)]
        for mode in PATHS:
            for i, (shape, n, r) in enumerate(shapes):
                with self.subTest(mode=mode, shape=shape, n=n, r=r):
                    args = svd_inputs(shape, n, r, seed=40 + i)
                    out = svd(*args, mode=mode)
                    self.assertEqual((tuple(out.shape), out.dtype), (tuple(shape[:-1]) + (n,), BF16))
                    pinned_check(self, out, *args, what=f"{mode} {shape}")

    def test_fp4_branch_alone(self):
        """Down = up = 0: N(0, 1) data with K <= 4096 sums exactly in fp32, so the FP4 branch is
        bit-identical to the float64 golden (and within one ulp of it, A7) on both paths."""
        for mode in PATHS:
            for shape, n in (((7, 96), 40), ((33, 4096), 512), ((64, 2048), 704), ((2, 5, 160), 8)):
                with self.subTest(mode=mode, shape=shape):
                    args = zero_low_rank(*svd_inputs(shape, n, 4, seed=50))
                    out = svd(*args, mode=mode)
                    golden = ref.svd_quant_ref(*args)
                    ulp_check(self, out, golden, f"{mode} {shape}")
                    assert_bits_equal(self, out, golden, f"{mode} {shape}")

    def test_integer_data_bit_exact(self):
        """Integer data: every fp32 sum is exact, so both paths equal the float64 reference bit for
        bit, and the data distinguishes a dropped X D rounding (test_svd_quant.py)."""
        for mode in PATHS:
            for shape, n, r in (((5, 96), 24, 8), ((2, 7, 256), 40, 16), ((33, 1024), 64, 32)):
                with self.subTest(mode=mode, shape=shape):
                    args = integer_inputs(shape, n, r, seed=60 + r)
                    assert_bits_equal(self, svd(*args, mode=mode), ref.svd_quant_ref(*args), f"{mode} {shape}")

    def test_rounding_points(self):
        for mode in PATHS:
            for args, want in rounding_point_cases():
                with self.subTest(mode=mode, want=want):
                    self.assertEqual(float(svd(*args, mode=mode)), want)

    def test_non_finite_placement(self):
        """NaN/Inf in X make their row NaN; scale 0xFF makes a weight column NaN; scale 254 with
        code 7 (6 * 2^127, Inf) makes its column +-Inf or NaN as the golden says (every finite
        partial sum here is far from overflow, so the order of summation cannot matter)."""
        x, c, s, d, u = svd_inputs((40, 128), 24, 8, seed=70)
        x[3, 5] = float("nan")
        x[7, 100] = float("inf")
        x[9, 64] = -float("inf")
        s = s.clone()
        s[2, 1, 0] = 0xFF      # column 2, block 2: NaN
        c = c.clone()
        c[5, :16] = 0
        c[5, 3] = 0x07         # column 5: block 0 holds only element 6, coded 7 ...
        s[5, 0, 0] = 254       # ... in a block of scale 254: Inf, the block's only nonzero
        golden = ref.svd_quant_ref(x, c, s, d, u)
        self.assertTrue(bool(golden[3].isnan().all()) and bool(golden[:, 2].isnan().all()))
        self.assertTrue(bool(golden[:, 5].isinf().any()))
        for mode in PATHS:
            with self.subTest(mode=mode):
                out = svd(x, c, s, d, u, mode=mode)
                golden_check(self, out, golden, mode)
                for row in (3, 7, 9):
                    self.assertTrue(bool(out[row].isnan().all()), f"{mode}: row {row}")
                self.assertTrue(bool(out[:, 2].isnan().all()), f"{mode}: column 2")
                same_sign = torch.equal(out[:, 5].isposinf(), golden[:, 5].isposinf())
                self.assertTrue(same_sign, f"{mode}: the Inf column's signs")

    def test_edge_shapes(self):
        """K = 0 gives zeros, N = 0 and B*S = 0 empty outputs, on either path; the smallest
        non-trivial shapes (K = 32, N = 1, one row) meet the golden."""
        _, c, s, d, u = svd_inputs((2, 3, 64), 16, 4, seed=80)
        for mode in PATHS:
            with self.subTest(mode=mode):
                out = svd(torch.ones(2, 3, 0, dtype=BF16), torch.zeros(16, 0, dtype=U8),
                          torch.zeros(16, 0, 2, dtype=U8), torch.zeros(0, 4, dtype=BF16), u, mode=mode)
                self.assertTrue(torch.equal(out, torch.zeros(2, 3, 16, dtype=BF16)))
                out = svd(torch.ones(2, 3, 64, dtype=BF16), c[:0], s[:0], d, u[:, :0], mode=mode)
                self.assertEqual(tuple(out.shape), (2, 3, 0))
                out = svd(torch.zeros(0, 3, 64, dtype=BF16), c, s, d, u, mode=mode)
                self.assertEqual(tuple(out.shape), (0, 3, 16))
                for shape, n, r in (((1, 32), 1, 1), ((1, 1, 32), 3, 2), ((1, 4096), 1, 128)):
                    args = svd_inputs(shape, n, r, seed=81)
                    pinned_check(self, svd(*args, mode=mode), *args, what=f"{mode} {shape} N={n}")


@requires_op
class TestFp4Gate(unittest.TestCase):
    """The bf16 FP4 GEMM runs only when every nonzero element of Q(X) and Q(W) is a normal number
    (scale bytes >= 2) and every product of them is at least 2^-126 (sx_min + sw_min >= 130, the
    minima over blocks holding a nonzero code); otherwise the fp32 GEMM. ``bf16_ungated`` skips
    the gate, to show that these inputs are flushed where the bf16 GEMM flushes."""

    def tiny_cases(self):
        """FP4-branch-only inputs the gate must refuse: subnormal elements of Q(X) (X ~ 2^-128,
        scale 0), subnormal products of normal elements (X ~ 2^-100, W ~ 2^-30: sx + sw ~ 120),
        and one row of tiny X among normal rows (the minimum is over all of X)."""
        cases = {}
        x, c, s, d, u = svd_inputs((48, 256), 64, 4, seed=90)
        cases["subnormal elements"] = ((x.double() * 2.0 ** -128).to(BF16), c, s, d, u)
        cw, sw = ref.mxfp4_quantize_ref(torch.randn(64, 256, generator=torch.Generator().manual_seed(91)) * 2.0 ** -30)
        cases["subnormal products"] = ((x.double() * 2.0 ** -100).to(BF16), cw, sw, d, u)
        mixed = x.clone()
        mixed[0] = (x[0].double() * 2.0 ** -129).to(BF16)
        cases["one tiny row"] = (mixed, c, s, d, u)
        return {name: zero_low_rank(*args) for name, args in cases.items()}

    def test_tiny_scales_fall_back_within_one_ulp(self):
        for name, args in self.tiny_cases().items():
            golden = ref.svd_quant_ref(*args)
            for mode in ("bf16", "fp32", None):
                with self.subTest(case=name, mode=mode):
                    out = svd(*args, mode=mode)
                    ulp_check(self, out, golden, f"{name}, {mode}")

    @requires_flush
    def test_the_cases_would_flush_without_the_gate(self):
        """Without the gate the bf16 GEMM breaks the one-ulp bound on each case (so the test above
        exercises the fallback, not a harmless input)."""
        for name, args in self.tiny_cases().items():
            with self.subTest(case=name):
                out = svd(*args, mode="bf16_ungated").double()
                g = ref.svd_quant_ref(*args).double()
                ulp = torch.exp2(torch.floor(torch.log2(g.abs())).clamp(min=-126) - 7)
                ulp = torch.where(g == 0, torch.full_like(g, 2.0 ** -133), ulp)
                self.assertTrue(bool(((out - g).abs() > ulp).any()), f"{name}: no element moved")

    def boundary_args(self, sx, sw):
        """Q(X) rows of scale sx (elements 4 and 0.5 in every block), weights of scale sw whose
        element 1 of every block is coded 1 (0.5): each output is K/32 products 2^(sx+sw-256),
        summed exactly; 16 x 64 x 16 is past ATen's small-GEMM cut-off."""
        k, n = 64, 16
        x = block_with_scale(sx, k).expand(16, k).contiguous()
        codes, scales = weights_of(n, k, 0x00, sw)
        codes[:, 0::16] = 0x10  # byte 0 of every block: element 1 (high nibble) coded 1
        return zero_low_rank(x, codes, scales, torch.zeros(k, 1, dtype=BF16), torch.zeros(1, n, dtype=BF16))

    def test_gate_threshold(self):
        """At sx + sw = 130 every product is 2^-126 (normal): even the ungated bf16 GEMM gives the
        exact sum. At 129 they are 2^-127, fp32 subnormals: the gated path falls back and gives
        their exact sum 2^-126 (the ungated one 0). sx = 1 (element 2^-127, subnormal) with a large sw: refused too; sx = 2
        (element 2^-126) accepted."""
        cases = [(3, 127, True), (3, 126, False), (1, 200, False), (2, 200, True), (0, 160, False)]
        for sx, sw, flush_free in cases:
            args = self.boundary_args(sx, sw)
            exact = 2 * 2.0 ** (sx + sw - 256)  # two blocks
            want = torch.full((16, 16), exact, dtype=torch.float64).to(BF16)
            golden = ref.svd_quant_ref(*args)
            assert_bits_equal(self, golden, want, f"golden sx={sx} sw={sw}")
            for mode in ("bf16", "fp32", None):
                with self.subTest(sx=sx, sw=sw, mode=mode):
                    assert_bits_equal(self, svd(*args, mode=mode), want, f"sx={sx} sw={sw} {mode}")
            if BF16_GEMM_FLUSHES:
                with self.subTest(sx=sx, sw=sw, mode="bf16_ungated"):
                    ungated = svd(*args, mode="bf16_ungated")
                    self.assertEqual(torch.equal(ungated, want), flush_free,
                                     f"sx={sx} sw={sw}: ungated bf16 GEMM {ungated[0, 0]} vs exact {exact}")

    def test_zero_blocks_do_not_count(self):
        """All-zero blocks (our quantizer gives them scale 0; zero weight blocks of any scale) give
        zero elements whatever their scale: the gate skips them, and both paths stay exact."""
        x, c, s, d, u = zero_low_rank(*svd_inputs((32, 256), 48, 4, seed=95))
        x = x.clone()
        x[:, 32:64] = 0
        x[5] = 0
        c, s = c.clone(), s.clone()
        c[:, 48:64] = 0x88     # block 3 of every weight row: codes -0
        s[:, 1, 1] = 0         # ... with scale 0
        c[7] = 0
        s[7] = 1
        golden = ref.svd_quant_ref(x, c, s, d, u)
        for mode in ("bf16", "fp32", "bf16_ungated", None):
            with self.subTest(mode=mode):
                out = svd(x, c, s, d, u, mode=mode)
                ulp_check(self, out, golden, str(mode))
                assert_bits_equal(self, out, golden, str(mode))


@requires_op
class TestPathChoice(unittest.TestCase):
    """Which low-rank GEMM ran is visible where the bf16 GEMM flushes: X D = 2^-130 (two normal
    bf16 factors 2^-65, a subnormal product) is kept by the fp32 GEMM and flushed to 0 by the bf16
    one (docs/mxfp4.md A5: a documented effect below 2^-126)."""

    def args(self):
        k, r, n = 64, 16, 32  # 16 x 64 x 16 and 16 x 16 x 32 use oneDNN
        x = torch.zeros(16, k, dtype=BF16)
        x[:, 0] = 2.0 ** -65
        down = torch.zeros(k, r, dtype=BF16)
        down[0, 0] = 2.0 ** -65
        up = torch.zeros(r, n, dtype=BF16)
        up[0] = 1.0
        codes, scales = weights_of(n, k, 0x00, 127)  # Q(W) = 0: the FP4 branch is 0
        return x, codes, scales, down, up

    def test_forced_paths(self):
        args = self.args()
        kept = torch.full((16, 32), 2.0 ** -130, dtype=torch.float64).to(BF16)
        assert_bits_equal(self, ref.svd_quant_ref(*args), kept, "golden")
        assert_bits_equal(self, svd(*args, mode="fp32"), kept, "fp32 path")
        want_bf16 = torch.zeros_like(kept) if BF16_GEMM_FLUSHES else kept
        assert_bits_equal(self, svd(*args, mode="bf16"), want_bf16, "bf16 path")

    @requires_flush
    def test_auto_takes_bf16_on_this_cpu_unless_lowered(self):
        """Unset or "auto": the bf16 GEMMs here with the AVX-512 kernels active; with the kernels
        lowered to AVX2 (the _cpu_capability hook, or AMCT_CPU_CAPABILITY=avx2 at start-up) or
        oneDNN disabled, the fp32 ones."""
        args = self.args()
        kept = torch.full((16, 32), 2.0 ** -130, dtype=torch.float64).to(BF16)
        flushed = torch.zeros_like(kept)
        active, _detected = torch.ops.amct._cpu_capability("reset")
        for mode in (None, "auto"):
            assert_bits_equal(self, svd(*args, mode=mode), flushed if active == "avx512" else kept,
                              f"{mode}: {active} kernels")
        torch.ops.amct._cpu_capability("avx2")
        try:
            assert_bits_equal(self, svd(*args, mode=None), kept, "avx2")
            assert_bits_equal(self, svd(*args, mode="bf16"), flushed, "avx2, forced bf16")
        finally:
            torch.ops.amct._cpu_capability("reset")
        with warnings.catch_warnings():  # flags() warns that oneDNN's TF32 needs an Intel GPU
            warnings.simplefilter("ignore", UserWarning)
            with torch.backends.mkldnn.flags(enabled=False):
                assert_bits_equal(self, svd(*args, mode=None), kept, "oneDNN disabled")

    def test_bad_mode(self):
        with gemm_path("bf32"), self.assertRaisesRegex(
                RuntimeError, "svd_quant: AMCT_SVD_QUANT_GEMM must be auto, fp32, bf16 or bf16_ungated, got 'bf32'"):
            sq.svd_quant(*self.args())


if __name__ == "__main__":
    unittest.main()
