"""The kernel sim's NPU cost model seen from Python: the test ops ``_sim_cost_begin`` /
``_sim_cost_end`` / ``_sim_cost_table``, the helpers in ``amct_ops._benchutil`` and
``python -m amct_ops bench <pkg> --npu-estimate`` for every package.

The timeline rules and the calibration are tested in C++ (tests/sim/test_sim_cost.cpp, run by
test_kernel_sim.py); here: off by default, one record per launch, the SOC's tiling facts, the
table's sources, sampling, and the CLI.
"""
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import amct_ops  # noqa: E402
from amct_ops import _benchutil as bu  # noqa: E402
from amct_ops import _sim  # noqa: E402
import amct_ops.hifloat8_cast  # noqa: E402,F401  (registers the ops)

ROOT = Path(__file__).resolve().parents[1]
PIPES = ("S", "V", "MTE2", "MTE3", "MTE1", "M", "FIX")
SOURCE_KINDS = ("doc:", "published:", "assumed:", "fitted:")


def encode_to_hifloat8(x):
    """The AscendC encode kernel in the sim (the public CPU op is native and launches nothing)."""
    return torch.ops.amct._encode_to_hifloat8_emulated(x)


def _x(n):
    return torch.randn(n, generator=torch.Generator().manual_seed(0)).to(torch.float16)


class CostOpsTest(unittest.TestCase):
    def test_off_by_default(self):
        self.assertEqual(json.loads(torch.ops.amct._sim_cost_end()), [])
        before = _sim.launch_count()
        encode_to_hifloat8(_x(65536))
        self.assertEqual(_sim.launch_count(), before + 1)
        self.assertEqual(json.loads(torch.ops.amct._sim_cost_end()), [], "a launch with the model off records nothing")

    def test_one_record_per_launch_with_the_socs_tiling(self):
        x = _x(1 << 20)
        expected = encode_to_hifloat8(x)
        platform = _sim.get_platform()
        for soc, cores in (("ascend910b", 40), ("ascend950", 64)):
            with self.subTest(soc=soc):
                out = {}
                records = bu.estimate_launches(lambda: out.setdefault("y", encode_to_hifloat8(x)), soc)
                self.assertEqual(len(records), 1)
                r = records[0]
                self.assertEqual(r["kernel"], "amct_hifloat8_cast_kernel")
                self.assertEqual(r["block_dim"], cores, "1M elements tile over every AIV core of the SOC")
                self.assertEqual(r["blocks_run"], cores)
                self.assertEqual(set(r["busy_cycles"]), set(PIPES))
                self.assertAlmostEqual(r["estimate_us"], r["launch_us"] + r["slowest_cycles"] / (r["clock_ghz"] * 1e3))
                self.assertEqual(bu.bound_pipe(r), "S", "the HiF8 kernel is a scalar LUT loop")
                self.assertTrue(torch.equal(out["y"], expected), "the estimated run still computes the op")
        self.assertEqual(_sim.get_platform(), platform, "the estimate restores the sim platform")

    def test_deterministic(self):
        x = _x(1 << 18)
        a = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b")
        b = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b")
        self.assertEqual(a, b)

    def test_sampling_runs_fewer_blocks(self):
        x = _x(1 << 20)
        full = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b")[0]
        part = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b", sample_blocks=2)[0]
        self.assertEqual((part["block_dim"], part["blocks_run"]), (40, 2))
        self.assertLessEqual(part["slowest_cycles"], full["slowest_cycles"])
        self.assertGreater(part["slowest_cycles"], 0.95 * full["slowest_cycles"], "blocks do even work")

    def test_bad_soc(self):
        with self.assertRaisesRegex(RuntimeError, "soc must be"):
            torch.ops.amct._sim_cost_begin("ascend310", 0)
        with self.assertRaisesRegex(RuntimeError, "soc must be"):
            torch.ops.amct._sim_cost_table("gpu")

    def test_plain_matmul_estimate_is_cube_bound(self):
        """The reference bf16 matmul of issues 16/18 through the emulated Matmul API (cost-only)."""
        platform = _sim.get_platform()
        m, k, n = 32768, 2048, 10944
        for soc, aic in (("ascend910b", 20), ("ascend950", 32)):
            with self.subTest(soc=soc):
                r = json.loads(torch.ops.amct._sim_matmul_estimate(soc, m, k, n))
                self.assertEqual(r["kernel"], "amct_matmul_estimate_kernel")
                self.assertEqual(r["block_dim"], aic, "one core block per AIC")
                self.assertEqual(bu.bound_pipe(r), "M", "a large bf16 matmul is bound by the cube")
                # the M pipe's busy cycles are (about) the fractal count of the slowest AIC
                fractals = (m / 16) * (n / 16) * (k / 16) / aic
                self.assertGreater(r["busy_cycles"]["M"], 0.95 * fractals)
                self.assertLess(r["busy_cycles"]["M"], 1.3 * fractals)
        self.assertEqual(_sim.get_platform(), platform, "the estimate restores the sim platform")
        small = json.loads(torch.ops.amct._sim_matmul_estimate("ascend950", 512, 256, 512, "float16"))
        self.assertLess(small["estimate_us"], r["estimate_us"] / 100)
        with self.assertRaisesRegex(RuntimeError, "dtype must be"):
            torch.ops.amct._sim_matmul_estimate("ascend950", 16, 16, 16, "float32")
        with self.assertRaisesRegex(RuntimeError, "m, k, n must be"):
            torch.ops.amct._sim_matmul_estimate("ascend950", 0, 16, 16)

    def test_cost_only_flag_accepted_for_vector_kernels(self):
        x = _x(1 << 18)
        a = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b")
        b = bu.estimate_launches(lambda: encode_to_hifloat8(x), "ascend910b", cost_only=True)
        self.assertEqual(a, b, "cost-only mode changes nothing for kernels without a Matmul")

    def test_every_number_has_a_source(self):
        for soc, arch in (("ascend910b", 2201), ("ascend950", 3510)):
            t = bu.npu_cost_table(soc)
            self.assertEqual(t["arch"], arch)
            self.assertGreaterEqual(t["model_version"], 1)
            entries = [v for v in t.values() if isinstance(v, dict)] + t["vector"]
            self.assertGreater(len(entries), 20)
            for e in entries:
                with self.subTest(soc=soc, entry=e):
                    self.assertTrue(e["source"].startswith(SOURCE_KINDS), e["source"])
                    self.assertGreater(len(e["source"]), 12)


