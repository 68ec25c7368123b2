"""Tests of ``quant_dequant_mxfp4`` (svd_quant/README.md, section quant_dequant_mxfp4).

Oracles: the executable spec ``reference.quant_dequant_mxfp4_ref`` (float64), itself checked here
against the definition evaluated with exact rationals (``exact_exponent``: the integer nearest to
log2(max(m * s / 6, 2^-30)), found by comparing squares of Fractions, never through logs). Three
implementations are compared bit for bit with the spec: the native CPU kernel (both schemas), the
AscendC kernel through the kernel sim (``_quant_dequant_mxfp4_emulated``), each SIMD path forced.

    PYTHONPATH=staging python -m pytest tests/test_quant_dequant_mxfp4.py -q
"""
import math
import os
import sys
import threading
import unittest
from fractions import Fraction
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal, find_op_package, load_source_module, num_threads  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ref = load_source_module("svd_quant_reference_qdq", REPO / "svd_quant" / "python" / "svd_quant" / "reference.py")

_PKG, _SKIP = find_op_package("svd_quant")
HAVE_OP = _PKG is not None and hasattr(torch.ops.amct, "quant_dequant_mxfp4")
if HAVE_OP:
    from amct_ops.svd_quant import quant_dequant_mxfp4

SCALES = (0.25, 0.5, 1.0, 1.5, 2.0)
# Beyond the list: E past 126 (split multipliers), clamped at -30 for every block, and
# float32's extremes of s.
EXTREME_SCALES = (8.0, 100.0, 1e30, 1e-30, 3e38, 1e-45)
DTYPES = (torch.float32, torch.bfloat16, torch.float16)
F32_MAX = float(np.finfo(np.float32).max)


def exact_exponent(m, s):
    """round(log2(max(m * s / 6, 2^-30))) for float32 m >= 0 and s, from the definition."""
    raw = max(Fraction(float(np.float32(m))) * Fraction(float(np.float32(s))) / 6, Fraction(1, 2 ** 30))
    k = raw.numerator.bit_length() - raw.denominator.bit_length()
    while Fraction(2) ** k > raw:
        k -= 1
    while Fraction(2) ** (k + 1) <= raw:
        k += 1
    # 2^k <= raw < 2^(k+1); the nearer integer of log2(raw) is k + 1 iff raw^2 >= 2^(2k+1) (never equal).
    assert raw ** 2 != Fraction(2) ** (2 * k + 1)
    return k + 1 if raw ** 2 > Fraction(2) ** (2 * k + 1) else k


def random_blocks(rows, cols, dtype, seed, spread=20):
    g = torch.Generator().manual_seed(seed)
    nb = (cols + 31) // 32
    mag = torch.exp2(torch.randint(-spread, spread + 1, (rows, nb, 1), generator=g).float())
    x = (torch.randn(rows, nb, 32, generator=g) * mag).reshape(rows, nb * 32)[:, :cols]
    return x.to(dtype).contiguous()


def near_threshold_maxima(s, count=64, seed=0):
    """Block maxima next to the exact exponent thresholds 2^(k+1/2) * 6 / s (and random ones)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in rng.integers(-40, 40, count):
        with np.errstate(over="ignore"):
            t = np.float32(2.0 ** (k + 0.5) * 6.0 / float(np.float32(s)))
        if not np.isfinite(t) or t == 0:
            continue
        out += [t, np.nextafter(t, np.float32(0)), np.nextafter(t, np.float32(np.inf))]
    out += list(np.float32(np.exp2(rng.uniform(-140, 127, count))))
    out += [np.float32(2.0 ** -149), np.float32(1e-40), np.float32(F32_MAX), np.float32(0.0)]
    return np.array(out, dtype=np.float32)


def special_blocks():
    """Blocks of 32: zeros, -0, subnormals, NaN, +-Inf, midpoints, saturation, float32's largest."""
    rows = []
    z = torch.zeros(32)
    rows.append(z.clone())
    rows.append(torch.full((32,), -0.0))
    sub = z.clone(); sub[:4] = torch.tensor([1e-45, -1e-45, 1e-40, -3e-39]); rows.append(sub)
    nan = torch.randn(32); nan[7] = float("nan"); rows.append(nan)
    inf = torch.randn(32); inf[3] = float("inf"); rows.append(inf)
    ninf = torch.randn(32); ninf[30] = -float("inf"); rows.append(ninf)
    mids = torch.tensor([6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0] * 4)
    mids[8:16] = -mids[8:16]
    mids[16:24] = torch.from_numpy(np.nextafter(mids[16:24].numpy(), np.float32(0)))
    rows.append(mids)
    big = torch.randn(32) * 1e37; big[0] = F32_MAX; big[1] = -F32_MAX; rows.append(big)
    tiny = torch.randn(32) * 1e-12; rows.append(tiny)
    mixed = torch.randn(32); mixed[::2] = -0.0; mixed[1] = 1e-44; rows.append(mixed)
    return torch.stack(rows)


