"""The native CPU hifloat4_cast ops against the AscendC kernel run through the kernel sim, per SIMD
path, and their out= overloads.

The CPU ops (``torch.ops.amct.hifloat4_*``) are native C++ (hifloat4_cast_cpu.cpp: AVX-512, AVX2
and portable copies chosen at run time); the NPU kernel runs on the CPU through the kernel sim as
``torch.ops.amct._hifloat4_*_emulated``. Here the two must give identical bits (the same bit
patterns, NaN included) on random and special blocks -- NaN, +-Inf, zeros and -0.0, subnormals,
both scale clamps, E6M2 ties and carries, the golden vectors (fp16 underflow among them) -- over
every qdim position of ranks 1 to 4, each dtype, odd shapes, strided / transposed / expanded
inputs and empty ones; the emulated side also with 3 and 7 emulated cores and small UB sizes, the
native side with every SIMD path forced (``torch.ops.amct._cpu_capability``) and 1 thread. Both
are also held to ``reference.py``, the executable spec, so that agreeing on a wrong answer fails.

Run after ``bash ops_build.sh``::

    PYTHONPATH=staging python -m pytest tests/test_hifloat4_native.py
"""
import contextlib
import importlib
import itertools
import math
import sys
import unittest
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hif4_oracle as ho  # noqa: E402
from amct_testing import find_op_package, load_source_module, num_threads  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
_OP_PACKAGE, _SKIP_REASON = find_op_package("hifloat4_cast")
HAVE_OP = _OP_PACKAGE is not None
if HAVE_OP:
    _sim = importlib.import_module("amct_ops._sim")
    from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack  # noqa: E402

ref = load_source_module("_hif4_reference_native", REPO / "hifloat4_cast" / "python" / "hifloat4_cast" / "reference.py")

F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
DTYPES = (F16, BF16, F32)
CAPABILITIES = ("default", "avx2", "avx512")


def raw_bits(t):
    """The bit patterns of ``t`` as an integer tensor (NaN payloads included)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == U8:
        return t
    return t.view({F16: torch.int16, BF16: torch.int16, F32: torch.int32}[t.dtype])


def blocks(dtype, n, seed):
    """(n, 64) blocks of every special kind of hif4_oracle.BlockGen (NaN / Inf blocks, zeros with
    -0.0, tiny negatives, subnormals, random bit patterns, clamps, E6M2 ties), as ``dtype``."""
    bits = ho.BlockGen(ho.DTYPE_NAMES[dtype], seed).mixture(n)
    return ho.to_torch(np.asarray(bits).reshape(-1), dtype).reshape(n, 64)


def laid_out(dtype, shape, qdim, seed):
    """A contiguous tensor of ``shape`` whose blocks along ``qdim`` are the special blocks."""
    d = qdim % len(shape)
    n = math.prod(shape) // 64
    last = tuple(s for i, s in enumerate(shape) if i != d) + (shape[d],)
    return blocks(dtype, n, seed).reshape(last).movedim(-1, d).contiguous()


def vector_cases():
    for v in ho.load_vectors():
        x = ho.to_torch(np.asarray([ho.hexint(b) for b in v["input_bits"]]), v["dtype"]).reshape(1, 64)
        want = ho.to_torch(np.asarray([ho.hexint(b) for b in v["expected_out_dtype_bits"]]), v["dtype"]).reshape(1, 64)
        yield v["name"], x, want


# Every qdim position of ranks 1-4, with odd sizes around the vector widths (inner sizes 1, 3, 5,
# 7, 9, 15, 17, 33 and one above a 256-column piece), rows that are not multiples of 512.
SHAPES = (
    ((64,), 0), ((192,), -1),
    ((5, 576), -1), ((576, 5), 0), ((3, 1088), 1), ((128, 17), -2), ((64, 1), 0), ((64, 300), 0),
    ((2, 3, 128), 2), ((2, 128, 3), 1), ((128, 3, 5), 0), ((7, 64, 9), -2), ((1, 192, 33), 1),
    ((2, 3, 64, 5), 2), ((2, 64, 3, 5), 1), ((64, 2, 3, 7), 0), ((3, 2, 5, 128), 3), ((1, 1, 64, 15), -2),
)


@contextlib.contextmanager
def capability(name):
    torch.ops.amct._cpu_capability(name)
    try:
        yield
    finally:
        torch.ops.amct._cpu_capability("reset")


@unittest.skipUnless(HAVE_OP, _SKIP_REASON or "amct_ops.hifloat4_cast is not available")
class Base(unittest.TestCase):
    def tearDown(self):
        torch.ops.amct._cpu_capability("reset")

    def assertIdentical(self, got, want, what):
        """Same dtype, shape and bit patterns (NaN payloads included)."""
        self.assertEqual((got.dtype, tuple(got.shape)), (want.dtype, tuple(want.shape)), what)
        g, w = raw_bits(got), raw_bits(want)
        bad = (g != w).reshape(-1)
        if bool(bad.any()):
            i = torch.nonzero(bad).reshape(-1)[:6].tolist()
            rows = [f"[{k}] {int(g.reshape(-1)[k]) & 0xFFFFFFFF:#x} vs {int(w.reshape(-1)[k]) & 0xFFFFFFFF:#x}"
                    for k in i]
            self.fail(f"{what}: {int(bad.sum())} of {bad.numel()} differ: " + "; ".join(rows))

    def assertSpecEqual(self, got, want, what):
        """The specs' bitwise relation: identical bits, NaN where (and only where) expected."""
        self.assertEqual((got.dtype, tuple(got.shape)), (want.dtype, tuple(want.shape)), what)
        bad = ho.bitwise_mismatches(got, want)
        self.assertFalse(bool(bad.any()), f"{what}: {int(bad.sum())} mismatches")


