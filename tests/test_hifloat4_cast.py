"""Tests of the compiled ``hifloat4_cast`` operators (docs/hifloat4.md, the Tests table, D2-D12).

Every expected value comes from the executable spec ``reference.py`` (loaded from the source
tree), from the golden vectors, or from constants written in the spec -- never from the
operator under test. "Bitwise equal" means identical bits where the expected value is not NaN,
and NaN exactly where it is NaN (payloads are not compared).

Run from the repository root, after ``bash ops_build.sh``::

    PYTHONPATH=staging python -m unittest tests.test_hifloat4_cast
    PYTHONPATH=staging python -m pytest tests/test_hifloat4_cast.py

The whole module is skipped while ``amct_ops.hifloat4_cast`` does not exist (the operator is
not built yet); a package that exists but fails to import is an error, not a skip. D12 (NPU)
runs only where ``amct_ops.npu_available()``.

The CPU ops are native C++; the AscendC kernel (what the NPU runs) is tested through the kernel
sim as the private ops ``_hifloat4_*_emulated``: the ``kernel=True`` paths below, D6 (cores, UB
sizes: properties of the kernel) and the launch counts. tests/test_hifloat4_native.py holds the
two bit for bit to each other, per SIMD path, and tests the out= overloads.

Map to the Tests table of docs/hifloat4.md and the issue's bars: D2 TestD2Vectors; D3 TestD3Fuzz (>= 2M elements per dtype,
qdim -1, 0, a middle dim and their other forms); D4 TestD4Identity (C5 on every D3 input);
D5 TestD5Layout; D6 TestD6Independence (threads, 1 / 3 / 8 cores, 40 KB UB, odd row lengths);
D7 TestD7DeviceHealth; D8 TestD8Errors (C6 texts); D9 TestD9Shapes (ranks, strides, empty
inputs without a launch, huge rows, Meta); D10 TestD10Autograd / TestD10OpCheck /
TestD10Compile; D11 TestD11UpstreamParity; D12 TestD12Npu.
"""

import contextlib
import functools
import importlib
import importlib.util
import math
import sys
import unittest
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hif4_oracle as ho  # noqa: E402
from amct_testing import assert_compiled_ste_backward, find_op_package, num_threads  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REFERENCE_SRC = REPO / "hifloat4_cast" / "python" / "hifloat4_cast" / "reference.py"


_OP_PACKAGE, _SKIP_REASON = find_op_package("hifloat4_cast")
HAVE_OP = _OP_PACKAGE is not None
amct_ops = importlib.import_module("amct_ops") if HAVE_OP else None

if HAVE_OP:
    from amct_ops import _sim  # noqa: E402
    from amct_ops.hifloat4_cast import (  # noqa: E402
        hifloat4_fake_quant,
        hifloat4_pack,
        hifloat4_unpack,
    )


def _load_reference():
    """The executable spec: the source tree's reference.py (else the installed package's)."""
    if REFERENCE_SRC.is_file():
        spec = importlib.util.spec_from_file_location("_hif4_reference_src", REFERENCE_SRC)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return importlib.import_module("amct_ops.hifloat4_cast.reference")


ref = _load_reference()

F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
DTYPES = (F16, BF16, F32)
NAME = ho.DTYPE_NAMES


# --- the ways in: the dispatcher ops and the documented wrappers ------------------------------

def fq_paths(kernel=False):
    """The ways into fake-quant; with ``kernel``, also the AscendC kernel run through the kernel
    sim (the private CPU-only op ``_hifloat4_fake_quant_emulated``, no autograd, no Meta)."""
    ops = torch.ops.amct
    paths = (("torch.ops.amct", lambda x, qdim=-1: ops.hifloat4_fake_quant(x, qdim)),
             ("wrapper", lambda x, qdim=-1: hifloat4_fake_quant(x, qdim)))
    if kernel:
        paths += (("emulated kernel", lambda x, qdim=-1: ops._hifloat4_fake_quant_emulated(x, qdim)),)
    return paths


def pack_paths(kernel=False):
    paths = (("torch.ops.amct", torch.ops.amct.hifloat4_pack), ("wrapper", hifloat4_pack))
    if kernel:
        paths += (("emulated kernel", torch.ops.amct._hifloat4_pack_emulated),)
    return paths


def unpack_paths(kernel=False):
    ops = torch.ops.amct
    paths = (("torch.ops.amct", lambda s, v, dtype=None: ops.hifloat4_unpack(s, v, dtype)),
             ("wrapper", lambda s, v, dtype=None: hifloat4_unpack(s, v, dtype)))
    if kernel:
        paths += (("emulated kernel", lambda s, v, dtype=None: ops._hifloat4_unpack_emulated(s, v, dtype)),)
    return paths


# --- helpers -----------------------------------------------------------------------------------

def from_bits(bits, dtype):
    return ho.to_torch(np.asarray(bits).reshape(-1), dtype)


def randn(shape, dtype=F32, seed=0, spread=8):
    """randn times per-element 2^U(-spread, spread), in ``dtype`` (deterministic)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * torch.exp2(
        torch.randint(-spread, spread + 1, shape, generator=g).float())
    return x.to(dtype)


def blocks_input(dtype, n_blocks, seed):
    """(n_blocks, 64) blocks of every D3 data kind, as a tensor of ``dtype``."""
    bits = ho.BlockGen(NAME[dtype], seed).mixture(n_blocks)
    return from_bits(bits, dtype).reshape(n_blocks, 64)


def arrange(blocks, shape, qdim):
    """Lay (n, 64) blocks out along ``qdim`` of a tensor of ``shape`` (contiguous)."""
    rank = len(shape)
    d = qdim % rank
    last_shape = tuple(s for i, s in enumerate(shape) if i != d) + (shape[d],)
    return blocks.reshape(last_shape).movedim(-1, d).contiguous()


def first_line(exc):
    lines = str(exc).splitlines()
    return lines[0].rstrip() if lines else ""


def e6m2_value(b):
    """A4: the block scale of E6M2 byte b (spec formula, in float64)."""
    return 2.0 ** ((b >> 2) - 48) * (1 + (b & 3) / 4)


@unittest.skipUnless(HAVE_OP, _SKIP_REASON or "amct_ops.hifloat4_cast is not available")
class Base(ho.BitsMixin, unittest.TestCase):

    def assertBytesEqual(self, actual, expected, what=""):
        actual, expected = actual.detach().cpu(), expected.detach().cpu()
        self.assertEqual(actual.dtype, U8, f"{what}: dtype")
        self.assertEqual(tuple(actual.shape), tuple(expected.shape), f"{what}: shape")
        bad = (actual != expected).reshape(-1)
        if bool(bad.any()):
            idx = torch.nonzero(bad).reshape(-1)[:8].tolist()
            fa, fe = actual.reshape(-1), expected.reshape(-1)
            rows = [f"[{i}] got={int(fa[i]):#04x} want={int(fe[i]):#04x}" for i in idx]
            self.fail(f"{what}: {int(bad.sum())} of {bad.numel()} bytes differ; " + "; ".join(rows))

    def assertPackEqual(self, got, x, what=""):
        """``got`` = (scale, value) from an op equals the reference's pack of ``x``."""
        want_s, want_v = ref.hifloat4_pack_ref(x)
        self.assertIsInstance(got, (tuple, list), what)
        self.assertEqual(len(got), 2, what)
        self.assertBytesEqual(got[0], want_s, f"{what}: scale")
        self.assertBytesEqual(got[1], want_v, f"{what}: value")
        self.assertTrue(got[0].is_contiguous() and got[1].is_contiguous(), f"{what}: contiguous")


