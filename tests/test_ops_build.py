"""ops_build.sh's command line, and the wheel it made (ARCHITECTURE.md section 5)."""
import importlib
import os
import platform
import stat
import subprocess
import sys
import sysconfig
import tempfile
import unittest
import zipfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ops_build.sh"


def run_build(*args, env=None):
    full_env = dict(os.environ)
    full_env.pop("ASCEND_HOME_PATH", None)
    full_env.update(env or {})
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=full_env,
                          cwd=ROOT, timeout=600)


class CommandLineErrorsTest(unittest.TestCase):
    """Every bad invocation exits 1 with a clear message, before building anything."""

    def assert_fails(self, args, *words, env=None):
        result = run_build(*args, env=env)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        for word in words:
            self.assertIn(word, result.stderr)
        self.assertNotIn("building", result.stdout)
        return result

    def test_help_lists_socs_backends_and_ops(self):
        for flag in ("-h", "--help"):
            result = run_build(flag)
            self.assertEqual(result.returncode, 0)
            for word in ("ascend910b", "ascend910_93", "ascend950", "dav-2201", "dav-3510", "auto", "hifloat8_cast",
                         "--sanitize", "staging-sanitize"):
                self.assertIn(word, result.stdout)

    def test_unknown_soc_lists_the_valid_ones(self):
        self.assert_fails(["--soc", "ascend310p"], "unknown SOC 'ascend310p'", "ascend910b", "ascend910_93", "ascend950")
        self.assert_fails(["--soc=ascend310p"], "unknown SOC 'ascend310p'")

    def test_missing_soc_argument(self):
        self.assert_fails(["--soc"], "--soc needs an argument")
        self.assert_fails(["--soc="], "--soc needs an argument")

    def test_unknown_option_and_backend(self):
        self.assert_fails(["--fast"], "unknown option '--fast'")
        self.assert_fails(["--backend", "gpu"], "unknown backend 'gpu'", "auto cpu npu")
        self.assert_fails(["--backend"], "--backend needs an argument")

    def test_sanitize_is_cpu_only(self):
        self.assert_fails(["--sanitize", "--backend", "npu"], "--sanitize builds the CPU libraries only")

    def test_unknown_operator_lists_the_valid_ones(self):
        self.assert_fails(["no_such_op"], "unknown operator 'no_such_op'", "hifloat8_cast")
        self.assert_fails(["hifloat8_cast", "other"], "only one operator")

    def test_npu_backend_without_cann_names_the_reason(self):
        self.assert_fails(["--backend", "npu"], "ASCEND_HOME_PATH is not set")
        with tempfile.TemporaryDirectory() as cann:
            self.assert_fails(["--backend=npu"], "set_env.sh not found", env={"ASCEND_HOME_PATH": cann})
            Path(cann, "set_env.sh").write_text("# stand-in\n")
            self.assert_fails(["--backend", "npu"], "torch_npu is not importable", env={"ASCEND_HOME_PATH": cann})

    def test_unsupported_host_architecture(self):
        with tempfile.TemporaryDirectory() as bindir:
            fake = Path(bindir, "uname")
            fake.write_text("#!/bin/sh\necho riscv64\n")
            fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
            env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
            self.assert_fails(["--backend", "cpu"], "unsupported host architecture 'riscv64'", env=env)


class EveryOperatorBuiltTest(unittest.TestCase):
    """The amct_ops under test holds every operator package of the source tree: the other tests
    skip a package that is not built (with the reason), this one fails."""

    def test_every_operator_package_is_built(self):
        sources = sorted(d.name for d in ROOT.iterdir()
                         if d.is_dir() and d.name != "common" and (d / "CMakeLists.txt").is_file())
        self.assertEqual(sources, ["hifloat4_cast", "hifloat8_cast", "stem_indexer", "svd_quant"])
        try:
            import amct_ops
        except ImportError as exc:
            self.fail(f"amct_ops is not importable ({exc}): build it with ops_build.sh")
        self.assertEqual(sorted(amct_ops.OPERATOR_PACKAGES), sources, "operator packages in this build")
        for package, ops in amct_ops.available_ops().items():
            declared = importlib.import_module(f"amct_ops.{package}").OPS
            self.assertTrue(declared, package)
            self.assertEqual(sorted(ops), sorted(declared), f"{package}: registered torch.ops.amct operators")