class TestNativeEqualsEmulated(Base):
    """Native op == emulated kernel == reference, on every qdim position, dtype and layout."""

    def _fake_quant_case(self, x, qdim, what, reference=True):
        got = torch.ops.amct.hifloat4_fake_quant(x, qdim)
        self.assertTrue(got.is_contiguous(), what)
        self.assertIdentical(got, torch.ops.amct._hifloat4_fake_quant_emulated(x, qdim), f"{what}: vs emulated")
        if reference:
            self.assertSpecEqual(got, ref.hifloat4_fake_quant_ref(x, qdim), f"{what}: vs reference")

    def test_fake_quant_every_qdim(self):
        for dtype in DTYPES:
            for i, (shape, qdim) in enumerate(SHAPES):
                x = laid_out(dtype, shape, qdim, 100 * i + DTYPES.index(dtype))
                for q in {qdim, qdim % len(shape), qdim % len(shape) - len(shape)}:
                    with self.subTest(dtype=dtype, shape=shape, qdim=q):
                        self._fake_quant_case(x, q, f"{dtype} {shape} qdim {q}")

    def test_fake_quant_strided_inputs(self):
        for dtype in DTYPES:
            base = laid_out(dtype, (256, 3 * 128), -1, 7 + DTYPES.index(dtype))
            views = {"transposed (qdim 0)": (base.t(), 0), "step-sliced rows": (base[::3], -1),
                     "sliced columns": (base[:, 128:256], -1), "every other column, qdim 0": (base[:, ::2], 0),
                     "expanded": (base[:1, :128].expand(40, 128), -1), "expanded, qdim 0": (base[:64, :1].expand(64, 9), 0),
                     "permuted rank 3": (base.reshape(4, 64, 384).permute(2, 1, 0), 1)}
            for name, (x, qdim) in views.items():
                with self.subTest(dtype=dtype, view=name):
                    self._fake_quant_case(x, qdim, f"{dtype} {name}")

    def test_pack_unpack(self):
        for dtype in DTYPES:
            for i, (shape, qdim) in enumerate(SHAPES):
                if shape[qdim] % 64 or qdim % len(shape) != len(shape) - 1:
                    continue
                x = laid_out(dtype, shape, -1, 200 * i + DTYPES.index(dtype))
                for what, xin in (("contiguous", x), ("strided", x.unsqueeze(0).expand(2, *x.shape)[1])):
                    with self.subTest(dtype=dtype, shape=shape, layout=what):
                        s, v = torch.ops.amct.hifloat4_pack(xin)
                        es, ev = torch.ops.amct._hifloat4_pack_emulated(xin)
                        self.assertIdentical(s, es, f"{dtype} {shape} scale vs emulated")
                        self.assertIdentical(v, ev, f"{dtype} {shape} value vs emulated")
                        rs, rv = ref.hifloat4_pack_ref(x)
                        self.assertIdentical(s, rs, f"{dtype} {shape} scale vs reference")
                        self.assertIdentical(v, rv, f"{dtype} {shape} value vs reference")
                        for out in (None, F16, BF16, F32):
                            u = torch.ops.amct.hifloat4_unpack(s, v, out)
                            self.assertIdentical(u, torch.ops.amct._hifloat4_unpack_emulated(s, v, out),
                                                 f"{dtype} {shape} unpack {out} vs emulated")
                            self.assertSpecEqual(u, ref.hifloat4_unpack_ref(s, v, out), f"unpack {out} vs reference")
                        # The identity unpack(pack(x)).to(x.dtype) == fake_quant(x).
                        self.assertSpecEqual(torch.ops.amct.hifloat4_unpack(s, v).to(dtype),
                                             torch.ops.amct.hifloat4_fake_quant(x), "identity")

    def test_unpack_every_byte(self):
        g = torch.Generator().manual_seed(5)
        scale = torch.randint(0, 256, (3, 512, 4), generator=g, dtype=torch.int32).to(U8)
        scale[0, :256, 0] = torch.arange(256, dtype=torch.int32).to(U8)   # every E6M2 byte, FF too
        value = torch.randint(0, 256, (3, 512 * 32), generator=g, dtype=torch.int32).to(U8)
        for out in (None, F16, BF16, F32):
            for what, s, v in (("contiguous", scale, value),
                               ("strided", scale.transpose(0, 1).contiguous().transpose(0, 1), value[:, :]),):
                u = torch.ops.amct.hifloat4_unpack(s, v, out)
                self.assertIdentical(u, torch.ops.amct._hifloat4_unpack_emulated(s, v, out), f"{out} {what}")
                self.assertSpecEqual(u, ref.hifloat4_unpack_ref(s, v, out), f"{out} {what} vs reference")

    def test_golden_vectors(self):
        for name, x, want in vector_cases():
            with self.subTest(vector=name):
                self.assertSpecEqual(torch.ops.amct.hifloat4_fake_quant(x), want, name)
                self._fake_quant_case(x, -1, name)
                self._fake_quant_case(x.t().contiguous(), 0, f"{name} qdim 0")
                s, v = torch.ops.amct.hifloat4_pack(x)
                es, ev = torch.ops.amct._hifloat4_pack_emulated(x)
                self.assertIdentical(s, es, name)
                self.assertIdentical(v, ev, name)
                self.assertSpecEqual(torch.ops.amct.hifloat4_unpack(s, v, x.dtype), want, f"{name} unpack")

    def test_empty(self):
        for dtype in DTYPES:
            for shape, qdim in (((0, 64), -1), ((3, 0), -1), ((0, 64), 0), ((2, 0, 5), 1), ((64, 0), 0)):
                x = torch.zeros(shape, dtype=dtype)
                got = torch.ops.amct.hifloat4_fake_quant(x, qdim)
                self.assertEqual((tuple(got.shape), got.dtype), (shape, dtype))
                self.assertIdentical(got, torch.ops.amct._hifloat4_fake_quant_emulated(x, qdim), f"{shape}")
            s, v = torch.ops.amct.hifloat4_pack(torch.zeros(3, 0, dtype=dtype))
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((3, 0, 4), (3, 0)))
            u = torch.ops.amct.hifloat4_unpack(torch.zeros(0, 2, 4, dtype=U8), torch.zeros(0, 64, dtype=U8), dtype)
            self.assertEqual((tuple(u.shape), u.dtype), ((0, 128), dtype))

    def test_emulated_cores_and_ub(self):
        # The kernel's own properties: results do not depend on the emulated core count or UB size.
        cases = [(laid_out(dtype, shape, qdim, 300 + i), qdim)
                 for i, (dtype, (shape, qdim)) in enumerate(itertools.product(DTYPES, SHAPES[2:9]))]
        want = [torch.ops.amct.hifloat4_fake_quant(x, q) for x, q in cases]
        packed = [torch.ops.amct.hifloat4_pack(x.movedim(q, -1)) for x, q in cases]
        for cores, ub in ((3, 0), (7, 40960), (1, 40960), (5, 65536)):
            with _sim.sim_platform(aiv_cores=cores, ub_bytes=ub):
                for k, ((x, q), w, (s, v)) in enumerate(zip(cases, want, packed)):
                    what = f"case {k}, {cores} cores, UB {ub}"
                    self.assertIdentical(torch.ops.amct._hifloat4_fake_quant_emulated(x, q), w, what)
                    es, ev = torch.ops.amct._hifloat4_pack_emulated(x.movedim(q, -1))
                    self.assertIdentical(es, s, what)
                    self.assertIdentical(ev, v, what)
                    self.assertIdentical(torch.ops.amct._hifloat4_unpack_emulated(s, v, x.dtype),
                                         torch.ops.amct.hifloat4_unpack(s, v, x.dtype), what)

    def test_threads(self):
        x = laid_out(BF16, (512, 1024), -1, 77)
        xt = laid_out(F16, (1024, 600), 0, 78)
        want = (torch.ops.amct.hifloat4_fake_quant(x), torch.ops.amct.hifloat4_fake_quant(xt, 0),
                *torch.ops.amct.hifloat4_pack(x))
        for n in (1, 3):
            with num_threads(n):
                got = (torch.ops.amct.hifloat4_fake_quant(x), torch.ops.amct.hifloat4_fake_quant(xt, 0),
                       *torch.ops.amct.hifloat4_pack(x))
            for k, (g, w) in enumerate(zip(got, want)):
                self.assertIdentical(g, w, f"output {k}, {n} thread(s)")


