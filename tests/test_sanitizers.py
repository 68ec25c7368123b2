"""The CPU libraries built with AddressSanitizer + UndefinedBehaviorSanitizer
(``bash ops_build.sh --sanitize``) run a representative subset of every operator's tests with
no sanitizer report (issue: hardening).

The test builds ``staging-sanitize/`` (``<op>/build-sanitize``; the normal build and the wheel
are untouched), then runs the subset in a child Python with the sanitizer runtimes preloaded
(Python itself is not instrumented) and every report fatal: a heap overflow, use-after-free,
misaligned access, signed overflow or out-of-range shift in our code fails the child with the
report on stderr. The kernel sim's own guards (UB bounds, alignment, sync) stay on.

The subset per operator: golden vectors, errors, odd shapes / strides / empties, the
independence checks (small UB, 1/3/8 cores) and a fuzz class; see ``SUBSET``.

Run alone: ``python -m pytest tests/test_sanitizers.py`` (a few minutes: it compiles).
Skipped with AMCT_SKIP_SANITIZERS=1.
"""
import os
import subprocess
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGING = ROOT / "staging-sanitize"

# test-module -> classes, per operator package (only packages present in the source tree run).
SUBSET = {
    "hifloat8_cast": ("tests/test_hifloat8_cast.py",
                      ["TestD7SpecialValues", "TestD9Layouts", "TestD10Independence", "TestD11Errors",
                       "TestD5FakeQuant16"]),
    "hifloat4_cast": ("tests/test_hifloat4_cast.py",
                      ["TestD2Vectors", "TestD5Layout", "TestD6Independence", "TestD7DeviceHealth",
                       "TestD8Errors", "TestD9Shapes"]),
    "svd_quant": ("tests/test_svd_quant.py", ["TestQuantizer", "TestDequantizer", "TestErrors", "TestSvdQuant"]),
    "stem_indexer": ("tests/test_stem_indexer.py", ["AcceptanceTest", "IndependenceTest", "EmulatedKernelTest",
                                                    "ScoreKernelTest", "BadInputTest", "MetadataTest"]),
}


def _runtime(name):
    out = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    return out if os.path.isabs(out) and os.path.exists(out) else None


def _sanitizer_env():
    env = dict(os.environ)
    env["LD_PRELOAD"] = " ".join(filter(None, [_runtime("libasan.so"), _runtime("libubsan.so")]))
    # Leak checking is off: CPython and torch keep allocations until exit by design.
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0:halt_on_error=1:exitcode=86"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1:exitcode=87"
    env["PYTHONPATH"] = str(STAGING) + os.pathsep + env.get("PYTHONPATH", "")
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    return env


@unittest.skipIf(os.environ.get("AMCT_SKIP_SANITIZERS") == "1", "AMCT_SKIP_SANITIZERS=1")
@unittest.skipUnless(sys.platform.startswith("linux"), "the sanitizer build is Linux/gcc only")
class TestSanitizers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (_runtime("libasan.so") and _runtime("libubsan.so")):
            raise unittest.SkipTest("gcc has no libasan/libubsan runtime here")
        proc = subprocess.run(["bash", "ops_build.sh", "--backend", "cpu", "--sanitize"], cwd=ROOT,
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise AssertionError(f"ops_build.sh --sanitize failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        cls.build_log = proc.stdout

    def test_libraries_are_instrumented(self):
        libs = sorted(STAGING.glob("amct_ops/**/libamct_*.so"))
        self.assertTrue(libs, "nothing staged in staging-sanitize/")
        for lib in libs:
            with self.subTest(lib=lib.name):
                dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
                self.assertIn("libasan.so", dyn)
                self.assertIn("libubsan.so", dyn)
                syms = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True,
                                      text=True).stdout
                self.assertIn("__asan_report_", syms, "no ASan checks compiled in")

    def test_child_imports_the_sanitized_build(self):
        proc = subprocess.run([sys.executable, "-c", "import amct_ops; print(amct_ops.__file__)"],
                              env=_sanitizer_env(), capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        self.assertTrue(Path(proc.stdout.strip()).resolve().is_relative_to(STAGING.resolve()), proc.stdout)

    def test_a_planted_overflow_is_reported(self):
        """The child set-up really catches errors: an out-of-bounds write in a tiny instrumented
        library loaded by the same Python (a test of the harness, not of our code)."""
        src = STAGING / "canary.c"
        lib = STAGING / "libcanary.so"
        src.write_text("#include <stdlib.h>\nint canary(int i) { int* p = malloc(4 * sizeof(int)); p[i] = 1;"
                       " int r = p[0]; free(p); return r; }\n")
        subprocess.run(["gcc", "-shared", "-fPIC", "-fsanitize=address", "-O0", str(src), "-o", str(lib)], check=True)
        code = f"import ctypes; ctypes.CDLL({str(lib)!r}).canary(4)"
        proc = subprocess.run([sys.executable, "-c", code], env=_sanitizer_env(), capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(proc.returncode, 86, proc.stderr[-2000:])
        self.assertIn("heap-buffer-overflow", proc.stderr)

    def test_operator_subsets_have_no_reports(self):
        ran = 0
        for package, (module, classes) in SUBSET.items():
            if not (ROOT / package / "CMakeLists.txt").exists() or not (ROOT / module).exists():
                continue
            targets = [f"{module}::{c}" for c in classes] if classes else [module]
            with self.subTest(package=package):
                proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                       *targets], cwd=ROOT, env=_sanitizer_env(), capture_output=True, text=True,
                                      timeout=3600)
                report = proc.stdout[-4000:] + "\n" + proc.stderr[-6000:]
                self.assertNotIn("ERROR: AddressSanitizer", proc.stderr, report)
                self.assertNotIn("runtime error:", proc.stderr, report)
                self.assertEqual(proc.returncode, 0, report)
                self.assertIn(" passed", proc.stdout, report)
                ran += 1
        self.assertGreaterEqual(ran, 2, "no operator subset ran")


if __name__ == "__main__":
    unittest.main()
