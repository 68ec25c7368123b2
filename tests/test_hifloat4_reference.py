"""Checks of the HiFloat4 executable spec ``reference.py`` (docs/hifloat4.md C7 and the Tests table).

* D1: the reference against all 15 golden vectors (outputs, S, flags, pack bytes, unpack).
* A6: every worked example, with the spec's numbers.
* Oracle: bitwise agreement with the independent scalar oracle of ``hif4_oracle.py`` on a few
  thousand blocks per dtype (every D3 data kind, edge blocks included), for fake-quant, pack
  and unpack.
* D4 / C5: ``unpack(*pack(x)).to(x.dtype) == fake_quant(x)`` bitwise for every dtype.
* D5, D8, D9, D11 as far as they concern the reference alone; C7 purity and speed.

This module needs no compiled code: the reference is loaded from the source tree.
"""

import ast
import math
import os
import sys
import time
import unittest
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hif4_oracle as ho  # noqa: E402
from amct_testing import load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REFERENCE_SRC = REPO / "hifloat4_cast" / "python" / "hifloat4_cast" / "reference.py"


def _load_reference():
    """The executable spec from the source tree (the file under test here)."""
    return load_source_module("_hif4_reference_src", REFERENCE_SRC)


ref = _load_reference()

F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
DTYPES = (F16, BF16, F32)
NAME = ho.DTYPE_NAMES

_THREADS = []


def setUpModule():
    # The reference is single-threaded here: its results do not depend on the thread count,
    # and on a shared 2-core machine many small intra-op parallel loops mostly wait.
    _THREADS.append(torch.get_num_threads())
    torch.set_num_threads(1)


def tearDownModule():
    torch.set_num_threads(_THREADS.pop())


def vector_input(v):
    """The (1, 64) input tensor of a golden vector, from its bit patterns."""
    return ho.to_torch([ho.hexint(b) for b in v["input_bits"]], v["dtype"]).reshape(1, 64)


def vector_bytes(v):
    """The vector's (scale (1, 1, 4), value (1, 32)) uint8 tensors."""
    s = torch.tensor([ho.hexint(b) for b in v["pack_scale_bytes"]], dtype=torch.int32)
    q = torch.tensor([ho.hexint(b) for b in v["pack_value_bytes"]], dtype=torch.int32)
    return s.to(U8).reshape(1, 1, 4), q.to(U8).reshape(1, 32)


def block_params(x):
    """The reference's A2 intermediates for a (rows, 64 g) input (internal, for D1 S/l2/l3)."""
    return ref._quantise_blocks(ref._to_blocks(x))


def oracle_expected(block_bits, dtype_name):
    """Oracle fake-quant outputs (tensor (n, 64)) and pack bytes (numpy) for (n, 64) patterns."""
    results = ho.fake_quant_blocks(block_bits, dtype_name)
    out = ho.expected_tensor([b for r in results for b in r.out_bits], dtype_name)
    packed = [ho.pack_block(r) for r in results]
    scale = np.array([p[0] for p in packed], dtype=np.uint8)
    value = np.array([p[1] for p in packed], dtype=np.uint8)
    return results, out.reshape(-1, 64), scale, value


def fuzz_tensor(dtype, n_blocks, seed):
    """(n_blocks, 64) input of ``dtype`` drawn from every D3 data kind."""
    bits = ho.BlockGen(NAME[dtype], seed).mixture(n_blocks)
    return ho.to_torch(bits.reshape(-1), dtype).reshape(n_blocks, 64)


# =============================================================================================
# D1: reference vs the golden vectors
# =============================================================================================