class TestBatchEdges(Base):
    """The row kernels work in batches of 8 or 16 blocks (the SIMD width): a last partial batch
    runs on a zero-padded copy, and a batch holding a NaN / Inf block is patched afterwards (pack
    recomputes that block masked). Every block count around the batch sizes, a poisoned block at
    every position of a batch, in place and not, on every SIMD path."""

    COUNTS = (1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47)

    def setUp(self):
        _active, detected = torch.ops.amct._cpu_capability("reset")
        self.paths = CAPABILITIES[:CAPABILITIES.index(detected) + 1]

    def _cases(self, dtype):
        g = torch.Generator().manual_seed(11 + DTYPES.index(dtype))
        for n in self.COUNTS:
            x = (torch.randn(n, 64, generator=g) * 3).to(dtype)
            yield f"{n} blocks, finite", x
            yield f"{n} blocks, special", blocks(dtype, n, 1000 + n)
        for p in range(17):  # one poisoned block at every batch position, the others finite
            x = (torch.randn(33, 64, generator=g) * 3).to(dtype)
            x[p, (7 * p) % 64] = (float("nan"), float("inf"), -float("inf"))[p % 3]
            yield f"poisoned block {p} of 33", x

    def test_fake_quant_and_pack(self):
        for dtype in DTYPES:
            for what, x in self._cases(dtype):
                want = ref.hifloat4_fake_quant_ref(x)
                want_s, want_v = ref.hifloat4_pack_ref(x)
                for path in self.paths:
                    with self.subTest(dtype=dtype, case=what, path=path), capability(path):
                        got = torch.ops.amct.hifloat4_fake_quant(x)
                        self.assertSpecEqual(got, want, f"{what} {path}")
                        inplace = x.clone()
                        torch.ops.amct.hifloat4_fake_quant.out(inplace, out=inplace)
                        self.assertIdentical(inplace, got, f"{what} {path} in place")
                        s, v = torch.ops.amct.hifloat4_pack(x)
                        self.assertIdentical(s, want_s, f"{what} {path} scale")
                        self.assertIdentical(v, want_v, f"{what} {path} value")
                if what.endswith("special") or what.startswith("poisoned"):
                    self.assertIdentical(torch.ops.amct._hifloat4_fake_quant_emulated(x, -1), got,
                                         f"{what} vs emulated")


