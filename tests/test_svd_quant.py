"""Tests of the ``svd_quant`` package (the rules of docs/mxfp4.md A1-A7 and its accuracy table).

Oracles: ``reference.py`` (the executable spec, loaded from the source tree), the independent
brute-force quantizer ``mxfp4_oracle.py`` (plain Python floats, nearest-grid search), exact
sums computed here from decoded codes, and constants written in the spec -- never the operator
under test. The reference itself is checked against the oracle and the spec's worked examples
first (TestReference), so a shared mistake cannot hide.

Run from the repository root, after ``bash ops_build.sh svd_quant``::

    PYTHONPATH=staging python -m pytest tests/test_svd_quant.py

The op tests are skipped while ``amct_ops.svd_quant`` is not built; the reference tests always run.
"""
import math
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mxfp4_oracle as oracle  # noqa: E402
from amct_testing import assert_bits_equal, bitwise_mismatches, find_op_package, load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ref = load_source_module("svd_quant_reference_src", REPO / "svd_quant" / "python" / "svd_quant" / "reference.py")

BF16, F16, F32, U8 = torch.bfloat16, torch.float16, torch.float32, torch.uint8
MODES = ("round", "rint", "floor")


sq, _SKIP = find_op_package("svd_quant")
requires_op = unittest.skipIf(sq is None, _SKIP)


def bf16_values(bits):
    return torch.tensor(bits, dtype=torch.int32).to(torch.int16).view(BF16)


def nibbles(packed_row):
    out = []
    for b in packed_row:
        out += [b & 15, b >> 4]
    return out


def block_of(values, dtype=F32, k=32):
    x = torch.zeros(1, k, dtype=torch.float64)
    x[0, :len(values)] = torch.tensor(values, dtype=torch.float64)
    return x.to(dtype)


# The A2 worked examples: (values, dtype, modes, sb, leading codes, dequantized values or None).
WORKED = [
    ([6, 5, 2.5, 1.25, 0.25, 0.2, -3.5, -7], F32, ("round",), 0x7F, [7, 7, 5, 3, 1, 0, 14, 15],
     [6, 6, 3, 1.5, 0.5, 0, -4, -6]),
    ([6, 5, 2.5, 1.25, 0.25, 0.2, -3.5, -7], F32, ("rint", "floor"), 0x7F, [7, 6, 4, 2, 0, 0, 14, 15],
     [6, 4, 2, 1, 0, 0, -4, -6]),
    ([4, -0.2, -1.1, 1.9, -5.5, 0.7, -0.0], F32, ("round", "rint"), 0x7F, [6, 8, 10, 4, 15, 1, 8],
     [4, -0.0, -1, 2, -6, 0.5, -0.0]),
    ([4, -0.2, -1.1, 1.9, -5.5, 0.7, -0.0], F32, ("floor",), 0x7F, [6, 9, 11, 3, 15, 1, 8],
     [4, -0.5, -1.5, 1.5, -6, 0.5, -0.0]),
    ([1.0, 0.3, 0.0625], F32, MODES[:1], 125, [6, 2, 1], [1, 0.25, 0.125]),
    ([7.96875], BF16, MODES[:1], 127, [7], [6]),
    ([float(bf16_values([0x7F7F])[0])], BF16, MODES[:1], 252, [7], [6 * 2.0 ** 125]),
    ([2.0 ** -126], F32, MODES[:1], 0, [4], [2.0 ** -126]),
    ([2.0 ** -127], F32, MODES[:1], 0, [2], [2.0 ** -127]),
    ([1.0, float(torch.tensor([0x3D7FFFFF], dtype=torch.int32).view(F32)[0])], F32, MODES[:1], 125, [6, 0], None),
    ([65504, 1.0, -2048], F16, MODES[:1], 140, [7, 0, 9], [49152, 0, -4096]),
    ([2.0 ** -24, -(2.0 ** -24)], F16, MODES[:1], 101, [6, 14], [2.0 ** -24, -(2.0 ** -24)]),
]


def exhaustive_bf16_blocks():
    """All 33,280 finite bf16 values with |v| < 8 (31 per block), each block anchored by 4.0."""
    positive = list(range(0x0000, 0x4100))
    bits = positive + [b | 0x8000 for b in positive]
    values = bf16_values(bits).float()
    pad = (-values.numel()) % 31
    values = torch.cat([values, torch.zeros(pad)]).reshape(-1, 31)
    anchor = torch.full((values.shape[0], 1), 4.0)
    return torch.cat([anchor, values], dim=1).to(BF16)


def oracle_quantize(x, mode):
    rows = x.double().reshape(-1, x.shape[-1]).tolist()
    packed, scales = oracle.quantize_rows(rows, mode)
    return torch.tensor(packed, dtype=U8), torch.tensor(scales, dtype=U8)


class TestReference(unittest.TestCase):
    """reference.py against the spec's worked examples and the brute-force oracle."""

    def test_worked_examples(self):
        for values, dtype, modes, sb, codes, _ in WORKED:
            for mode in modes:
                with self.subTest(values=values, mode=mode):
                    c, s = ref.mxfp4_quantize_ref(block_of(values, dtype), mode)
                    self.assertEqual(int(s[0, 0, 0]), sb)
                    self.assertEqual(nibbles(c[0].tolist())[:len(codes)], codes)

    def test_exhaustive_bf16_against_oracle(self):
        x = exhaustive_bf16_blocks()
        for mode in MODES:
            with self.subTest(mode=mode):
                c, s = ref.mxfp4_quantize_ref(x, mode)
                oc, os_ = oracle_quantize(x, mode)
                self.assertTrue(torch.equal(c, oc))
                self.assertTrue(torch.equal(s.reshape(s.shape[0], -1), os_))

    def test_bf16_rne_single_rounding(self):
        # 1 + 2^-8 + 2^-30: via fp32 it would round to 1 + 2^-8 (a tie), then to 1.0 (even);
        # the exact value is above the tie, so bf16 RNE gives 1 + 2^-7.
        v = torch.tensor([1 + 2.0 ** -8 + 2.0 ** -30, 1 + 2.0 ** -8, 2.0 ** -134, 3 * 2.0 ** -134],
                         dtype=torch.float64)
        got = ref.bf16_rne(v).double().tolist()
        self.assertEqual(got, [1 + 2.0 ** -7, 1.0, 0.0, 2.0 ** -132])


