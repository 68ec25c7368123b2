"""The fused svd_quant NPU kernel (dav-3510 MIX: Q(X) on the AIV cores, X D, the U product and the
MX FP4 matmul on the AIC), run in the kernel sim as ``torch.ops.amct._svd_quant_emulated``.

Oracles as in test_svd_quant.py: the float64 golden of ``reference.py`` within the bounds of
docs/mxfp4.md A7 (and the elementwise bounds of every fp32 summation order, ``pinned_check``),
bit-exactness with the golden where every fp32 sum is exact, and the spec's rounding-point
constants. Sizes are small: the sim emulates every cube instruction.

The fused kernel is dav-3510 code and the sim runs one arch per build, so these tests run in a
build for ascend950 (``bash ops_build.sh --soc ascend950 svd_quant``) and are skipped in others
(the default build is for ascend910b, dav-2201).

Run from the repository root, after ``bash ops_build.sh svd_quant``::

    PYTHONPATH=staging python -m pytest tests/test_svd_quant_fused.py
"""
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal  # noqa: E402
from test_svd_quant import (BF16, U8, _raises, exact_fp4, integer_inputs, pinned_check, ref, requires_op,  # noqa: E402
                            rounding_point_cases, sq, svd_inputs)

if sq is not None:
    import amct_ops
    from amct_ops import _sim

    ARCH = amct_ops.build_info()["npu_arch"]
else:
    ARCH = None
requires_3510 = unittest.skipIf(ARCH != "dav-3510", f"the fused kernel is dav-3510 code; this build is for {ARCH}")


def fused(*args):
    return torch.ops.amct._svd_quant_emulated(*args)


@requires_op
class TestOtherArches(unittest.TestCase):
    @unittest.skipIf(ARCH == "dav-3510", "a dav-3510 build runs the kernel")
    def test_the_emulated_op_names_the_build_it_needs(self):
        x = torch.zeros(1, 32, dtype=BF16)
        _raises(self, lambda: fused(x, torch.zeros(1, 16, dtype=U8), torch.zeros(1, 1, 2, dtype=U8),
                                    torch.zeros(32, 1, dtype=BF16), torch.zeros(1, 1, dtype=BF16)),
                f"_svd_quant_emulated: the fused svd_quant kernel is dav-3510 code; this build's kernels are for "
                f"{ARCH} (build with `bash ops_build.sh --soc ascend950`)")