class TestD1Vectors(ho.BitsMixin, unittest.TestCase):
    """Every vector: output bits, S, l2 / l3, scale and value bytes, unpack per the flags."""

    @classmethod
    def setUpClass(cls):
        cls.vectors = ho.load_vectors()

    def test_vector_file(self):
        self.assertEqual(len(self.vectors), 15)
        names = [v["name"] for v in self.vectors]
        self.assertEqual(len(set(names)), 15)
        for name in ("all_2p0_bf16", "nan_block_bf16", "fp16_output_underflow",
                     "fp32_in_group_bf16_rounding", "e6m2_carry_bf16"):
            self.assertIn(name, names)
        for v in self.vectors:
            self.assertEqual(len(v["input_bits"]), 64, v["name"])
            self.assertEqual(len(v["pack_scale_bytes"]), 4, v["name"])
            self.assertEqual(len(v["pack_value_bytes"]), 32, v["name"])
            self.assertEqual(len(v["l2_per8_bits"]), 8, v["name"])
            self.assertEqual(len(v["l3_per4_bits"]), 16, v["name"])
            # input_values describe the same inputs as input_bits.
            x = vector_input(v).double().reshape(-1)
            for got, s in zip(x.tolist(), v["input_values"]):
                self.assertTrue(got == float(s) or (math.isnan(got) and math.isnan(float(s))),
                                (v["name"], got, s))

    def test_outputs(self):
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                x = vector_input(v)
                out = ref.hifloat4_fake_quant_ref(x)
                self.assertEqual(out.dtype, x.dtype)
                self.assertEqual(tuple(out.shape), (1, 64))
                want = ho.to_torch([ho.hexint(b) for b in v["expected_out_dtype_bits"]],
                                   v["dtype"]).reshape(1, 64)
                self.assertBitsEqual(out, want, what=f"{v['name']} output bits")
                want32 = ho.to_torch([ho.hexint(b) for b in v["expected_out_f32_bits"]],
                                     "float32").reshape(1, 64)
                self.assertBitsEqual(out.float(), want32, what=f"{v['name']} fp32 widening")
                # expected_out_values agree with the bits (signed zeros included).
                vals = torch.tensor([float(s) for s in v["expected_out_values"]]).reshape(1, 64)
                self.assertBitsEqual(vals, want32, what=f"{v['name']} expected_out_values")

    def test_block_scale_and_flags(self):
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                r = block_params(vector_input(v))
                self.assertEqual(r["S"].reshape(-1).tolist(), [float(v["block_scale_e6m2"])])
                self.assertEqual(r["l2"].reshape(-1).to(torch.int64).tolist(), v["l2_per8_bits"])
                # l3_per4_bits is j-major, then k: the order of the (8, 2) flags flattened.
                self.assertEqual(r["l3"].reshape(-1).to(torch.int64).tolist(), v["l3_per4_bits"])
                poisoned = bool(r["poisoned"].reshape(-1)[0])
                self.assertEqual(poisoned, v["pack_scale_bytes"][0] == "0xFF")

    def test_pack_bytes(self):
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                scale, value = ref.hifloat4_pack_ref(vector_input(v))
                want_s, want_v = vector_bytes(v)
                self.assertEqual((scale.dtype, value.dtype), (U8, U8))
                self.assertEqual(tuple(scale.shape), (1, 1, 4))
                self.assertEqual(tuple(value.shape), (1, 32))
                self.assertEqual(scale.tolist(), want_s.tolist())
                self.assertEqual(value.tolist(), want_v.tolist())

    def test_unpack_per_flags(self):
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                s, q = vector_bytes(v)
                dtype = ho.TORCH_DTYPES[v["dtype"]]
                u32 = ref.hifloat4_unpack_ref(s, q)
                self.assertEqual(u32.dtype, F32)
                self.assertBitsEqual(u32, ref.hifloat4_unpack_ref(s, q, F32), what="dtype=fp32")
                want32 = ho.to_torch([ho.hexint(b) for b in v["expected_out_f32_bits"]],
                                     "float32").reshape(1, 64)
                want = ho.to_torch([ho.hexint(b) for b in v["expected_out_dtype_bits"]],
                                   v["dtype"]).reshape(1, 64)
                fp32_equal = not bool(ho.bitwise_mismatches(u32, want32).any())
                self.assertEqual(fp32_equal, v["checks"]["unpack_fp32_bit_equal_ref"])
                cast_equal = not bool(ho.bitwise_mismatches(u32.to(dtype), want).any())
                self.assertEqual(cast_equal, v["checks"]["unpack_cast_to_dtype_bit_equal_ref"])
                self.assertTrue(cast_equal)          # C5 holds for every vector
                # dtype= equals the cast (C4).
                self.assertBitsEqual(ref.hifloat4_unpack_ref(s, q, dtype), u32.to(dtype),
                                     what=f"{v['name']} unpack dtype=")

    def test_fp16_output_underflow_fp32_differs(self):
        (v,) = [v for v in self.vectors if v["name"] == "fp16_output_underflow"]
        self.assertFalse(v["checks"]["unpack_fp32_bit_equal_ref"])
        s, q = vector_bytes(v)
        u32 = ref.hifloat4_unpack_ref(s, q)
        out16 = ref.hifloat4_fake_quant_ref(vector_input(v))
        differ = ho.bitwise_mismatches(u32, out16.float()).reshape(-1)
        self.assertTrue(bool(differ.any()))
        # The differences are exactly the values below 2^-14 that fp16 re-rounds.
        self.assertTrue(bool((u32.reshape(-1)[differ].abs() < 2.0 ** -14).all()))
        self.assertBitsEqual(u32.to(F16), out16, what="cast fixes it")

    def test_in_group_bf16_flag(self):
        # A6 ex. 7: omitting t = bf16(t) changes a code exactly for the flagged vectors.
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                bits = [ho.hexint(b) for b in v["input_bits"]]
                with_step = ho.quantise_block(bits, v["dtype"])
                without = ho.quantise_block(bits, v["dtype"], skip_in_group_bf16=True)
                changed = with_step.codes != without.codes
                self.assertEqual(changed,
                                 v["checks"]["bf16_rounding_of_in_group_value_changes_result"])

    def test_oracle_reproduces_vectors(self):
        # The independent oracle is checked against the upstream-derived vectors on its own.
        for v in self.vectors:
            with self.subTest(vector=v["name"]):
                r = ho.quantise_block([ho.hexint(b) for b in v["input_bits"]], v["dtype"])
                want = [ho.hexint(b) for b in v["expected_out_dtype_bits"]]
                if r.poisoned:
                    self.assertTrue(all(b is None for b in r.out_bits))
                else:
                    self.assertEqual(r.out_bits, want)
                self.assertEqual(r.S, float(v["block_scale_e6m2"]))
                self.assertEqual(r.l2, v["l2_per8_bits"])
                self.assertEqual(r.l3, v["l3_per4_bits"])
                scale, value = ho.pack_block(r)
                self.assertEqual(scale, [ho.hexint(b) for b in v["pack_scale_bytes"]])
                self.assertEqual(value, [ho.hexint(b) for b in v["pack_value_bytes"]])
                unpacked = ho.unpack_block(scale, value, v["dtype"])
                self.assertEqual([b is None for b in unpacked], [r.poisoned] * 64)
                if not r.poisoned:
                    self.assertEqual(unpacked, want)


