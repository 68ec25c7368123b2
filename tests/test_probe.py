"""The NPU probe (common/op_kernel/amct_probe.cpp) as operators and in selftest's JSON.

``_probe_emulated()`` / ``_probe(out)`` on a CPU tensor run the probe kernel in the kernel sim;
its answers must follow each hardware mode the sim emulates (the expected words are the IEEE
encodings written out by hand, as in tests/sim/test_probe_kernel.cpp). ``selftest --json`` on
the CPU carries the decoded facts under "probe"; ``selftest --device npu`` without an NPU exits
2 with a one-line JSON error, not a traceback.

    PYTHONPATH=staging python -m pytest tests/test_probe.py
"""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import find_op_package  # noqa: E402

_HIF8, _SKIP = find_op_package("hifloat8_cast")
amct_ops = None
if _HIF8 is not None:
    import amct_ops  # noqa: E402
    from amct_ops import _probe, _sim  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXACT = {"cast_half_to_float_input": 0x33800000, "mul_result": 0x00080000,
         "cast_float_to_half_result": 0x0010, "mul_input": 0x03800000,
         "muls_result": 0x00060000,  # 3 * 2^-132 = 1.5 * 2^-125 * 2^-6 (1.5 * 2^18 units of 2^-149)
         "add_input": 0x00000003}  # 3 * 2^-149 = 2^-149 + 2^-148
WORD = {"cast_half_to_float_input": 2, "mul_result": 3, "cast_float_to_half_result": 4, "mul_input": 5,
        "muls_result": 6, "add_input": 7}
MODES = {
    "default": dict(),
    "saturation": dict(saturation=True),
    "flush_subnormals": dict(flush_subnormals=True),
    "strict_sync": dict(strict_sync=True),
}


def build_arch():
    return int(str(amct_ops.build_info().get("npu_arch", "dav-2201")).split("-")[-1])


@unittest.skipIf(amct_ops is None, _SKIP)
class ProbeOpTest(unittest.TestCase):
    def expected_words(self, mode):
        arch = build_arch()
        saturation = -1 if arch == 3510 else (1 if mode == "saturation" else 0)
        ub = 253952 if arch == 3510 else 0  # 256 KB less the API's 8 KB on dav-3510; 0 on dav-2201
        flushed = mode == "flush_subnormals"
        sub = [0 if flushed else EXACT[k] for k in sorted(WORD, key=WORD.get)]
        return [saturation, ub, *sub]

    def test_words_follow_each_mode(self):
        for mode, switches in MODES.items():
            with self.subTest(mode=mode):
                with _sim.hardware_modes(**switches):
                    words = torch.ops.amct._probe_emulated().tolist()
                self.assertEqual(words, self.expected_words(mode))

    def test_decoded_facts_follow_each_mode(self):
        for mode, switches in MODES.items():
            with self.subTest(mode=mode):
                with _sim.hardware_modes(**switches):
                    facts = _probe.run(torch.device("cpu"), {"kernel_flags": ""})
                self.assertNotIn("error", facts)
                self.assertEqual(facts["source"], "kernel sim")
                want = self.expected_words(mode)
                self.assertEqual(facts["saturation_flag_at_launch"], None if want[0] == -1 else bool(want[0]))
                self.assertEqual(facts["runtime_ub_bytes"], want[1])
                expected = "flushed" if mode == "flush_subnormals" else "exact"
                self.assertEqual(facts["subnormals"], {k: expected for k in EXACT})
                self.assertEqual(facts["sim_modes"], {k: switches.get(k, False) for k in
                                                      ("saturation", "flush_subnormals", "strict_sync")})
                self.assertEqual(len(facts["words"]), 8)

    def test_probe_op_on_a_cpu_tensor_is_the_sim(self):
        out = torch.full((8,), 7, dtype=torch.int32)
        got = torch.ops.amct._probe(out)
        self.assertEqual(got.data_ptr(), out.data_ptr())
        self.assertEqual(out.tolist(), torch.ops.amct._probe_emulated().tolist())

    def test_probe_op_checks_its_buffer(self):
        for bad in (torch.zeros(8, dtype=torch.int64), torch.zeros(7, dtype=torch.int32),
                    torch.zeros(16, dtype=torch.int32)[::2]):
            with self.assertRaisesRegex(RuntimeError, r"_probe: out must be a contiguous int32 tensor of 8 elements"):
                torch.ops.amct._probe(bad)

    def test_decode_names_unexpected_patterns(self):
        facts = _probe.decode([0, 196608, 0x33800000, 0, 0x0011, 5, 0x00060000, 0], "npu:0")
        self.assertEqual(facts["saturation_flag_at_launch"], False)
        self.assertEqual(facts["subnormals"], {"cast_half_to_float_input": "exact", "mul_result": "flushed",
                                               "cast_float_to_half_result": "other 0x00000011",
                                               "mul_input": "other 0x00000005", "muls_result": "exact",
                                               "add_input": "flushed"})
        self.assertNotIn("sim_modes", facts)
        self.assertIsNone(facts["build_auto_sync_flag"])
        self.assertEqual(facts["build_auto_sync_basis"], "no kernel compiled by bisheng")
        flagged = _probe.decode([0] * 8, "npu:0", {"kernel_flags": "--npu-arch=dav-2201 --cce-auto-sync"})
        self.assertIs(flagged["build_auto_sync_flag"], True)
        self.assertEqual(flagged["build_auto_sync_basis"], "flag --cce-auto-sync")
        self.assertEqual(flagged["build_kernel_flags"], "--npu-arch=dav-2201 --cce-auto-sync")

    def test_auto_sync_is_what_the_flags_imply(self):
        """The last --cce-auto-sync[=on|off] decides; none given is bisheng's documented default (on
        for <<<>>> kernels); -log and other look-alike options do not count; no flags: no bisheng build."""
        default = ("bisheng's default: on for <<<>>> kernel compilation (asc-devkit docs, "
                   "核内同步/关键特性说明.md)")
        cases = {
            # the flags a real build records (common/cmake/amct_operator.cmake's AMCT_KERNEL_FLAGS)
            "--npu-arch=dav-2201 -DASCENDC_DUMP=0": (True, default),
            "-O2 --npu-arch=dav-3510 -DASCENDC_DUMP=0 --cce-auto-sync-log=sync.txt": (True, default),
            "--npu-arch=dav-2201 --cce-auto-sync=off": (False, "flag --cce-auto-sync=off"),
            "--cce-auto-sync=off --cce-auto-sync=on": (True, "flag --cce-auto-sync=on"),
            "--cce-auto-sync --cce-auto-sync=off": (False, "flag --cce-auto-sync=off"),
            "--cce-auto-sync=maybe": (None, "unrecognised flag --cce-auto-sync=maybe"),
            "": (None, "no kernel compiled by bisheng"),
            None: (None, "no kernel compiled by bisheng"),
        }
        for flags, (on, basis) in cases.items():
            with self.subTest(flags=flags):
                facts = _probe.decode([0] * 8, "npu:0", {"kernel_flags": flags})
                self.assertIs(facts["build_auto_sync_flag"], on)
                self.assertEqual(facts["build_auto_sync_basis"], basis)