# package -> tiny benchmark options
CLI_CASES = {
    "hifloat8_cast": ["--sizes", "64K", "--dtypes", "fp16"],
    "hifloat4_cast": ["--sizes", "64K", "--dtypes", "bf16"],
    "svd_quant": ["--sizes", "1M", "--shapes", "64,2048,256,32"],
    "stem_indexer": ["--sizes", "8K"],
}


class CliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(amct_ops.__file__).parents[1]),
                                                        env.get("PYTHONPATH")) if p)
        cls.procs = {
            pkg: subprocess.Popen([sys.executable, "-m", "amct_ops", "bench", pkg, "--npu-estimate", "--json", *opts],
                                  cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for pkg, opts in CLI_CASES.items()}
        cls.text = subprocess.run([sys.executable, "-m", "amct_ops", "bench", "hifloat8_cast", "--npu-estimate",
                                   "--soc", "ascend950", *CLI_CASES["hifloat8_cast"]], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=900)

    def test_every_package_estimates(self):
        for pkg, proc in self.procs.items():
            with self.subTest(package=pkg):
                out, err = proc.communicate(timeout=900)
                self.assertEqual(proc.returncode, 0, err[-3000:])
                d = json.loads(out)
                self.assertTrue(d["npu_estimate"])
                self.assertEqual(d["soc"], "ascend910b")
                self.assertTrue(d["results"], "at least one kernel launch estimated")
                for r in d["results"]:
                    self.assertGreater(r["estimate_us"], r["launch_us"])
                    self.assertIn(bu.bound_pipe(r), PIPES)
                notes = " ".join(d["notes"])
                self.assertIn("ESTIMATES", notes)
                self.assertIn("never measurements", notes)
                if pkg == "stem_indexer":  # the fused kernel whole (cube and vector) beside the bare score matmul
                    self.assertIn("the fused MIX 1:2 kernel whole", notes)
                    self.assertIn("8K tokens: fused kernel / bare score matmul", notes)
                    self.assertIn("8K tokens: bare score matmul", [r["case"] for r in d["results"]])
                if pkg == "svd_quant":  # on ascend910b: the bf16 matmul rows, and why the fused kernel's are absent
                    self.assertIn("the fused kernel is dav-3510 code", notes)
                    self.assertIn("bf16 matmul 64,2048,256", [r["case"] for r in d["results"]])

    def test_markdown_for_950(self):
        self.assertEqual(self.text.returncode, 0, self.text.stderr[-3000:])
        self.assertIn("--soc ascend950", self.text.stdout)
        self.assertIn("| bound", self.text.stdout)
        self.assertIn("64 AIV cores", self.text.stdout)


if __name__ == "__main__":
    unittest.main()
