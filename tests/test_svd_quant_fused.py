"""The fused svd_quant NPU kernel (dav-3510 MIX: Q(X) on the AIV cores, X D, the U product and the
MX FP4 matmul on the AIC), run in the kernel sim as ``torch.ops.amct._svd_quant_emulated``.

Oracles as in test_svd_quant.py: the float64 golden of ``reference.py`` within the bounds of
docs/mxfp4.md A7 (and the elementwise bounds of every fp32 summation order, ``pinned_check``),
bit-exactness with the golden where every fp32 sum is exact, and the spec's rounding-point
constants. Sizes are small: the sim emulates every cube instruction.

The fused kernel is dav-3510 code; every build runs it in the sim (svd_quant/CMakeLists.txt,
KERNEL_3510; docs/kernel_sim.md, "Kernels of two arches in one process"): the default build for
ascend910b (dav-2201) from libamct_svd_quant_sim3510.so, beside its dav-2201 quantizer kernels.
TestArches checks that split; the tests skip only in a build without the dav-3510 sim kernels.

Run from the repository root, after ``bash ops_build.sh svd_quant``::

    PYTHONPATH=staging python -m pytest tests/test_svd_quant_fused.py
"""
import json
import os
import shutil
import subprocess
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

    INFO = amct_ops.build_info()
    ARCH = INFO["npu_arch"]
    SIM_ARCHS = INFO.get("sim_archs", {}).get("svd_quant", [ARCH])
else:
    INFO, ARCH, SIM_ARCHS = {}, None, []
requires_fused = unittest.skipUnless("dav-3510" in SIM_ARCHS,
                                     f"this build's svd_quant sim kernels are for {SIM_ARCHS} only, without dav-3510")


def fused(*args):
    return torch.ops.amct._svd_quant_emulated(*args)


def cost_records(fn):
    """The cost model's launch records of fn() (ascend950's table)."""
    torch.ops.amct._sim_cost_begin("ascend950", 0, False)
    try:
        fn()
    finally:
        records = json.loads(torch.ops.amct._sim_cost_end())
    return records


@requires_op
class TestArches(unittest.TestCase):
    """The fused kernel runs as dav-3510 code in every build, next to the build's own kernels."""

    def test_build_info_names_both_arches(self):
        self.assertEqual(SIM_ARCHS, sorted({ARCH, "dav-3510"}))
        libraries = INFO["libraries"]["svd_quant"]
        self.assertIn("libamct_svd_quant.so", libraries)
        if ARCH != "dav-3510":  # the dav-3510 TUs have their own library (the ODR remedy)
            self.assertIn("libamct_svd_quant_sim3510.so", libraries)

    @requires_fused
    def test_each_kernel_runs_as_its_arch(self):
        """The cost records carry the __NPU_ARCH__ each kernel was compiled for: the quantizer the
        build's, the fused kernel 3510; and the cost switch set from Python reaches both."""
        x, c, s, d, u = svd_inputs((4, 64), 16, 8, seed=21)
        records = cost_records(lambda: (torch.ops.amct._mxfp4_quantize_emulated(x, "round"), fused(x, c, s, d, u)))
        arches = {r["kernel"]: r["build_arch"] for r in records}
        self.assertEqual(arches, {"amct_svd_quant_kernel": int(ARCH.split("-")[1]), "amct_svd_quant_fused_kernel": 3510})
        self.assertTrue(all(r["table_arch"] == 3510 for r in records), records)

    @requires_fused
    def test_each_arch_has_its_platform_defaults(self):
        with _sim.sim_platform(0, 0):  # no override: each arch's default
            self.assertEqual(_sim.get_platform(3510), (40, 253952))
            self.assertEqual(_sim.get_platform(2201), (40, 196608))
            self.assertEqual(_sim.get_platform(), _sim.get_platform(int(ARCH.split("-")[1])))
        _raises(self, lambda: _sim.get_platform(2200), "amct kernel sim: __NPU_ARCH__ 2200 is not one the sim emulates")

    @requires_fused
    def test_platform_and_mode_switches_reach_the_fused_launch(self):
        """The 3510 launch reads the one shared state: the core override limits its blockDim, the
        environment's modes are read at its launch, and the modes set from Python override them."""
        x, c, s, d, u = svd_inputs((64, 96), 512, 8, seed=22)
        want = fused(x, c, s, d, u)
        before = _sim.launch_count()
        with _sim.sim_platform(aiv_cores=2):  # one AIC: one block
            records = cost_records(lambda: fused(x, c, s, d, u))
        self.assertEqual([r["block_dim"] for r in records], [1])
        self.assertEqual(_sim.launch_count(), before + 1)
        saved = os.environ.get("AMCT_SIM_STRICT_SYNC")
        os.environ["AMCT_SIM_STRICT_SYNC"] = "2"
        try:
            _raises(self, lambda: fused(x, c, s, d, u), "environment AMCT_SIM_STRICT_SYNC must be 0 or 1, got 2")
            with _sim.hardware_modes(strict_sync=True):  # the override wins over the environment
                self.assertTrue(torch.equal(fused(x, c, s, d, u), want))
        finally:
            if saved is None:
                del os.environ["AMCT_SIM_STRICT_SYNC"]
            else:
                os.environ["AMCT_SIM_STRICT_SYNC"] = saved

    @requires_fused
    def test_same_bits_under_every_hardware_mode(self):
        x, c, s, d, u = svd_inputs((2, 40, 160), 24, 8, seed=23)
        want = fused(x, c, s, d, u)
        for mode in ("saturation", "flush_subnormals", "strict_sync"):
            with self.subTest(mode=mode), _sim.hardware_modes(**{mode: True}):
                self.assertTrue(torch.equal(fused(x, c, s, d, u), want))

    @unittest.skipIf(ARCH == "dav-3510", "a dav-3510 build has no separate dav-3510 library")
    def test_the_3510_library_exports_only_launch_entries(self):
        nm = shutil.which("nm")
        if nm is None:
            self.skipTest("nm not available")
        lib = Path(amct_ops.__file__).parent / "svd_quant" / "libamct_svd_quant_sim3510.so"
        out = subprocess.run([nm, "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
        names = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
        self.assertEqual(names, ["amct_svd_quant_fused_launch"])


@requires_op
@requires_fused
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
        four rounding points sits where docs/mxfp4.md A5 puts them (the data distinguish a dropped X D one)."""
        for shape, n, r in (((5, 96), 24, 8), ((2, 7, 256), 40, 16), ((33, 160), 64, 32)):
            with self.subTest(shape=shape, n=n, r=r):
                x, c, s, d, u = integer_inputs(shape, n, r, seed=11 + r)
                assert_bits_equal(self, fused(x, c, s, d, u), ref.svd_quant_ref(x, c, s, d, u), str(shape))

    def test_fp4_isolation(self):  # down = up = 0, K = 32 (mod 64) too, bit-exact (exact fp32 sums, docs/mxfp4.md A7)
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