@requires_op
class TestQuantizer(unittest.TestCase):
    def assert_quantize_equal_ref(self, x, mode, what=""):
        c, s = sq.mxfp4_quantize(x, mode)
        rc, rs = ref.mxfp4_quantize_ref(x, mode)
        assert_bits_equal(self, c, rc, f"codes {what} {mode}")
        assert_bits_equal(self, s, rs, f"scales {what} {mode}")
        return c, s

    def test_worked_examples(self):
        for values, dtype, modes, sb, codes, deq in WORKED:
            for mode in modes:
                with self.subTest(values=values, mode=mode):
                    c, s = sq.mxfp4_quantize(block_of(values, dtype), mode)
                    self.assertEqual(int(s[0, 0, 0]), sb)
                    self.assertEqual(int(s[0, 0, 1]), 0)  # pad byte
                    self.assertEqual(nibbles(c[0].tolist())[:len(codes)], codes)
                    if deq is not None:
                        out = sq.mxfp4_dequantize(c, s, F32)[0, :len(deq)].tolist()
                        self.assertEqual(out, deq)
                        self.assertEqual([math.copysign(1, v) for v in out], [math.copysign(1, v) for v in deq])
        c, _ = sq.mxfp4_quantize(block_of([6, 5, 2.5, 1.25, 0.25, 0.2, -3.5, -7]))
        self.assertEqual(c[0, :4].tolist(), [0x77, 0x35, 0x01, 0xFE])
        c, _ = sq.mxfp4_quantize(block_of([6, 5, 2.5, 1.25, 0.25, 0.2, -3.5, -7]), "rint")
        self.assertEqual(c[0, :4].tolist(), [0x67, 0x24, 0x00, 0xFE])

    def test_exhaustive_elements(self):
        x = exhaustive_bf16_blocks()
        for mode in MODES:
            with self.subTest(mode=mode):
                c, s = self.assert_quantize_equal_ref(x, mode, "exhaustive bf16")
                oc, os_ = oracle_quantize(x, mode)
                assert_bits_equal(self, c, oc, f"codes vs oracle {mode}")
                self.assertTrue(bool((s[:, 0, 0] == 127).all()))

    def test_exhaustive_scales(self):
        bits = [b for b in range(0x10000) if (b & 0x7F80) != 0x7F80]
        values = bf16_values(bits)
        x = torch.zeros(len(bits), 32, dtype=BF16)
        x[:, 5] = values
        _, s = sq.mxfp4_quantize(x)
        field = torch.tensor([(b >> 7) & 0xFF for b in bits])
        want = torch.where(values.float() == 0, torch.zeros_like(field), field.clamp(2, 254) - 2)
        self.assertTrue(torch.equal(s[:, 0, 0].long(), want))
        ks = list(range(-133, 128))
        x = torch.zeros(len(ks), 32, dtype=F32)
        x[:, 0] = torch.tensor([2.0 ** k for k in ks], dtype=torch.float64).float()
        _, s = sq.mxfp4_quantize(x)
        self.assertEqual(s[:, 0, 0].tolist(), [min(max(k + 127, 2), 254) - 2 for k in ks])

    def test_fp16_fp32_random(self):
        g = torch.Generator().manual_seed(4)
        scale = torch.exp2(torch.randint(-20, 21, (64, 32, 1), generator=g).float())
        base = (torch.randn(64, 32, 32, generator=g) * scale).reshape(64, 1024)
        for dtype in (F16, F32, BF16):
            for mode in MODES:
                with self.subTest(dtype=dtype, mode=mode):
                    self.assert_quantize_equal_ref(base.to(dtype), mode, str(dtype))
        fp16_bits = torch.randint(0, 0x10000, (64 * 1024,), generator=g, dtype=torch.int32)
        fp16_bits = fp16_bits[(fp16_bits & 0x7C00) != 0x7C00][: 32 * 1024].to(torch.int16)
        x16 = fp16_bits.view(F16).reshape(-1, 1024)
        for mode in MODES:
            with self.subTest(case="fp16 bit patterns", mode=mode):
                self.assert_quantize_equal_ref(x16, mode, "fp16 bits")
        # fp32 values one ulp either side of every decision boundary, anchored at 4.0 (sb 127).
        bounds = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0])
        near = torch.cat([torch.nextafter(bounds, torch.tensor(0.0)), bounds, torch.nextafter(bounds, torch.tensor(9.0))])
        near = torch.cat([near, -near, torch.zeros(2)])
        x = torch.cat([torch.full((near.numel() // 31 + 1, 1), 4.0),
                       torch.cat([near, torch.zeros((-near.numel()) % 31)]).reshape(-1, 31)], dim=1)
        for mode in MODES:
            with self.subTest(case="fp32 boundaries", mode=mode):
                c, _ = self.assert_quantize_equal_ref(x, mode, "fp32 boundaries")
                assert_bits_equal(self, c, oracle_quantize(x, mode)[0], f"boundaries vs oracle {mode}")
        # bf16 / fp16 given as fp32 give the same bytes.
        for dtype in (BF16, F16):
            xd = base.to(dtype)
            for mode in MODES:
                a, b = sq.mxfp4_quantize(xd, mode), sq.mxfp4_quantize(xd.float(), mode)
                self.assertTrue(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]), f"{dtype} {mode}")

    def test_special_blocks(self):
        x = torch.zeros(6, 32)
        x[1] = -0.0
        x[2, 7] = 2.0 ** -126
        x[3, 3], x[3, 4] = 1.0, float("nan")
        x[4, 0] = float("inf")
        x[5, 9] = -float("inf")
        x = torch.cat([x.reshape(1, -1), torch.zeros(1, 64)], dim=1)  # 8 blocks in one row
        x[0, 200] = 1.5  # a finite neighbour of the non-finite blocks
        for mode in MODES:
            c, s = self.assert_quantize_equal_ref(x, mode, "special")
            sb = s.reshape(-1).tolist()
            self.assertEqual(sb[:6], [0, 0, 0, 255, 255, 255])
            self.assertEqual(sb[6], 125)
            codes = nibbles(c[0].tolist())
            self.assertEqual(codes[0:32], [0] * 32)
            self.assertEqual(codes[32:64], [8] * 32)
            self.assertEqual(codes[64 + 7], 4)
            self.assertEqual(codes[96:192], [0] * 96)
            deq = sq.mxfp4_dequantize(c, s, F32)[0]
            self.assertTrue(bool(deq[96:192].isnan().all()) and not bool(deq[:96].isnan().any()))
            self.assertEqual(float(deq[200]), 1.5)

    def test_layout_and_ranks(self):
        g = torch.Generator().manual_seed(6)
        for k, pairs in ((32, 1), (64, 1), (96, 2)):
            c, s = sq.mxfp4_quantize(torch.randn(3, k, generator=g))
            self.assertEqual((tuple(c.shape), tuple(s.shape)), ((3, k // 2), (3, pairs, 2)))
            if k % 64:
                self.assertTrue(bool((s[:, -1, 1] == 0).all()))
        for shape in ((96,), (5, 64), (2, 1, 3, 64)):
            x = torch.randn(shape, generator=g).to(BF16)
            c, s = self.assert_quantize_equal_ref(x, "round", str(shape))
            self.assertTrue(c.is_contiguous() and s.is_contiguous())
        base = torch.randn(96, 64, generator=g)
        for view in (base.t(), base[:, ::2], base.t()[1:40]):
            c, s = sq.mxfp4_quantize(view)
            cc, cs = sq.mxfp4_quantize(view.contiguous())
            self.assertTrue(torch.equal(c, cc) and torch.equal(s, cs))
        for shape, cshape, sshape in (((0, 64), (0, 32), (0, 1, 2)), ((3, 0), (3, 0), (3, 0, 2))):
            c, s = sq.mxfp4_quantize(torch.zeros(shape))
            self.assertEqual((tuple(c.shape), tuple(s.shape)), (cshape, sshape))

    def test_independent_of_cores_and_ub(self):
        g = torch.Generator().manual_seed(7)
        x = torch.randn(37, 96 * 7, generator=g).to(BF16)
        want = ref.mxfp4_quantize_ref(x, "floor")
        saved = torch.ops.amct._sim_get_platform()
        override = torch.ops.amct._sim_get_platform_override()  # restored as it was
        try:
            for cores, ub in ((1, 0), (3, 0), (7, 57344)):
                torch.ops.amct._sim_set_platform(cores, ub if ub else saved[1])
                c, s = torch.ops.amct._mxfp4_quantize_emulated(x, "floor")  # the AscendC kernel
                self.assertTrue(torch.equal(c, want[0]) and torch.equal(s, want[1]), f"cores={cores} ub={ub}")
        finally:
            torch.ops.amct._sim_set_platform(*override)


@requires_op
class TestTiling(unittest.TestCase):
    """The quantizer's tiling covers every block once, fits the UB budget, respects the core count."""

    def test_tiling_invariants(self):
        import amct_ops
        # The vector UB budget: dav-2201 keeps [184 KB, 192 KB) for Select's scratch; dav-3510 has 248 KB.
        arch_budget = 253952 if amct_ops.build_info()["npu_arch"] == "dav-3510" else 188416
        saved = torch.ops.amct._sim_get_platform()
        override = torch.ops.amct._sim_get_platform_override()  # restored as it was
        try:
            for cores, ub in ((40, 196608), (1, 196608), (7, 57344), (3, 100000)):
                torch.ops.amct._sim_set_platform(cores, ub)
                for dtype in (0, 1, 2):
                    for blocks in (1, 63, 64, 65, 1000, 123457):
                        t = torch.ops.amct._svd_quant_tiling(dtype, blocks)
                        block_num, _, _, tile, total, per_core, last, budget, used = t
                        with self.subTest(cores=cores, ub=ub, dtype=dtype, blocks=blocks):
                            self.assertEqual(total, blocks)
                            self.assertTrue(1 <= block_num <= cores)
                            self.assertEqual((block_num - 1) * per_core + last, blocks)
                            self.assertTrue(0 < last <= per_core)
                            self.assertEqual(tile % 64, 0)
                            self.assertLessEqual(used, budget)
                            self.assertLessEqual(budget, min(ub, arch_budget))
        finally:
            torch.ops.amct._sim_set_platform(*override)


@requires_op
class TestDequantizer(unittest.TestCase):
    def test_round_trip_and_views(self):
        g = torch.Generator().manual_seed(8)
        x = torch.randn(6, 160, generator=g) * 100
        c, s = sq.mxfp4_quantize(x)
        for dtype in (None, BF16, F16, F32):
            with self.subTest(dtype=dtype):
                assert_bits_equal(self, sq.mxfp4_dequantize(c, s, dtype), ref.mxfp4_dequantize_ref(c, s, dtype))
        viewed = sq.mxfp4_dequantize(c.view(torch.float4_e2m1fn_x2), s.view(torch.float8_e8m0fnu))
        assert_bits_equal(self, viewed, sq.mxfp4_dequantize(c, s))
        padded = s.clone()
        padded[:, -1, 1] = 0xFF
        assert_bits_equal(self, sq.mxfp4_dequantize(c, padded), sq.mxfp4_dequantize(c, s))
        # Independent decode of every code with its block scale.
        out = sq.mxfp4_dequantize(c, s, F32)
        codes = [nibbles(row) for row in c.tolist()]
        sbs = s.reshape(6, -1).tolist()
        want = [[oracle.decode(codes[r][i]) * 2.0 ** (sbs[r][i // 32] - 127) for i in range(160)] for r in range(6)]
        self.assertEqual(out.tolist(), want)

    def test_overflow_and_fp16_rounding(self):
        def one(code, sb, dtype):
            c = torch.zeros(1, 16, dtype=U8)
            c[0, 0] = code
            s = torch.tensor([[[sb, 0]]], dtype=U8)
            return float(sq.mxfp4_dequantize(c, s, dtype)[0, 0])
        self.assertEqual(one(7, 253, BF16), float("inf"))
        self.assertEqual(one(2, 143, F16), float("inf"))
        self.assertEqual(one(1, 100, F16), 0.0)
        self.assertEqual(one(15, 252, F32), -6 * 2.0 ** 125)
        g = torch.Generator().manual_seed(9)
        bits = torch.randint(0, 0x10000, (32 * 512,), generator=g, dtype=torch.int32)
        x16 = bits[(bits & 0x7C00) != 0x7C00][: 32 * 256].to(torch.int16).view(F16).reshape(8, -1)
        for mode in MODES:
            c, s = sq.mxfp4_quantize(x16, mode)
            assert_bits_equal(self, sq.mxfp4_dequantize(c, s, F16), sq.mxfp4_dequantize(c, s, F32).to(F16))
            self.assertTrue(torch.equal(sq.mxfp4_dequantize(c, s, F16).double(), sq.mxfp4_dequantize(c, s, F32).double()))


def _raises(case, fn, message, exc=RuntimeError):
    with case.assertRaises(exc) as ctx:
        fn()
    case.assertIn(message, str(ctx.exception))


@requires_op
class TestErrors(unittest.TestCase):
    def devices(self):
        return ("cpu", "meta")

    def test_quantize_errors(self):
        for dev in self.devices():
            q = lambda x, m="round": sq.mxfp4_quantize(x.to(dev), m)  # noqa: E731
            _raises(self, lambda: q(torch.zeros(2, 32, dtype=torch.int32)),
                    "mxfp4_quantize: input must have dtype float16, bfloat16 or float32, got int32")
            _raises(self, lambda: q(torch.zeros(2, 32, dtype=torch.float64)),
                    "mxfp4_quantize: input must have dtype float16, bfloat16 or float32, got float64")
            _raises(self, lambda: q(torch.tensor(1.0)),
                    "mxfp4_quantize: input must have at least 1 dimension, got a 0-D tensor")
            _raises(self, lambda: q(torch.zeros(2, 48)),
                    "mxfp4_quantize: the last dimension K must be a multiple of 32, got K = 48")
            for mode in ("nearest", "ROUND"):
                _raises(self, lambda: q(torch.zeros(2, 32), mode),
                        f"mxfp4_quantize: round_mode must be one of 'round', 'rint', 'floor', got '{mode}'")

    def test_dequantize_errors(self):
        c, s = torch.zeros(4, 32, dtype=U8), torch.zeros(4, 1, 2, dtype=U8)
        for dev in self.devices():
            d = lambda c, s, t=None: sq.mxfp4_dequantize(c.to(dev), s.to(dev), t)  # noqa: E731
            _raises(self, lambda: d(c.to(torch.int8), s),
                    "mxfp4_dequantize: codes must have dtype uint8 or float4_e2m1fn_x2, got int8")
            _raises(self, lambda: d(c, s.float()),
                    "mxfp4_dequantize: scales must have dtype uint8 or float8_e8m0fnu, got float32")
            _raises(self, lambda: d(c, s, torch.float64),
                    "mxfp4_dequantize: dtype must be bfloat16, float16 or float32, got float64")
            _raises(self, lambda: d(torch.tensor(1, dtype=U8), s),
                    "mxfp4_dequantize: codes must have at least 1 dimension, got a 0-D tensor")
            _raises(self, lambda: d(torch.zeros(4, 24, dtype=U8), s),
                    "mxfp4_dequantize: codes.size(-1) = K/2 must be a multiple of 16, got 24")
            for bad in ((4, 2, 2), (4, 1), (5, 1, 2), (4, 1, 1)):
                _raises(self, lambda: d(c, torch.zeros(bad, dtype=U8)),
                        "mxfp4_dequantize: expected scales of shape [4, 1, 2] for codes of shape [4, 32], got "
                        + str(list(bad)))

    def svd_args(self, k=64, n=16, r=8, s=3):
        return [torch.zeros(2, s, k, dtype=BF16), torch.zeros(n, k // 2, dtype=U8),
                torch.zeros(n, (k + 63) // 64, 2, dtype=U8), torch.zeros(k, r, dtype=BF16), torch.zeros(r, n, dtype=BF16)]

    def check_svd(self, args, message, dev):
        _raises(self, lambda: sq.svd_quant(*[a.to(dev) for a in args]), message)

    def test_svd_quant_errors(self):
        wrong = "svd_quant: Data Type is wrong: "
        shapes = "svd_quant: invalid input shapes: "
        inc = "svd_quant: Input shapes are incompatible: expected "
        for dev in self.devices():
            def case(i, value, message):
                args = self.svd_args()
                args[i] = value
                self.check_svd(args, message, dev)
            a = self.svd_args()
            case(0, a[0].half(), wrong + "activation must be bfloat16, got float16")
            case(0, a[0].float(), wrong + "activation must be bfloat16, got float32")
            case(1, a[1].to(torch.int8), wrong + "weights must be uint8 or float4_e2m1fn_x2, got int8")
            case(2, a[2].float(), wrong + "scales must be uint8 or float8_e8m0fnu, got float32")
            case(3, a[3].float(), wrong + "down must be bfloat16, got float32")
            case(4, a[4].half(), wrong + "up must be bfloat16, got float16")
            case(0, torch.zeros(64, dtype=BF16), shapes + "activation must be at least 2-D (*, S, K), got 1-D shape [64]")
            case(1, torch.zeros(16, 32, 1, dtype=U8), shapes + "weights must be 2-D (N, K/2), got 3-D shape [16, 32, 1]")
            case(2, torch.zeros(16, 2, dtype=U8), shapes + "scales must be 3-D (N, ceil(K/64), 2), got 2-D shape [16, 2]")
            case(3, torch.zeros(64, dtype=BF16), shapes + "down must be 2-D (K, R), got 1-D shape [64]")
            case(4, torch.zeros(8, 16, 1, dtype=BF16), shapes + "up must be 2-D (R, N), got 3-D shape [8, 16, 1]")
            self.check_svd(self.svd_args(k=48), "svd_quant: K dimension should be a multiple of 32, got K = 48", dev)
            tail = " (K = 64, N = 16, R = 8)"
            case(4, torch.zeros(9, 16, dtype=BF16), inc + "up of shape [8, 16], got [9, 16]" + tail)
            case(3, torch.zeros(96, 8, dtype=BF16), inc + "down of shape [64, 8], got [96, 8]" + tail)
            case(1, torch.zeros(16, 64, dtype=U8), inc + "weights of shape [16, 32], got [16, 64]" + tail)
            case(1, torch.zeros(17, 32, dtype=U8), inc + "weights of shape [16, 32], got [17, 32]" + tail)
            for bad in ((16, 1, 1), (16, 0, 2), (16, 2, 2), (17, 1, 2)):
                case(2, torch.zeros(bad, dtype=U8), inc + f"scales of shape [16, 1, 2], got {list(bad)}" + tail)
            args = self.svd_args(r=0)
            self.check_svd(args, "svd_quant: rank R = down.size(1) must be >= 1, got 0", dev)
            # the documented check order
            self.check_svd([torch.zeros(64)] + self.svd_args()[1:], wrong + "activation must be bfloat16, got float32", dev)
            args = self.svd_args(k=48)
            args[1] = torch.zeros(16, 24, 1, dtype=U8)
            self.check_svd(args, shapes + "weights must be 2-D", dev)
            args = self.svd_args(k=48)
            args[3] = torch.zeros(5, 8, dtype=BF16)
            self.check_svd(args, "K dimension should be a multiple of 32, got K = 48", dev)
            args = self.svd_args()
            args[4], args[2] = torch.zeros(9, 16, dtype=BF16), torch.zeros(16, 3, 2, dtype=U8)
            self.check_svd(args, inc + "up of shape", dev)

    def test_mixed_devices(self):
        args = self.svd_args()
        args[3] = args[3].to("meta")
        _raises(self, lambda: sq.svd_quant(*args),
                "svd_quant: all inputs must be on the same device; activation is on cpu but down is on meta")


def golden_check(case, out, golden, what=""):
    """A7: max |a-g| <= 2^-6 max |g|, mean |a-g| <= 2^-8 mean |g|, identical NaN/Inf positions."""
    a, g = out.double(), golden.double()
    case.assertTrue(torch.equal(a.isnan(), g.isnan()), f"{what}: NaN positions")
    case.assertTrue(torch.equal(a.isinf(), g.isinf()), f"{what}: Inf positions")
    fin = torch.isfinite(g)
    if not bool(fin.any()):
        return
    err = (a[fin] - g[fin]).abs()
    gmax, gmean = float(g[fin].abs().max()), float(g[fin].abs().mean())
    case.assertLessEqual(float(err.max()), 2.0 ** -6 * gmax, f"{what}: max error")
    case.assertLessEqual(float(err.mean()), 2.0 ** -8 * gmean, f"{what}: mean error")


def ulp_check(case, out, golden, what=""):
    """A7 FP4 isolation: |a - g| <= ulp(g) elementwise."""
    a, g = out.double(), golden.double()
    e = torch.where(g == 0, torch.full_like(g, -133.0),
                    torch.floor(torch.log2(g.abs())).clamp(min=-126) - 7)
    bad = (a - g).abs() > torch.exp2(e)
    case.assertFalse(bool(bad.any()), f"{what}: {int(bad.sum())} elements beyond 1 ulp")


def svd_inputs(shape, n, r, seed=10, wscale=1.0, k=None):
    g = torch.Generator().manual_seed(seed)
    k = shape[-1]
    x = torch.randn(shape, generator=g).to(BF16)
    w = torch.randn(n, k, generator=g) * wscale
    codes, scales = ref.mxfp4_quantize_ref(w, "round")
    down = (torch.randn(k, r, generator=g) / math.sqrt(k)).to(BF16)
    up = torch.randn(r, n, generator=g).to(BF16)
    return x, codes, scales, down, up


def exact_fp4(x, codes, scales):
    """bf16 of the exact sum over blocks of 2^(sa+sw-254) * sum e2m1(a) e2m1(w) (fractions-free:
    float64 holds every partial sum here exactly for these small shapes)."""
    xc, xs = ref.mxfp4_quantize_ref(x.reshape(-1, x.shape[-1]), "round")
    k = x.shape[-1]
    xa = torch.tensor([[oracle.decode(c) for c in nibbles(row)] for row in xc.tolist()], dtype=torch.float64)
    wa = torch.tensor([[oracle.decode(c) for c in nibbles(row)] for row in codes.tolist()], dtype=torch.float64)
    sa = xs.reshape(xs.shape[0], -1)[:, : k // 32].double()
    sw = scales.reshape(scales.shape[0], -1)[:, : k // 32].double()
    total = torch.zeros(xa.shape[0], wa.shape[0], dtype=torch.float64)
    for b in range(k // 32):
        blk = xa[:, 32 * b:32 * b + 32] @ wa[:, 32 * b:32 * b + 32].T  # integers / 4: exact
        total += blk * torch.exp2(sa[:, b:b + 1] + sw[:, b].unsqueeze(0) - 254)
    return ref.bf16_rne(total)


def _gamma(n):
    """Higham's gamma_n for fp32: any order of an n-term fp32 sum errs by <= gamma_(n-1) sum |terms|."""
    u = 2.0 ** -24
    return n * u / (1 - n * u)


def pinned_bounds(x, codes, scales, down, up):
    """Elementwise [lo, hi] (bf16) that ``bf16(bf16(bf16(X D) U) + F)`` must lie in whatever the
    fp32 summation order of X D and of the U product, F the FP4 branch (exact: the float64
    reference with down = up = 0). Rounding is monotone, so each rounding point maps an interval
    to an interval: X D within gamma_K sum |x d| of its float64 value, rounded to bf16 at both
    ends; the U product over those intervals, widened by gamma_R; bf16; plus F; bf16. Where no
    bf16 rounding boundary lies within the fp32 error bound, lo == hi: the rounding points are
    pinned exactly (every element for K <= 128; the worst-case bound widens with K)."""
    k = x.shape[-1]
    xm = x.reshape(-1, k).double()
    d, u = down.double(), up.double()
    xd = xm @ d
    err = _gamma(k) * (xm.abs() @ d.abs())
    lo, hi = ref.bf16_rne(xd - err).double(), ref.bf16_rne(xd + err).double()
    up_pos, up_neg = u.clamp(min=0), u.clamp(max=0)
    low_min, low_max = lo @ up_pos + hi @ up_neg, hi @ up_pos + lo @ up_neg
    err2 = _gamma(u.shape[0]) * (torch.maximum(lo.abs(), hi.abs()) @ u.abs())
    zd, zu = torch.zeros_like(down), torch.zeros_like(up)
    fp4 = ref.svd_quant_ref(x, codes, scales, zd, zu).reshape(-1, up.shape[1]).double()
    out_lo = ref.bf16_rne(ref.bf16_rne(low_min - err2).double() + fp4)
    out_hi = ref.bf16_rne(ref.bf16_rne(low_max + err2).double() + fp4)
    shape = tuple(x.shape[:-1]) + (up.shape[1],)
    return out_lo.reshape(shape), out_hi.reshape(shape)


MAX_GOLDEN_FLIPS = 2.0 ** -12  # fraction of elements that may differ from the float64 golden


def pinned_check(case, out, x, codes, scales, down, up, what=""):
    """The A7 golden criteria; ``out`` within ``pinned_bounds`` elementwise (finite inputs); and
    ``out`` bit-identical to the float64 golden but for at most MAX_GOLDEN_FLIPS of the elements:
    a difference needs a bf16 rounding boundary within the actual fp32 error of X D (about
    sqrt(K) 2^-24 relative against a 2^-8 spacing; 1 of 360,448 elements at K = 2048), where a
    dropped or misplaced rounding point changes most elements."""
    golden = ref.svd_quant_ref(x, codes, scales, down, up)
    golden_check(case, out, golden, what)
    flips = float(bitwise_mismatches(out, golden).double().mean()) if out.numel() else 0.0
    case.assertLessEqual(flips, MAX_GOLDEN_FLIPS, f"{what}: fraction of elements differing from the golden")
    lo, hi = pinned_bounds(x, codes, scales, down, up)
    a, lo, hi = out.double(), lo.double(), hi.double()
    outside = ~((lo <= a) & (a <= hi))
    if bool(outside.any()):
        at = tuple(outside.nonzero()[0].tolist())
        case.fail(f"{what}: {int(outside.sum())} of {a.numel()} outside the pinned bounds; first at {at}: "
                  f"{float(a[at])} not in [{float(lo[at])}, {float(hi[at])}]")


def integer_inputs(shape, n, r, seed):
    """Integer activation, down and up (|v| <= 16) and MXFP4 weights: every fp32 sum of X D and
    of the U product is exact in any order (checked), so the op is bit-exact with reference.py,
    and X D has up to 15 significant bits, so its bf16 rounding changes the result."""
    g = torch.Generator().manual_seed(seed)
    k = shape[-1]
    x = torch.randint(-16, 17, shape, generator=g).to(BF16)
    codes, scales = ref.mxfp4_quantize_ref(torch.randn(n, k, generator=g), "round")
    down = torch.randint(-16, 17, (k, r), generator=g).to(BF16)
    up = torch.randint(-16, 17, (r, n), generator=g).to(BF16)
    xd = ref.bf16_rne(x.reshape(-1, k).double() @ down.double()).double()
    assert float((x.reshape(-1, k).double().abs() @ down.double().abs()).max()) < 2 ** 24
    assert float((xd.abs() @ up.double().abs()).max()) < 2 ** 24
    return x, codes, scales, down, up


def rounding_point_cases():
    """The rounding-point cases: (svd_quant arguments, the spec's exact result). (a) 3.015625 would mean the FP4 branch
    was not rounded to bf16 before the add; (b) 3.015625 would mean X D was not rounded."""
    x = torch.zeros(1, 64, dtype=BF16)
    x[0, 0], x[0, 32] = 1.0, 2.0 ** -8
    w = torch.zeros(1, 32, dtype=U8)
    w[0, 0], w[0, 16] = 0x06, 0x07
    s = torch.tensor([[[125, 125]]], dtype=U8)
    d = torch.zeros(64, 1, dtype=BF16)
    d[0, 0] = 2.015625
    a = ((x, w, s, d, torch.ones(1, 1, dtype=BF16)), 3.03125)
    x = torch.zeros(1, 32, dtype=BF16)
    x[0, 0], x[0, 1] = 1.0, 3 * 2.0 ** -10
    d = torch.zeros(32, 1, dtype=BF16)
    d[0, 0] = d[1, 0] = 1.0
    b = ((x, torch.zeros(1, 16, dtype=U8), torch.zeros(1, 1, 2, dtype=U8), d, torch.full((1, 1), 3.0, dtype=BF16)), 3.0)
    return [a, b]


@requires_op
class TestSvdQuant(unittest.TestCase):
    def test_basic(self):
        x, c, s, d, u = svd_inputs((2, 3, 64), 16, 8)
        out = sq.svd_quant(x, c, s, d, u)
        self.assertEqual((tuple(out.shape), out.dtype), ((2, 3, 16), BF16))
        pinned_check(self, out, x, c, s, d, u)

    def test_rounding_points_exact_on_integer_data(self):
        """With every sum exact in fp32, the op equals the float64 reference bit for bit: the
        roundings bf16(X D), bf16(. U), bf16(FP4) and the final bf16 sit where A5 puts them."""
        for shape, n, r in (((5, 96), 24, 8), ((2, 7, 256), 40, 16), ((33, 1024), 64, 32)):
            with self.subTest(shape=shape, n=n, r=r):
                x, c, s, d, u = integer_inputs(shape, n, r, seed=11 + r)
                want = ref.svd_quant_ref(x, c, s, d, u)
                unrounded = ref.bf16_rne(ref.bf16_rne((x.reshape(-1, shape[-1]).double() @ d.double()) @ u.double())
                                         .double() + ref.svd_quant_ref(x, c, s, 0 * d, 0 * u)
                                         .reshape(-1, n).double()).reshape(want.shape)
                self.assertFalse(torch.equal(unrounded, want), "the data distinguishes a dropped X D rounding")
                assert_bits_equal(self, sq.svd_quant(x, c, s, d, u), want, f"integer data {shape}")

    def test_rounding_points(self):
        for args, want in rounding_point_cases():
            self.assertEqual(float(sq.svd_quant(*args)), want)

    def test_fp4_isolation(self):
        for shape, n in (((7, 96), 40), ((33, 4096), 512), ((2, 5, 32), 8), ((2, 5, 160), 8)):
            with self.subTest(shape=shape):
                x, c, s, d, u = svd_inputs(shape, n, 4, seed=12)
                d, u = torch.zeros_like(d), torch.zeros_like(u)
                out = sq.svd_quant(x, c, s, d, u)
                # N(0, 1) data, K <= 4096: the fp32 accumulation is exact (A7), so the FP4 branch is
                # bit-identical to the float64 golden and to bf16 of the exact sum.
                assert_bits_equal(self, out, ref.svd_quant_ref(x, c, s, d, u), "vs golden")
                if shape[-1] <= 160:
                    assert_bits_equal(self, out.reshape(-1, n), exact_fp4(x, c, s), "vs exact sum")

    def test_issue_shapes_and_ranks(self):  # the issue's bar
        shapes = [(1, 64, 32, 1), (7, 96, 40, 32), (128, 2048, 2816, 32), (33, 4096, 512, 128),
                  (17, 128, 1, 24), (5, 32, 8, 4), (5, 96, 8, 4), (5, 160, 8, 4)]
        for i, (s_, k, n, r) in enumerate(shapes):
            for lead in ((), (2,), (2, 1)):  # batch ranks 0..2
                shape = lead + (s_, k)
                with self.subTest(shape=shape, n=n, r=r):
                    x, c, s, d, u = svd_inputs(shape, n, r, seed=14 + i)
                    out = sq.svd_quant(x, c, s, d, u)
                    self.assertEqual(tuple(out.shape), tuple(shape[:-1]) + (n,))
                    pinned_check(self, out, x, c, s, d, u, str(shape))

    def test_batch_independence(self):
        x, c, s, d, u = svd_inputs((2, 2, 5, 96), 24, 8, seed=15)
        a = sq.svd_quant(x, c, s, d, u)
        b = sq.svd_quant(x.reshape(20, 96), c, s, d, u)
        self.assertTrue(torch.equal(a.reshape(20, 24), b))
        x4 = x.reshape(20, 1, 96)[:4]
        stacked = torch.cat([sq.svd_quant(x4[i:i + 1], c, s, d, u) for i in range(4)])
        self.assertTrue(torch.equal(sq.svd_quant(x4, c, s, d, u), stacked))

    def test_empty_and_degenerate(self):
        _, c, s, d, u = svd_inputs((2, 3, 64), 16, 4, seed=16)
        self.assertEqual(tuple(sq.svd_quant(torch.zeros(0, 3, 64, dtype=BF16), c, s, d, u).shape), (0, 3, 16))
        self.assertEqual(tuple(sq.svd_quant(torch.zeros(2, 0, 64, dtype=BF16), c, s, d, u).shape), (2, 0, 16))
        out = sq.svd_quant(torch.ones(2, 3, 64, dtype=BF16), c[:0], s[:0], d, u[:, :0])
        self.assertEqual(tuple(out.shape), (2, 3, 0))
        out = sq.svd_quant(torch.ones(2, 3, 0, dtype=BF16), torch.zeros(16, 0, dtype=U8),
                           torch.zeros(16, 0, 2, dtype=U8), torch.zeros(0, 4, dtype=BF16), u)
        self.assertTrue(torch.equal(out, torch.zeros(2, 3, 16, dtype=BF16)))

    def test_strides_views_and_dtypes(self):
        x, c, s, d, u = svd_inputs((6, 96), 24, 8, seed=17)
        want = sq.svd_quant(x, c, s, d, u)
        xt = x.t().contiguous().t()
        wide = torch.cat([c, torch.zeros_like(c)], dim=1)[:, : c.shape[1]]
        dt = d.t().contiguous().t()
        self.assertFalse(xt.is_contiguous() or wide.is_contiguous() or dt.is_contiguous())
        self.assertTrue(torch.equal(sq.svd_quant(xt, wide, s, dt, u), want))
        self.assertTrue(torch.equal(
            sq.svd_quant(x, c.view(torch.float4_e2m1fn_x2), s.view(torch.float8_e8m0fnu), d, u), want))
        padded = s.clone()
        padded[:, -1, 1] = 0xFF
        self.assertTrue(torch.equal(sq.svd_quant(x, c, padded, d, u), want))

    def test_non_finite(self):
        x, c, s, d, u = svd_inputs((4, 64), 8, 4, seed=18)
        x[1, 5] = float("nan")
        out = sq.svd_quant(x, c, s, d, u)
        self.assertTrue(bool(out[1].isnan().all()))
        self.assertTrue(bool(torch.isfinite(out[[0, 2, 3]]).all()))
        x[1, 5] = 0.0
        s2 = s.clone()
        s2[3, 0, 0] = 0xFF
        out = sq.svd_quant(x, c, s2, d, u)
        self.assertTrue(bool(out[:, 3].isnan().all()))
        self.assertTrue(bool(torch.isfinite(out[:, [0, 1, 2, 4, 5, 6, 7]]).all()))


@requires_op
class TestMetaOpcheckCompile(unittest.TestCase):
    def test_meta_shapes(self):
        c, s = sq.mxfp4_quantize(torch.zeros(3, 5, 96, device="meta", dtype=F16))
        self.assertEqual((tuple(c.shape), tuple(s.shape), c.dtype), ((3, 5, 48), (3, 5, 2, 2), U8))
        out = sq.mxfp4_dequantize(c, s, F32)
        self.assertEqual((tuple(out.shape), out.dtype), ((3, 5, 96), F32))
        x, c, s, d, u = (t.to("meta") for t in svd_inputs((2, 3, 64), 16, 8))
        out = sq.svd_quant(x, c, s, d, u)
        self.assertEqual((tuple(out.shape), out.dtype, out.device.type), ((2, 3, 16), BF16, "meta"))

    def test_opcheck(self):
        x, c, s, d, u = svd_inputs((2, 3, 96), 16, 8, seed=23)
        g = torch.Generator().manual_seed(23)
        torch.library.opcheck(torch.ops.amct.mxfp4_quantize.default, (torch.randn(4, 96, generator=g), "rint"))
        torch.library.opcheck(torch.ops.amct.mxfp4_dequantize.default, (c, s, F32))
        torch.library.opcheck(torch.ops.amct.svd_quant.default, (x, c, s, d, u))

    def test_compile_linear(self):
        torch.manual_seed(3)
        layer = sq.SVDQuantLinear.from_linear(torch.nn.Linear(96, 40), rank=8)
        x = torch.randn(5, 96)
        compiled = torch.compile(layer, fullgraph=True)  # the default (inductor) backend
        self.assertTrue(torch.equal(compiled(x), layer(x)))
        x2 = torch.randn(2, 3, 96)  # another batch shape: a recompile (or a dynamic graph)
        self.assertTrue(torch.equal(compiled(x2), layer(x2)))


def outlier_weight(seed=0, n=128, k=256):
    """Base noise plus a rank-4 part with 4x its norm and four 20x input channels."""
    torch.manual_seed(seed)
    base = torch.randn(n, k) / 16
    low = torch.randn(n, 4) @ torch.randn(4, k)
    low *= 4 * base.norm() / low.norm()
    w = base + low
    w[:, [3, 77, 130, 201]] *= 20
    return w


@requires_op
class TestDecomposeAndLinear(unittest.TestCase):
    def test_decompose(self):
        g = torch.Generator().manual_seed(24)
        w = torch.randn(64, 96, generator=g)
        for smooth in (None, torch.rand(96, generator=g) + 0.5):
            wc, ws, down, up = sq.decompose(w, 8, smooth)
            self.assertEqual([t.dtype for t in (wc, ws, down, up)], [U8, U8, BF16, BF16])
            self.assertEqual([tuple(t.shape) for t in (wc, ws, down, up)], [(64, 48), (64, 2, 2), (96, 8), (8, 64)])
            wh = w.double() * (1 if smooth is None else smooth.double())
            sigma = torch.linalg.svdvals(wh)
            err = (wh.T - down.double() @ up.double()).norm()
            self.assertLessEqual(float(err), 1.01 * float(sigma[8:].square().sum().sqrt()) + 2 ** -7 * float(wh.norm()))
            residual = (wh - (down.double() @ up.double()).T).float()
            rc, rs = ref.mxfp4_quantize_ref(residual, "round")
            assert_bits_equal(self, sq.mxfp4_dequantize(wc, ws, F32), ref.mxfp4_dequantize_ref(rc, rs, F32))
        for args, text in (((w, 0), "rank"), ((w, 65), "rank"), ((torch.zeros(64, 48), 4), "K = 48"),
                           ((torch.zeros(2, 64, 96), 4), "2-D"), ((w, 4, torch.ones(95)), "(96,)"),
                           ((w, 4, torch.zeros(96)), "positive"), ((w, 4, -torch.ones(96)), "positive")):
            _raises(self, lambda: sq.decompose(*args), text, ValueError)

    def errors(self, layer, linear, x):
        weight, bias = linear.weight.detach().double(), linear.bias.detach().double()
        want = x.double() @ weight.T + bias
        got = layer(x).double()
        plain_c, plain_s = sq.mxfp4_quantize(linear.weight.detach())
        k, n = linear.in_features, linear.out_features
        plain = sq.svd_quant(x.to(BF16), plain_c, plain_s, torch.zeros(k, 1, dtype=BF16),
                             torch.zeros(1, n, dtype=BF16)).double() + bias
        rel = lambda a: float((a - want).norm() / want.norm())  # noqa: E731
        return rel(got), rel(plain)

    def linear_of(self, w):
        linear = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(w)
            linear.bias.copy_(0.1 * torch.randn(w.shape[0]))
        return linear

    def test_outlier_weight_l3(self):
        w = outlier_weight()
        linear = self.linear_of(w)
        x = torch.randn(64, 256).to(BF16)
        layer = sq.SVDQuantLinear.from_linear(linear, rank=32)
        svd_err, plain_err = self.errors(layer, linear, x.float())
        print(f"\nrank-4 outlier weight, relative Frobenius error: SVDQuantLinear {svd_err:.4f}, plain MXFP4 {plain_err:.4f}")
        self.assertLessEqual(svd_err, 0.04)
        self.assertLessEqual(svd_err, 0.5 * plain_err)

    def test_smoothing_l4(self):
        w = outlier_weight()
        linear = self.linear_of(w)
        x = torch.randn(64, 256)
        x[:, [5, 60, 111, 250]] *= 16
        x = x.to(BF16).float()
        lam = x.abs().amax(0).sqrt() / w.abs().amax(0).sqrt()
        layer = sq.SVDQuantLinear.from_linear(linear, rank=32, smooth=lam)
        smooth_err, _ = self.errors(layer, linear, x)
        plain_layer = sq.SVDQuantLinear.from_linear(linear, rank=32)
        unsmoothed_err, _ = self.errors(plain_layer, linear, x)
        print(f"\nsmoothing, relative error: smoothed {smooth_err:.4f}, unsmoothed {unsmoothed_err:.4f}")
        self.assertLessEqual(smooth_err, 0.03)
        self.assertLess(smooth_err, 0.75 * unsmoothed_err, "smoothing helps (typical 0.010-0.013 vs 0.020-0.031)")

    def test_forward_is_the_documented_composition(self):
        """forward(x) bit for bit: bf16(float32(x) / smooth) (or bf16(x)), svd_quant on the rows
        of the buffers decompose() made, + bias in float32, x's dtype and leading shape."""
        g = torch.Generator().manual_seed(28)
        w = torch.randn(48, 128, generator=g)
        lam = torch.rand(128, generator=g) + 0.5
        for smooth in (None, lam):
            for bias in (True, False):
                linear = torch.nn.Linear(128, 48, bias=bias)
                with torch.no_grad():
                    linear.weight.copy_(w)
                layer = sq.SVDQuantLinear.from_linear(linear, rank=8, smooth=smooth)
                parts = sq.decompose(w, 8, smooth)
                for name, want in zip(("w_codes", "w_scales", "down", "up"), parts):
                    assert_bits_equal(self, getattr(layer, name), want, name)
                for dtype in (F32, BF16, F16):
                    for shape in ((128,), (2, 3, 128)):
                        with self.subTest(smooth=smooth is not None, bias=bias, dtype=dtype, shape=shape):
                            x = (torch.randn(shape, generator=g) * 3).to(dtype)
                            xs = x.to(BF16) if smooth is None else (x.float() / lam).to(BF16)
                            y = torch.ops.amct.svd_quant(xs.reshape(-1, 128), *parts)
                            if bias:
                                y = y.float() + linear.bias.detach().float()
                            want = y.to(dtype).reshape(shape[:-1] + (48,))
                            assert_bits_equal(self, layer(x), want, "forward")

    def test_module(self):
        torch.manual_seed(27)
        for bias in (True, False):
            linear = torch.nn.Linear(256, 128, bias=bias)
            lam = torch.rand(256) + 0.5
            layer = sq.SVDQuantLinear.from_linear(linear, rank=32, smooth=lam)
            self.assertEqual(layer.extra_repr(), f"in_features=256, out_features=128, rank=32, bias={bias}, smooth=True")
            x3 = torch.randn(2, 3, 256)
            y3 = layer(x3)
            self.assertEqual((tuple(y3.shape), y3.dtype), ((2, 3, 128), F32))
            y1 = layer(x3[0, 0])
            self.assertEqual(tuple(y1.shape), (128,))
            self.assertTrue(torch.equal(y1, y3[0, 0]))
            fresh = sq.SVDQuantLinear(256, 128, rank=32, bias=bias, has_smooth=True)
            fresh.load_state_dict(layer.state_dict())
            self.assertTrue(torch.equal(fresh(x3), y3))
            keys = {"w_codes", "w_scales", "down", "up", "smooth"} | ({"bias"} if bias else set())
            self.assertEqual(set(layer.state_dict()), keys)
            _raises(self, lambda: layer(torch.randn(3, 255)),
                    "SVDQuantLinear: expected input with last dimension 256, got 255")
        plain = sq.SVDQuantLinear.from_linear(torch.nn.Linear(64, 32), rank=4)
        self.assertEqual(plain.extra_repr(), "in_features=64, out_features=32, rank=4, bias=True, smooth=False")
        self.assertEqual(plain(torch.randn(3, 64, dtype=BF16)).dtype, BF16)
        _raises(self, lambda: sq.SVDQuantLinear(48, 32), "in_features", ValueError)


def _npu_ready():
    if sq is None:
        return False
    import amct_ops
    return amct_ops.npu_available()


@unittest.skipUnless(_npu_ready(), "needs an NPU build and device (amct_ops.npu_available())")
class TestNpu(unittest.TestCase):  # never run on this project's CI machines
    def test_quantize_matches_reference(self):
        x = torch.randn(64, 96).to(BF16)
        for mode in MODES:
            c, s = sq.mxfp4_quantize(x.to("npu"), mode)
            rc, rs = ref.mxfp4_quantize_ref(x, mode)
            assert_bits_equal(self, c.cpu(), rc, f"codes {mode}")
            assert_bits_equal(self, s.cpu(), rs, f"scales {mode}")

    def test_svd_quant_cases(self):
        soc = torch.npu.get_device_name()
        for shape, n, r in (((2, 3, 64), 16, 8), ((7, 96), 40, 32), ((2, 5, 160), 8, 4)):
            x, c, s, d, u = svd_inputs(shape, n, r, seed=28)
            args = [t.to("npu") for t in (x, c, s, d, u)]
            if not soc.startswith("Ascend950"):
                _raises(self, lambda: sq.svd_quant(*args), "svd_quant: ")  # not an Ascend950: refused
                continue
            golden_check(self, sq.svd_quant(*args).cpu(), ref.svd_quant_ref(x, c, s, d, u), str(shape))
            z = [args[0], args[1], args[2], torch.zeros_like(args[3]), torch.zeros_like(args[4])]
            ulp_check(self, sq.svd_quant(*z).cpu(), ref.svd_quant_ref(x, c, s, d * 0, u * 0), "isolated")


if __name__ == "__main__":
    unittest.main()
