"""The native CPU hifloat8_cast ops against the AscendC kernel run through the kernel sim (the
private ``_<op>_emulated`` ops), bit for bit, on every SIMD path; and the out= overloads.

Oracles: the emulated kernel (tested against the reference and the golden vectors in
test_hifloat8_cast.py), the executable spec ``reference.py`` and the float64 oracle of
``hif8_oracle.py``. Each SIMD path (portable, AVX2, AVX-512) is forced with
``torch.ops.amct._cpu_capability`` where the CPU has it, and reset afterwards.

    PYTHONPATH=staging python -m pytest tests/test_hifloat8_native.py
"""
import math
import sys
import unittest
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hif8_oracle as ho  # noqa: E402
from amct_testing import num_threads  # noqa: E402

import amct_ops  # noqa: E402,F401
from amct_ops import _sim  # noqa: E402
from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant  # noqa: E402
from amct_ops.hifloat8_cast import reference as ref  # noqa: E402

F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
OPS = torch.ops.amct
CAPABILITIES = ("default", "avx2", "avx512")
ORDER = {name: i for i, name in enumerate(CAPABILITIES)}
ALL_CODES = torch.arange(256, dtype=torch.int32).to(U8)


def available_capabilities():
    """The paths this CPU can run: every capability up to the detected one."""
    _, detected = OPS._cpu_capability("reset")
    return [c for c in CAPABILITIES if ORDER[c] <= ORDER[detected]]


def all_patterns(dtype):
    return ho.patterns16(ho.all_fp16_bits(), dtype)


def random_fp32(n, seed):
    """Half normal * 10^U(-9, 6), half uniform random 32-bit patterns (subnormals, NaN, Inf)."""
    rng = np.random.default_rng(seed)
    half = n // 2
    scaled = (rng.standard_normal(half) * 10.0 ** rng.uniform(-9, 6, half)).astype(np.float32)
    pats = rng.integers(0, 1 << 32, n - half, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return torch.from_numpy(np.concatenate([scaled, pats]))


def fp32_specials():
    bits = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x33FFFFFF,
            0x34000000, 0xB4000000, 0x347FFFFF, 0x34800000, 0x3F87FFFF, 0x3F880000, 0x46DFFFFF, 0x46E00000,
            0x47200000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000,
            0xFFC00000, 0x7F80FFFF, 0x7F810000, 0x7FFFFFFF, 0xFFFFFFFF]
    edge = torch.from_numpy(ho.fp32_edge_set().copy())
    return torch.cat([ho.patterns32(np.array(bits, dtype=np.uint32)), edge])


def cases():
    """(name, native op, emulated op, input) pairs over the whole input space."""
    out = []
    for dt in (F16, BF16):
        x = all_patterns(dt)
        out.append((f"encode {dt} all patterns", OPS.encode_to_hifloat8, OPS._encode_to_hifloat8_emulated, x))
        out.append((f"fake-quant {dt} all patterns", OPS.hifloat8_fake_quant, OPS._hifloat8_fake_quant_emulated, x))
    for dt in (F16, BF16, F32, None):
        out.append((f"decode -> {dt} all codes", lambda c, dt=dt: OPS.decode_from_hifloat8(c, dt),
                    lambda c, dt=dt: OPS._decode_from_hifloat8_emulated(c, dt), ALL_CODES))
    for name, x in (("fp32 specials and edge set", fp32_specials()), ("fp32 random", random_fp32(1 << 18, 3))):
        out.append((f"fake-quant {name}", OPS.hifloat8_fake_quant, OPS._hifloat8_fake_quant_emulated, x))
    return out


class Base(ho.BitsMixin, unittest.TestCase):
    def tearDown(self):
        OPS._cpu_capability("reset")


