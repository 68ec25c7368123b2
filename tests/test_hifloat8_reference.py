"""Checks of the HiFloat8 executable spec ``reference.py`` (docs/hifloat8.md C7, D1, D2).

D1: the reference against every golden vector (all 256 decodes, all 93 encode vectors).
D2: the reference against the independent float64 nearest-value oracle of ``hif8_oracle.py`` on
every fp16 and bf16 pattern, and the fp32 fake-quant on >= 1M random values plus the edge set.

This module needs no compiled code: if ``amct_ops`` is not importable (not built yet), the
reference is loaded straight from the source tree.
"""

import ast
import sys
import unittest
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hif8_oracle as ho  # noqa: E402
from amct_testing import load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REFERENCE_SRC = REPO / "hifloat8_cast" / "python" / "hifloat8_cast" / "reference.py"


def _load_reference():
    try:
        from amct_ops.hifloat8_cast import reference
        return reference
    except Exception:  # not built (or not loadable): use the source tree
        return load_source_module("_hif8_reference_src", REFERENCE_SRC)


ref = _load_reference()

F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8


# --- helpers ----------------------------------------------------------------------------------

BitsMixin, patterns16, ubits = ho.BitsMixin, ho.patterns16, ho.ubits


def as_np_float(t):
    """A float tensor as a numpy float array of the same width (bf16 -> its fp32 widening)."""
    if t.dtype == BF16:
        return t.float().numpy()
    return t.numpy()


# --- D1: reference vs golden vectors ----------------------------------------------------------

class TestReferenceVsVectors(BitsMixin, unittest.TestCase):
    """D1: all 256 decodes (fp16 and bf16 bits; the value in fp32) and all 93 encode vectors."""

    @classmethod
    def setUpClass(cls):
        cls.vec = ho.load_vectors()
        cls.codes = torch.arange(256, dtype=torch.int32).to(U8)

    def test_vector_counts(self):
        self.assertEqual(len(self.vec["decode"]), 256)
        self.assertEqual([ho.hexint(v["code"]) for v in self.vec["decode"]], list(range(256)))
        self.assertEqual(len(self.vec["encode_fp16"]) + len(self.vec["encode_bf16"]), 93)

    def _check_decode16(self, dtype, key):
        out = ref.decode_from_hifloat8_ref(self.codes, dtype)
        self.assertEqual(out.dtype, dtype)
        got = ubits(out)
        want = np.array([ho.hexint(v[key]) for v in self.vec["decode"]], dtype=np.uint16)
        # The reference writes upstream's NaN pattern 7FFF too, so all 256 patterns are equal.
        np.testing.assert_array_equal(got, want, err_msg=f"decode to {dtype}")
        self.assertEqual(got[0x80], 0x7FFF)

    def test_decode_fp16_bits(self):
        self._check_decode16(F16, "fp16_bits")

    def test_decode_bf16_bits(self):
        self._check_decode16(BF16, "bf16_bits")

    def test_decode_fp32_values(self):
        out = ref.decode_from_hifloat8_ref(self.codes, F32)
        self.assertEqual(out.dtype, F32)
        want = np.array([ho.parse_exact(v["exact"]) for v in self.vec["decode"]])
        # The vectors' decimal value strings agree with their exact n*2^e form.
        for v in self.vec["decode"]:
            if v["kind"] != "nan":
                self.assertEqual(float(v["value"]), ho.parse_exact(v["exact"]), v["code"])
        self.assertBitsEqual(out.numpy(), want.astype(np.float32), what="decode to fp32")
        self.assertEqual(ubits(out)[0x80], 0x7FFF0000)  # C3: the fp32 NaN pattern

    def test_decode_default_dtype_is_bf16(self):
        for out in (ref.decode_from_hifloat8_ref(self.codes),
                    ref.decode_from_hifloat8_ref(self.codes, None)):
            self.assertEqual(out.dtype, BF16)
            want = np.array([ho.hexint(v["bf16_bits"]) for v in self.vec["decode"]], np.uint16)
            np.testing.assert_array_equal(ubits(out), want)

    def _check_encode(self, dtype, key):
        rows = self.vec[key]
        bits = np.array([ho.hexint(r["in_bits"]) for r in rows], dtype=np.uint16)
        x = patterns16(bits, dtype)
        # The vectors' in_value strings describe the same inputs.
        vals = ho.fp16_values(bits) if dtype == F16 else ho.bf16_values(bits)
        for r, v in zip(rows, vals):
            self.assertTrue(float(r["in_value"]) == v or (np.isnan(v) and r["in_value"] == "nan"),
                            r)
        codes = ref.encode_to_hifloat8_ref(x)
        self.assertEqual(codes.dtype, U8)
        want = np.array([ho.hexint(r["code"]) for r in rows], dtype=np.uint8)
        self.assertBitsEqual(codes.numpy(), want, inputs=[r["in_bits"] for r in rows],
                             what=f"encode {key}")
        # The 'decoded' column is the fake-quant result in the same dtype.
        fq = as_np_float(ref.hifloat8_fake_quant_ref(x)).astype(np.float64)
        dec = np.array([float(r["decoded"]) for r in rows])
        self.assertBitsEqual(fq, dec, inputs=[r["in_bits"] for r in rows],
                             what=f"fake-quant {key}")

    def test_encode_fp16_vectors(self):
        self._check_encode(F16, "encode_fp16")

    def test_encode_bf16_vectors(self):
        self._check_encode(BF16, "encode_bf16")