def staged_packages():
    stage = ROOT / "staging" / "amct_ops"
    return sorted(p.name for p in stage.iterdir() if (p / "__init__.py").is_file()) if stage.is_dir() else []


@unittest.skipIf(len(staged_packages()) < 2, "needs a staged build with two or more operator packages")
class SingleOperatorBuildTest(unittest.TestCase):
    """`ops_build.sh <op>` rebuilds that operator and keeps the other staged packages."""

    def test_single_op_build_keeps_the_others(self):
        before = staged_packages()
        info_file = ROOT / "staging" / "amct_ops" / "_build_info.py"
        scope = {}
        exec(info_file.read_text(), scope)
        soc, backend = scope["BUILD_INFO"]["soc"], scope["BUILD_INFO"]["backend"]
        op = before[0]
        result = run_build("--soc", soc, "--backend", backend, op)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
        self.assertEqual(staged_packages(), before)
        scope = {}
        exec(info_file.read_text(), scope)
        self.assertEqual(sorted(scope["BUILD_INFO"]["libraries"]), before)
        for name in before:
            self.assertTrue(list((ROOT / "staging" / "amct_ops" / name).glob("libamct_*.so")), name)
        self.assertIn(f"building {op}/", result.stdout)
        for other in before[1:]:
            self.assertNotIn(f"building {other}/", result.stdout)


def built_wheel():
    wheels = sorted((ROOT / "dist").glob("amct_ops-*.whl"))
    return wheels[-1] if wheels else None


@unittest.skipIf(built_wheel() is None and os.environ.get("CI") != "true", "no dist/amct_ops-*.whl (run ops_build.sh)")
class WheelTest(unittest.TestCase):
    """The wheel in dist/ is a platform wheel pinned to this torch, with everything staged."""

    @classmethod
    def setUpClass(cls):
        cls.wheel = built_wheel()
        assert cls.wheel is not None, "CI builds the wheel before the tests"
        with zipfile.ZipFile(cls.wheel) as archive:
            cls.names = archive.namelist()
            meta = next(n for n in cls.names if n.endswith(".dist-info/METADATA"))
            cls.metadata = archive.read(meta).decode()
            info = next(n for n in cls.names if n.endswith("amct_ops/_build_info.py"))
            scope = {}
            exec(archive.read(info).decode(), scope)
            cls.build_info = scope["BUILD_INFO"]

    def test_platform_tag(self):
        py = f"cp{sys.version_info.major}{sys.version_info.minor}"
        machine = platform.machine()
        self.assertTrue(self.wheel.name.endswith(f"-{py}-{py}-linux_{machine}.whl"), self.wheel.name)

    def test_torch_pin_and_npu_extra(self):
        release = torch.__version__.split("+")[0]
        self.assertIn(f"Requires-Dist: torch=={release}\n", self.metadata)
        self.assertIn("Provides-Extra: npu", self.metadata)
        self.assertRegex(self.metadata, r"Requires-Dist: torch_npu.*extra == \"npu\"")

    def test_version_comes_from_pyproject(self):
        import tomllib

        version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
        self.assertIn(f"\nVersion: {version}\n", self.metadata)
        self.assertEqual(self.build_info["version"], version)

    def test_contents(self):
        for name in ("amct_ops/__init__.py", "amct_ops/__main__.py", "amct_ops/_build_info.py",
                     "amct_ops/lib/libamct_common.so", "amct_ops/hifloat8_cast/__init__.py",
                     "amct_ops/hifloat8_cast/ops.py", "amct_ops/hifloat8_cast/reference.py",
                     "amct_ops/hifloat8_cast/libamct_hifloat8_cast.so"):
            self.assertIn(name, self.names)
        self.assertEqual(self.build_info["libraries"]["hifloat8_cast"], ["libamct_hifloat8_cast.so"])
        for key in ("soc", "npu_arch", "backend", "torch_version", "compiler", "revision"):
            self.assertTrue(self.build_info[key], key)

    def test_cpu_library_needs_no_cann(self):
        with zipfile.ZipFile(self.wheel) as archive, tempfile.TemporaryDirectory() as tmp:
            path = archive.extract("amct_ops/hifloat8_cast/libamct_hifloat8_cast.so", tmp)
            needed = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
        if not needed:
            self.skipTest("readelf not available")
        for cann in ("torch_npu", "ascendcl", "libhccl", "platform"):
            self.assertNotIn(cann, needed)
        self.assertIn("libamct_common.so", needed)


if __name__ == "__main__":
    unittest.main()
