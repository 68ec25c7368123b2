"""hifloat8_cast tiling from platform facts: worked examples and the rules of docs/hifloat8.md C8."""
import unittest

import torch

import amct_ops
from amct_ops import _sim

FIELDS = ("blockNum", "castMode", "totalLength", "numPerCore", "tailNumLastCore", "tileLength", "ubBudget",
          "encLutBytes", "decLutBytes")
ENCODE_FP16, ENCODE_BF16, DECODE_FP16, DECODE_BF16, DECODE_FP32, FQ_FP16, FQ_BF16, FQ_FP32 = range(8)
# (input bytes, output bytes, LUT bytes) per mode, from the kernel's buffer layout.
LAYOUT = {0: (2, 1, 32768), 1: (2, 1, (8192, 65536)), 2: (1, 2, 512), 3: (1, 2, 512), 4: (1, 4, 1024),
          5: (2, 2, 33280), 6: (2, 2, (8704, 66048)), 7: (4, 4, 0)}
ARCH = amct_ops.build_info()["npu_arch"]


def tiling(mode, n):
    return dict(zip(FIELDS, torch.ops.amct._hifloat8_cast_tiling(mode, n)))


def round32(x):
    return (x + 31) // 32 * 32


class WorkedExamplesTest(unittest.TestCase):
    def test_tile_sizes_at_the_arch_ub(self):
        with _sim.sim_platform(40, 0):
            big = 1 << 24
            expected = 32768 if ARCH == "dav-2201" else 65536
            self.assertEqual(tiling(ENCODE_FP16, big)["tileLength"], expected)
            self.assertEqual(tiling(DECODE_BF16, big)["tileLength"], expected)

    def test_tile_sizes_at_a_forced_40kb_ub(self):
        with _sim.sim_platform(40, 40 * 1024):
            self.assertEqual(tiling(ENCODE_FP16, 1 << 24)["tileLength"], 2720)  # upstream 32 KB table
            self.assertEqual(tiling(ENCODE_BF16, 1 << 24)["tileLength"], 10912)  # (40960 - 8192) // 3, to 32
            self.assertEqual(tiling(DECODE_FP16, 1 << 24)["tileLength"], 13472)

    def test_bf16_table_size_follows_the_ub(self):
        """bf16 uses the 64 KB whole-code table when tiles stay >= 8192 and cores get >= 65536
        elements, else the 8 KB one."""
        with _sim.sim_platform(40, 0):
            self.assertEqual(tiling(ENCODE_BF16, 1 << 24)["encLutBytes"], 65536)
            self.assertEqual(tiling(FQ_BF16, 1 << 24)["encLutBytes"], 65536)
            # Small inputs: loading 64 KB per core would cost more than it saves.
            self.assertEqual(tiling(ENCODE_BF16, 40 * 65535)["encLutBytes"], 8192)
            self.assertEqual(tiling(ENCODE_BF16, 40 * 65536)["encLutBytes"], 65536)
        with _sim.sim_platform(40, 40 * 1024):
            self.assertEqual(tiling(ENCODE_BF16, 1 << 24)["encLutBytes"], 8192)
            self.assertEqual(tiling(FQ_BF16, 1 << 24)["encLutBytes"], 8192)

    def test_core_count_policy_with_40_cores(self):
        with _sim.sim_platform(40, 0):
            for n, enc, dec in ((4096, 1, 2), (65536, 16, 32), (163840, 40, 40)):
                self.assertEqual(tiling(ENCODE_FP16, n)["blockNum"], enc, n)
                self.assertEqual(tiling(DECODE_BF16, n)["blockNum"], dec, n)
            t = tiling(ENCODE_FP16, 1048583)
            self.assertEqual((t["blockNum"], t["numPerCore"], t["tailNumLastCore"]), (40, 26214, 26237))

    def test_fp32_fake_quant_respects_the_select_scratch_on_dav_2201(self):
        with _sim.sim_platform(40, 0):
            t = tiling(FQ_FP32, 1 << 22)
        budget = 188416 if ARCH == "dav-2201" else 253952
        self.assertEqual(t["ubBudget"], budget)
        self.assertLessEqual(24 * t["tileLength"] + 2 * round32(t["tileLength"] // 8), budget)


class Bf16TablesTest(unittest.TestCase):
    """Both bf16 encode tables (64 KB whole-code, 8 KB top-13 with exponent-255 lanes encoded
    in the kernel) give the reference's codes on every bf16 pattern, NaN payloads included."""

    def test_every_bf16_pattern_with_each_table(self):
        from amct_ops.hifloat8_cast import encode_to_hifloat8, hifloat8_fake_quant, reference

        x = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
        # Words mixing NaN/Inf lanes with ordinary ones, and all-special words.
        x = torch.cat([x, x.view(-1, 4).flip(0).reshape(-1)])
        want_codes = reference.encode_to_hifloat8_ref(x)
        want_fq = reference.hifloat8_fake_quant_ref(x)
        for cores, ub, table in ((1, 0, 65536), (0, 0, 8192), (1, 40 * 1024, 8192)):
            with _sim.sim_platform(cores, ub), self.subTest(table=table, cores=cores, ub=ub):
                self.assertEqual(tiling(ENCODE_BF16, x.numel())["encLutBytes"], table)
                self.assertTrue(torch.equal(encode_to_hifloat8(x), want_codes))
                got = hifloat8_fake_quant(x)
                nan = want_fq.isnan()
                self.assertTrue(torch.equal(got.isnan(), nan))
                self.assertTrue(torch.equal(got.view(torch.int16)[~nan], want_fq.view(torch.int16)[~nan]))


class InvariantsTest(unittest.TestCase):
    """For every mode, size and platform: the split covers n exactly and the buffers fit."""

    def test_invariants(self):
        for cores, ub in ((1, 0), (2, 0), (7, 0), (40, 0), (40, 40960), (13, 65536)):
            with _sim.sim_platform(cores, ub):
                facts_ub = _sim.get_platform()[1]
                for mode in range(8):
                    for n in (1, 31, 32, 33, 64, 1000, 4095, 4096, 65537, 1048583, 3 * 2**31 + 5):
                        with self.subTest(cores=cores, ub=ub, mode=mode, n=n):
                            self.check(tiling(mode, n), mode, n, cores, facts_ub)

    def check(self, t, mode, n, cores, facts_ub):
        in_bytes, out_bytes, lut = LAYOUT[mode]
        self.assertEqual(t["totalLength"], n)
        self.assertTrue(1 <= t["blockNum"] <= cores)
        self.assertEqual((t["blockNum"] - 1) * t["numPerCore"] + t["tailNumLastCore"], n)
        self.assertGreaterEqual(t["tailNumLastCore"], t["numPerCore"])
        self.assertLessEqual(t["ubBudget"], facts_ub)
        allowed = lut if isinstance(lut, tuple) else (lut,)
        self.assertIn(t["encLutBytes"] + t["decLutBytes"], allowed)
        lut = t["encLutBytes"] + t["decLutBytes"]
        tile = t["tileLength"]
        self.assertGreater(tile, 0)
        self.assertLessEqual(tile, 65536)
        if mode == FQ_FP32:
            self.assertEqual(tile % 64, 0)
            used = 24 * tile + 2 * round32(tile // 8)
        else:
            self.assertEqual(tile % 32, 0)
            used = lut + round32(tile * in_bytes) + round32(tile * out_bytes)
        self.assertLessEqual(used, t["ubBudget"])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(RuntimeError, "cast_mode"):
            torch.ops.amct._hifloat8_cast_tiling(8, 10)
        with self.assertRaisesRegex(RuntimeError, "numel"):
            torch.ops.amct._hifloat8_cast_tiling(0, 0)


if __name__ == "__main__":
    unittest.main()