# --- D2: reference vs the independent oracle ---------------------------------------------------

class TestReferenceVsOracle(BitsMixin, unittest.TestCase):
    """D2: the oracle equals the reference on every fp16 and bf16 pattern, and on fp32 fake-quant."""

    @classmethod
    def setUpClass(cls):
        cls.o = ho.oracle()

    def test_oracle_matches_encode_vectors(self):
        # The oracle is checked on its own against the upstream-derived vectors first.
        vec = ho.load_vectors()
        for key, conv in (("encode_fp16", ho.fp16_values), ("encode_bf16", ho.bf16_values)):
            bits = np.array([ho.hexint(r["in_bits"]) for r in vec[key]], dtype=np.uint16)
            want = np.array([ho.hexint(r["code"]) for r in vec[key]], dtype=np.uint8)
            np.testing.assert_array_equal(self.o.encode(conv(bits)), want, err_msg=key)

    def test_oracle_table(self):
        self.assertEqual(len(self.o.mags), 127)
        self.assertEqual(self.o.mags[0], 0.0)
        self.assertEqual(self.o.mags[1], 2.0 ** -22)
        self.assertEqual(self.o.max_finite, 32768.0)

    def _exhaustive16(self, dtype, conv):
        bits = ho.all_fp16_bits()
        x = patterns16(bits, dtype)
        got = ref.encode_to_hifloat8_ref(x).numpy()
        want = self.o.encode(conv(bits))
        self.assertBitsEqual(got, want, inputs=[hex(b) for b in bits],
                             what=f"encode {dtype} vs oracle")
        # fp16/bf16 fake-quant: the oracle's nearest value, in the same dtype (all exact).
        fq = as_np_float(ref.hifloat8_fake_quant_ref(x)).astype(np.float64)
        self.assertBitsEqual(fq, self.o.quantize(conv(bits)), inputs=[hex(b) for b in bits],
                             what=f"fake-quant {dtype} vs oracle")

    def test_encode_all_fp16_patterns(self):
        self._exhaustive16(F16, ho.fp16_values)

    def test_encode_all_bf16_patterns(self):
        self._exhaustive16(BF16, ho.bf16_values)

    def _check_fp32(self, x32, what):
        got = ref.hifloat8_fake_quant_ref(torch.from_numpy(x32.copy())).numpy()
        self.assertBitsEqual(got, self.o.fake_quant_fp32(x32), inputs=x32.view(np.uint32),
                             what=what)

    def test_fake_quant_fp32_edge_set(self):
        edge = ho.fp32_edge_set()
        self.assertGreater(len(edge), 1500)
        self._check_fp32(edge, "fp32 fake-quant edge set")

    def test_fake_quant_fp32_random(self):
        rng = np.random.default_rng(20240801)
        n = 1 << 19
        scaled = (rng.standard_normal(n) * 10.0 ** rng.uniform(-9, 6, n)).astype(np.float32)
        patterns = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        x = np.concatenate([scaled, patterns])
        self.assertGreaterEqual(len(x), 1_000_000)
        # The uniform patterns do contain subnormals, NaNs and Infs.
        exp = (x.view(np.uint32) >> 23) & 0xFF
        self.assertGreater(int(((exp == 0) & (x != 0)).sum()), 100)
        self.assertGreater(int(np.isnan(x).sum()), 100)
        self._check_fp32(x, "fp32 fake-quant random")

    def test_fake_quant_fp32_examples(self):
        # A6 fp32 rows: encoded directly, not through bf16.
        rows = [(0x3F87FFFF, 1.0), (0x46DFFFFF, 24576.0), (0x7F7FFFFF, 32768.0),
                (0xFF7FFFFF, -32768.0), (0x80000000, 0.0), (0x80000001, 0.0),
                (0xB4000000, -(2.0 ** -22)), (0xB3FFFFFF, 0.0), (0x00000001, 0.0)]
        x = np.array([r[0] for r in rows], dtype=np.uint32).view(np.float32)
        got = ref.hifloat8_fake_quant_ref(torch.from_numpy(x.copy())).numpy()
        self.assertBitsEqual(got, np.array([r[1] for r in rows], dtype=np.float32),
                             inputs=[hex(r[0]) for r in rows], what="A6 fp32 rows")
        # Through bf16 the first three would have given 1.125, 32768 and +Inf.
        via_bf16 = ref.hifloat8_fake_quant_ref(torch.from_numpy(x[:3].copy()).to(BF16)).float()
        self.assertEqual(via_bf16.tolist(), [1.125, 32768.0, float("inf")])