def run_native(x, s):
    return quant_dequant_mxfp4(x, 32, s)


def run_emulated(x, s):
    return torch.ops.amct._quant_dequant_mxfp4_emulated(x, 32, s)


class TestReferenceAgainstDefinition(unittest.TestCase):
    """The spec's exponent (float64 + an exact threshold) equals the definition in rationals."""

    def test_exponent_near_thresholds(self):
        for s in SCALES + EXTREME_SCALES:
            m = near_threshold_maxima(s, count=40, seed=int(s * 1000) % 97)
            got = ref.qdq_exponent_ref(torch.from_numpy(m), s).tolist()
            want = [exact_exponent(v, s) for v in m]
            self.assertEqual(got, want, f"s={s}")

    def test_midpoints_round_up_and_saturate(self):
        x = torch.tensor([6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.9, 0.2499] + [0.0] * 22)
        # m = 6, s = 1: E = 0, so the values quantize on the E2M1 grid itself.
        want = torch.tensor([6.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 6.0, 0.0] + [0.0] * 22)
        assert_bits_equal(self, ref.quant_dequant_mxfp4_ref(x), want, "grid")

    def test_threshold_constant(self):
        t = ref._qdq_mantissa_threshold()
        self.assertGreaterEqual(Fraction(t) ** 2, Fraction(9, 8))
        self.assertLess(Fraction(math.nextafter(t, 0.0)) ** 2, Fraction(9, 8))


def upstream_kernel_exponent(m, s):
    """E as upstream's kernel computes it (upstream's published kernel): raw = m * fp32(fp32(1/6) * s) in
    float32, clamped to 2^-30, E = raw's exponent + [raw's fraction field >= 0x3504F3]."""
    k = np.float32(np.float32(np.float32(1.0) / np.float32(6.0)) * np.float32(s))
    raw = np.maximum((m * k).astype(np.float32), np.float32(2.0 ** -30))
    bits = raw.view(np.uint32).astype(np.int64)
    return (bits >> 23) - 127 + ((bits & 0x7FFFFF) >= 0x3504F3)


@unittest.skipIf(os.environ.get("AMCT_SKIP_LARGE") == "1", "AMCT_SKIP_LARGE=1: 2^23 maxima per scale")
class TestUpstreamPoints(unittest.TestCase):
    """The README's list of block maxima where upstream's kernel picks another exponent: brute
    force over every fraction field of m in [1, 2) for the five scales."""

    LISTED = {0.25: [0x07C3B6], 0.5: [0x07C3B6], 1.0: [0x07C3B6], 1.5: [0x3504F3], 2.0: [0x07C3B6]}

    def test_scale_differences(self):
        fields = np.arange(1 << 23, dtype=np.uint32)
        m = (fields | np.uint32(127 << 23)).view(np.float32)
        for s, listed in self.LISTED.items():
            exact = ref.qdq_exponent_ref(torch.from_numpy(m), s).numpy()
            upstream = upstream_kernel_exponent(m, s)
            differ = np.nonzero(upstream != exact)[0]
            self.assertEqual(differ.tolist(), listed, f"s={s}")
            self.assertTrue(bool((upstream[differ] == exact[differ] + 1).all()))


