"""The CPU libraries built with AddressSanitizer + UndefinedBehaviorSanitizer
(``bash ops_build.sh --sanitize``) run a representative subset of every operator's tests with
no sanitizer report, as a hardening check of the native code.

The test builds ``staging-sanitize/`` (``<op>/build-sanitize``; the normal build and the wheel
are untouched), then runs the subset in a child Python with the sanitizer runtimes preloaded
(Python itself is not instrumented) and every report fatal: a heap overflow, use-after-free,
misaligned access, signed overflow or out-of-range shift in our code fails the child with the
report on stderr. The kernel sim's own guards (UB bounds, alignment, sync) stay on.

The subset per operator: golden vectors, errors, odd shapes / strides / empties, the
independence checks (small UB, 1/3/8 cores) and a fuzz class. The element-wise ops' CPU kernels
are native C++ compiled once per SIMD capability (each copy instrumented): for the HiFloat8,
HiFloat4 and MXFP4 ops the subset forces every copy this CPU can run (portable, AVX2, AVX-512),
and it calls the ``.out`` overload of every element-wise op; see ``SUBSET``.

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

# Per operator package (only packages present in the source tree run): (test module, classes or
# Class::test ids) pairs, run in one child process. The *_native modules' SIMD classes force each
# CPU copy; their TestOut classes call every op's .out overload (for svd_quant its value tests).
SUBSET = {
    "hifloat8_cast": [("tests/test_hifloat8_cast.py",
                       ["TestD7SpecialValues", "TestD9Layouts", "TestD10Independence", "TestD11Errors",
                        "TestD5FakeQuant16"]),
                      ("tests/test_hifloat8_native.py",
                       ["TestNativeEqualsEmulated::test_every_path", "TestLayouts::test_strided_and_shaped",
                        "TestOut"])],
    "hifloat4_cast": [("tests/test_hifloat4_cast.py",
                       ["TestD2Vectors", "TestD5Layout", "TestD6Independence", "TestD7DeviceHealth",
                        "TestD8Errors", "TestD9Shapes"]),
                      ("tests/test_hifloat4_native.py", ["TestSimdPaths", "TestCodeEdges", "TestOut"])],
    "svd_quant": [("tests/test_svd_quant.py", ["TestQuantizer", "TestDequantizer", "TestErrors", "TestSvdQuant"]),
                  ("tests/test_mxfp4_native.py",
                   ["TestSimdPaths", "TestOut::test_quantize_out_equals_functional",
                    "TestOut::test_dequantize_out_equals_functional", "TestOut::test_empty_out_is_resized"])],
    "stem_indexer": [("tests/test_stem_indexer.py", ["AcceptanceTest", "IndependenceTest", "EmulatedKernelTest",
                                                     "ScoreKernelTest", "BadInputTest", "MetadataTest"])],
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
        for package, modules in SUBSET.items():
            if not (ROOT / package / "CMakeLists.txt").exists():
                continue
            targets = [f"{module}::{c}" if c else module
                       for module, classes in modules if (ROOT / module).exists() for c in (classes or [None])]
            if not targets:
                continue
            with self.subTest(package=package):
                proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-s", "-p", "no:cacheprovider",
                                       *targets], cwd=ROOT, env=_sanitizer_env(), capture_output=True, text=True,
                                      timeout=3600)
                report = proc.stdout[-4000:] + "\n" + proc.stderr[-6000:]
                self.assertNotIn("ERROR: AddressSanitizer", proc.stderr, report)
                self.assertNotIn("runtime error:", proc.stderr, report)
                self.assertEqual(proc.returncode, 0, report)
                self.assertIn(" passed", proc.stdout, report)
                ran += 1
        self.assertGreaterEqual(ran, 2, "no operator subset ran")


class TestSubsetNames(unittest.TestCase):
    """Every class and Class::test of SUBSET exists in its module (a renamed one would otherwise
    only show in the slow sanitizer run), and each package with native element-wise ops runs an
    out= class (needs no build)."""

    def test_targets_exist(self):
        import ast
        for package, modules in SUBSET.items():
            for module, names in modules:
                tree = ast.parse((ROOT / module).read_text())
                classes = {n.name: {f.name for f in n.body if isinstance(f, ast.FunctionDef)}
                           for n in tree.body if isinstance(n, ast.ClassDef)}
                for name in names:
                    cls, _, test = name.partition("::")
                    with self.subTest(package=package, target=f"{module}::{name}"):
                        self.assertIn(cls, classes)
                        if test:
                            self.assertIn(test, classes[cls])

    def test_native_packages_run_out_overloads(self):
        for package in ("hifloat8_cast", "hifloat4_cast", "svd_quant"):
            with self.subTest(package=package):
                names = [n for module, names in SUBSET[package] if "_native" in module for n in names]
                self.assertTrue(any(n.split("::")[0] == "TestOut" for n in names), names)

    def test_native_packages_force_every_simd_copy(self):
        for package in ("hifloat8_cast", "hifloat4_cast", "svd_quant"):
            with self.subTest(package=package):
                names = [n for module, names in SUBSET[package] if "_native" in module for n in names]
                self.assertTrue(any(n.split("::")[0] in ("TestSimdPaths", "TestNativeEqualsEmulated") for n in names),
                                names)


if __name__ == "__main__":
    unittest.main()