class TestCodeEdges(Base):
    """Edges of the kernels' shortcuts for docs/hifloat4.md A2 step 7, on every SIMD path, rows and
    columns, against reference.py: the code of u = |x| m near every rounding threshold of
    min(floor(bf16(u) + 0.5), 7) (bf16 ties around each k + 0.5, a few float32 steps either side),
    and the sign of a negative x whose product x m underflows to zero (-0.0 out, nibble 8 in pack)
    next to -0.0 (+0.0 out)."""

    def setUp(self):
        _active, detected = torch.ops.amct._cpu_capability("reset")
        self.paths = CAPABILITIES[:CAPABILITIES.index(detected) + 1]

    @staticmethod
    def _threshold_blocks():
        # 7.0 first gives S = 1 (p = bf16(7 C7) = 1.0), and group 0 both flags; groups 1-7 hold
        # values below 2, no flags, so there m = 4 and u = 4 |x| exactly.
        u = []
        for k in range(7):
            half = k + 0.5
            below = np.nextafter(np.float32(half), np.float32(0))  # in the binade under k + 0.5
            bf16_step = np.float32(2.0 ** (int(np.floor(np.log2(below))) - 7))
            tie = np.float32(half) - bf16_step / 2  # the bf16 tie just under k + 0.5
            for centre in (tie, np.float32(half), np.float32(half) - bf16_step):
                c = np.float32(centre)
                for d in range(-3, 4):
                    u.append(float(c + np.float32(d) * np.spacing(c)))
        u += [6.99, 7.0, 0.0, 2.0 ** -30]
        rows = []
        for first in range(0, len(u), 56):
            vals = (u[first:first + 56] + [0.0] * 56)[:56]
            signs = [(-1.0) ** i for i in range(56)]
            rows.append([7.0] + [0.5] * 7 + [s * v / 4 for s, v in zip(signs, vals)])
        return torch.tensor(rows, dtype=F32)

    @staticmethod
    def _underflow_blocks():
        tiny = [-(2.0 ** -149), -(2.0 ** -140), -(2.0 ** -130), -0.0, 2.0 ** -149, -(2.0 ** -126), -1e-40, 0.0]
        rows = []
        for big in (1000.0, 49152.0 * 8, 3.0, 2.0 ** -20):
            rows.append([big] + tiny * 7 + tiny[:7])
        return torch.tensor(rows, dtype=F32)

    def assertEveryPathMatchesReference(self, x, what):
        """Fake-quant of rows and of columns and pack of x on every SIMD path equal reference.py."""
        want = ref.hifloat4_fake_quant_ref(x)
        want_s, want_v = ref.hifloat4_pack_ref(x)
        want_t = ref.hifloat4_fake_quant_ref(x.t().contiguous(), 0)
        for path in self.paths:
            with self.subTest(case=what, path=path), capability(path):
                self.assertSpecEqual(torch.ops.amct.hifloat4_fake_quant(x), want, f"{what} {path}")
                s, v = torch.ops.amct.hifloat4_pack(x)
                self.assertIdentical(s, want_s, f"{what} {path} scale")
                self.assertIdentical(v, want_v, f"{what} {path} value")
                self.assertSpecEqual(torch.ops.amct.hifloat4_fake_quant(x.t().contiguous(), 0), want_t,
                                     f"{what} {path} columns")

    def test_codes_and_signs(self):
        for what, x in (("thresholds", self._threshold_blocks()), ("underflow", self._underflow_blocks())):
            self.assertEveryPathMatchesReference(x, what)
        # the underflow cases are what they claim: negative zeros out where x < 0, +0.0 for -0.0
        x = self._underflow_blocks()
        bits = raw_bits(ref.hifloat4_fake_quant_ref(x))
        self.assertEqual(int(bits[0, 1]) & 0xFFFFFFFF, 0x80000000)  # -2^-149 next to 1000
        self.assertEqual(int(bits[0, 4]), 0)  # -0.0

    @staticmethod
    def _sweep_blocks(dtype):
        # Every finite magnitude of the dtype in [M 2^-7, M], both signs, after a first element M
        # that sets the block scale, for 48 maxima M = (1 + k/16) 2^E: every q of the E6M2 scale,
        # so every mantissa of rec, and the flag combinations the sweep's subgroups fall into. The
        # kernels' one-add code rounding for bfloat16 / float16 inputs rests on x m being exact.
        info = {BF16: (np.arange(0x8000, dtype=np.int64) << 16, 0x7F80 << 16),
                F16: (np.arange(0x7C00, dtype=np.int64), None)}[dtype]
        if dtype == BF16:
            mags = info[0][info[0] < info[1]].astype(np.uint32).view(np.float32)
        else:
            mags = info[0].astype(np.uint16).view(np.float16).astype(np.float32)
        rows = []
        for e in ((-3, 0, 5) if dtype == BF16 else (-6, 0, 5)):
            for k in range(16):
                big = np.float32((1 + k / 16) * 2.0 ** e)
                sweep = mags[(mags >= big / 128) & (mags <= big)]
                vals = np.concatenate([sweep, -sweep])
                vals = np.concatenate([vals, np.zeros((-len(vals)) % 63, np.float32)]).reshape(-1, 63)
                rows.append(np.concatenate([np.full((len(vals), 1), big, np.float32), vals], axis=1))
        return torch.from_numpy(np.concatenate(rows)).to(dtype)

    def test_every_half_precision_value(self):
        for dtype in (BF16, F16):
            self.assertEveryPathMatchesReference(self._sweep_blocks(dtype), str(dtype))