# =============================================================================================
# A6 worked examples and the A2 step 4 table
# =============================================================================================

class TestA6WorkedExamples(ho.BitsMixin, unittest.TestCase):

    def test_1_all_two(self):
        x = torch.full((1, 64), 2.0, dtype=BF16)
        r = block_params(x)
        self.assertEqual(float(r["S"]), 0.3125)
        self.assertEqual(int(r["e"]), -2)
        self.assertEqual(float(r["q"]), 5.0)
        self.assertEqual(float(r["rec"]), 3.203125)          # = R(5) * 2^2, not 3.19921875
        scale, value = ref.hifloat4_pack_ref(x)
        self.assertEqual(scale.reshape(-1).tolist(), [0xB9, 0xFF, 0xFF, 0xFF])
        self.assertEqual(value.reshape(-1).tolist(), [0x66] * 32)
        out = ref.hifloat4_fake_quant_ref(x)
        self.assertEqual(out.dtype, BF16)
        self.assertEqual(out.float().reshape(-1).tolist(), [1.875] * 64)
        for dtype in DTYPES:   # the same in every dtype
            self.assertEqual(ref.hifloat4_fake_quant_ref(x.to(dtype)).float().unique().tolist(),
                             [1.875])

    def test_2_zero_block(self):
        x = torch.zeros(1, 64, dtype=BF16)
        x[0, 1::2] = -0.0
        self.assertEqual(int(torch.signbit(x).sum()), 32)
        scale, value = ref.hifloat4_pack_ref(x)
        self.assertEqual(scale.reshape(-1).tolist(), [0, 0, 0, 0])
        self.assertEqual(value.reshape(-1).tolist(), [0] * 32)
        self.assertEqual(float(block_params(x)["S"]), 2.0 ** -48)
        out = ref.hifloat4_fake_quant_ref(x)
        self.assertEqual(ho.ubits(out).reshape(-1).tolist(), [0] * 64)     # +0.0 everywhere

    def _block_with_max(self, vmax, dtype=BF16):
        x = torch.linspace(-1, 1, 64, dtype=torch.float64) * vmax * 0.5
        x[5] = vmax
        return x.to(dtype).reshape(1, 64)

    def test_3_double_rounding(self):
        x = self._block_with_max(7.90625)
        r = block_params(x)
        self.assertEqual(float(r["S"]), 1.0)
        self.assertEqual(ref.hifloat4_pack_ref(x)[0].reshape(-1)[0].item(), 0xC0)
        # Rounding p = 1.12725830078125 to E6M2 directly would give 1.25.
        self.assertEqual(7.90625 * ref.C7, 1.12725830078125)

    def test_4_carry(self):
        x = self._block_with_max(13.125)
        self.assertEqual(float(block_params(x)["S"]), 2.0)
        self.assertEqual(ref.hifloat4_pack_ref(x)[0].reshape(-1)[0].item(), 0xC4)

    def test_5_clamps(self):
        big = torch.tensor([2.1e6, -2.1e6] * 32, dtype=BF16).reshape(1, 64)
        self.assertEqual(ref.hifloat4_pack_ref(big)[0].reshape(-1)[0].item(), 0xFE)
        self.assertEqual(ref.hifloat4_fake_quant_ref(big).float().reshape(-1).tolist(),
                         [344064.0, -344064.0] * 32)
        tiny = torch.tensor([2e-16, -2e-16, 1e-17, -1e-17] * 16, dtype=BF16).reshape(1, 64)
        self.assertEqual(ref.hifloat4_pack_ref(tiny)[0].reshape(-1)[0].item(), 0x00)
        out = ref.hifloat4_fake_quant_ref(tiny)
        self.assertEqual(out.float().abs().max().item(), 0.0)
        want = [0x0000, 0x8000] * 32                              # negatives give -0.0
        self.assertEqual(ho.ubits(out).reshape(-1).tolist(), want)

    def test_6_fp16_rerounding(self):
        (v,) = [v for v in ho.load_vectors() if v["name"] == "fp16_output_underflow"]
        x = vector_input(v)
        i = [ho.hexint(b) for b in v["input_bits"]].index(0x8007)
        out = ref.hifloat4_fake_quant_ref(x)
        self.assertEqual(int(ho.ubits(out).reshape(-1)[i]), 0x8008)
        scale, value = ref.hifloat4_pack_ref(x)
        self.assertEqual(scale.reshape(-1)[0].item(), 0x66)
        self.assertEqual(float(block_params(x)["S"]), 1.5 * 2.0 ** -23)
        u32 = ref.hifloat4_unpack_ref(scale, value)
        self.assertEqual(u32.reshape(-1)[i].item(), -7.5 * 2.0 ** -24)
        self.assertEqual(int(ho.ubits(u32.to(F16)).reshape(-1)[i]), 0x8008)

    def test_7_in_group_bf16_rounding_matters(self):
        names = ("fp32_in_group_bf16_rounding", "bf16_in_group_bf16_rounding")
        for v in ho.load_vectors():
            if v["name"] in names:
                bits = [ho.hexint(b) for b in v["input_bits"]]
                skipped = ho.quantise_block(bits, v["dtype"], skip_in_group_bf16=True)
                got = ref.hifloat4_pack_ref(vector_input(v))[1].reshape(-1).tolist()
                codes = [(got[i // 2] >> (4 * (i % 2))) & 7 for i in range(64)]
                self.assertNotEqual(codes, skipped.codes, v["name"])

    def test_8_poisoned_block(self):
        for name, special in (("nan_block_bf16", math.nan), ("neg_inf_block_bf16", -math.inf)):
            (v,) = [v for v in ho.load_vectors() if v["name"] == name]
            x = vector_input(v)
            self.assertEqual(int(torch.isnan(x).sum() + torch.isinf(x).sum()), 1)
            out = ref.hifloat4_fake_quant_ref(x)
            self.assertTrue(bool(out.isnan().all()), name)
            scale, _ = ref.hifloat4_pack_ref(x)
            self.assertEqual(scale.reshape(-1)[0].item(), 0xFF)
            # The flags come from the masked block: the same bytes as with the bad lane = 0.
            masked = torch.where(torch.isfinite(x), x, torch.zeros_like(x))
            self.assertEqual(scale.reshape(-1)[1:].tolist(),
                             ref.hifloat4_pack_ref(masked)[0].reshape(-1)[1:].tolist())
            if name == "nan_block_bf16":
                self.assertEqual(scale.reshape(-1).tolist(), [0xFF, 0x6B, 0xB6, 0xF5])
                self.assertEqual(float(block_params(x)["S"]), 0.375)
            # A bad lane of either kind packs as +0 (sign 0, code 0).
            bad = (~torch.isfinite(x)).reshape(-1).nonzero().item()
            _, value = ref.hifloat4_pack_ref(x)
            self.assertEqual((value.reshape(-1)[bad // 2].item() >> (4 * (bad % 2))) & 0xF, 0)
            # The same block with +Inf, -Inf or NaN in that lane is poisoned the same way.
            for sub in (math.inf, -math.inf, math.nan, special):
                y = x.clone()
                y.reshape(-1)[bad] = sub
                self.assertTrue(bool(ref.hifloat4_fake_quant_ref(y).isnan().all()))
                self.assertEqual(ref.hifloat4_pack_ref(y)[0].tolist(), scale.tolist())

    def test_reciprocal_table(self):
        # A2 step 4: bf16(1/S) = R(q) * 2^-e for every q and e, and the fp32 quotients of 4/q.
        R = {4: 1.0, 5: 0.80078125, 6: 0.66796875, 7: 0.5703125, 8: 0.5}
        quot = {4: 0x3F800000, 5: 0x3F4CCCCD, 6: 0x3F2AAAAB, 7: 0x3F124925, 8: 0x3F000000}
        for q in R:
            four_over_q = torch.tensor([4.0]) / torch.tensor([float(q)])
            self.assertEqual(int(ho.ubits(four_over_q)[0]), quot[q], q)
            self.assertEqual(four_over_q.to(BF16).float().item(), R[q], q)
        # bf16(fp32(1/S)) = R(q) * 2^-e for every one of the 255 E6M2 scales S = q * 2^(e-2)
        # (byte (e + 48) * 4 + q - 4; q = 8 is the next byte's q = 4 and needs no row).
        S = torch.tensor(ho.E6M2_VALUES, dtype=torch.float64).to(F32)
        rec = (torch.ones_like(S) / S).to(BF16).float()
        for b in range(255):
            q, e = 4 + (b & 3), (b >> 2) - 48
            self.assertEqual(rec[b].item(), math.ldexp(R[q], -e), hex(b))
        # The reference's own rec, e and q on a few thousand blocks follow the table too.
        r = block_params(fuzz_tensor(F32, 4096, 310))
        ok = ~r["poisoned"]
        table = torch.tensor([0, 0, 0, 0, 1.0, 0.80078125, 0.66796875, 0.5703125, 0.5])
        want = table[r["q"].long()] * torch.exp2(-r["e"].double()).float()
        self.assertTrue(bool((r["rec"][ok] == want[ok]).all()))
        self.assertEqual(set(r["q"][ok].long().unique().tolist()), {4, 5, 6, 7, 8})
        self.assertTrue(bool((r["S"][ok] == r["q"][ok] * torch.exp2(r["e"][ok].float() - 2)).all()))


# =============================================================================================
# The reference against the independent oracle
# =============================================================================================

class TestReferenceVsOracle(ho.BitsMixin, unittest.TestCase):
    """A few thousand blocks per dtype, every D3 kind: fake-quant bits, pack bytes, unpack."""

    N_BLOCKS = 1600

    def _check_dtype(self, dtype, seed):
        gen = ho.BlockGen(NAME[dtype], seed)
        bits = gen.mixture(self.N_BLOCKS)
        x = ho.to_torch(bits.reshape(-1), dtype).reshape(-1, 64)
        results, want, want_s, want_v = oracle_expected(bits, NAME[dtype])
        self.assertBitsEqual(ref.hifloat4_fake_quant_ref(x), want, what=f"{dtype} fake-quant",
                             inputs=x.float())
        scale, value = ref.hifloat4_pack_ref(x)
        np.testing.assert_array_equal(scale.reshape(-1, 4).numpy(), want_s,
                                      err_msg=f"{dtype} scale bytes")
        np.testing.assert_array_equal(value.numpy(), want_v, err_msg=f"{dtype} value bytes")
        # The data really holds the edge cases the generators aim for.
        self.assertGreater(sum(r.poisoned for r in results), 50)
        self.assertGreater(sum((not r.poisoned) and r.byte0 == 0 for r in results), 20)
        if dtype != F16:
            self.assertGreater(sum((not r.poisoned) and r.byte0 == 0xFE for r in results), 20)
        ties = 0
        for r in results:
            if not r.poisoned:
                e = math.frexp(r.p)[1] - 1
                ties += (math.ldexp(r.p, 2 - e) % 1.0) == 0.5
        self.assertGreater(ties, 30, "E6M2 ties")
        carries = sum((not r.poisoned) and math.ldexp(r.p, 3 - (math.frexp(r.p)[1])) == 7.5
                      for r in results)
        self.assertGreater(carries, 3, "E6M2 carries")
        neg_zero = sum(b == 1 << (ho.FORMATS[NAME[dtype]].width - 1)
                       for r in results if not r.poisoned for b in r.out_bits)
        self.assertGreater(neg_zero, 100, "-0.0 outputs")
        changed = sum(ho.quantise_block(row, NAME[dtype], skip_in_group_bf16=True).codes != r.codes
                      for row, r in zip(bits.tolist()[:400], results[:400]))
        self.assertGreater(changed, 5, "blocks where the in-group bf16 step matters")

    def test_fp16(self):
        self._check_dtype(F16, 101)

    def test_bf16(self):
        self._check_dtype(BF16, 102)

    def test_fp32(self):
        self._check_dtype(F32, 103)

    def test_unpack_random_bytes(self):
        # Every byte pattern is valid input (A4): random bytes, with FF blocks among them.
        rng = np.random.default_rng(104)
        g = 700
        scale = rng.integers(0, 256, (g, 4), dtype=np.uint8)
        scale[::50, 0] = 0xFF
        value = rng.integers(0, 256, (g, 32), dtype=np.uint8)
        st, vt = torch.from_numpy(scale.copy()), torch.from_numpy(value.reshape(-1).copy())
        for dtype in DTYPES:
            want = ho.expected_tensor(
                [b for s, v in zip(scale.tolist(), value.tolist())
                 for b in ho.unpack_block(s, v, NAME[dtype])], dtype)
            got = ref.hifloat4_unpack_ref(st, vt, dtype)
            self.assertEqual(tuple(got.shape), (g * 64,))
            self.assertBitsEqual(got, want, what=f"unpack to {dtype}")

    def test_all_scale_bytes(self):
        # D5: the 255 non-FF scale bytes decode to the A4 formula exactly (flags 0, code 4).
        scale = torch.zeros(255, 4, dtype=U8)
        scale[:, 0] = torch.arange(255, dtype=torch.int32).to(U8)
        value = torch.full((255 * 32,), 0x44, dtype=U8)          # code 4: c/4 = 1
        out = ref.hifloat4_unpack_ref(scale, value).reshape(255, 64)
        for b in range(255):
            want = 2.0 ** ((b >> 2) - 48) * (1 + (b & 3) / 4)
            self.assertEqual(out[b].unique().tolist(), [want], b)
            self.assertEqual(want, ho.E6M2_VALUES[b])


# =============================================================================================
# D4 / C5: the pack-unpack identity on the reference
# =============================================================================================

class TestC5Identity(ho.BitsMixin, unittest.TestCase):
    """unpack(*pack(x)).to(x.dtype) == fake_quant(x) bitwise, every dtype and data kind."""

    def _check(self, x, what):
        scale, value = ref.hifloat4_pack_ref(x)
        back = ref.hifloat4_unpack_ref(scale, value)
        self.assertEqual(back.dtype, F32)
        want = ref.hifloat4_fake_quant_ref(x)
        self.assertBitsEqual(back.to(x.dtype), want, what=what)
        self.assertBitsEqual(ref.hifloat4_unpack_ref(scale, value, x.dtype), want,
                             what=f"{what} (dtype=)")
        if x.dtype != F16:   # for bf16 and fp32 the fp32 unpack already equals the output
            self.assertBitsEqual(back, want.float(), what=f"{what} fp32")

    def test_every_dtype(self):
        for i, dtype in enumerate(DTYPES):
            with self.subTest(dtype=dtype):
                x = fuzz_tensor(dtype, 8192, 200 + i)
                self._check(x.reshape(32, 256, 64).reshape(32, 16384), f"{dtype} fuzz")
                # Other qdims, after moving the quant dim last (pack works on the last dim).
                y = x.reshape(64, 128, 64).transpose(0, 2)          # qdim 0 of y: length 64
                fq = ref.hifloat4_fake_quant_ref(y, 0)
                s, v = ref.hifloat4_pack_ref(y.movedim(0, -1))
                self.assertBitsEqual(ref.hifloat4_unpack_ref(s, v).to(dtype),
                                     fq.movedim(0, -1).contiguous(), what=f"{dtype} qdim 0")

    def test_fp16_needs_the_cast(self):
        # fp16 results below 2^-14 are not yet rounded in the fp32 unpack.
        x = ho.to_torch(ho.BlockGen("float16", 205).clamp_low(200).reshape(-1), F16).reshape(-1, 64)
        s, v = ref.hifloat4_pack_ref(x)
        back = ref.hifloat4_unpack_ref(s, v)
        fq = ref.hifloat4_fake_quant_ref(x)
        self.assertTrue(bool(ho.bitwise_mismatches(back, fq.float()).any()))
        self.assertBitsEqual(back.to(F16), fq, what="fp16 cast")


# =============================================================================================
# D5 layout on the reference
# =============================================================================================

class TestD5Layout(ho.BitsMixin, unittest.TestCase):

    def test_alternating_signs(self):
        x = torch.tensor([1.0, -1.0] * 32, dtype=BF16).reshape(1, 64)
        _, value = ref.hifloat4_pack_ref(x)
        v = value.reshape(-1).to(torch.int32)
        self.assertTrue(bool(((v & 0x08) == 0).all()))     # even (positive) low nibbles
        self.assertTrue(bool(((v & 0x80) != 0).all()))     # odd (negative) high nibbles

    def test_poisoned_neighbours_untouched(self):
        g = torch.Generator().manual_seed(5)
        for dtype in DTYPES:
            base = (torch.randn(3, 256, generator=g) * 10).to(dtype)
            for bad in (math.nan, math.inf, -math.inf):
                x = base.clone()
                x[1, 64 + 17] = bad
                scale, value = ref.hifloat4_pack_ref(x)
                clean_s, clean_v = ref.hifloat4_pack_ref(base)
                self.assertEqual(scale[1, 1, 0].item(), 0xFF)
                want_s = clean_s.clone()
                want_s[1, 1] = ref.hifloat4_pack_ref(
                    torch.where(torch.isfinite(x), x, torch.zeros_like(x)))[0][1, 1]
                want_s[1, 1, 0] = 0xFF
                self.assertEqual(scale.tolist(), want_s.tolist())
                # Value bytes: only the bad lane's nibble can change (it packs as +0).
                diff = (value != clean_v).nonzero().tolist()
                self.assertLessEqual(len(diff), 1)
                if diff:
                    self.assertEqual(diff[0], [1, (64 + 17) // 2])
                out = ref.hifloat4_fake_quant_ref(x)
                clean = ref.hifloat4_fake_quant_ref(base)
                self.assertTrue(bool(out[1, 64:128].isnan().all()))
                keep = torch.ones_like(out, dtype=torch.bool)
                keep[1, 64:128] = False
                self.assertBitsEqual(out[keep], clean[keep], what=f"{dtype} neighbours")

    def test_hand_built_bytes(self):
        # S = 0.5 (byte 0 = (-1 + 48) * 4 = 0xBC), l2 = 1 and l3 = 0 in group 0 (de = 1), code 4.
        scale = torch.tensor([[0xBC, 0x80, 0x00, 0x00]], dtype=torch.int32).to(U8)
        value = torch.zeros(32, dtype=U8)
        value[0] = 0x04         # element 0: code 4, positive
        value[1] = 0xC0         # element 3: code 4, negative
        value[4] = 0x08         # element 8 (group 1): nibble 8 -> -0.0
        out = ref.hifloat4_unpack_ref(scale, value)
        self.assertEqual(out[0].item(), 1.0)
        self.assertEqual(out[3].item(), -1.0)
        self.assertEqual(int(ho.ubits(out[8:9])[0]), 0x80000000)
        self.assertEqual(int((out != 0).sum()), 2)

    def test_unpack_default_dtype(self):
        s, v = ref.hifloat4_pack_ref(torch.randn(2, 128))
        self.assertEqual(ref.hifloat4_unpack_ref(s, v).dtype, F32)
        self.assertEqual(ref.hifloat4_unpack_ref(s, v, None).dtype, F32)
        self.assertEqual(ref.hifloat4_unpack_ref(s, v, dtype=BF16).dtype, BF16)


# =============================================================================================
# C6 / D8 errors, D9 shapes, D11 parity, C7 purity
# =============================================================================================

class TestReferenceContract(ho.BitsMixin, unittest.TestCase):

    FQ, PK, UP = "hifloat4_fake_quant", "hifloat4_pack", "hifloat4_unpack"

    def _raises(self, fn, msg):
        with self.assertRaises(RuntimeError) as cm:
            fn()
        self.assertEqual(str(cm.exception), msg)

    def test_c6_messages(self):
        fq, pk, up = ref.hifloat4_fake_quant_ref, ref.hifloat4_pack_ref, ref.hifloat4_unpack_ref
        z = torch.zeros
        u8 = lambda *s: torch.zeros(*s, dtype=U8)  # noqa: E731
        cases = [
            (lambda: fq(z(3, 100)), f"{self.FQ}: quant dim length must be a multiple of 64, got 100"),
            (lambda: fq(z(100, 64), 0), f"{self.FQ}: quant dim length must be a multiple of 64, got 100"),
            (lambda: fq(z(3, 64), 2), f"{self.FQ}: qdim out of range, expected a value in [-2, 1], got 2"),
            (lambda: fq(z(3, 64), -3), f"{self.FQ}: qdim out of range, expected a value in [-2, 1], got -3"),
            (lambda: fq(z(64), 1), f"{self.FQ}: qdim out of range, expected a value in [-1, 0], got 1"),
            (lambda: fq(torch.tensor(1.0)), f"{self.FQ}: input must have at least 1 dimension, got 0"),
            (lambda: pk(torch.tensor(1.0)), f"{self.PK}: input must have at least 1 dimension, got 0"),
            (lambda: fq(z(3, 64, dtype=torch.float64)),
             f"{self.FQ}: input dtype must be float16, bfloat16 or float32, got float64"),
            (lambda: fq(z(3, 64, dtype=torch.int32)),
             f"{self.FQ}: input dtype must be float16, bfloat16 or float32, got int32"),
            (lambda: pk(z(3, 64, dtype=torch.float64)),
             f"{self.PK}: input dtype must be float16, bfloat16 or float32, got float64"),
            (lambda: pk(z(3, 64, dtype=torch.int32)),
             f"{self.PK}: input dtype must be float16, bfloat16 or float32, got int32"),
            (lambda: pk(z(3, 100)), f"{self.PK}: last dim length must be a multiple of 64, got 100"),
            (lambda: up(z(3, 4, 4, dtype=torch.int32), u8(3, 128)),
             f"{self.UP}: scale dtype must be uint8, got int32"),
            (lambda: up(u8(3, 4, 4), z(3, 128, dtype=torch.int32)),
             f"{self.UP}: value dtype must be uint8, got int32"),
            (lambda: up(u8(3, 4, 4), u8(3, 64)),
             f"{self.UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [3, 64]"),
            (lambda: up(u8(3, 4, 4), u8(2, 128)),
             f"{self.UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [2, 128]"),
            (lambda: up(u8(3, 4, 4), u8(3, 1, 128)),
             f"{self.UP}: value shape must be [3, 128] to match scale [3, 4, 4], got [3, 1, 128]"),
            (lambda: up(u8(3, 4, 3), u8(3, 128)), f"{self.UP}: scale last dim must be 4, got 3"),
            (lambda: up(u8(3, 4, 4), u8(3, 128), torch.int32),
             f"{self.UP}: dtype must be float16, bfloat16 or float32, got int32"),
            (lambda: up(u8(3, 4, 4), u8(3, 128), torch.float64),
             f"{self.UP}: dtype must be float16, bfloat16 or float32, got float64"),
        ]
        for fn, msg in cases:
            with self.subTest(msg=msg):
                self._raises(fn, msg)

    def test_check_order(self):
        # C2: dtype, rank, qdim range, multiple of 64.
        self._raises(lambda: ref.hifloat4_fake_quant_ref(torch.tensor(1.0, dtype=torch.float64)),
                     f"{self.FQ}: input dtype must be float16, bfloat16 or float32, got float64")
        self._raises(lambda: ref.hifloat4_fake_quant_ref(torch.zeros(3, 100), 5),
                     f"{self.FQ}: qdim out of range, expected a value in [-2, 1], got 5")
        self._raises(lambda: ref.hifloat4_fake_quant_ref(torch.zeros(0, 100)),
                     f"{self.FQ}: quant dim length must be a multiple of 64, got 100")
        self._raises(lambda: ref.hifloat4_pack_ref(torch.zeros(0, 100)),
                     f"{self.PK}: last dim length must be a multiple of 64, got 100")

    def test_unpack_other_shape_errors(self):
        # Not in C6: rank < 2 and a device mismatch raise RuntimeError as well.
        with self.assertRaisesRegex(RuntimeError, "^hifloat4_unpack: "):
            ref.hifloat4_unpack_ref(torch.zeros(4, dtype=U8), torch.zeros(32, dtype=U8))
        with self.assertRaisesRegex(RuntimeError, "^hifloat4_unpack: "):
            ref.hifloat4_unpack_ref(torch.zeros(1, 4, dtype=U8),
                                    torch.zeros(32, dtype=U8, device="meta"))

    def test_shapes_and_qdims(self):
        g = torch.Generator().manual_seed(7)
        base = torch.randn(4, 64, 3, 128, generator=g) * 30
        for dtype in DTYPES:
            x = base.to(dtype)
            for qdim in (1, -3, 3, -1):
                with self.subTest(dtype=dtype, qdim=qdim):
                    out = ref.hifloat4_fake_quant_ref(x, qdim)
                    self.assertEqual((out.shape, out.dtype), (x.shape, dtype))
                    self.assertTrue(out.is_contiguous())
                    d = qdim % 4
                    # Same as moving the dim last by hand and quantising rows.
                    moved = x.movedim(d, -1).contiguous()
                    want = ref.hifloat4_fake_quant_ref(moved.reshape(-1, x.shape[d]))
                    self.assertBitsEqual(out.movedim(d, -1).reshape(-1, x.shape[d]), want,
                                         what=f"qdim {qdim}")
            # Positive and negative forms agree.
            self.assertBitsEqual(ref.hifloat4_fake_quant_ref(x, 1), ref.hifloat4_fake_quant_ref(x, -3))
            # Rank 1.
            r1 = x.reshape(-1)[:64]
            self.assertBitsEqual(ref.hifloat4_fake_quant_ref(r1),
                                 ref.hifloat4_fake_quant_ref(r1.reshape(1, 64)).reshape(64))
            s, v = ref.hifloat4_pack_ref(r1)
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((1, 4), (32,)))
            # Pack keeps leading dims.
            s, v = ref.hifloat4_pack_ref(x)
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((4, 64, 3, 2, 4), (4, 64, 3, 64)))
            self.assertEqual(tuple(ref.hifloat4_unpack_ref(s, v).shape), tuple(x.shape))

    def test_non_contiguous(self):
        g = torch.Generator().manual_seed(8)
        base = torch.randn(64, 6, 128, generator=g) * 7
        for dtype in DTYPES:
            b = base.to(dtype)
            views = [("transposed", b.transpose(0, 2), 0), ("step-sliced", b[:, ::2, ::1], -1),
                     ("sliced", b[::2, 1:, :64], -1), ("permuted", b.permute(2, 1, 0), -1),
                     ("expanded", b[:, :1, :].expand(64, 5, 128), 0)]
            for name, v, qdim in views:
                with self.subTest(dtype=dtype, view=name):
                    self.assertFalse(v.is_contiguous())
                    self.assertBitsEqual(ref.hifloat4_fake_quant_ref(v, qdim),
                                         ref.hifloat4_fake_quant_ref(v.contiguous(), qdim),
                                         what=name)
                    if v.shape[-1] % 64 == 0:
                        s1, v1 = ref.hifloat4_pack_ref(v)
                        s2, v2 = ref.hifloat4_pack_ref(v.contiguous())
                        self.assertTrue(torch.equal(s1, s2) and torch.equal(v1, v2), name)
                        self.assertTrue(s1.is_contiguous() and v1.is_contiguous())
            s, v = ref.hifloat4_pack_ref(b.reshape(-1, 128))
            self.assertBitsEqual(ref.hifloat4_unpack_ref(s.transpose(0, 1).contiguous().transpose(0, 1),
                                                         v[:, :].t().contiguous().t()),
                                 ref.hifloat4_unpack_ref(s, v), what="unpack strided")

    def test_empty(self):
        for dtype in DTYPES:
            for shape, qdim in (((0, 64), -1), ((3, 0), -1), ((0, 64), 0), ((3, 0, 5), 1)):
                out = ref.hifloat4_fake_quant_ref(torch.zeros(shape, dtype=dtype), qdim)
                self.assertEqual((tuple(out.shape), out.dtype), (shape, dtype))
            s, v = ref.hifloat4_pack_ref(torch.zeros(0, 64, dtype=dtype))
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((0, 1, 4), (0, 32)))
            s, v = ref.hifloat4_pack_ref(torch.zeros(3, 0, dtype=dtype))
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((3, 0, 4), (3, 0)))
            self.assertEqual((s.dtype, v.dtype), (U8, U8))
            out = ref.hifloat4_unpack_ref(s, v, dtype)
            self.assertEqual((tuple(out.shape), out.dtype), ((3, 0), dtype))
            out = ref.hifloat4_unpack_ref(torch.zeros(0, 2, 4, dtype=U8), torch.zeros(0, 64, dtype=U8))
            self.assertEqual(tuple(out.shape), (0, 128))

    def test_huge_last_dims(self):
        # D9: (2, 64 * 4099) and (1, 2^22) in fp32 equal the same rows cut into blocks.
        g = torch.Generator().manual_seed(9)
        for shape in ((2, 64 * 4099), (1, 1 << 22)):
            x = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-30, 30, shape, generator=g))
            out = ref.hifloat4_fake_quant_ref(x)
            want = ref.hifloat4_fake_quant_ref(x.reshape(-1, 64)).reshape(shape)
            self.assertBitsEqual(out, want, what=str(shape))
            s, v = ref.hifloat4_pack_ref(x)
            self.assertEqual(tuple(s.shape), (shape[0], shape[1] // 64, 4))
            self.assertBitsEqual(ref.hifloat4_unpack_ref(s, v), want, what=f"{shape} identity")

    def test_d11_upstream_parity(self):
        for rows, n in ((2, 128), (3, 512), (1, 64)):
            s, v = ref.hifloat4_pack_ref(torch.randn(rows, n))
            self.assertEqual((tuple(s.shape), tuple(v.shape)), ((rows, n // 64, 4), (rows, n // 2)))
        with self.assertRaises(RuntimeError):
            ref.hifloat4_pack_ref(torch.randn(3, 100))
        z = ref.hifloat4_fake_quant_ref(torch.zeros(2, 64, dtype=BF16))
        self.assertEqual(z.float().abs().max().item(), 0.0)
        self.assertFalse(bool(z.isnan().any()))
        x = torch.randn(3, 64)
        self.assertBitsEqual(ref.hifloat4_fake_quant_ref(x, 1), ref.hifloat4_fake_quant_ref(x, -1))
        y = torch.randn(128, 64)
        out = ref.hifloat4_fake_quant_ref(y, 0)
        self.assertEqual(out.shape, y.shape)
        self.assertBitsEqual(out, ref.hifloat4_fake_quant_ref(y.t().contiguous()).t().contiguous())

    def test_no_grad_tracking(self):
        x = torch.randn(2, 64, requires_grad=True)
        self.assertFalse(ref.hifloat4_fake_quant_ref(x).requires_grad)
        s, v = ref.hifloat4_pack_ref(x)
        self.assertFalse(ref.hifloat4_unpack_ref(s, v).requires_grad)

    def test_deterministic(self):
        x = fuzz_tensor(F32, 512, 300)
        a = ho.ubits(ref.hifloat4_fake_quant_ref(x))
        b = ho.ubits(ref.hifloat4_fake_quant_ref(x.clone()))
        nan = np.isnan(ref.hifloat4_fake_quant_ref(x).numpy())
        np.testing.assert_array_equal(a[~nan], b[~nan])

    def test_pure_pytorch(self):
        # C7: imports only torch and never touches torch.ops or compiled libraries.
        tree = ast.parse(REFERENCE_SRC.read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or ".").split(".")[0])
            elif isinstance(node, ast.Attribute):
                self.assertNotIn(node.attr, ("ops", "load_library", "_C", "cpp_extension"))
        self.assertLessEqual(imported, {"torch"})

    @unittest.skipUnless(os.environ.get("AMCT_PERF_TESTS") == "1",
                         "timing checks run only with AMCT_PERF_TESTS=1: the default suite has no timed tests")
    def test_speed(self):
        # The oracle of a 2M-per-dtype fuzz and the baseline of the op's benchmark: 4M bf16
        # elements, one thread, well under 10 s (measured ~0.3 s).
        x = torch.randn(1024, 4096).to(BF16)
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            t0 = time.perf_counter()
            ref.hifloat4_fake_quant_ref(x)
            elapsed = time.perf_counter() - t0
        finally:
            torch.set_num_threads(old)
        self.assertLess(elapsed, 10.0)


if __name__ == "__main__":
    unittest.main()
