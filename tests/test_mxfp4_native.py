"""The native CPU MXFP4 quantizer / dequantizer against the AscendC kernel and the oracles.

On the CPU ``mxfp4_quantize`` / ``mxfp4_dequantize`` are native C++ (svd_quant_cpu.cpp, one copy
per SIMD capability); the AscendC quantizer kernel runs through the kernel sim as the private op
``torch.ops.amct._mxfp4_quantize_emulated``. Here: native == emulated == reference.py bit for bit
on random and special blocks, every dtype and round mode, odd shapes, leading dims, strides and
empties; odd core counts and small UB on the emulated side; every SIMD path (portable, AVX2,
AVX-512, forced with ``torch.ops.amct._cpu_capability``) quantizes all 65536 fp16 and bf16 bit
patterns to the emulated kernel's bits and dequantizes them to reference.py's, and gives the
portable path's bits on the mixed cases; the out= overloads (checks, resizing, Meta, opcheck, torch.compile).

Oracles: ``reference.py`` (loaded from the source tree) and the brute-force ``mxfp4_oracle.py``;
the emulated kernel is a second, independent implementation of the same contract.
"""
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mxfp4_oracle as oracle  # noqa: E402
from amct_testing import assert_bits_equal, find_op_package, load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ref = load_source_module("svd_quant_reference_native", REPO / "svd_quant" / "python" / "svd_quant" / "reference.py")

BF16, F16, F32, U8 = torch.bfloat16, torch.float16, torch.float32, torch.uint8
DTYPES = (F16, BF16, F32)
MODES = ("round", "rint", "floor")

sq, _SKIP = find_op_package("svd_quant")
requires_op = unittest.skipIf(sq is None, _SKIP)


def native(x, mode="round"):
    return torch.ops.amct.mxfp4_quantize(x, mode)


def emulated(x, mode="round"):
    return torch.ops.amct._mxfp4_quantize_emulated(x, mode)


def tiny(dtype):
    """The smallest positive subnormal of dtype (fp16 2^-24, bf16 2^-133, fp32 2^-149)."""
    return {F16: 2.0 ** -24, BF16: 2.0 ** -133, F32: 2.0 ** -149}[dtype]