# =============================================================================================
# D2 ops vs the golden vectors
# =============================================================================================

def vector_input(v):
    return from_bits([ho.hexint(b) for b in v["input_bits"]], v["dtype"]).reshape(1, 64)


def vector_bytes(v):
    s = torch.tensor([ho.hexint(b) for b in v["pack_scale_bytes"]], dtype=torch.int32)
    q = torch.tensor([ho.hexint(b) for b in v["pack_value_bytes"]], dtype=torch.int32)
    return s.to(U8).reshape(1, 1, 4), q.to(U8).reshape(1, 32)


def vector_out(v, key="expected_out_dtype_bits", dtype=None):
    return from_bits([ho.hexint(b) for b in v[key]], dtype or v["dtype"]).reshape(1, 64)


class TestD2Vectors(Base):
    """All 15 vectors through all three ops and both ways in."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.vectors = ho.load_vectors()
        assert len(cls.vectors) == 15

    def test_fake_quant(self):
        for v in self.vectors:
            x = vector_input(v)
            want = vector_out(v)
            self.assertBitsEqual(ref.hifloat4_fake_quant_ref(x), want, what="reference")
            for name, fq in fq_paths(kernel=True):
                with self.subTest(vector=v["name"], path=name):
                    out = fq(x)
                    self.assertEqual(out.dtype, x.dtype)
                    self.assertBitsEqual(out, want, what=f"{name} {v['name']}")
            # The schema default qdim = -1, and qdim given by keyword.
            self.assertBitsEqual(torch.ops.amct.hifloat4_fake_quant(x), want, what="default qdim")
            self.assertBitsEqual(torch.ops.amct.hifloat4_fake_quant(x, qdim=1), want, what="qdim=1")
            self.assertBitsEqual(hifloat4_fake_quant(x), want, what="wrapper default qdim")

    def test_pack(self):
        for v in self.vectors:
            want_s, want_v = vector_bytes(v)
            for name, pack in pack_paths(kernel=True):
                with self.subTest(vector=v["name"], path=name):
                    scale, value = pack(vector_input(v))
                    self.assertBytesEqual(scale, want_s, f"{name} {v['name']} scale")
                    self.assertBytesEqual(value, want_v, f"{name} {v['name']} value")

    def test_block_scale_and_flags_from_pack(self):
        # S (non-poisoned blocks), l2 and l3 read back from the op's bytes.
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                scale, _ = torch.ops.amct.hifloat4_pack(vector_input(v))
                b = [int(t) for t in scale.reshape(-1)]
                if b[0] != 0xFF:
                    self.assertEqual(e6m2_value(b[0]), float(v["block_scale_e6m2"]))
                self.assertEqual([(b[1] >> (7 - j)) & 1 for j in range(8)], v["l2_per8_bits"])
                l3 = [(b[2 + i // 8] >> (7 - i % 8)) & 1 for i in range(16)]
                self.assertEqual(l3, v["l3_per4_bits"])

    def test_unpack(self):
        for v in self.vectors:
            s, q = vector_bytes(v)
            dtype = ho.TORCH_DTYPES[v["dtype"]]
            want32 = vector_out(v, "expected_out_f32_bits", "float32")
            want = vector_out(v)
            for name, unpack in unpack_paths(kernel=True):
                with self.subTest(vector=v["name"], path=name):
                    u32 = unpack(s, q)
                    self.assertEqual(u32.dtype, F32)
                    self.assertBitsEqual(u32, ref.hifloat4_unpack_ref(s, q), what="vs reference")
                    fp32_equal = not bool(ho.bitwise_mismatches(u32, want32).any())
                    self.assertEqual(fp32_equal, v["checks"]["unpack_fp32_bit_equal_ref"])
                    self.assertBitsEqual(u32.to(dtype), want, what=f"{name} cast")
                    self.assertTrue(v["checks"]["unpack_cast_to_dtype_bit_equal_ref"])
                    self.assertBitsEqual(unpack(s, q, dtype), want, what=f"{name} dtype=")
                    self.assertBitsEqual(unpack(s, q, F32), u32, what=f"{name} dtype=fp32")
            self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(s, q, dtype=dtype), want,
                                 what="keyword dtype")
            self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(s, q), ref.hifloat4_unpack_ref(s, q),
                                 what="default dtype")


# =============================================================================================
# D3 fuzzing vs the reference, D4 the C5 identity on the same inputs
# =============================================================================================

# (shape, qdim): the -1 / last, 0 / -rank and middle dims, each in both forms. Every shape has
# a second dim whose length is a multiple of 64, so quantising along a wrong dim gives wrong
# bits instead of an error. Each case holds 368,640 elements, so a dtype gets 2,211,840.
FUZZ_CASES = (
    ((64, 9, 640), -1), ((64, 9, 640), 2),
    ((640, 9, 64), 0), ((640, 9, 64), -3),
    ((10, 576, 64), 1), ((10, 576, 64), -2),
)
FUZZ_SEEDS = {F16: 3001, BF16: 3002, F32: 3003}


@functools.lru_cache(maxsize=None)
def fuzz_cases(dtype):
    """[(what, x, qdim, reference output)] for ``dtype``: every D3 data kind on every qdim."""
    out = []
    with num_threads(1):   # the reference's results do not depend on it; it is just quicker
        for i, (shape, qdim) in enumerate(FUZZ_CASES):
            n_blocks = math.prod(shape) // 64
            blocks = blocks_input(dtype, n_blocks, FUZZ_SEEDS[dtype] + 17 * i)
            x = arrange(blocks, shape, qdim)
            want = ref.hifloat4_fake_quant_ref(x, qdim)
            out.append((f"{dtype} {shape} qdim={qdim}", x, qdim, want))
    return out


class TestD3Fuzz(Base):
    """>= 2M elements per dtype, bitwise against the reference, qdim in every form."""

    def _check(self, dtype):
        cases = fuzz_cases(dtype)
        total = sum(x.numel() for _, x, _, _ in cases)
        self.assertGreaterEqual(total, 2_000_000)
        self.assertEqual({q for _, _, q, _ in cases}, {-1, 2, 0, -3, 1, -2})
        # The data holds what D3 asks for: NaN and +-Inf inputs, subnormals, poisoned blocks,
        # -0.0 outputs.
        allx = torch.cat([x.reshape(-1) for _, x, _, _ in cases])
        tiny = torch.finfo(dtype).tiny
        self.assertGreater(int(allx.isnan().sum()), 1000)
        self.assertGreater(int((allx == math.inf).sum()), 100)
        self.assertGreater(int((allx == -math.inf).sum()), 100)
        self.assertGreater(int(((allx != 0) & (allx.abs() < tiny)).sum()), 1000)
        allw = torch.cat([w.reshape(-1) for _, _, _, w in cases])
        self.assertGreater(int(allw.isnan().sum()), 10_000)
        self.assertGreater(int(((allw == 0) & torch.signbit(allw)).sum()), 1000)
        ops_fq = torch.ops.amct.hifloat4_fake_quant
        for i, (what, x, qdim, want) in enumerate(cases):
            with self.subTest(case=what):
                got = ops_fq(x, qdim)
                self.assertTrue(got.is_contiguous())
                self.assertBitsEqual(got, want, what=what)
                if i in (0, 4):   # the wrapper on two of the cases
                    self.assertBitsEqual(hifloat4_fake_quant(x, qdim), want, what=f"wrapper {what}")

    def test_fp16(self):
        self._check(F16)

    def test_bf16(self):
        self._check(BF16)

    def test_fp32(self):
        self._check(F32)


class TestD4Identity(Base):
    """C5 on every D3 input: pack bytes equal the reference's, and
    unpack(*pack(x)).to(x.dtype) equals the reference fake-quant bitwise (qdim moved last)."""

    def _check(self, dtype):
        for what, x, qdim, want in fuzz_cases(dtype):
            with self.subTest(case=what):
                xl = x.movedim(qdim, -1)                  # a strided view unless qdim is last
                want_l = want.movedim(qdim, -1).contiguous()
                scale, value = torch.ops.amct.hifloat4_pack(xl)
                with num_threads(1):
                    want_s, want_v = ref.hifloat4_pack_ref(xl)
                self.assertBytesEqual(scale, want_s, f"{what}: scale")
                self.assertBytesEqual(value, want_v, f"{what}: value")
                back = torch.ops.amct.hifloat4_unpack(scale, value)
                self.assertEqual(back.dtype, F32)
                self.assertBitsEqual(back.to(dtype), want_l, what=f"{what}: C5 identity")
                self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(scale, value, dtype), want_l,
                                     what=f"{what}: unpack dtype=")

    def test_fp16(self):
        self._check(F16)

    def test_bf16(self):
        self._check(BF16)

    def test_fp32(self):
        self._check(F32)

    def test_wrappers(self):
        for dtype in DTYPES:
            x = blocks_input(dtype, 2048, 4000 + DTYPES.index(dtype)).reshape(64, 2048)
            back = hifloat4_unpack(*hifloat4_pack(x)).to(x.dtype)
            self.assertBitsEqual(back, ref.hifloat4_fake_quant_ref(x), what=f"wrappers {dtype}")

    def test_unpack_any_bytes(self):
        # A4: every byte pattern is valid input (FF blocks among them).
        rng = np.random.default_rng(4100)
        scale = torch.from_numpy(rng.integers(0, 256, (3, 2000, 4), dtype=np.uint8))
        scale[:, ::37, 0] = 0xFF
        value = torch.from_numpy(rng.integers(0, 256, (3, 2000 * 32), dtype=np.uint8))
        for dtype in (None, F16, BF16, F32):
            want = ref.hifloat4_unpack_ref(scale, value, dtype)
            for name, unpack in unpack_paths(kernel=True):
                self.assertBitsEqual(unpack(scale, value, dtype), want, what=f"{name} {dtype}")


# =============================================================================================
# D5 layout and worked examples
# =============================================================================================

class TestD5Layout(Base):

    def test_all_two(self):
        for dtype in DTYPES:
            x = torch.full((1, 64), 2.0, dtype=dtype)
            for name, pack in pack_paths(kernel=True):
                scale, value = pack(x)
                self.assertEqual(scale.reshape(-1).tolist(), [0xB9, 0xFF, 0xFF, 0xFF], name)
                self.assertEqual(value.reshape(-1).tolist(), [0x66] * 32, name)
            for name, fq in fq_paths(kernel=True):
                out = fq(x)
                self.assertEqual(out.dtype, dtype)
                self.assertEqual(out.float().reshape(-1).tolist(), [1.875] * 64, name)
            for name, unpack in unpack_paths(kernel=True):
                out = unpack(*torch.ops.amct.hifloat4_pack(x))
                self.assertEqual(out.reshape(-1).tolist(), [1.875] * 64, name)

    def test_zero_block(self):
        x = torch.zeros(2, 64, dtype=BF16)
        x[:, 1::3] = -0.0
        scale, value = torch.ops.amct.hifloat4_pack(x)
        self.assertEqual(scale.reshape(-1).tolist(), [0] * 8)
        self.assertEqual(value.reshape(-1).tolist(), [0] * 64)
        out = torch.ops.amct.hifloat4_fake_quant(x)
        self.assertEqual(ho.ubits(out).reshape(-1).tolist(), [0] * 128)    # +0.0, not -0.0

    def test_signed_zeros(self):
        # C2: -0.0 -> +0.0; a negative value quantised to 0 -> -0.0 (upstream's kernel differs).
        for dtype in DTYPES:
            x = torch.full((1, 64), -1e-4, dtype=dtype)
            x[0, 0] = 100.0
            x[0, 1] = -0.0
            x[0, 2] = 0.0
            out = torch.ops.amct.hifloat4_fake_quant(x)
            bits = ho.ubits(out).reshape(-1).tolist()
            neg_zero = 0x80000000 if dtype == F32 else 0x8000
            self.assertEqual(bits[1], 0, f"{dtype}: -0.0 input")
            self.assertEqual(bits[2], 0, f"{dtype}: +0.0 input")
            self.assertEqual(bits[3:], [neg_zero] * 61, f"{dtype}: tiny negatives")
            self.assertBitsEqual(out, ref.hifloat4_fake_quant_ref(x), what=str(dtype))
            _, value = torch.ops.amct.hifloat4_pack(x)
            self.assertEqual(int(value[0, 0]) >> 4, 0, "-0.0 packs with sign 0")
            self.assertEqual(int(value[0, 2]), 0x88, "tiny negatives pack as nibble 8")

    def test_alternating_signs(self):
        x = torch.tensor([1.0, -1.0] * 64, dtype=BF16).reshape(2, 64)
        _, value = torch.ops.amct.hifloat4_pack(x)
        v = value.reshape(-1).to(torch.int32)
        self.assertTrue(bool(((v & 0x08) == 0).all()), "low nibbles (even, positive)")
        self.assertTrue(bool(((v & 0x80) != 0).all()), "high nibbles (odd, negative)")
        self.assertPackEqual(torch.ops.amct.hifloat4_pack(x), x, "alternating")

    def test_poisoned_blocks_neighbours_untouched(self):
        for dtype in DTYPES:
            base = randn((3, 320), dtype, seed=51)
            clean_s, clean_v = ref.hifloat4_pack_ref(base)
            clean_out = ref.hifloat4_fake_quant_ref(base)
            for bad in (math.nan, math.inf, -math.inf):
                with self.subTest(dtype=dtype, bad=bad):
                    x = base.clone()
                    x[1, 128 + 5] = bad
                    scale, value = torch.ops.amct.hifloat4_pack(x)
                    self.assertEqual(int(scale[1, 2, 0]), 0xFF)
                    self.assertPackEqual((scale, value), x, "poisoned")
                    keep = torch.ones(3, 5, dtype=torch.bool)
                    keep[1, 2] = False
                    self.assertBytesEqual(scale[keep], clean_s[keep], "neighbour scale bytes")
                    vkeep = torch.ones(3, 160, dtype=torch.bool)
                    vkeep[1, 64:96] = False
                    self.assertBytesEqual(value[vkeep], clean_v[vkeep], "neighbour value bytes")
                    out = torch.ops.amct.hifloat4_fake_quant(x)
                    self.assertTrue(bool(out[1, 128:192].isnan().all()))
                    okeep = torch.ones(3, 320, dtype=torch.bool)
                    okeep[1, 128:192] = False
                    self.assertBitsEqual(out[okeep], clean_out[okeep], what="neighbour outputs")

    def test_hand_built_bytes(self):
        # S = 0.5 (byte 0 = 0xBC), l2 = 1, l3 = 0 in group 0 (de = 1), code 4 -> 1.0.
        scale = torch.tensor([[0xBC, 0x80, 0x00, 0x00]], dtype=torch.int32).to(U8)
        value = torch.zeros(32, dtype=U8)
        value[0] = 0x04       # element 0: +code 4
        value[1] = 0xC0       # element 3: -code 4
        value[4] = 0x08       # element 8: nibble 8 -> -0.0
        value[8] = 0x07       # element 16 (group 2, de = 0): code 7 -> 0.875
        for name, unpack in unpack_paths(kernel=True):
            out = unpack(scale, value)
            self.assertEqual(tuple(out.shape), (64,))
            self.assertEqual((out[0].item(), out[3].item(), out[16].item()), (1.0, -1.0, 0.875))
            self.assertEqual(int(ho.ubits(out[8:9])[0]), 0x80000000, name)
            self.assertEqual(int((out != 0).sum()), 3, name)

    def test_all_scale_bytes(self):
        # The 255 non-FF scale bytes decode to the A4 formula exactly; FF gives NaN.
        scale = torch.zeros(256, 4, dtype=U8)
        scale[:, 0] = torch.arange(256, dtype=torch.int32).to(U8)
        value = torch.full((256 * 32,), 0x44, dtype=U8)          # code 4 everywhere: c/4 = 1
        out = torch.ops.amct.hifloat4_unpack(scale, value).reshape(256, 64)
        for b in range(255):
            self.assertEqual(out[b].unique().tolist(), [e6m2_value(b)], hex(b))
        self.assertTrue(bool(out[255].isnan().all()))
        # With every flag set, de = 2 multiplies by 4 exactly.
        scale[:, 1:] = 0xFF
        out = torch.ops.amct.hifloat4_unpack(scale, value).reshape(256, 64)
        for b in range(255):
            self.assertEqual(out[b].unique().tolist(), [4.0 * e6m2_value(b)], hex(b))


# =============================================================================================
# D6 independence of threads, cores, UB size and row length
# =============================================================================================

class TestD6Independence(Base):
    """Identical bits for 1 / default threads, 1, 3 and 8 emulated cores and a small UB, with
    rows of 64, 576 and 1088 elements (not multiples of 512), 1 row and many rows."""

    SHAPES = (((150, 576), -1), ((80, 1088), -1), ((900, 64), -1), ((1, 1088), -1),
              ((1, 64), -1), ((576, 24), 0))
    # 40 KB is below upstream's ~57 KB 512-element unit, so the kernel must use smaller units
    # of whole blocks (C8); 64 KB with 3 cores is a second odd configuration.
    CONFIGS = (("default", None, 0, 0), ("1 thread", 1, 0, 0), ("1 core", None, 1, 0),
               ("3 cores", None, 3, 0), ("8 cores", None, 8, 0), ("UB 40960", None, 0, 40960),
               ("3 cores, UB 65536", None, 3, 65536),
               ("1 thread, 1 core, UB 40960", 1, 1, 40960))

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with num_threads(1):
            cls._make_cases()

    @classmethod
    def _make_cases(cls):
        cls.cases = []
        for dtype in DTYPES:
            for i, (shape, qdim) in enumerate(cls.SHAPES):
                n_blocks = math.prod(shape) // 64
                x = arrange(blocks_input(dtype, n_blocks, 6000 + 10 * i + DTYPES.index(dtype)),
                            shape, qdim)
                cls.cases.append((f"{dtype} {shape} qdim={qdim}", x, qdim,
                                  ref.hifloat4_fake_quant_ref(x, qdim)))
        cls.pack_cases = []
        for what, x, qdim, _ in cls.cases:
            if qdim == -1:
                s, v = ref.hifloat4_pack_ref(x)
                cls.pack_cases.append((what, x, s, v, ref.hifloat4_unpack_ref(s, v)))

    def _run_all(self, config):
        # The emulated kernel (the NPU kernel through the sim: cores and UB matter to it) and the
        # native CPU op (threads matter to it) on every configuration.
        ops = torch.ops.amct
        for what, x, qdim, want in self.cases:
            before = _sim.launch_count()
            got = ops._hifloat4_fake_quant_emulated(x, qdim)
            self.assertGreater(_sim.launch_count(), before, f"{config} {what}: no kernel launch")
            self.assertBitsEqual(got, want, what=f"{config}: emulated fake-quant {what}")
            self.assertBitsEqual(ops.hifloat4_fake_quant(x, qdim), want, what=f"{config}: fake-quant {what}")
        for what, x, s, v, u in self.pack_cases:
            for name, pack in (("emulated", ops._hifloat4_pack_emulated), ("native", ops.hifloat4_pack)):
                got_s, got_v = pack(x)
                self.assertBytesEqual(got_s, s, f"{config}: {name} pack scale {what}")
                self.assertBytesEqual(got_v, v, f"{config}: {name} pack value {what}")
            if x.dtype == BF16:
                self.assertBitsEqual(ops._hifloat4_unpack_emulated(s, v), u, what=f"{config}: emulated unpack {what}")
                self.assertBitsEqual(ops.hifloat4_unpack(s, v), u, what=f"{config}: unpack {what}")

    def test_configurations(self):
        before = _sim.get_platform()
        for config, threads, cores, ub in self.CONFIGS:
            with self.subTest(config=config):
                ctx = num_threads(threads) if threads else contextlib.nullcontext()
                with ctx, _sim.sim_platform(aiv_cores=cores, ub_bytes=ub):
                    if cores:
                        self.assertEqual(_sim.get_platform()[0], cores)
                    if ub:
                        self.assertEqual(_sim.get_platform()[1], ub)
                    if threads:
                        self.assertEqual(torch.get_num_threads(), threads)
                    self._run_all(config)
            self.assertEqual(_sim.get_platform(), before, "sim_platform did not restore")


# =============================================================================================
# D7 device health after poisoned blocks
# =============================================================================================

class TestD7DeviceHealth(Base):
    """(4, 512) with columns 0-63 NaN and 64-127 Inf, then an ordinary call; three times."""

    def poisoned_input(self, dtype, seed):
        x = randn((4, 512), dtype, seed=seed, spread=4)
        x[:, 0:64] = math.nan
        x[:, 64:128] = math.inf
        x[1, 70] = -math.inf
        return x

    def _check_pair(self, dtype, rep, device="cpu"):
        x = self.poisoned_input(dtype, 70 + rep)
        out = torch.ops.amct.hifloat4_fake_quant(x.to(device)).cpu()
        self.assertTrue(bool(out[:, :128].isnan().all()), "poisoned columns")
        self.assertFalse(bool(out[:, 128:].isnan().any()), "NaN leaked out of poisoned blocks")
        self.assertBitsEqual(out, ref.hifloat4_fake_quant_ref(x), what=f"{dtype} rep {rep}")
        y = randn((2, 128), dtype, seed=80 + rep, spread=0)
        out = torch.ops.amct.hifloat4_fake_quant(y.to(device)).cpu()
        self.assertFalse(bool(out.isnan().any()), "NaN after a poisoned call")
        self.assertBitsEqual(out, ref.hifloat4_fake_quant_ref(y), what=f"{dtype} next call {rep}")

    def _check_pack_pair(self, dtype, rep, device="cpu"):
        x = self.poisoned_input(dtype, 90 + rep)
        s, v = torch.ops.amct.hifloat4_pack(x.to(device))
        s, v = s.cpu(), v.cpu()
        self.assertTrue(bool((s[:, :2, 0] == 0xFF).all()))
        self.assertFalse(bool((s[:, 2:, 0] == 0xFF).any()))
        self.assertPackEqual((s, v), x, f"{dtype} poisoned pack rep {rep}")
        back = torch.ops.amct.hifloat4_unpack(s.to(device), v.to(device)).cpu()
        self.assertBitsEqual(back.to(dtype), ref.hifloat4_fake_quant_ref(x), what="unpack")
        y = randn((2, 128), dtype, seed=100 + rep, spread=0)
        s, v = torch.ops.amct.hifloat4_pack(y.to(device))
        self.assertPackEqual((s.cpu(), v.cpu()), y, f"{dtype} next pack {rep}")
        self.assertFalse(bool((s.cpu()[..., 0] == 0xFF).any()))

    def test_fake_quant_then_normal_calls(self):
        for dtype in (BF16, F16, F32):
            for rep in range(3):
                self._check_pair(dtype, rep)

    def test_pack_then_normal_calls(self):
        for dtype in (BF16, F16, F32):
            for rep in range(3):
                self._check_pack_pair(dtype, rep)

    def test_all_nan_tensor(self):
        x = torch.full((8, 1024), math.nan, dtype=F32)
        self.assertTrue(bool(torch.ops.amct.hifloat4_fake_quant(x).isnan().all()))
        self._check_pair(F32, 9)


# =============================================================================================
# D8 errors (C6 texts)
# =============================================================================================

FQ, PK, UP = "hifloat4_fake_quant", "hifloat4_pack", "hifloat4_unpack"
FQ_DTYPE = FQ + ": input dtype must be float16, bfloat16 or float32, got {}"
PK_DTYPE = PK + ": input dtype must be float16, bfloat16 or float32, got {}"


class TestD8Errors(Base):
    """Every C6 row, with its text, through both ways in, on CPU and Meta."""

    def _cases(self, device):
        def t(*shape, dtype=F32):
            return torch.zeros(shape, dtype=dtype, device=device)

        def u8(*shape):
            return torch.zeros(shape, dtype=U8, device=device)

        cases = []
        for name, fq in fq_paths(kernel=device == "cpu"):
            cases += [
                (f"{name} fq length", lambda fq=fq: fq(t(3, 100)),
                 f"{FQ}: quant dim length must be a multiple of 64, got 100"),
                (f"{name} fq length qdim 0", lambda fq=fq: fq(t(100, 64), 0),
                 f"{FQ}: quant dim length must be a multiple of 64, got 100"),
                (f"{name} fq length empty", lambda fq=fq: fq(t(0, 100)),
                 f"{FQ}: quant dim length must be a multiple of 64, got 100"),
                (f"{name} fq qdim = rank", lambda fq=fq: fq(t(3, 64), 2),
                 f"{FQ}: qdim out of range, expected a value in [-2, 1], got 2"),
                (f"{name} fq qdim = -rank-1", lambda fq=fq: fq(t(3, 64), -3),
                 f"{FQ}: qdim out of range, expected a value in [-2, 1], got -3"),
                (f"{name} fq qdim rank 3", lambda fq=fq: fq(t(2, 64, 3), 3),
                 f"{FQ}: qdim out of range, expected a value in [-3, 2], got 3"),
                (f"{name} fq qdim rank 1", lambda fq=fq: fq(t(64), -2),
                 f"{FQ}: qdim out of range, expected a value in [-1, 0], got -2"),
                (f"{name} fq rank 0", lambda fq=fq: fq(t()),
                 f"{FQ}: input must have at least 1 dimension, got 0"),
                (f"{name} fq float64", lambda fq=fq: fq(t(3, 64, dtype=torch.float64)),
                 FQ_DTYPE.format("float64")),
                (f"{name} fq int32", lambda fq=fq: fq(t(3, 64, dtype=torch.int32)),
                 FQ_DTYPE.format("int32")),
                # C2 order: dtype before rank, rank before qdim, qdim range before length.
                (f"{name} fq order dtype/rank", lambda fq=fq: fq(t(dtype=torch.float64)),
                 FQ_DTYPE.format("float64")),
                (f"{name} fq order qdim/length", lambda fq=fq: fq(t(3, 100), 7),
                 f"{FQ}: qdim out of range, expected a value in [-2, 1], got 7"),
            ]
        for name, pack in pack_paths(kernel=device == "cpu"):
            cases += [
                (f"{name} pack length", lambda pack=pack: pack(t(3, 100)),
                 f"{PK}: last dim length must be a multiple of 64, got 100"),
                (f"{name} pack length empty", lambda pack=pack: pack(t(0, 100)),
                 f"{PK}: last dim length must be a multiple of 64, got 100"),
                (f"{name} pack rank 0", lambda pack=pack: pack(t()),
                 f"{PK}: input must have at least 1 dimension, got 0"),
                (f"{name} pack float64", lambda pack=pack: pack(t(3, 64, dtype=torch.float64)),
                 PK_DTYPE.format("float64")),
                (f"{name} pack int32", lambda pack=pack: pack(t(3, 64, dtype=torch.int32)),
                 PK_DTYPE.format("int32")),
            ]
        for name, unpack in unpack_paths(kernel=device == "cpu"):
            cases += [
                (f"{name} unpack scale int32",
                 lambda unpack=unpack: unpack(t(3, 4, 4, dtype=torch.int32), u8(3, 128)),
                 f"{UP}: scale dtype must be uint8, got int32"),
                (f"{name} unpack value int32",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), t(3, 128, dtype=torch.int32)),
                 f"{UP}: value dtype must be uint8, got int32"),
                (f"{name} unpack scale float32",
                 lambda unpack=unpack: unpack(t(3, 4, 4), u8(3, 128)),
                 f"{UP}: scale dtype must be uint8, got float32"),
                (f"{name} unpack group count",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), u8(3, 64)),
                 f"{UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [3, 64]"),
                (f"{name} unpack leading dims",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), u8(2, 128)),
                 f"{UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [2, 128]"),
                (f"{name} unpack value rank",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), u8(3, 1, 128)),
                 f"{UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [3, 1, 128]"),
                (f"{name} unpack last dim 3",
                 lambda unpack=unpack: unpack(u8(3, 4, 3), u8(3, 128)),
                 f"{UP}: scale last dim must be 4, got 3"),
                (f"{name} unpack dtype int32",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), u8(3, 128), torch.int32),
                 f"{UP}: dtype must be float16, bfloat16 or float32, got int32"),
                (f"{name} unpack dtype float64",
                 lambda unpack=unpack: unpack(u8(3, 4, 4), u8(3, 128), torch.float64),
                 f"{UP}: dtype must be float16, bfloat16 or float32, got float64"),
            ]
        cases.append(("ops unpack dtype= keyword int32",
                      lambda: torch.ops.amct.hifloat4_unpack(u8(3, 4, 4), u8(3, 128),
                                                             dtype=torch.int32),
                      f"{UP}: dtype must be float16, bfloat16 or float32, got int32"))
        cases.append(("wrapper unpack dtype= keyword int32",
                      lambda: hifloat4_unpack(u8(3, 4, 4), u8(3, 128), dtype=torch.int32),
                      f"{UP}: dtype must be float16, bfloat16 or float32, got int32"))
        return cases

    def test_c6_messages_cpu(self):
        for what, fn, msg in self._cases("cpu"):
            with self.subTest(case=what):
                with self.assertRaises(RuntimeError) as cm:
                    fn()
                self.assertEqual(first_line(cm.exception), msg)

    def test_c6_messages_meta(self):
        # C1: Meta performs the same checks.
        for what, fn, msg in self._cases("meta"):
            with self.subTest(case=what):
                with self.assertRaises(RuntimeError) as cm:
                    fn()
                self.assertEqual(first_line(cm.exception), msg)

    def test_reference_raises_the_same(self):
        # The texts above are the reference's too (so the op and the spec agree).
        checks = [
            (lambda: ref.hifloat4_fake_quant_ref(torch.zeros(3, 100)),
             f"{FQ}: quant dim length must be a multiple of 64, got 100"),
            (lambda: ref.hifloat4_unpack_ref(torch.zeros(3, 4, 4, dtype=U8), torch.zeros(3, 64, dtype=U8)),
             f"{UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [3, 64]"),
        ]
        for fn, msg in checks:
            with self.assertRaises(RuntimeError) as cm:
                fn()
            self.assertEqual(str(cm.exception), msg)

    def test_other_unpack_shape_errors(self):
        # Not in C6: scale of rank < 2 raises a RuntimeError naming the op.
        for name, unpack in unpack_paths(kernel=True):
            with self.assertRaisesRegex(RuntimeError, f"^{UP}: "):
                unpack(torch.zeros(4, dtype=U8), torch.zeros(32, dtype=U8))

    def test_no_launch_on_error(self):
        before = _sim.launch_count()
        ops = torch.ops.amct
        for fn in (lambda: ops._hifloat4_fake_quant_emulated(torch.zeros(4, 100)),
                   lambda: ops._hifloat4_pack_emulated(torch.zeros(4, 100)),
                   lambda: ops._hifloat4_unpack_emulated(torch.zeros(4, 1, 4, dtype=U8),
                                                         torch.zeros(4, 64, dtype=U8))):
            with self.assertRaises(RuntimeError):
                fn()
        self.assertEqual(_sim.launch_count(), before)

    def test_ops_still_work_after_errors(self):
        with self.assertRaises(RuntimeError):
            torch.ops.amct.hifloat4_fake_quant(torch.zeros(10, 64, dtype=torch.float64))
        x = randn((6, 256), F32, seed=81)
        self.assertBitsEqual(torch.ops.amct.hifloat4_fake_quant(x), ref.hifloat4_fake_quant_ref(x),
                             what="after an error")


# =============================================================================================
# D9 shapes, strides, empty inputs, huge rows, Meta
# =============================================================================================

class TestD9Shapes(Base):

    def _check_fq(self, x, qdim, what):
        want = ref.hifloat4_fake_quant_ref(x.contiguous(), qdim)
        for name, fq in fq_paths(kernel=True):
            got = fq(x, qdim)
            self.assertEqual(tuple(got.shape), tuple(x.shape), f"{name} {what}")
            self.assertTrue(got.is_contiguous(), f"{name} {what}: output not contiguous")
            self.assertEqual(got.device, x.device)
            self.assertBitsEqual(got, want, what=f"{name} {what}")

    def test_ranks(self):
        for dtype in DTYPES:
            self._check_fq(randn((64,), dtype, seed=90), -1, "rank 1")
            self._check_fq(randn((64,), dtype, seed=90), 0, "rank 1 qdim 0")
            x4 = arrange(blocks_input(dtype, 2 * 3 * 128 * 5 // 64, 91), (2, 3, 128, 5), 2)
            self._check_fq(x4, 2, "rank 4 qdim 2")
            self._check_fq(x4, -2, "rank 4 qdim -2")
            x4b = randn((3, 192, 2, 64), dtype, seed=92)
            for qdim in (1, -3, 3, -1):
                self._check_fq(x4b, qdim, f"rank 4 (3, 192, 2, 64) qdim {qdim}")
            for name, pack in pack_paths(kernel=True):
                self.assertPackEqual(pack(x4b), x4b, f"{name} rank 4")
                self.assertPackEqual(pack(x4b[0, 0, 0]), x4b[0, 0, 0], f"{name} rank 1")
            s, v = torch.ops.amct.hifloat4_pack(x4b)
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((3, 192, 2, 1, 4), (3, 192, 2, 32)))
            self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(s, v), ref.hifloat4_unpack_ref(s, v),
                                 what="unpack rank 4")

    def test_non_contiguous(self):
        for dtype in DTYPES:
            base = arrange(blocks_input(dtype, 128 * 6 * 192 // 64, 93), (128, 6, 192), -1)
            views = {
                "transposed (qdim 0)": (base.transpose(0, 2), 0),
                "transposed (qdim -1)": (base.transpose(0, 2), -1),
                "step-sliced": (base[:, ::2, :], -1),
                "step-sliced qdim": (base[:, 1::2, ::3], -1),
                "offset slice": (base[3:, 2:, 64:], -1),
                "permuted": (base.permute(1, 2, 0), 2),
                "expanded (stride 0)": (base[:, :1, :].expand(128, 4, 192), 0),
            }
            for vname, (v, qdim) in views.items():
                self.assertFalse(v.is_contiguous(), vname)
                with self.subTest(dtype=dtype, view=vname):
                    self._check_fq(v, qdim, vname)
                    if v.shape[-1] % 64 == 0:
                        for name, pack in pack_paths(kernel=True):
                            self.assertPackEqual(pack(v), v.contiguous(), f"{name} pack {vname}")
            # Strided scale / value for unpack.
            s, v = ref.hifloat4_pack_ref(base.reshape(-1, 192))
            s_t = s.transpose(0, 1).contiguous().transpose(0, 1)
            v_t = v.t().contiguous().t()
            self.assertFalse(s_t.is_contiguous() or v_t.is_contiguous())
            for name, unpack in unpack_paths(kernel=True):
                got = unpack(s_t, v_t, dtype)
                self.assertTrue(got.is_contiguous())
                self.assertBitsEqual(got, ref.hifloat4_unpack_ref(s, v, dtype), what=f"{name} strided unpack")

    def test_empty_inputs_no_launch(self):
        for dtype in DTYPES:
            # A non-empty call of the emulated kernel does launch (so the unchanged counts below
            # mean something for its path; the native ops never launch).
            ops = torch.ops.amct
            for what, call in (("fq", lambda: ops._hifloat4_fake_quant_emulated(randn((1, 64), dtype))),
                               ("pack", lambda: ops._hifloat4_pack_emulated(randn((1, 64), dtype))),
                               ("unpack", lambda: ops._hifloat4_unpack_emulated(
                                   torch.zeros(1, 1, 4, dtype=U8), torch.zeros(1, 32, dtype=U8)))):
                before = _sim.launch_count()
                call()
                self.assertGreater(_sim.launch_count(), before, f"{what}: no launch for one block")
            for shape, qdim in (((0, 64), -1), ((3, 0), -1), ((0, 64), 0), ((0, 3, 64), 0),
                                ((2, 0, 5), 1)):
                x = torch.zeros(shape, dtype=dtype)
                for name, fq in fq_paths(kernel=True):
                    before = _sim.launch_count()
                    out = fq(x, qdim)
                    self.assertEqual(_sim.launch_count(), before, f"{name} {shape}: launched")
                    self.assertEqual((tuple(out.shape), out.dtype), (shape, dtype))
                    self.assertTrue(out.is_contiguous())
            for shape, want_s, want_v in (((0, 64), (0, 1, 4), (0, 32)), ((3, 0), (3, 0, 4), (3, 0)),
                                          ((0,), (0, 4), (0,))):
                x = torch.zeros(shape, dtype=dtype)
                for name, pack in pack_paths(kernel=True):
                    before = _sim.launch_count()
                    s, v = pack(x)
                    self.assertEqual(_sim.launch_count(), before, f"{name} pack {shape}: launched")
                    self.assertEqual((tuple(s.shape), tuple(v.shape)), (want_s, want_v))
                    self.assertEqual((s.dtype, v.dtype), (U8, U8))
                for name, unpack in unpack_paths(kernel=True):
                    before = _sim.launch_count()
                    out = unpack(torch.zeros(want_s, dtype=U8), torch.zeros(want_v, dtype=U8), dtype)
                    self.assertEqual(_sim.launch_count(), before, f"{name} unpack {shape}: launched")
                    self.assertEqual((tuple(out.shape), out.dtype), (shape, dtype))
            # (0, 100) still raises.
            with self.assertRaises(RuntimeError):
                torch.ops.amct.hifloat4_fake_quant(torch.zeros(0, 100, dtype=dtype))

    def test_huge_last_dims(self):
        for shape in ((2, 64 * 4099), (1, 1 << 22)):
            x = randn(shape, F32, seed=94, spread=20)
            x[0, 64 * 1000 + 3] = math.nan
            want = ref.hifloat4_fake_quant_ref(x)
            got = torch.ops.amct.hifloat4_fake_quant(x)
            self.assertTrue(got.is_contiguous())
            self.assertBitsEqual(got, want, what=f"{shape}")
            s, v = torch.ops.amct.hifloat4_pack(x)
            self.assertPackEqual((s, v), x, f"pack {shape}")
            self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(s, v), want, what=f"identity {shape}")

    def test_meta(self):
        for dtype in DTYPES:
            for shape, qdim in (((3, 128), -1), ((128, 3, 5), 0), ((2, 0, 64), 2), ((64,), 0)):
                x = torch.empty(shape, dtype=dtype, device="meta")
                out = torch.ops.amct.hifloat4_fake_quant(x, qdim)
                self.assertEqual((out.device.type, tuple(out.shape), out.dtype), ("meta", shape, dtype))
            x = torch.empty(2, 3, 192, dtype=dtype, device="meta")
            s, v = torch.ops.amct.hifloat4_pack(x)
            self.assertEqual((s.device.type, tuple(s.shape), s.dtype), ("meta", (2, 3, 3, 4), U8))
            self.assertEqual((v.device.type, tuple(v.shape), v.dtype), ("meta", (2, 3, 96), U8))
            out = torch.ops.amct.hifloat4_unpack(s, v, dtype)
            self.assertEqual((out.device.type, tuple(out.shape), out.dtype), ("meta", (2, 3, 192), dtype))
            self.assertEqual(torch.ops.amct.hifloat4_unpack(s, v).dtype, F32)


# =============================================================================================
# D10 autograd, opcheck and torch.compile
# =============================================================================================

def _autograd_input(dtype, seed=110):
    """(6, 128): ordinary blocks and poisoned ones (NaN, +Inf, -Inf), big and tiny values."""
    x = randn((6, 128), F32, seed=seed, spread=6)
    x[0, 3] = math.nan
    x[2, 70] = math.inf
    x[4, 0] = -math.inf
    x[5, :64] = -0.0
    x[5, 64:] = 1e-30
    return x.to(dtype)


def _grad_output(dtype, shape, seed=111, specials=True):
    g = torch.Generator().manual_seed(seed)
    go = torch.randn(shape, generator=g) * 1000
    if specials:
        flat = go.view(-1)
        flat[:6] = torch.tensor([math.nan, math.inf, -math.inf, -0.0, 0.0, 3e4])
    return go.to(dtype)


class TestD10Autograd(Base):
    """Fake-quant is straight-through: grad_input == grad_output bitwise, poisoned blocks too."""

    def test_straight_through(self):
        for dtype in DTYPES:
            for name, fq in fq_paths():
                with self.subTest(dtype=dtype, path=name):
                    x = _autograd_input(dtype).requires_grad_()
                    y = fq(x)
                    self.assertTrue(y.requires_grad)
                    self.assertBitsEqual(y.detach(), ref.hifloat4_fake_quant_ref(x.detach()),
                                         what="forward under autograd")
                    go = _grad_output(dtype, x.shape)
                    y.backward(go)
                    self.assertEqual(x.grad.dtype, dtype)
                    self.assertBitsEqual(x.grad, go, what=f"{name} gradient {dtype}")
                    # A finite gradient stays finite through the NaN-poisoned blocks.
                    x2 = _autograd_input(dtype).requires_grad_()
                    go2 = _grad_output(dtype, x2.shape, seed=112, specials=False)
                    (gx,) = torch.autograd.grad(fq(x2), x2, go2)
                    self.assertTrue(bool(torch.isfinite(gx).all()))
                    self.assertBitsEqual(gx, go2, what=f"{name} finite gradient {dtype}")
                    # qdim 0 on a non-contiguous input.
                    x3 = _autograd_input(dtype).t().requires_grad_()       # (128, 6), strided
                    self.assertFalse(x3.is_contiguous())
                    self.assertEqual(x3.shape[0], 128)
                    go3 = _grad_output(dtype, x3.shape, seed=113)
                    (gx3,) = torch.autograd.grad(fq(x3, 0), x3, go3)
                    self.assertBitsEqual(gx3, go3, what=f"{name} qdim 0 gradient {dtype}")

    def test_gradient_through_a_graph(self):
        x = randn((3, 128), F32, seed=114).requires_grad_()
        (torch.ops.amct.hifloat4_fake_quant(x * 2.0) * 3.0).sum().backward()
        self.assertTrue(bool((x.grad == 6.0).all()))
        x = randn((128, 3), BF16, seed=115).requires_grad_()
        (hifloat4_fake_quant(x, 0)[:64].float() * 5.0).sum().backward()
        self.assertTrue(bool((x.grad[64:] == 0.0).all()))
        x.grad = None
        (hifloat4_fake_quant(x, 0).float() * 5.0).sum().backward()
        self.assertTrue(bool((x.grad == 5.0).all()))

    def test_pack_unpack_not_differentiable(self):
        for dtype in DTYPES:
            x = _autograd_input(dtype).requires_grad_()
            for name, pack in pack_paths():
                s, v = pack(x)
                self.assertFalse(s.requires_grad or v.requires_grad, name)
                self.assertIsNone(s.grad_fn)
                self.assertPackEqual((s, v), x.detach(), f"{name} pack of a requires_grad input")
                for uname, unpack in unpack_paths():
                    out = unpack(s, v, dtype)
                    self.assertFalse(out.requires_grad, uname)
                    self.assertIsNone(out.grad_fn)

    def test_docstrings(self):
        # C2: the STE, and that gradients pass through NaN-poisoned blocks, are documented.
        doc = (hifloat4_fake_quant.__doc__ or "").lower()
        self.assertRegex(doc, r"straight[- ]through|\bste\b")
        self.assertRegex(doc, r"nan|poison")
        for fn in (hifloat4_pack, hifloat4_unpack):
            self.assertTrue((fn.__doc__ or "").strip(), fn.__name__)


class TestD10OpCheck(Base):
    """torch.library.opcheck for all three ops; samples without NaN (opcheck's assert_close
    treats NaN as unequal)."""

    def _samples(self):
        w = randn((8, 128), F32, seed=120, spread=10)
        w3 = randn((2, 128, 3), F32, seed=121)
        scale, value = ref.hifloat4_pack_ref(randn((6, 192), F32, seed=122, spread=20))
        rng = np.random.default_rng(123)
        rs = torch.from_numpy(rng.integers(0, 255, (4, 3, 4), dtype=np.uint8))   # no FF
        rv = torch.from_numpy(rng.integers(0, 256, (4, 96), dtype=np.uint8))
        return {
            torch.ops.amct.hifloat4_fake_quant.default: [
                (w.half(), 1), (w3, 1), (w.clone().requires_grad_(), -1),
                (w.bfloat16().t().requires_grad_(), 0),
                (torch.tensor([1e30, -0.0, 1e-40, 3.0] * 16), 0),
            ],
            torch.ops.amct.hifloat4_pack.default: [
                (w.bfloat16(),), (w3.transpose(1, 2),),
                (torch.tensor([1e30, -0.0, 1e-40, 3.0] * 16),),
            ],
            torch.ops.amct.hifloat4_unpack.default: [
                (scale, value), (scale, value, F16), (rs, rv, BF16),
                (rs.transpose(0, 1).contiguous().transpose(0, 1), rv),
            ],
        }

    def test_opcheck(self):
        for op, samples in self._samples().items():
            for args in samples:
                with self.subTest(op=str(op), args=[(a.dtype, tuple(a.shape), a.stride())
                                                    if isinstance(a, torch.Tensor) else a
                                                    for a in args]):
                    torch.library.opcheck(op, args)   # raises on any failure


class TestD10Compile(Base):
    """torch.compile(fullgraph=True) gives the reference results."""

    @staticmethod
    def f_ops(xb16, x32, x16):
        fq = torch.ops.amct.hifloat4_fake_quant(xb16, -1)
        fq0 = torch.ops.amct.hifloat4_fake_quant(x32, 0)
        s, v = torch.ops.amct.hifloat4_pack(x16)
        u = torch.ops.amct.hifloat4_unpack(s, v)
        u16 = torch.ops.amct.hifloat4_unpack(s, v, torch.float16)
        return fq, fq0 * 2.0, s, v, u + 1.0, u16

    @staticmethod
    def f_wrappers(xb16, x32, x16):
        fq = hifloat4_fake_quant(xb16)
        fq0 = hifloat4_fake_quant(x32, 0)
        s, v = hifloat4_pack(x16)
        u = hifloat4_unpack(s, v)
        u16 = hifloat4_unpack(s, v, dtype=torch.float16)
        return fq, fq0 * 2.0, s, v, u + 1.0, u16

    @staticmethod
    def expected(xb16, x32, x16):
        s, v = ref.hifloat4_pack_ref(x16)
        return (ref.hifloat4_fake_quant_ref(xb16), ref.hifloat4_fake_quant_ref(x32, 0) * 2.0, s, v,
                ref.hifloat4_unpack_ref(s, v) + 1.0, ref.hifloat4_unpack_ref(s, v, F16))

    def _inputs(self, rows, seed):
        x32 = randn((rows, 128), F32, seed=seed, spread=10)
        x32[0, :4] = torch.tensor([math.inf, -math.nan, 1e30, -0.0])
        return x32.bfloat16(), x32.t().contiguous(), x32.half()

    def _check(self, fn, backend, rows=64):
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend=backend, fullgraph=True)
        for r, seed in ((rows, 130), (rows // 2 + 3, 131)):   # a second shape
            inputs = self._inputs(r, seed)
            outs = compiled(*inputs)
            for i, (got, want) in enumerate(zip(outs, self.expected(*inputs))):
                self.assertBitsEqual(got, want, what=f"{backend} output {i}, rows {r}")

    def test_aot_eager_ops(self):
        self._check(self.f_ops, "aot_eager")

    def test_aot_eager_wrappers(self):
        self._check(self.f_wrappers, "aot_eager")

    def test_aot_eager_backward(self):
        assert_compiled_ste_backward(self, lambda v: torch.ops.amct.hifloat4_fake_quant(v, -1),
                                     ref.hifloat4_fake_quant_ref, randn((5, 192), F32, seed=132))

    def test_inductor(self):
        # One small test with the default backend.
        self._check(self.f_ops, "inductor", rows=8)


# =============================================================================================
# D11 upstream parity
# =============================================================================================

class TestD11UpstreamParity(Base):

    def test_pack_shapes(self):
        for rows, n in ((2, 128), (3, 512), (1, 64)):
            x = randn((rows, n), F32, seed=140)
            s, v = hifloat4_pack(x)
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((rows, n // 64, 4), (rows, n // 2)))
            self.assertPackEqual((s, v), x, f"{rows}x{n}")
        with self.assertRaises(RuntimeError):
            hifloat4_pack(torch.randn(3, 100))

    def test_zeros(self):
        z = hifloat4_fake_quant(torch.zeros(2, 64, dtype=BF16))
        self.assertEqual(z.float().abs().max().item(), 0.0)
        self.assertFalse(bool(z.isnan().any()))

    def test_qdim_forms(self):
        x = randn((3, 64), F32, seed=141)
        want = ref.hifloat4_fake_quant_ref(x, -1)
        self.assertBitsEqual(hifloat4_fake_quant(x, 1), want, what="qdim 1")
        self.assertBitsEqual(hifloat4_fake_quant(x, -1), want, what="qdim -1")
        y = randn((128, 64), BF16, seed=142)
        out = hifloat4_fake_quant(y, 0)
        self.assertEqual(out.shape, y.shape)
        self.assertBitsEqual(out, ref.hifloat4_fake_quant_ref(y, 0), what="qdim 0 on (128, 64)")


# =============================================================================================
# D12 NPU (only with a device)
# =============================================================================================

@unittest.skipUnless(HAVE_OP and amct_ops.npu_available(), "needs an Ascend NPU (torch_npu with a device)")
class TestD12Npu(Base):
    """D2, a D3 subset and D7 on the device."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import torch_npu  # noqa: F401
        cls.dev = torch.device("npu", 0)
        torch.npu.set_device(cls.dev)

    def test_outputs_on_the_device(self):
        x = randn((4, 128), BF16).to(self.dev)
        s, v = torch.ops.amct.hifloat4_pack(x)
        for out in (torch.ops.amct.hifloat4_fake_quant(x), s, v, torch.ops.amct.hifloat4_unpack(s, v)):
            self.assertEqual(out.device, self.dev)

    def test_d2_vectors(self):
        for v in ho.load_vectors():
            x = vector_input(v).to(self.dev)
            self.assertBitsEqual(torch.ops.amct.hifloat4_fake_quant(x).cpu(), vector_out(v),
                                 what=f"NPU {v['name']}")
            s, q = torch.ops.amct.hifloat4_pack(x)
            want_s, want_v = vector_bytes(v)
            self.assertBytesEqual(s.cpu(), want_s, f"NPU {v['name']} scale")
            self.assertBytesEqual(q.cpu(), want_v, f"NPU {v['name']} value")
            self.assertBitsEqual(torch.ops.amct.hifloat4_unpack(s, q, x.dtype).cpu(), vector_out(v),
                                 what=f"NPU unpack {v['name']}")

    def test_d3_subset(self):
        for dtype in DTYPES:
            for what, x, qdim, want in fuzz_cases(dtype)[::2]:
                self.assertBitsEqual(torch.ops.amct.hifloat4_fake_quant(x.to(self.dev), qdim).cpu(),
                                     want, what=f"NPU {what}")

    def test_d7_device_health(self):
        health = TestD7DeviceHealth("test_fake_quant_then_normal_calls")
        for dtype in (BF16, F16, F32):
            for rep in range(3):
                health._check_pair(dtype, rep, device=self.dev)
                health._check_pack_pair(dtype, rep, device=self.dev)


if __name__ == "__main__":
    unittest.main()
