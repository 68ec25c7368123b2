"""Every AscendC kernel source compiles against the kernel sim for every NPU arch it is built for.

The CPU build compiles the kernels for the arch of its SOC only (dav-2201 by default); this
checks the other one too, with warnings as errors: what compiles in the sim for an arch is
meant to compile with bisheng for it (docs/kernel_sim.md R3). A kernel its package lists under
KERNEL_3510 (common/cmake/amct_operator.cmake) is dav-3510 code and is compiled for dav-3510 only.
"""
import concurrent.futures
import os
import re
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIM = ROOT / "common" / "ascendc_sim"
KERNELS = sorted(ROOT.glob("*/op_kernel/*_kernel.cpp"))
DEVICE_SOURCES = sorted({*ROOT.glob("*/op_kernel/*.cpp"), *ROOT.glob("*/op_kernel/*.h")})
# The device sources compiled on their own for both arches and CANN versions: the kernels and the
# NPU probe kernel (the op_kernel headers are compiled through the kernels that include them).
PROBE = ROOT / "common" / "op_kernel" / "amct_probe.cpp"
COMPILED = [*KERNELS, PROBE]


def kernels_3510_only():
    """The kernels a package's CMakeLists.txt lists under KERNEL_3510 (comments aside)."""
    found = []
    for cmake in ROOT.glob("*/CMakeLists.txt"):
        code = re.sub(r"#[^\n]*", "", cmake.read_text())
        for block in re.findall(r"\bKERNEL_3510((?:\s+[\w/]+\.cpp)+)", code):
            found += [cmake.parent / name for name in block.split()]
    return found


KERNELS_3510_ONLY = kernels_3510_only()


def arches_of(path):
    return ("3510",) if path in KERNELS_3510_ONLY else ("2201", "3510")


# The device sources that must reduce through amct_reduce.h (which itself picks the CANN names).
REDUCE_CALLERS = [p for p in DEVICE_SOURCES if p.name != "amct_reduce.h"]

# A lambda introducer where an expression starts: after ( , = ; { } return or a line start, a
# capture list (possibly empty), then an optional parameter list, specifiers, return type, and {.
LAMBDA = re.compile(r"(?:^|[(,=;{}]|\breturn)\s*\[[^\[\]]*\]\s*(?:\([^()]*\))?\s*(?:mutable\s*|constexpr\s*)*"
                    r"(?:->\s*[\w:<>\s]+)?\{", re.MULTILINE)