@unittest.skipUnless(HAVE_OP, _SKIP or "quant_dequant_mxfp4 is not built")
class TestBitExact(unittest.TestCase):
    def test_one_million_random_elements_per_scale_and_dtype(self):
        for dtype in DTYPES:
            x = random_blocks(256, 4096, dtype, seed=11)  # 1M elements
            for s in SCALES:
                assert_bits_equal(self, run_native(x, s), ref.quant_dequant_mxfp4_ref(x, 32, s), f"{dtype} s={s}")

    def test_emulated_random_and_special(self):
        specials = special_blocks()
        for dtype in DTYPES:
            x = torch.cat([random_blocks(64, 512, dtype, seed=3).reshape(-1, 32), specials.to(dtype)])
            for s in SCALES + EXTREME_SCALES:
                want = ref.quant_dequant_mxfp4_ref(x, 32, s)
                assert_bits_equal(self, run_emulated(x, s), want, f"emulated {dtype} s={s}")
                assert_bits_equal(self, run_native(x, s), want, f"native {dtype} s={s}")

    def test_blocks_with_maxima_at_the_thresholds(self):
        for s in SCALES + EXTREME_SCALES:
            m = torch.from_numpy(near_threshold_maxima(s, seed=5))
            g = torch.Generator().manual_seed(9)
            x = torch.rand(m.numel(), 32, generator=g) * m[:, None]
            x[:, 0] = m
            x[:, 1] = -m * 0.75
            for fn in (run_native, run_emulated):
                assert_bits_equal(self, fn(x, s), ref.quant_dequant_mxfp4_ref(x, 32, s), f"{fn.__name__} s={s}")

    def test_special_values(self):
        x = special_blocks()
        y = run_native(x, 1.0)
        self.assertTrue(bool(y[3:6].isnan().all()), "NaN/Inf blocks become all NaN")
        self.assertFalse(bool(y[[0, 1, 2, 6, 7, 8, 9]].isnan().any()))
        self.assertEqual(y[1].view(torch.int32).tolist(), [0] * 32, "-0 gives +0")
        self.assertEqual(y[2, :4].view(torch.int32).tolist(), [0, -(2 ** 31), 0, -(2 ** 31)],
                         "subnormals quantize to zero keeping their sign")
        self.assertEqual(float(run_native(torch.tensor([F32_MAX] + [0.0] * 31), 2.0)[0]), float("inf"),
                         "q * 2^E past float32's range is +Inf")

    def test_float16_rounding_of_the_float32_result(self):
        x = torch.tensor([60000.0, 1e-4] + [0.0] * 30, dtype=torch.float16)
        for s in (0.25, 2.0, 1e-30):
            want = ref.quant_dequant_mxfp4_ref(x.float(), 32, s).to(torch.float16)
            assert_bits_equal(self, run_native(x, s), want, f"s={s}")