@requires_op
@requires_3510
class TestFusedKernel(unittest.TestCase):
    def test_basic(self):
        x, c, s, d, u = svd_inputs((2, 3, 64), 16, 8)
        out = fused(x, c, s, d, u)
        self.assertEqual((tuple(out.shape), out.dtype), ((2, 3, 16), BF16))
        self.assertTrue(out.is_contiguous())
        pinned_check(self, out, x, c, s, d, u)

    def test_rounding_points(self):  # bf16(FP4) before the add (the atomic add), bf16(X D) before U
        for args, want in rounding_point_cases():
            self.assertEqual(float(fused(*args)), want)

    def test_integer_data_bit_exact(self):
        """Every fp32 sum exact: the kernel equals the float64 golden bit for bit, so each of the
        four rounding points sits where A5 puts them (the data distinguish a dropped X D one)."""
        for shape, n, r in (((5, 96), 24, 8), ((2, 7, 256), 40, 16), ((33, 160), 64, 32)):
            with self.subTest(shape=shape, n=n, r=r):
                x, c, s, d, u = integer_inputs(shape, n, r, seed=11 + r)
                assert_bits_equal(self, fused(x, c, s, d, u), ref.svd_quant_ref(x, c, s, d, u), str(shape))

    def test_fp4_isolation(self):  # down = up = 0, K = 32 (mod 64) too, bit-exact (exact fp32 sums, A7)
        for shape, n in (((7, 96), 40), ((2, 5, 32), 8), ((2, 5, 160), 8), ((9, 1024), 48)):
            with self.subTest(shape=shape):
                x, c, s, d, u = svd_inputs(shape, n, 4, seed=12)
                d, u = torch.zeros_like(d), torch.zeros_like(u)
                out = fused(x, c, s, d, u)
                assert_bits_equal(self, out, ref.svd_quant_ref(x, c, s, d, u), "vs golden")
                if shape[-1] <= 160:
                    assert_bits_equal(self, out.reshape(-1, n), exact_fp4(x, c, s), "vs exact sum")

    def test_acceptance_shapes(self):
        """K = 32 mod 64, S = 1 decode, batch ranks 0..2, rank 32 / 64 / 128, N = 1 and N not a
        multiple of 16."""
        shapes = [(1, 96, 40, 32), (1, 160, 64, 64), (7, 96, 40, 128), (17, 128, 1, 24), (5, 32, 8, 4),
                  (3, 2080, 24, 32), (33, 256, 72, 64)]
        for i, (s_, k, n, r) in enumerate(shapes):
            for lead in ((), (4,), (2, 1)):
                shape = lead + (s_, k)
                with self.subTest(shape=shape, n=n, r=r):
                    x, c, s, d, u = svd_inputs(shape, n, r, seed=14 + i)
                    out = fused(x, c, s, d, u)
                    self.assertEqual(tuple(out.shape), tuple(shape[:-1]) + (n,))
                    pinned_check(self, out, x, c, s, d, u, str(shape))

    def test_independent_of_cores_and_batch_shape(self):
        """Several row tiles with several chunks each (600 rows), several column tiles (N = 512,
        decode): the same bits for every core count, and a batch shape folds into rows."""
        for shape, n in (((2, 300, 96), 72), ((4, 1, 96), 512)):
            x, c, s, d, u = svd_inputs(shape, n, 8, seed=15)
            want = fused(x, c, s, d, u)
            pinned_check(self, want, x, c, s, d, u, str(shape))
            for cores in (2, 6, 16, 64):  # AIV cores: 1, 3, 8, 32 AIC
                with self.subTest(shape=shape, aiv_cores=cores), _sim.sim_platform(aiv_cores=cores):
                    self.assertTrue(torch.equal(fused(x, c, s, d, u), want))
        x, c, s, d, u = svd_inputs((2, 300, 96), 72, 8, seed=15)
        want = fused(x, c, s, d, u)
        self.assertTrue(torch.equal(fused(x.reshape(600, 96), c, s, d, u), want.reshape(600, 72)))
        x4 = x.reshape(600, 1, 96)[:4]
        stacked = torch.cat([fused(x4[i:i + 1], c, s, d, u) for i in range(4)])
        self.assertTrue(torch.equal(fused(x4, c, s, d, u), stacked))

    def test_empty_and_degenerate_launch_nothing(self):
        _, c, s, d, u = svd_inputs((2, 3, 64), 16, 4, seed=16)
        before = _sim.launch_count()
        self.assertEqual(tuple(fused(torch.zeros(0, 3, 64, dtype=BF16), c, s, d, u).shape), (0, 3, 16))
        self.assertEqual(tuple(fused(torch.zeros(2, 0, 64, dtype=BF16), c, s, d, u).shape), (2, 0, 16))
        self.assertEqual(tuple(fused(torch.ones(2, 3, 64, dtype=BF16), c[:0], s[:0], d, u[:, :0]).shape), (2, 3, 0))
        out = fused(torch.ones(2, 3, 0, dtype=BF16), torch.zeros(16, 0, dtype=U8), torch.zeros(16, 0, 2, dtype=U8),
                    torch.zeros(0, 4, dtype=BF16), u)
        self.assertTrue(torch.equal(out, torch.zeros(2, 3, 16, dtype=BF16)))
        self.assertEqual(_sim.launch_count(), before)

    def test_strides_views_dtypes_and_pad(self):
        x, c, s, d, u = svd_inputs((6, 96), 24, 8, seed=17)
        want = fused(x, c, s, d, u)
        pinned_check(self, want, x, c, s, d, u)
        xt = x.t().contiguous().t()
        wide = torch.cat([c, torch.zeros_like(c)], dim=1)[:, : c.shape[1]]
        dt = d.t().contiguous().t()
        self.assertTrue(torch.equal(fused(xt, wide, s, dt, u), want))
        self.assertTrue(torch.equal(fused(x, c.view(torch.float4_e2m1fn_x2), s.view(torch.float8_e8m0fnu), d, u), want))
        padded = s.clone()
        padded[:, -1, 1] = 0xFF  # the pad byte (K/32 = 3): ignored, though the MX matmul reads its block
        self.assertTrue(torch.equal(fused(x, c, padded, d, u), want))
        self.assertEqual(int(padded[0, -1, 1]), 0xFF, "the caller's scales are not modified")

    def test_non_finite(self):
        x, c, s, d, u = svd_inputs((4, 64), 8, 4, seed=18)
        x[1, 5] = float("nan")
        out = fused(x, c, s, d, u)
        self.assertTrue(bool(out[1].isnan().all()))
        self.assertTrue(bool(torch.isfinite(out[[0, 2, 3]]).all()))
        x[1, 5] = float("inf")
        self.assertTrue(bool(fused(x, c, s, d, u)[1].isnan().all()))
        x[1, 5] = 0.0
        s2 = s.clone()
        s2[3, 0, 0] = 0xFF
        out = fused(x, c, s2, d, u)
        self.assertTrue(bool(out[:, 3].isnan().all()))
        self.assertTrue(bool(torch.isfinite(out[:, [0, 1, 2, 4, 5, 6, 7]]).all()))

    def test_same_validation_as_the_op(self):  # one routine (dtype, rank, K, shape and R checks)
        x, c, s, d, u = svd_inputs((3, 64), 16, 8)
        _raises(self, lambda: fused(x.float(), c, s, d, u),
                "svd_quant: Data Type is wrong: activation must be bfloat16, got float32")
        _raises(self, lambda: fused(x[:, :48], c, s, d, u), "svd_quant: K dimension should be a multiple of 32, got K = 48")
        _raises(self, lambda: fused(x, c, s, d, u[:, :8]),
                "svd_quant: Input shapes are incompatible: expected weights of shape [8, 32], got [16, 32] "
                "(K = 64, N = 8, R = 8)")


if __name__ == "__main__":
    unittest.main()