# --- C7 / C5: the reference's own contract ------------------------------------------------------

class TestReferenceContract(BitsMixin, unittest.TestCase):
    """Shapes, strides, errors and purity of the reference itself."""

    def test_error_messages(self):
        cases = [
            (lambda: ref.encode_to_hifloat8_ref(torch.zeros(2, dtype=F32)),
             "encode_to_hifloat8: input dtype must be float16 or bfloat16, got float32"),
            (lambda: ref.encode_to_hifloat8_ref(torch.zeros(2, dtype=torch.int32)),
             "encode_to_hifloat8: input dtype must be float16 or bfloat16, got int32"),
            (lambda: ref.decode_from_hifloat8_ref(torch.zeros(2, dtype=F16)),
             "decode_from_hifloat8: input dtype must be uint8, got float16"),
            (lambda: ref.decode_from_hifloat8_ref(torch.zeros(2, dtype=F32)),
             "decode_from_hifloat8: input dtype must be uint8, got float32"),
            (lambda: ref.decode_from_hifloat8_ref(torch.zeros(2, dtype=U8), torch.int32),
             "decode_from_hifloat8: dtype must be float16, bfloat16 or float32, got int32"),
            (lambda: ref.decode_from_hifloat8_ref(torch.zeros(2, dtype=U8), torch.float64),
             "decode_from_hifloat8: dtype must be float16, bfloat16 or float32, got float64"),
            (lambda: ref.hifloat8_fake_quant_ref(torch.zeros(2, dtype=torch.float64)),
             "hifloat8_fake_quant: input dtype must be float16, bfloat16 or float32, got float64"),
            (lambda: ref.hifloat8_fake_quant_ref(torch.zeros(2, dtype=torch.int32)),
             "hifloat8_fake_quant: input dtype must be float16, bfloat16 or float32, got int32"),
        ]
        for fn, msg in cases:
            with self.subTest(msg=msg):
                with self.assertRaises(RuntimeError) as cm:
                    fn()
                self.assertEqual(str(cm.exception), msg)

    def test_shapes_and_strides(self):
        torch.manual_seed(0)
        base = torch.randn(6, 8, 10) * 50
        views = {
            "0-d": base[1, 2, 3],
            "1-d": base.reshape(-1),
            "transposed": base.transpose(0, 2),
            "step-sliced": base[::2, :, ::3],
            "expanded": base[:, :1, :].expand(6, 5, 10),
            "empty": base[:, :0],
        }
        for name, v in views.items():
            for dtype in (F16, BF16, F32):
                with self.subTest(view=name, dtype=dtype):
                    xv = v.to(dtype)
                    fq = ref.hifloat8_fake_quant_ref(xv)
                    self.assertEqual(fq.shape, xv.shape)
                    self.assertEqual(fq.dtype, dtype)
                    self.assertTrue(fq.is_contiguous())
                    want = ref.hifloat8_fake_quant_ref(xv.contiguous().reshape(-1))
                    self.assertBitsEqual(as_np_float(fq).reshape(-1), as_np_float(want),
                                         what=f"fake-quant {name}")
                    if dtype != F32:
                        c = ref.encode_to_hifloat8_ref(xv)
                        self.assertEqual((c.shape, c.dtype), (xv.shape, U8))
                        self.assertTrue(c.is_contiguous())
                        d = ref.decode_from_hifloat8_ref(c, F32)
                        self.assertEqual((d.shape, d.dtype), (xv.shape, F32))

    def test_requires_grad_input(self):
        x = torch.randn(5, dtype=F32, requires_grad=True)
        self.assertFalse(ref.hifloat8_fake_quant_ref(x).requires_grad)
        self.assertFalse(ref.encode_to_hifloat8_ref(x.detach().half().requires_grad_()).requires_grad)

    def test_pure_pytorch(self):
        # C7: imports only torch (and the standard library) and never touches torch.ops.
        tree = ast.parse(Path(ref.__file__).read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or ".").split(".")[0])
            elif isinstance(node, ast.Attribute):
                self.assertNotIn(node.attr, ("ops", "load_library", "_C"), ast.dump(node))
        self.assertLessEqual(imported, {"functools", "torch"})

    def test_deterministic(self):
        x = torch.from_numpy(np.random.default_rng(1).integers(0, 1 << 32, 4096, dtype=np.uint64)
                             .astype(np.uint32).view(np.int32)).view(F32)
        a = ubits(ref.hifloat8_fake_quant_ref(x))
        b = ubits(ref.hifloat8_fake_quant_ref(x.clone()))
        np.testing.assert_array_equal(a, b)


if __name__ == "__main__":
    unittest.main()