def device_code(text):
    """The source without comments, string literals and the sim-only launcher branch (host code)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    return re.sub(r"#if defined\(AMCT_KERNEL_SIM\).*?#else", "", text, flags=re.DOTALL)


def lambdas_in(text):
    return [m.group(0).strip() for m in LAMBDA.finditer(device_code(text))]


# asc-devkit's version macros (asc_devkit_version.h): CANN 9.0 (no header: the old reduction
# names) and 9.1 (ReduceRepeat / ReduceDataBlock through common/op_kernel/amct_reduce.h).
CANN_VERSIONS = {"9.0": [], "9.1": ["-DASC_DEVKIT_MAJOR=9", "-DASC_DEVKIT_MINOR=1"]}


def compile_kernel(path, arch, cann="9.0"):
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DAMCT_KERNEL_SIM",
           f"-D__NPU_ARCH__={arch}", *CANN_VERSIONS[cann], f"-I{SIM}", f"-I{ROOT / 'common' / 'op_kernel'}",
           f"-I{path.parent}", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True)


class KernelSourcesCompileTest(unittest.TestCase):
    def test_there_are_kernels(self):
        self.assertIn(ROOT / "hifloat8_cast" / "op_kernel" / "hifloat8_cast_kernel.cpp", KERNELS)

    def test_the_dav_3510_only_kernels_are_the_fused_ones(self):
        """The KERNEL_3510 lists are read as meant: the two fused kernels, nothing else."""
        self.assertEqual(sorted(p.relative_to(ROOT).as_posix() for p in KERNELS_3510_ONLY),
                         ["stem_indexer/op_kernel/stem_indexer_kernel.cpp", "svd_quant/op_kernel/svd_quant_fused_kernel.cpp"])
        self.assertEqual(arches_of(PROBE), ("2201", "3510"))

    def test_every_kernel_compiles_for_its_arches_and_cann_versions(self):
        self.assertIn(PROBE, COMPILED)
        jobs = [(path, arch, cann) for path in COMPILED for arch in arches_of(path) for cann in CANN_VERSIONS]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda job: compile_kernel(*job), jobs))
        for (path, arch, cann), result in zip(jobs, results):
            with self.subTest(kernel=path.relative_to(ROOT).as_posix(), arch=arch, cann=cann):
                self.assertEqual(result.returncode, 0, result.stderr[-3000:])

    def test_kernels_reduce_through_the_version_selected_names(self):
        """No kernel calls WholeReduce* / BlockReduce* (or ReduceRepeat / ReduceDataBlock) itself:
        amct_reduce.h picks the names of the CANN headers in use."""
        names = re.compile(r"\b(WholeReduce(Sum|Max|Min)|BlockReduce(Sum|Max|Min)|ReduceRepeat|ReduceDataBlock)\s*[<(]")
        for path in (*KERNELS, ROOT / "svd_quant" / "op_kernel" / "mxfp4_quantiser.h",
                     ROOT / "common" / "op_kernel" / "amct_kernel_common.h", PROBE):
            self.assertIn(path, REDUCE_CALLERS)
        self.assertTrue(names.findall("BlockReduceMax<float>(a, b); ReduceRepeat<ReduceType::SUM>(x)"))
        for path in REDUCE_CALLERS:
            with self.subTest(source=path.relative_to(ROOT).as_posix()):
                self.assertEqual(names.findall(device_code(path.read_text())), [])

    def test_kernel_files_have_no_conditional_code_outside_the_launcher(self):
        """docs/kernel_sim.md R6: the launcher block is the only #if of a kernel file."""
        for path in KERNELS:
            lines = path.read_text().splitlines()
            conditionals = [i for i, line in enumerate(lines) if line.lstrip().startswith(("#if", "#ifdef", "#ifndef"))]
            with self.subTest(kernel=path.name):
                self.assertEqual(len(conditionals), 1, f"conditional lines: {conditionals}")
                self.assertIn("AMCT_KERNEL_SIM", lines[conditionals[0]])
                launcher = max(i for i, line in enumerate(lines) if '#include' in line or 'extern "C" void' in line)
                self.assertGreater(conditionals[0], launcher)



class NoLambdaInDeviceCodeTest(unittest.TestCase):
    """bisheng's device lambdas need __attribute__((cce_aicore)), which the sim (where __aicore__
    is empty) cannot check: device code passes functor structs or member steps instead."""

    def test_the_scan_covers_every_kernel_and_the_common_header(self):
        self.assertIn(ROOT / "common" / "op_kernel" / "amct_kernel_common.h", DEVICE_SOURCES)
        for path in KERNELS:
            self.assertIn(path, DEVICE_SOURCES)

    def test_the_detector_finds_lambdas_and_nothing_else(self):
        found = [
            "ForEachTile(n, t, [this](uint64_t o, uint32_t l) { Step(o, l); });",
            "auto f = [&] { return 1; };",
            "Run([=]() mutable { x(); });",
            "auto g = [](int a) -> int { return a; };",
            "  [k, &v] {\n v = k; }();",
        ]
        for sample in found:
            with self.subTest(sample=sample):
                self.assertEqual(len(lambdas_in(sample)), 1)
        not_found = [
            "y.SetValue(i, values.GetValue(x[i]));",
            "LocalTensor<float> a = buf[slot * U_];",
            "int table[4] = {1, 2, 3, 4};",
            "// a comment: [this](int) { }",
            'const char* s = "[=] { }";',
            "#if defined(AMCT_KERNEL_SIM)\n Launch(\"k\", n, [=] { k(a); });\n#else\n k<<<n, nullptr, s>>>(a);\n#endif",
        ]
        for sample in not_found:
            with self.subTest(sample=sample):
                self.assertEqual(lambdas_in(sample), [])

    def test_no_device_source_has_a_lambda(self):
        for path in DEVICE_SOURCES:
            with self.subTest(source=path.relative_to(ROOT).as_posix()):
                self.assertEqual(lambdas_in(path.read_text()), [])


if __name__ == "__main__":
    unittest.main()