class TestNativeEqualsEmulated(Base):
    """Every input space of the ops: native == emulated kernel, on each SIMD path."""

    @classmethod
    def setUpClass(cls):
        cls.cases = [(name, native, x, emulated(x)) for name, native, emulated, x in cases()]

    def test_every_path(self):
        paths = available_capabilities()
        self.assertIn("default", paths)
        for cap in paths:
            active, _ = OPS._cpu_capability(cap)
            self.assertEqual(active, cap)
            for name, native, x, want in self.cases:
                with self.subTest(path=cap, case=name):
                    self.assertBitsEqual(native(x), want, what=f"{cap}: {name}")

    def test_paths_identical_bits_including_nan_payloads(self):
        # The paths agree on every bit, NaN payloads too (the comparison above ignores them).
        for name, native, x, _ in self.cases:
            outs = []
            for cap in available_capabilities():
                OPS._cpu_capability(cap)
                outs.append((cap, native(x)))
            base_cap, base = outs[0]
            for cap, got in outs[1:]:
                with self.subTest(case=name, path=cap):
                    self.assertTrue(torch.equal(got.view(torch.uint8), base.view(torch.uint8)),
                                    f"{name}: {cap} differs from {base_cap}")

    def test_reference(self):
        # And, directly, the reference on the same inputs (docs/hifloat8.md D3-D6 for the native op).
        for name, native, _, x in cases():
            if "encode" in name:
                want = ref.encode_to_hifloat8_ref(x)
            elif "fake-quant" in name:
                want = ref.hifloat8_fake_quant_ref(x)
            else:
                continue
            with self.subTest(case=name):
                self.assertBitsEqual(native(x), want, what=name)
        for dt in (F16, BF16, F32):
            self.assertBitsEqual(OPS.decode_from_hifloat8(ALL_CODES, dt), ref.decode_from_hifloat8_ref(ALL_CODES, dt),
                                 what=f"decode {dt}")

    def test_oracle_fp32(self):
        edge = ho.fp32_edge_set()
        self.assertBitsEqual(OPS.hifloat8_fake_quant(torch.from_numpy(edge.copy())), ho.oracle().fake_quant_fp32(edge),
                             what="fp32 edge set vs oracle")


class TestLayouts(Base):
    """Odd sizes (every tail length), strided and empty inputs on every path."""

    def _ops(self):
        g = torch.Generator().manual_seed(5)
        x32 = torch.randn(4099, generator=g) * torch.exp2(torch.randint(-24, 17, (4099,), generator=g))
        codes = torch.randint(0, 256, (4099,), generator=g, dtype=torch.int32).to(U8)
        rows = []
        for dt in (F16, BF16):
            rows.append((f"encode {dt}", OPS.encode_to_hifloat8, OPS._encode_to_hifloat8_emulated, x32.to(dt)))
        for dt in (F16, BF16, F32):
            rows.append((f"fake-quant {dt}", OPS.hifloat8_fake_quant, OPS._hifloat8_fake_quant_emulated, x32.to(dt)))
            rows.append((f"decode {dt}", lambda c, dt=dt: OPS.decode_from_hifloat8(c, dt),
                         lambda c, dt=dt: OPS._decode_from_hifloat8_emulated(c, dt), codes))
        return rows

    def test_odd_sizes(self):
        sizes = list(range(0, 70)) + [127, 129, 1000, 4099]
        for cap in available_capabilities():
            OPS._cpu_capability(cap)
            for name, native, emulated, x in self._ops():
                for n in sizes:
                    with self.subTest(path=cap, op=name, n=n):
                        got = native(x[:n])
                        self.assertEqual(tuple(got.shape), (n,))
                        self.assertBitsEqual(got, emulated(x[:n]), what=f"{cap} {name} n={n}")

    def test_strided_and_shaped(self):
        for cap in available_capabilities():
            OPS._cpu_capability(cap)
            for name, native, emulated, x in self._ops():
                base = x[:4096].reshape(16, 16, 16)
                views = {"0-d": x[3], "transposed": base.transpose(0, 2), "step-sliced": base[::2, 1::3, ::5],
                         "offset slice": x[7:4000:3], "expanded": base[:, :1, :].expand(16, 9, 16),
                         "4-d": x[:2 * 3 * 5 * 7].reshape(2, 3, 5, 7)}
                for vname, v in views.items():
                    with self.subTest(path=cap, op=name, view=vname):
                        got = native(v)
                        self.assertTrue(got.is_contiguous())
                        self.assertEqual(tuple(got.shape), tuple(v.shape))
                        self.assertBitsEqual(got, emulated(v.contiguous()), what=f"{cap} {name} {vname}")

    def test_empty(self):
        for name, native, _, x in self._ops():
            for shape in ((0,), (3, 0, 5)):
                with self.subTest(op=name, shape=shape):
                    got = native(x[:0].reshape(shape))
                    self.assertEqual(tuple(got.shape), shape)
                    self.assertTrue(got.is_contiguous())

    def test_threads(self):
        # Large enough for several chunks: the same bits with 1 thread and with the default.
        x = random_fp32(1 << 21, 7)
        xb, codes = x.bfloat16(), torch.randint(0, 256, (1 << 21,), dtype=torch.int32).to(U8)
        calls = [lambda: OPS.hifloat8_fake_quant(x), lambda: OPS.encode_to_hifloat8(xb),
                 lambda: OPS.decode_from_hifloat8(codes, F32), lambda: OPS.hifloat8_fake_quant(xb)]
        many = [c() for c in calls]
        with num_threads(1):
            one = [c() for c in calls]
        for a, b in zip(many, one):
            self.assertTrue(torch.equal(a.view(torch.uint8), b.view(torch.uint8)))
        self.assertBitsEqual(many[0], ref.hifloat8_fake_quant_ref(x), what="fp32 2M vs reference")

    def test_native_does_not_launch_the_sim(self):
        before = _sim.launch_count()
        OPS.encode_to_hifloat8(torch.ones(1000, dtype=BF16))
        self.assertEqual(_sim.launch_count(), before)
        OPS._encode_to_hifloat8_emulated(torch.ones(1000, dtype=BF16))
        self.assertGreater(_sim.launch_count(), before)