@unittest.skipUnless(HAVE_OP, _SKIP or "quant_dequant_mxfp4 is not built")
class TestShapesAndLayout(unittest.TestCase):
    def test_padded_last_dims(self):
        for n in (1, 17, 33, 4095):
            for dtype in DTYPES:
                x = random_blocks(5, n, dtype, seed=n)
                want = ref.quant_dequant_mxfp4_ref(x, 32, 1.5)
                for fn in (run_native, run_emulated):
                    y = fn(x, 1.5)
                    self.assertEqual((tuple(y.shape), y.dtype), ((5, n), dtype))
                    assert_bits_equal(self, y, want, f"{fn.__name__} n={n} {dtype}")

    def test_padding_is_zero_per_row(self):
        # Row 0's last block must not see row 1's elements: a ragged row pads with zeros.
        x = torch.tensor([[1.0] * 17, [1000.0] * 17])
        self.assertEqual(run_native(x, 1.0)[0].tolist(), ref.quant_dequant_mxfp4_ref(x[:1])[0].tolist())

    def test_ranks_and_odd_strides(self):
        base = random_blocks(48, 70, torch.float32, seed=2)
        cases = {
            "1-D": base[0],
            "3-D": base.reshape(6, 8, 70),
            "transposed": base.t(),
            "sliced": base[:, 3:67:2],
            "expanded": base[:1].expand(4, 70),
        }
        for name, x in cases.items():
            for dtype in DTYPES:
                xd = x.to(dtype)
                want = ref.quant_dequant_mxfp4_ref(xd.contiguous(), 32, 0.5)
                for fn in (run_native, run_emulated):
                    y = fn(xd, 0.5)
                    self.assertTrue(y.is_contiguous())
                    assert_bits_equal(self, y, want, f"{fn.__name__} {name} {dtype}")

    def test_empty(self):
        for shape in ((0,), (0, 32), (3, 0), (2, 0, 5)):
            for fn in (run_native, run_emulated):
                y = fn(torch.ones(shape, dtype=torch.bfloat16), 1.0)
                self.assertEqual((tuple(y.shape), y.dtype), (shape, torch.bfloat16))
        self.assertEqual(tuple(torch.ops.amct.quant_dequant_mxfp4(torch.ones(0), 1.0).shape), (0,))

    def test_flat_schema(self):
        x = random_blocks(1, 32 * 70, torch.float32, seed=8)[0]
        want = ref.quant_dequant_mxfp4_ref(x, 32, 2.0)
        assert_bits_equal(self, torch.ops.amct.quant_dequant_mxfp4(x, 2.0), want, "flat")
        # Flat means blocks of 32 consecutive elements in row-major order, whatever the shape.
        y = torch.ops.amct.quant_dequant_mxfp4(x.reshape(35, 64).t(), 2.0)
        assert_bits_equal(self, y.reshape(-1), ref.quant_dequant_mxfp4_ref(x.reshape(35, 64).t().reshape(-1), 32, 2.0),
                          "flat of a transposed view")

    def test_meta(self):
        y = torch.ops.amct.quant_dequant_mxfp4.last_dim(torch.empty(3, 50, dtype=torch.float16, device="meta"), 32, 1.0)
        self.assertEqual((tuple(y.shape), y.dtype, y.device.type), ((3, 50), torch.float16, "meta"))
        with self.assertRaisesRegex(RuntimeError, "block_size must be 32, got 16"):
            torch.ops.amct.quant_dequant_mxfp4.last_dim(torch.empty(3, 50, device="meta"), 16, 1.0)


@unittest.skipUnless(HAVE_OP, _SKIP or "quant_dequant_mxfp4 is not built")
class TestErrors(unittest.TestCase):
    def check(self, fn, *words):
        with self.assertRaises(RuntimeError) as ctx:
            fn()
        for w in words:
            self.assertIn(w, str(ctx.exception))

    def test_messages(self):
        x = torch.ones(2, 32)
        self.check(lambda: quant_dequant_mxfp4(x, 16), "quant_dequant_mxfp4: block_size must be 32, got 16")
        for bad in (0.0, -1.0, float("inf"), float("nan")):
            self.check(lambda: quant_dequant_mxfp4(x, 32, bad), "quant_dequant_mxfp4: inv_scale_factor_scale must be "
                       "positive and finite")
        for bad in (1e-50, 1e39):  # 0 and +Inf as float32
            self.check(lambda: quant_dequant_mxfp4(x, 32, bad), "inv_scale_factor_scale", "as a float32")
        self.check(lambda: quant_dequant_mxfp4(x.double()), "quant_dequant_mxfp4: x", "float64")
        self.check(lambda: quant_dequant_mxfp4(torch.tensor(1.0)), "x must have at least 1 dimension")
        self.check(lambda: torch.ops.amct.quant_dequant_mxfp4(x.half(), 1.0), "x", "float32", "float16")
        self.check(lambda: torch.ops.amct.quant_dequant_mxfp4(torch.ones(40), 1.0), "x.numel() must be a multiple of 32, got 40")
        self.check(lambda: run_emulated(x, -1.0), "inv_scale_factor_scale")
        with self.assertRaisesRegex(TypeError, "x must be a torch.Tensor"):
            quant_dequant_mxfp4([1.0])


