"""Every AscendC kernel source compiles against the kernel sim for both NPU arches.

The CPU build compiles the kernels for the arch of its SOC only (dav-2201 by default); this
checks the other one too, with warnings as errors: what compiles in the sim for an arch is
meant to compile with bisheng for it (ascendc_subset.md R3).
"""
import concurrent.futures
import os
import subprocess
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIM = ROOT / "common" / "ascendc_sim"
KERNELS = sorted(ROOT.glob("*/op_kernel/*_kernel.cpp"))


def compile_kernel(path, arch):
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-DAMCT_KERNEL_SIM",
           f"-D__NPU_ARCH__={arch}", f"-I{SIM}", f"-I{ROOT / 'common' / 'op_kernel'}", f"-I{path.parent}", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True)


class KernelSourcesCompileTest(unittest.TestCase):
    def test_there_are_kernels(self):
        self.assertIn(ROOT / "hifloat8_cast" / "op_kernel" / "hifloat8_cast_kernel.cpp", KERNELS)

    def test_every_kernel_compiles_for_both_arches(self):
        jobs = [(path, arch) for path in KERNELS for arch in ("2201", "3510")]
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda job: compile_kernel(*job), jobs))
        for (path, arch), result in zip(jobs, results):
            with self.subTest(kernel=path.relative_to(ROOT).as_posix(), arch=arch):
                self.assertEqual(result.returncode, 0, result.stderr[-3000:])

    def test_kernel_files_have_no_conditional_code_outside_the_launcher(self):
        """ascendc_subset.md R6: the launcher block is the only #if of a kernel file."""
        for path in KERNELS:
            lines = path.read_text().splitlines()
            conditionals = [i for i, line in enumerate(lines) if line.lstrip().startswith(("#if", "#ifdef", "#ifndef"))]
            with self.subTest(kernel=path.name):
                self.assertEqual(len(conditionals), 1, f"conditional lines: {conditionals}")
                self.assertIn("AMCT_KERNEL_SIM", lines[conditionals[0]])
                launcher = max(i for i, line in enumerate(lines) if '#include' in line or 'extern "C" void' in line)
                self.assertGreater(conditionals[0], launcher)


if __name__ == "__main__":
    unittest.main()