def _out_cases():
    """(name, op.out call(x, out), functional call(x), input, out dtype)."""
    g = torch.Generator().manual_seed(8)
    x = torch.randn(6, 7, generator=g) * 100
    codes = torch.randint(0, 256, (6, 7), generator=g, dtype=torch.int32).to(U8)
    rows = []
    for dt in (F16, BF16):
        rows.append((f"encode {dt}", lambda a, out: OPS.encode_to_hifloat8.out(a, out=out), OPS.encode_to_hifloat8,
                     x.to(dt), U8))
    for dt in (F16, BF16, F32):
        rows.append((f"decode {dt}", lambda a, out, dt=dt: OPS.decode_from_hifloat8.out(a, dt, out=out),
                     lambda a, dt=dt: OPS.decode_from_hifloat8(a, dt), codes, dt))
        rows.append((f"fake-quant {dt}", lambda a, out: OPS.hifloat8_fake_quant.out(a, out=out),
                     OPS.hifloat8_fake_quant, x.to(dt), dt))
    rows.append(("decode default", lambda a, out: OPS.decode_from_hifloat8.out(a, out=out),
                 OPS.decode_from_hifloat8, codes, BF16))
    return rows


class TestOut(Base):
    """out= overloads over every dtype (the rule itself, for every op: test_out_variants.py)."""

    def test_writes_and_returns_out(self):
        for name, call, functional, x, dt in _out_cases():
            with self.subTest(op=name):
                want = functional(x)
                out = torch.full(x.shape, 7, dtype=torch.int32).to(dt)
                got = call(x, out)
                self.assertIs(got, out)
                self.assertBitsEqual(out, want, what=f"{name} out=")
                # Non-contiguous input, and a non-contiguous out (written through).
                xt, out_t = x.t(), torch.zeros(x.shape, dtype=torch.int32).to(dt).t()
                self.assertIs(call(xt, out_t), out_t)
                self.assertFalse(out_t.is_contiguous())
                self.assertBitsEqual(out_t, functional(xt), what=f"{name} transposed out=")

    def test_empty_out_is_resized(self):
        for name, call, functional, x, dt in _out_cases():
            for empty in (torch.empty(0, dtype=dt), torch.empty(3, 0, dtype=dt)):
                with self.subTest(op=name, out=tuple(empty.shape)):
                    got = call(x, empty)
                    self.assertIs(got, empty)
                    self.assertEqual(tuple(empty.shape), tuple(x.shape))
                    self.assertBitsEqual(empty, functional(x), what=f"{name} resized out")
            # An empty input with an empty out of another shape: out takes the input's shape.
            out = torch.empty(0, dtype=dt)
            self.assertEqual(tuple(call(x[:0, :0].reshape(0, 0), out).shape), (0, 0))

    def test_in_place_and_partial_overlap(self):
        for dt in (F16, BF16, F32):
            x = (torch.randn(1000) * 1000).to(dt)
            want = OPS.hifloat8_fake_quant(x)
            y = x.clone()
            OPS.hifloat8_fake_quant.out(y, out=y)
            self.assertBitsEqual(y, want, what=f"in place {dt}")
            buf = x.clone()
            with self.assertRaisesRegex(RuntimeError, "hifloat8_fake_quant: out must be input itself or not share memory"):
                OPS.hifloat8_fake_quant.out(buf[1:], out=buf[:-1])
        codes = torch.zeros(64, dtype=U8)
        with self.assertRaisesRegex(RuntimeError, "decode_from_hifloat8: out must not share memory with input"):
            OPS.decode_from_hifloat8.out(codes[:32], torch.float16, out=codes.view(F16))

    def test_wrappers(self):
        x = torch.randn(300, dtype=BF16) * 50
        buf = torch.empty(300, dtype=U8)
        self.assertIs(encode_to_hifloat8(x, out=buf), buf)
        self.assertBitsEqual(buf, ref.encode_to_hifloat8_ref(x), what="wrapper encode out=")
        dec = torch.empty(0, dtype=F32)
        self.assertIs(decode_from_hifloat8(buf, F32, out=dec), dec)
        self.assertBitsEqual(dec, ref.decode_from_hifloat8_ref(buf, F32), what="wrapper decode out=")
        fq = torch.empty_like(x)
        self.assertIs(hifloat8_fake_quant(x, out=fq), fq)
        self.assertBitsEqual(fq, ref.hifloat8_fake_quant_ref(x), what="wrapper fake-quant out=")


if __name__ == "__main__":
    unittest.main()