def random_blocks(rows, k, dtype, seed):
    """Per-block magnitudes 2^U(-20, 20) (fp16: 2^U(-12, 12), inside its range)."""
    g = torch.Generator().manual_seed(seed)
    span = 12 if dtype == F16 else 20
    scale = torch.exp2(torch.randint(-span, span + 1, (rows, k // 32, 1), generator=g).float())
    return (torch.randn(rows, k // 32, 32, generator=g) * scale).reshape(rows, k).to(dtype)


def special_blocks(dtype):
    """One block per row: NaN, +-Inf, +0, -0, subnormals, saturation, ties, tiny blocks."""
    big = {F16: 65504.0, BF16: float(torch.finfo(BF16).max), F32: float(torch.finfo(F32).max)}[dtype]
    sub = tiny(dtype)
    rows = []

    def row(values):
        r = torch.zeros(32, dtype=torch.float64)
        r[:len(values)] = torch.tensor(values, dtype=torch.float64)
        rows.append(r)

    row([float("nan"), 1.0, -2.0])
    row([1.0, float("inf"), -3.0])
    row([-1.0, float("-inf")])
    row([])                                            # +0 block
    row([-0.0] * 32)                                   # -0 block
    row([sub, -sub, 2 * sub, -3 * sub, 0.0, -0.0])     # subnormals only
    row([1.0, sub, -sub, -2 * sub])                    # subnormals under a normal maximum (underflow)
    row([big, -big, big / 3, -1.0])                    # saturation at the top of the range
    row([7.99, 6.0, -7.5, 5.0, -5.0, 2.5, -2.5, 1.25, -1.25, 0.25, -0.25, 0.75, 1.75, 3.5])  # ties, sb 127
    row([4.0, 0.2, -0.2, 0.3, -0.3, 4.5, -4.5, 1.1, -1.1, 0.6, -0.6])
    if dtype == F16:
        row([2.0 ** -24, -(2.0 ** -24)])               # the fp16 subnormal case of the spec
        row([2.0 ** -14, 2.0 ** -24, 2.0 ** -15 + 2.0 ** -24])
    else:
        row([2.0 ** -127, -(2.0 ** -127)])             # the fp32 subnormal case (bf16 holds it too)
        row([2.0 ** -126, 2.0 ** -127, -(2.0 ** -149 if dtype == F32 else 2.0 ** -133)])
    return torch.stack(rows).to(dtype)


def all_fp16_patterns():
    """All 65536 fp16 bit patterns, shuffled into blocks (NaN/Inf blocks included)."""
    g = torch.Generator().manual_seed(11)
    bits = torch.arange(65536, dtype=torch.int32)[torch.randperm(65536, generator=g)]
    return bits.to(torch.int16).view(F16).reshape(-1, 256)


def all_bf16_patterns():
    g = torch.Generator().manual_seed(12)
    bits = torch.arange(65536, dtype=torch.int32)[torch.randperm(65536, generator=g)]
    return bits.to(torch.int16).view(BF16).reshape(-1, 256)


def fp32_near_boundaries():
    """fp32 values 1 ulp either side of every decision threshold, in blocks anchored by 4.0 (sb 127)."""
    thresholds = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0])
    ups = torch.nextafter(thresholds, torch.full_like(thresholds, 8.0))
    downs = torch.nextafter(thresholds, torch.zeros_like(thresholds))
    values = torch.cat([thresholds, ups, downs])
    values = torch.cat([values, -values])
    pad = (-values.numel()) % 31
    values = torch.cat([values, torch.zeros(pad)]).reshape(-1, 31)
    return torch.cat([torch.full((values.shape[0], 1), 4.0), values], dim=1)


@requires_op
class TestNativeEqualsEmulated(unittest.TestCase):
    def assert_three_agree(self, x, mode, what):
        c, s = native(x, mode)
        ce, se = emulated(x, mode)
        rc, rs = ref.mxfp4_quantize_ref(x, mode)
        assert_bits_equal(self, c, ce, f"codes native vs emulated {what} {mode}")
        assert_bits_equal(self, s, se, f"scales native vs emulated {what} {mode}")
        assert_bits_equal(self, c, rc, f"codes native vs reference {what} {mode}")
        assert_bits_equal(self, s, rs, f"scales native vs reference {what} {mode}")

    def test_random_and_special_blocks(self):
        for i, dtype in enumerate(DTYPES):
            x = random_blocks(8, 256, dtype, seed=i)
            sp = special_blocks(dtype)
            for mode in MODES:
                with self.subTest(dtype=dtype, mode=mode):
                    self.assert_three_agree(x, mode, f"random {dtype}")
                    self.assert_three_agree(sp, mode, f"special {dtype}")

    def test_every_16_bit_pattern(self):
        for name, x in (("fp16", all_fp16_patterns()), ("bf16", all_bf16_patterns())):
            for mode in MODES:
                with self.subTest(dtype=name, mode=mode):
                    self.assert_three_agree(x, mode, f"all {name} patterns")

    def test_fp32_decision_boundaries_and_oracle(self):
        x = fp32_near_boundaries()
        for mode in MODES:
            with self.subTest(mode=mode):
                self.assert_three_agree(x, mode, "fp32 boundaries")
                packed, scales = oracle.quantize_rows(x.double().tolist(), mode)
                c, s = native(x, mode)
                self.assertEqual(c.tolist(), packed)
                self.assertEqual(s.reshape(s.shape[0], -1).tolist(), scales)

    def test_odd_shapes_leading_dims_strides(self):
        for dtype in DTYPES:
            for k in (32, 96, 160, 2048):
                x = random_blocks(6, k, dtype, seed=k)
                for mode in MODES:
                    with self.subTest(dtype=dtype, k=k, mode=mode):
                        self.assert_three_agree(x, mode, f"K={k}")
            base = random_blocks(24, 96, dtype, seed=3)
            views = {"rank 1": base[0], "rank 3": base.reshape(2, 12, 96), "rank 4": base.reshape(2, 3, 4, 96),
                     "transposed": random_blocks(64, 96, dtype, seed=4).t(), "column slice": base[:, 32:96],
                     "row stride": base[::3], "expanded": base[:1].expand(5, 96)}
            for name, v in views.items():
                with self.subTest(dtype=dtype, view=name):
                    self.assert_three_agree(v, "floor", name)
                    c, s = native(v, "rint")
                    cc, cs = native(v.contiguous(), "rint")
                    self.assertTrue(torch.equal(c, cc) and torch.equal(s, cs), name)

    def test_empty(self):
        for shape, cshape, sshape in (((0, 64), (0, 32), (0, 1, 2)), ((3, 0), (3, 0), (3, 0, 2)),
                                      ((2, 0, 96), (2, 0, 48), (2, 0, 2, 2))):
            for op in (native, emulated):
                c, s = op(torch.zeros(shape, dtype=BF16))
                self.assertEqual((tuple(c.shape), tuple(s.shape), c.dtype, s.dtype), (cshape, sshape, U8, U8))

    def test_emulated_kernel_cores_and_ub(self):
        x = torch.cat([random_blocks(37, 96 * 7, BF16, seed=7), random_blocks(3, 96 * 7, BF16, seed=8) * 1e30])
        x[5, 100] = float("nan")
        saved = torch.ops.amct._sim_get_platform()
        override = torch.ops.amct._sim_get_platform_override()  # restored as it was
        try:
            for dtype in DTYPES:
                xd = x.to(dtype)
                for mode in MODES:
                    want = native(xd, mode)
                    for cores, ub in ((1, 0), (3, 0), (7, 57344), (5, 61440)):
                        torch.ops.amct._sim_set_platform(cores, ub if ub else saved[1])
                        c, s = emulated(xd, mode)
                        with self.subTest(dtype=dtype, mode=mode, cores=cores, ub=ub):
                            assert_bits_equal(self, c, want[0], "codes")
                            assert_bits_equal(self, s, want[1], "scales")
                    torch.ops.amct._sim_set_platform(*override)
        finally:
            torch.ops.amct._sim_set_platform(*override)

    def test_independent_of_threads(self):
        x = random_blocks(512, 2048, BF16, seed=21)  # 1M elements: several parallel tasks
        saved = torch.get_num_threads()
        try:
            torch.set_num_threads(1)
            one = native(x, "rint"), sq.mxfp4_dequantize(*native(x, "rint"), F32)
            torch.set_num_threads(max(2, saved))
            many = native(x, "rint"), sq.mxfp4_dequantize(*native(x, "rint"), F32)
        finally:
            torch.set_num_threads(saved)
        self.assertTrue(torch.equal(one[0][0], many[0][0]) and torch.equal(one[0][1], many[0][1]))
        assert_bits_equal(self, one[1], many[1], "dequantized")


def dequant_cases():
    """(codes, scales) byte tensors: random codes under every scale byte, incl. 0, 253, 254, 255."""
    g = torch.Generator().manual_seed(31)
    codes = torch.randint(0, 256, (256, 48), generator=g, dtype=torch.int32).to(U8)   # K = 96: pad bytes
    scales = torch.arange(256, dtype=torch.int32).to(U8).reshape(256, 1).repeat(1, 4).reshape(256, 2, 2).clone()
    scales[:, 1, 1] = 0xFF  # the pad byte: ignored
    return codes, scales


@requires_op
class TestDequantize(unittest.TestCase):
    def test_native_vs_reference(self):
        codes, scales = dequant_cases()
        for dtype in (None, BF16, F16, F32):
            with self.subTest(dtype=dtype):
                want = ref.mxfp4_dequantize_ref(codes, scales, dtype)
                assert_bits_equal(self, sq.mxfp4_dequantize(codes, scales, dtype), want, f"dequantize {dtype}")
                views = sq.mxfp4_dequantize(codes.view(torch.float4_e2m1fn_x2), scales.view(torch.float8_e8m0fnu), dtype)
                assert_bits_equal(self, views, want, f"fp4/e8m0 views {dtype}")
                strided = torch.zeros(256, 96, dtype=U8)
                strided[:, ::2] = codes
                assert_bits_equal(self, sq.mxfp4_dequantize(strided[:, ::2], scales, dtype), want, "strided codes")

    def test_round_trip_odd_shapes(self):
        for dtype in DTYPES:
            for k in (32, 96, 160):
                x = random_blocks(5, k, dtype, seed=k).reshape(5, 1, k)
                c, s = native(x, "floor")
                for out in (BF16, F16, F32):
                    with self.subTest(dtype=dtype, k=k, out=out):
                        assert_bits_equal(self, sq.mxfp4_dequantize(c, s, out), ref.mxfp4_dequantize_ref(c, s, out),
                                          "round trip")


@requires_op
class TestSimdPaths(unittest.TestCase):
    """Every SIMD copy this CPU can run: all 65536 fp16 and bf16 patterns, quantized in every
    round mode and dequantized back, equal the emulated kernel (codes, scales) and reference.py
    (the dequantized values) bit for bit; and on the mixed cases it gives the portable copy's bits."""

    @classmethod
    def setUpClass(cls):
        # The emulated kernel and the reference do not depend on the forced copy: computed once.
        cls.every_pattern = []
        for x in (all_fp16_patterns(), all_bf16_patterns()):
            for mode in MODES:
                codes, scales = emulated(x, mode)
                back = {d: ref.mxfp4_dequantize_ref(codes, scales, d) for d in (x.dtype, F32)}
                cls.every_pattern.append((x, mode, codes, scales, back))

    def tearDown(self):
        torch.ops.amct._cpu_capability("reset")

    def capabilities(self):
        detected = torch.ops.amct._cpu_capability(None)[1]
        order = ("default", "avx2", "avx512")
        return order[:order.index(detected) + 1]

    def test_every_16_bit_pattern_on_every_path(self):
        caps = self.capabilities()
        self.assertIn("default", caps)
        for cap in caps:
            self.assertEqual(torch.ops.amct._cpu_capability(cap)[0], cap)
            for x, mode, want_codes, want_scales, want_back in self.every_pattern:
                what = f"{cap} {x.dtype} {mode}"
                with self.subTest(capability=cap, dtype=x.dtype, mode=mode):
                    codes, scales = native(x, mode)
                    assert_bits_equal(self, codes, want_codes, f"codes vs emulated, {what}")
                    assert_bits_equal(self, scales, want_scales, f"scales vs emulated, {what}")
                    for dtype, want in want_back.items():
                        assert_bits_equal(self, sq.mxfp4_dequantize(codes, scales, dtype), want,
                                          f"round trip to {dtype} vs reference, {what}")

    def results(self):
        out = []
        for i, dtype in enumerate(DTYPES):
            x = torch.cat([random_blocks(16, 256, dtype, seed=40 + i), all_fp16_patterns()[:4].to(dtype)
                           if dtype != F16 else all_fp16_patterns()[:4]])
            sp = special_blocks(dtype)
            for mode in MODES:
                out += list(native(x, mode)) + list(native(sp, mode)) + list(native(x[:, 32:224].t().contiguous().t()[:, :96], mode))
        codes, scales = dequant_cases()
        for dtype in DTYPES:
            out.append(sq.mxfp4_dequantize(codes, scales, dtype))
        return out

    def test_paths_identical(self):
        caps = self.capabilities()
        torch.ops.amct._cpu_capability("default")
        portable = self.results()
        for cap in caps[1:]:
            self.assertEqual(torch.ops.amct._cpu_capability(cap)[0], cap)
            for i, (a, b) in enumerate(zip(self.results(), portable)):
                with self.subTest(capability=cap, result=i):
                    assert_bits_equal(self, a, b, f"{cap} vs default")


@requires_op
class TestOut(unittest.TestCase):
    def test_quantize_out_equals_functional(self):
        x = random_blocks(6, 96, F16, seed=50).reshape(2, 3, 96)
        for mode in MODES:
            codes, scales = torch.empty(2, 3, 48, dtype=U8), torch.full((2, 3, 2, 2), 7, dtype=U8)
            got = sq.mxfp4_quantize(x, mode, out=(codes, scales))
            self.assertIs(got[0], codes)
            self.assertIs(got[1], scales)
            want = ref.mxfp4_quantize_ref(x, mode)
            assert_bits_equal(self, codes, want[0], "codes")
            assert_bits_equal(self, scales, want[1], "scales (pad byte written 0)")
        typed = (torch.empty(2, 3, 48, dtype=torch.float4_e2m1fn_x2), torch.empty(2, 3, 2, 2, dtype=torch.float8_e8m0fnu))
        sq.mxfp4_quantize(x, out=typed)
        self.assertTrue(torch.equal(typed[0].view(U8), native(x)[0]) and torch.equal(typed[1].view(U8), native(x)[1]))

    def test_dequantize_out_equals_functional(self):
        codes, scales = dequant_cases()
        for dtype in (None, F16, F32):
            out = torch.empty(256, 96, dtype=dtype or BF16)
            self.assertIs(sq.mxfp4_dequantize(codes, scales, dtype, out=out), out)
            assert_bits_equal(self, out, ref.mxfp4_dequantize_ref(codes, scales, dtype), f"out {dtype}")

    def test_empty_out_is_resized(self):
        x = random_blocks(4, 64, BF16, seed=51)
        codes, scales = torch.empty(0, dtype=U8), torch.empty(0, dtype=U8)
        sq.mxfp4_quantize(x, out=(codes, scales))
        self.assertEqual((tuple(codes.shape), tuple(scales.shape)), ((4, 32), (4, 1, 2)))
        self.assertTrue(torch.equal(codes, native(x)[0]) and torch.equal(scales, native(x)[1]))
        out = torch.empty(0, dtype=F32)
        sq.mxfp4_dequantize(codes, scales, F32, out=out)
        self.assertEqual(tuple(out.shape), (4, 64))
        assert_bits_equal(self, out, ref.mxfp4_dequantize_ref(codes, scales, F32), "resized out")
        empty_codes, empty_scales = torch.empty(0, 32, dtype=U8), torch.empty(0, 1, 2, dtype=U8)
        sq.mxfp4_quantize(x[:0], out=(empty_codes, empty_scales))  # empty input: nothing written
        self.assertEqual(tuple(empty_codes.shape), (0, 32))

    def test_opcheck(self):
        x = random_blocks(4, 96, BF16, seed=52)
        codes, scales = torch.empty(4, 48, dtype=U8), torch.empty(4, 2, 2, dtype=U8)
        torch.library.opcheck(torch.ops.amct.mxfp4_quantize.out, (x, "floor"), {"codes": codes, "scales": scales})
        c, s = native(x)
        torch.library.opcheck(torch.ops.amct.mxfp4_dequantize.out, (c, s, F32), {"out": torch.empty(4, 96)})
        torch.library.opcheck(torch.ops.amct.mxfp4_quantize.default, (x, "rint"))


if __name__ == "__main__":
    unittest.main()