class TestSimdPaths(Base):
    """Every SIMD path the CPU supports, forced, gives identical bits."""

    def setUp(self):
        active, detected = torch.ops.amct._cpu_capability("reset")
        self.paths = CAPABILITIES[:CAPABILITIES.index(detected) + 1]

    def _outputs(self, inputs):
        out = []
        for x, qdim in inputs:
            out.append(torch.ops.amct.hifloat4_fake_quant(x, qdim))
            if qdim % x.dim() == x.dim() - 1:
                s, v = torch.ops.amct.hifloat4_pack(x)
                out += [s, v] + [torch.ops.amct.hifloat4_unpack(s, v, d) for d in (F16, BF16, F32)]
        return out

    def test_identical_bits(self):
        inputs = [(laid_out(dtype, shape, qdim, 400 + i), qdim)
                  for i, (dtype, (shape, qdim)) in enumerate(itertools.product(DTYPES, SHAPES))]
        inputs += [(x, -1) for _, x, _ in vector_cases()]
        g = torch.Generator().manual_seed(9)
        s, v = torch.randint(0, 256, (64, 4), generator=g, dtype=torch.int32).to(U8), \
            torch.randint(0, 256, (64 * 32,), generator=g, dtype=torch.int32).to(U8)
        results = {}
        for name in self.paths:
            with capability(name):
                self.assertEqual(torch.ops.amct._cpu_capability(name)[0], name)
                results[name] = self._outputs(inputs) + [torch.ops.amct.hifloat4_unpack(s, v, d)
                                                         for d in (F16, BF16, F32)]
        self.assertGreaterEqual(len(results), 1)
        first = self.paths[0]
        for name in self.paths[1:]:
            for k, (a, b) in enumerate(zip(results[first], results[name])):
                self.assertIdentical(b, a, f"output {k}: {name} vs {first}")
        # and each against the emulated kernel on a few cases
        for name in self.paths:
            with capability(name):
                for x, qdim in inputs[::5]:
                    self.assertIdentical(torch.ops.amct.hifloat4_fake_quant(x, qdim),
                                         torch.ops.amct._hifloat4_fake_quant_emulated(x, qdim), f"{name}")


