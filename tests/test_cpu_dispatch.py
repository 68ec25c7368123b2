"""The SIMD copy of the native CPU kernels that runs is the one asked for.

Every native kernel is compiled three times (portable, AVX2, AVX-512; amct_cpu_dispatch.h) and the
copy is picked per call. The identical-bits tests of each package force every copy with
``torch.ops.amct._cpu_capability``; since all copies give the same bits, those tests alone would
pass if the hook were ignored. Here ``torch.ops.amct._cpu_capability_picked`` (the copy the latest
call's dispatch returned) shows that each op of each package runs the forced copy, that
``AMCT_CPU_CAPABILITY`` lowers the copy at start-up, and that bad names and capabilities this CPU
lacks are refused with a clear error.

Run after ``bash ops_build.sh``::

    PYTHONPATH=staging python -m pytest tests/test_cpu_dispatch.py
"""
import os
import subprocess
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import find_op_package  # noqa: E402

CAPABILITIES = ("default", "avx2", "avx512")
_HAVE = {pkg: find_op_package(pkg)[0] is not None for pkg in ("hifloat8_cast", "hifloat4_cast", "svd_quant")}


def _calls():
    """(name, call) for every public native op of the built packages."""
    x = torch.linspace(-3, 3, 256).to(torch.bfloat16).reshape(4, 64)
    ops = torch.ops.amct
    calls = []
    if _HAVE["hifloat8_cast"]:
        codes = ops.encode_to_hifloat8(x)
        calls += [("encode_to_hifloat8", lambda: ops.encode_to_hifloat8(x)),
                  ("decode_from_hifloat8", lambda: ops.decode_from_hifloat8(codes, torch.bfloat16)),
                  ("hifloat8_fake_quant", lambda: ops.hifloat8_fake_quant(x)),
                  ("hifloat8_fake_quant fp32", lambda: ops.hifloat8_fake_quant(x.float()))]
    if _HAVE["hifloat4_cast"]:
        scale, value = ops.hifloat4_pack(x)
        calls += [("hifloat4_fake_quant", lambda: ops.hifloat4_fake_quant(x, -1)),
                  ("hifloat4_fake_quant qdim 0", lambda: ops.hifloat4_fake_quant(x.t().contiguous(), 0)),
                  ("hifloat4_pack", lambda: ops.hifloat4_pack(x)),
                  ("hifloat4_unpack", lambda: ops.hifloat4_unpack(scale, value, torch.bfloat16))]
    if _HAVE["svd_quant"]:
        c, s = ops.mxfp4_quantize(x)
        calls += [("mxfp4_quantize", lambda: ops.mxfp4_quantize(x)),
                  ("mxfp4_dequantize", lambda: ops.mxfp4_dequantize(c, s)),
                  ("quant_dequant_mxfp4", lambda: ops.quant_dequant_mxfp4.last_dim(x, 32, 1.0))]
    return calls


@unittest.skipUnless(any(_HAVE.values()), "no native CPU package is built")
class TestForcedCopyRuns(unittest.TestCase):
    def setUp(self):
        _active, self.detected = torch.ops.amct._cpu_capability("reset")
        self.addCleanup(torch.ops.amct._cpu_capability, "reset")

    def test_every_op_runs_the_forced_copy(self):
        paths = CAPABILITIES[:CAPABILITIES.index(self.detected) + 1]
        calls = _calls()
        self.assertTrue(calls)
        for name in paths:
            self.assertEqual(torch.ops.amct._cpu_capability(name), [name, self.detected])
            for op, call in calls:
                with self.subTest(op=op, capability=name):
                    # Another copy first, so that a stale report cannot pass for this call's.
                    other = "default" if name != "default" else self.detected
                    torch.ops.amct._cpu_capability(other)
                    call()
                    self.assertEqual(torch.ops.amct._cpu_capability_picked(), other)
                    torch.ops.amct._cpu_capability(name)
                    call()
                    self.assertEqual(torch.ops.amct._cpu_capability_picked(), name)

    def test_reset_returns_to_the_detected_copy(self):
        if self.detected == "default":
            self.skipTest("this CPU runs only the portable copy")
        torch.ops.amct._cpu_capability("default")
        _calls()[0][1]()
        self.assertEqual(torch.ops.amct._cpu_capability_picked(), "default")
        self.assertEqual(torch.ops.amct._cpu_capability("reset"), [self.detected, self.detected])
        _calls()[0][1]()
        self.assertEqual(torch.ops.amct._cpu_capability_picked(), self.detected)

    def test_bad_name_is_refused(self):
        for bad in ("avx3", "AVX2", ""):
            with self.subTest(name=bad):
                with self.assertRaisesRegex(RuntimeError, "must be default, avx2 or avx512"):
                    torch.ops.amct._cpu_capability(bad)
        self.assertEqual(torch.ops.amct._cpu_capability()[0], self.detected)  # unchanged

    def test_capability_above_the_cpu_is_refused(self):
        above = CAPABILITIES[CAPABILITIES.index(self.detected) + 1:]
        if not above:
            self.skipTest(f"this CPU supports {self.detected}, the highest copy: nothing to refuse")
        for name in above:
            with self.assertRaisesRegex(RuntimeError, f"cannot force {name}, this CPU supports at most"):
                torch.ops.amct._cpu_capability(name)


def _run_child(env_value, code):
    env = dict(os.environ, AMCT_CPU_CAPABILITY=env_value, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    return subprocess.run([sys.executable, "-c", "import torch, amct_ops\n" + code], env=env,
                          capture_output=True, text=True, timeout=300)


@unittest.skipUnless(_HAVE["hifloat8_cast"], "hifloat8_cast not built")
class TestEnvironmentVariable(unittest.TestCase):
    CALL = "torch.ops.amct.encode_to_hifloat8(torch.ones(8, dtype=torch.bfloat16))\n"

    def test_lowers_the_copy_at_start_up(self):
        detected = torch.ops.amct._cpu_capability()[1]
        for name in CAPABILITIES[:CAPABILITIES.index(detected) + 1]:
            with self.subTest(capability=name):
                r = _run_child(name, self.CALL + "print(torch.ops.amct._cpu_capability()[0], "
                                                 "torch.ops.amct._cpu_capability_picked())")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.split(), [name, name])

    def test_bad_value_is_refused_with_the_names(self):
        r = _run_child("sse9", self.CALL)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("must be default, avx2 or avx512, got 'sse9'", r.stderr)