@unittest.skipUnless(HAVE_OP, _SKIP or "quant_dequant_mxfp4 is not built")
class TestIndependence(unittest.TestCase):
    def test_every_simd_path_gives_the_same_bits(self):
        x = torch.cat([random_blocks(200, 333, torch.float32, seed=4), special_blocks()[:, :1].expand(-1, 333)])
        active, detected = torch.ops.amct._cpu_capability("reset")
        caps = [c for c in ("default", "avx2", "avx512") if ("default", "avx2", "avx512").index(c) <=
                ("default", "avx2", "avx512").index(detected)]
        try:
            for dtype in DTYPES:
                xd = x.to(dtype)
                want = ref.quant_dequant_mxfp4_ref(xd, 32, 1.0)
                for cap in caps:
                    torch.ops.amct._cpu_capability(cap)
                    assert_bits_equal(self, run_native(xd, 1.0), want, f"{cap} {dtype}")
        finally:
            torch.ops.amct._cpu_capability("reset")

    def test_emulated_cores_and_tiles(self):
        from amct_ops import _sim
        x = torch.cat([random_blocks(300, 96, torch.bfloat16, seed=12).reshape(-1, 32), special_blocks().bfloat16()])
        want = ref.quant_dequant_mxfp4_ref(x, 32, 2.0)
        launches = _sim.launch_count()
        for cores, ub in ((1, 0), (3, 0), (40, 0), (2, 64 * 1024)):  # 64 KB: one 64-block tile
            with _sim.sim_platform(aiv_cores=cores, ub_bytes=ub):
                assert_bits_equal(self, run_emulated(x, 2.0), want, f"cores={cores} ub={ub}")
        self.assertEqual(_sim.launch_count(), launches + 4)
        run_emulated(x[:0], 2.0)
        self.assertEqual(_sim.launch_count(), launches + 4, "an empty input launches nothing")

    def test_threads_and_concurrency(self):
        x = random_blocks(512, 1000, torch.bfloat16, seed=6)
        with num_threads(1):
            serial = run_native(x, 1.0)
        with num_threads(2):
            assert_bits_equal(self, run_native(x, 1.0), serial, "2 threads")
        results = [None] * 4
        def work(i):
            results[i] = run_native(x, 1.0)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            assert_bits_equal(self, r, serial, "concurrent")


@unittest.skipUnless(HAVE_OP, _SKIP or "quant_dequant_mxfp4 is not built")
class TestAutogradAndCompile(unittest.TestCase):
    def test_straight_through_gradient(self):
        for dtype in DTYPES:
            x = random_blocks(4, 70, dtype, seed=1).requires_grad_()
            g = torch.randn(4, 70).to(dtype)
            quant_dequant_mxfp4(x).backward(g)
            assert_bits_equal(self, x.grad, g, f"{dtype}")
            xf = random_blocks(1, 64, torch.float32, seed=1)[0].requires_grad_()
            torch.ops.amct.quant_dequant_mxfp4(xf, 1.0).sum().backward()
            self.assertTrue(bool((xf.grad == 1).all()))

    def test_opcheck(self):
        samples = [(random_blocks(3, 70, torch.float32, seed=1), 32, 1.0),
                   (random_blocks(4, 64, torch.bfloat16, seed=2).t(), 32, 0.5),
                   (random_blocks(2, 33, torch.float16, seed=3).requires_grad_(), 32, 2.0)]
        for args in samples:
            torch.library.opcheck(torch.ops.amct.quant_dequant_mxfp4.last_dim, args)
        torch.library.opcheck(torch.ops.amct.quant_dequant_mxfp4.default, (random_blocks(1, 96, torch.float32, 4)[0], 1.5))

    def test_compile_fullgraph_and_export(self):
        torch._dynamo.reset()

        class Model(torch.nn.Module):
            def forward(self, v):
                return quant_dequant_mxfp4(v * 2.0, 32, 1.5) + 1.0

        x = random_blocks(8, 100, torch.float32, seed=7)
        eager = Model()(x)
        compiled = torch.compile(Model(), fullgraph=True, backend="aot_eager")(x)
        assert_bits_equal(self, compiled, eager, "compile")
        ep = torch.export.export(Model(), (x,))
        assert_bits_equal(self, ep.module()(x), eager, "export")
        v = x.clone().requires_grad_()
        loss = torch.compile(lambda t: (quant_dequant_mxfp4(t) * 3.0).sum(), fullgraph=True, backend="aot_eager")(v)
        loss.backward()
        self.assertTrue(bool((v.grad == 3.0).all()))


if __name__ == "__main__":
    unittest.main()
