"""The native CPU operators give the same bits with the CPU's flush-to-zero / denormals-are-zero
modes on (``torch.set_flush_denormal(True)``: FTZ and DAZ in MXCSR on x86) as with them off.

A user may run with FTZ/DAZ set (some frameworks set it for speed); the HiFloat8, HiFloat4 and
MXFP4 contracts need exact subnormals, so the native kernels must not compute with subnormal
floats. Inputs: every fp16 and bf16 pattern, fp32 subnormals and their neighbours, rows of one
magnitude from the subnormals to the overflow. The FTZ-off results are the oracle-checked ones
(each operator's tests compare them with reference.py and the brute-force oracles); this test
asks only that the mode changes nothing.

    PYTHONPATH=staging python -m pytest tests/test_flush_denormal.py
"""
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import find_op_package  # noqa: E402
from test_hardware_modes import all_16bit, as_tuple, bits  # noqa: E402


def fp32_inputs():
    g = torch.Generator().manual_seed(4)
    tiny = torch.arange(1, 64 * 64 + 1, dtype=torch.int32).view(torch.float32)
    near = torch.arange(0x007FF000, 0x00801000, dtype=torch.int32).view(torch.float32)
    scales = torch.arange(-149, 128, dtype=torch.float64).exp2().unsqueeze(1)
    ranged = (torch.randn(scales.numel(), 64, generator=g, dtype=torch.float64) * scales).float()
    return torch.cat([tiny.reshape(-1, 64), -tiny.reshape(-1, 64), near.reshape(-1, 64), ranged])


def inputs(dtype):
    if dtype == torch.float32:
        return fp32_inputs()
    g = torch.Generator().manual_seed(5)
    lo, hi = (-26, 16) if dtype == torch.float16 else (-135, 128)
    scales = torch.arange(lo, hi, dtype=torch.float64).exp2().unsqueeze(1)
    ranged = (torch.randn(scales.numel(), 64, generator=g, dtype=torch.float64) * scales).to(dtype)
    return torch.cat([all_16bit(dtype), ranged])


DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def cases():
    """(label, package, thunk) for every native cast-like operator and dtype."""
    amct = torch.ops.amct
    out = []
    for dt in DTYPES:
        x = inputs(dt)
        finite = torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
        out.append((f"hifloat8_fake_quant {dt}", "hifloat8_cast", lambda x=x: amct.hifloat8_fake_quant(x)))
        if dt != torch.float32:
            out.append((f"encode_to_hifloat8 {dt}", "hifloat8_cast", lambda x=x: amct.encode_to_hifloat8(x)))
        out.append((f"decode_from_hifloat8 {dt}", "hifloat8_cast", lambda dt=dt: amct.decode_from_hifloat8(
            torch.arange(256, dtype=torch.int32).to(torch.uint8).reshape(4, 64), dt)))
        out.append((f"hifloat4_fake_quant {dt}", "hifloat4_cast", lambda x=x: amct.hifloat4_fake_quant(x, -1)))
        out.append((f"hifloat4_pack {dt}", "hifloat4_cast", lambda x=x: amct.hifloat4_pack(x)))
        out.append((f"hifloat4_unpack {dt}", "hifloat4_cast",
                    lambda x=x, dt=dt: amct.hifloat4_unpack(*amct.hifloat4_pack(x), dt)))
        for mode in ("round", "rint", "floor"):
            out.append((f"mxfp4_quantize {dt} {mode}", "svd_quant", lambda f=finite, m=mode: amct.mxfp4_quantize(f, m)))
        out.append((f"mxfp4_dequantize {dt}", "svd_quant",
                    lambda f=finite, dt=dt: amct.mxfp4_dequantize(*amct.mxfp4_quantize(f, "round"), dt)))
        for s in (0.25, 1.0, 1.5):
            out.append((f"quant_dequant_mxfp4 {dt} s{s}", "svd_quant",
                        lambda x=x, s=s: amct.quant_dequant_mxfp4(x, 32, s)))
    return out


class FlushDenormalTest(unittest.TestCase):
    def test_native_ops_ignore_ftz_daz(self):
        if not torch.set_flush_denormal(False):
            self.skipTest("this CPU has no flush-denormal mode")
        ran = 0
        for label, pkg, run in cases():
            if find_op_package(pkg)[0] is None:
                continue
            with self.subTest(case=label):
                want = as_tuple(run())
                try:
                    self.assertTrue(torch.set_flush_denormal(True))
                    # The mode is on: a subnormal product is flushed by torch's own CPU ops.
                    tiny = torch.tensor([2.0 ** -140], dtype=torch.float32)
                    self.assertEqual((tiny * 1.0).item(), 0.0, "flush-denormal is not in effect")
                    got = as_tuple(run())
                finally:
                    torch.set_flush_denormal(False)
                ran += 1
                for i, (g, w) in enumerate(zip(got, want)):
                    bad = (bits(g) != bits(w)).nonzero()
                    self.assertEqual(bad.numel(), 0, f"{label} output {i} with FTZ/DAZ on: {bad.shape[0]} elements "
                                     f"differ, first at {bad[:4].tolist()}")
        if ran == 0:
            self.skipTest("no operator package is built")


if __name__ == "__main__":
    unittest.main()
