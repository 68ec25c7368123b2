"""Tests of the command line, ``python -m amct_ops`` (info, selftest, bench).

Every command runs in a subprocess with ``sys.executable``, against the same ``amct_ops`` this
process would import (the staged build in ``staging/`` or an installed wheel). The commands are
started together when the module loads and then checked one by one, so the module costs about
as much as its slowest command (the CPU selftest) rather than their sum. The bench run is a tiny
one (1024 elements, one sample): it checks that the script works, not the numbers.
"""
import importlib.util
import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGING = os.path.join(ROOT, "staging")
TIMEOUT = 900

COMMANDS = {
    "info": ["info"],
    "info_json": ["info", "--json"],
    "selftest_json": ["selftest", "--json"],
    "selftest_npu": ["selftest", "--device", "npu"],
    "selftest_bad_option": ["selftest", "--no-such-option"],
    "bench_list": ["bench"],
    "bench_quick": ["bench", "hifloat8_cast", "--quick", "--sizes", "1024", "--dtypes", "bf16",
                    "--repeat", "1", "--warmup", "0"],
}


def _package_root():
    """The directory holding the amct_ops package this interpreter would import, or None."""
    spec = importlib.util.find_spec("amct_ops")
    if spec is not None and spec.origin:
        return os.path.dirname(os.path.dirname(spec.origin))
    if os.path.isfile(os.path.join(STAGING, "amct_ops", "__init__.py")):
        return STAGING
    return None


PACKAGE_ROOT = _package_root()
HAVE_TORCH_NPU = importlib.util.find_spec("torch_npu") is not None
_procs = {}
_outputs = {}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def setUpModule():
    if PACKAGE_ROOT is None:
        raise unittest.SkipTest("amct_ops is not built: run `bash ops_build.sh` (staging/ is missing)")
    env = _env()
    for name, args in COMMANDS.items():
        _procs[name] = subprocess.Popen([sys.executable, "-m", "amct_ops", *args], cwd=ROOT, env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)


def tearDownModule():
    for proc in _procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def run(name):
    """(returncode, stdout, stderr) of a command started by setUpModule."""
    if name not in _outputs:
        proc = _procs[name]
        out, err = proc.communicate(timeout=TIMEOUT)
        _outputs[name] = (proc.returncode, out, err)
    return _outputs[name]


def last_json_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        raise AssertionError("no output on stderr")
    return json.loads(lines[-1])


class InfoTest(unittest.TestCase):
    def test_info_mentions_the_operators(self):
        rc, out, err = run("info")
        self.assertEqual(rc, 0, err)
        self.assertIn("hifloat8_cast", out)
        self.assertIn("encode_to_hifloat8", out)
        self.assertIn("backend", out)
        self.assertRegex(out, r"npu\s+(yes|no)")

    def test_info_json(self):
        rc, out, err = run("info_json")
        self.assertEqual(rc, 0, err)
        d = json.loads(out)
        for key in ("version", "torch", "build", "packages", "backends", "sim_platform"):
            self.assertIn(key, d)
        self.assertIn("hifloat8_cast", d["packages"])
        self.assertEqual(sorted(d["packages"]["hifloat8_cast"]["ops"]),
                         ["decode_from_hifloat8", "encode_to_hifloat8", "hifloat8_fake_quant"])
        self.assertTrue(d["backends"]["cpu"]["available"])
        if not HAVE_TORCH_NPU:
            self.assertFalse(d["backends"]["npu"]["available"])
            self.assertIn("torch_npu", d["backends"]["npu"]["reason"])


class SelftestTest(unittest.TestCase):
    def test_cpu_selftest_json(self):
        rc, out, err = run("selftest_json")
        d = json.loads(out)  # stdout is exactly one JSON object
        self.assertEqual(set(d), {"requested_device", "hardware_path_verified", "environment", "probe", "results"})
        self.assertEqual(d["probe"]["source"], "kernel sim")  # its fields: tests/test_probe.py
        self.assertEqual(d["requested_device"], "cpu")
        self.assertIs(d["hardware_path_verified"], False)
        env = d["environment"]
        for key in ("python", "torch", "amct_ops", "build", "platform"):
            self.assertIn(key, env)
        for key in ("soc", "backend", "npu_arch"):
            self.assertIn(key, env["build"])
        results = d["results"]
        self.assertGreater(len(results), 50)
        for r in results:
            for key in ("op", "case", "dtype", "passed", "detail"):
                self.assertIn(key, r)
            self.assertIsInstance(r["passed"], bool)
        failed = [f"{r['op']} / {r['case']} / {r['dtype']}: {r['detail']}"
                  for r in results if not r["passed"]]
        self.assertEqual(failed, [])
        self.assertEqual(rc, 0, err)
        ops = {r["op"] for r in results}
        self.assertTrue({"encode_to_hifloat8", "decode_from_hifloat8", "hifloat8_fake_quant"} <= ops)
        cases = {r["case"] for r in results}
        for case in ("exhaustive (65536)", "exhaustive (256)", "special values", "boundaries", "empty (0,)",
                     "transposed", "random (seeded)"):
            self.assertIn(case, cases)
        self.assertTrue(all(r["device"] == "cpu" for r in results))

    @unittest.skipIf(HAVE_TORCH_NPU, "torch_npu is installed: the NPU may be usable here")
    def test_npu_unavailable_exits_2_with_json_error(self):
        rc, out, err = run("selftest_npu")
        self.assertEqual(rc, 2, out + err)
        d = last_json_line(err)
        self.assertEqual(d["requested_device"], "npu")
        self.assertIn("torch_npu", d["error"])
        self.assertEqual(set(d), {"error", "requested_device"})
        self.assertIn("error", err.splitlines()[0])  # the human line comes first without --json
        self.assertEqual(out.strip(), "")

    def test_bad_option_fails(self):
        rc, out, err = run("selftest_bad_option")
        self.assertNotEqual(rc, 0)
        self.assertIn("--no-such-option", err)


class BenchTest(unittest.TestCase):
    def test_bench_lists_benchmarks(self):
        rc, out, err = run("bench_list")
        self.assertEqual(rc, 0, err)
        self.assertIn("hifloat8_cast", out)

    def test_tiny_bench_prints_the_table(self):
        rc, out, err = run("bench_quick")
        self.assertEqual(rc, 0, err)
        self.assertIn("| dtype", out)
        self.assertIn("encode ms", out)
        self.assertIn("x.to(fp8) ms", out)
        self.assertIn("bfloat16", out)
        self.assertIn("| 1K ", out)
        self.assertIn("torch threads", out)


if __name__ == "__main__":
    unittest.main()