def cli(*args):
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    return subprocess.run([sys.executable, "-m", "amct_ops", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)


@unittest.skipIf(amct_ops is None, _SKIP)
class SelftestProbeJsonTest(unittest.TestCase):
    def test_cpu_selftest_json_has_the_probe(self):
        r = cli("selftest", "--json", "--package", "hifloat8_cast")
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        probe = json.loads(r.stdout)["probe"]
        self.assertEqual(probe["source"], "kernel sim")
        self.assertEqual(set(probe), {"source", "saturation_flag_at_launch", "runtime_ub_bytes", "subnormals",
                                      "build_kernel_flags", "build_auto_sync_flag", "build_auto_sync_basis", "words",
                                      "sim_modes"})
        self.assertEqual(probe["subnormals"], {k: "exact" for k in EXACT})
        self.assertEqual(probe["sim_modes"], {"saturation": False, "flush_subnormals": False, "strict_sync": False})
        self.assertIsNone(probe["build_kernel_flags"])  # a CPU build compiles no kernel with bisheng

    def test_cpu_selftest_json_under_a_mode(self):
        env_mode = dict(AMCT_SIM_FLUSH_SUBNORMALS="1")
        env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0", **env_mode)
        r = subprocess.run([sys.executable, "-m", "amct_ops", "selftest", "--json", "--package", "hifloat8_cast"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        probe = json.loads(r.stdout)["probe"]
        self.assertEqual(probe["subnormals"], {k: "flushed" for k in EXACT})
        self.assertTrue(probe["sim_modes"]["flush_subnormals"])

    @unittest.skipIf(__import__("importlib").util.find_spec("torch_npu") is not None, "torch_npu is installed")
    def test_npu_selftest_without_npu_is_a_clear_error(self):
        r = cli("selftest", "--device", "npu", "--json")
        self.assertEqual(r.returncode, 2)
        self.assertNotIn("Traceback", r.stderr)
        last = json.loads(r.stderr.strip().splitlines()[-1])
        self.assertEqual(last["requested_device"], "npu")
        self.assertIn("torch_npu", last["error"])


if __name__ == "__main__":
    unittest.main()