class TestOut(Base):
    """The .out overloads: same bits as the functional ops, the out= rule, Meta, compile."""

    def test_values(self):
        for dtype in DTYPES:
            x = laid_out(dtype, (6, 128, 9), 1, 500 + DTYPES.index(dtype))
            want = torch.ops.amct.hifloat4_fake_quant(x, 1)
            buf = torch.empty_like(x)
            got = torch.ops.amct.hifloat4_fake_quant.out(x, 1, out=buf)
            self.assertIs(got, buf)
            self.assertIdentical(buf, want, f"{dtype} fake-quant out")
            self.assertIdentical(hifloat4_fake_quant(x, 1, out=torch.empty(0, dtype=dtype)), want, "wrapper, resized")
            xl = x.movedim(1, -1).contiguous()
            s, v = torch.ops.amct.hifloat4_pack(xl)
            sb, vb = torch.empty_like(s), torch.empty(0, dtype=U8)
            gs, gv = torch.ops.amct.hifloat4_pack.out(xl, scale=sb, value=vb)
            self.assertTrue(gs is sb and gv is vb)
            self.assertIdentical(sb, s, "pack scale out")
            self.assertIdentical(vb, v, "pack value out (resized)")
            ws, wv = hifloat4_pack(xl, out=(torch.empty_like(s), torch.empty_like(v)))
            self.assertIdentical(ws, s, "wrapper pack")
            self.assertIdentical(wv, v, "wrapper pack")
            for d in (None, dtype):
                u = torch.ops.amct.hifloat4_unpack(s, v, d)
                ub = torch.empty_like(u)
                self.assertIs(torch.ops.amct.hifloat4_unpack.out(s, v, d, out=ub), ub)
                self.assertIdentical(ub, u, f"unpack out {d}")
                self.assertIdentical(hifloat4_unpack(s, v, d, out=torch.empty_like(u)), u, "wrapper unpack")

    def test_in_place(self):
        # fake-quant may write into its own (contiguous) input, along any qdim.
        for qdim in (-1, 0, 1):
            x = laid_out(BF16, (64, 128, 64), qdim, 510 + qdim)
            want = torch.ops.amct.hifloat4_fake_quant(x, qdim)
            self.assertIdentical(torch.ops.amct.hifloat4_fake_quant.out(x, qdim, out=x), want, f"qdim {qdim}")

    def test_empty_and_strided_inputs(self):
        x = torch.zeros(0, 64)
        out = torch.empty(0)
        torch.ops.amct.hifloat4_fake_quant.out(x, out=out)
        self.assertEqual(tuple(out.shape), (0, 64))
        base = laid_out(F32, (128, 256), -1, 520)
        buf = torch.empty(256, 128)
        torch.ops.amct.hifloat4_fake_quant.out(base.t(), 0, out=buf)
        self.assertIdentical(buf, torch.ops.amct.hifloat4_fake_quant(base.t(), 0), "transposed input")

    def test_autograd_refused(self):
        x = torch.randn(2, 64, requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, "out= does not support automatic differentiation"):
            hifloat4_fake_quant(x, out=torch.empty(2, 64))
        with torch.no_grad():
            hifloat4_fake_quant(x, out=torch.empty(2, 64))


if __name__ == "__main__":
    unittest.main()
