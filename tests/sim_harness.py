"""Harness shared by the kernel-sim test modules: the C++ test programs in tests/sim/ print
"PASS <name>" or "FAIL <name>: <why>" per check; a ProgramTestBase subclass runs one program
per arch once and its tests assert on those markers."""
import os
import subprocess
import unittest
from pathlib import Path

ARCHES = (2201, 3510)
TIMEOUT = 900
SIM_DIR = Path(__file__).resolve().parents[1] / "common" / "ascendc_sim"
CXX = os.environ.get("CXX", "g++")


def clean_env(extra=None):
    """The environment without AMCT_SIM_* settings (programs pick their own), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMCT_SIM_")}
    env.update(extra or {})
    return env


def run_program(path, *args, env=None, timeout=TIMEOUT):
    return subprocess.run([str(path), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          env=clean_env(env), check=False)


def syntax_only(path, source, defines, warnings_as_errors=False, timeout=TIMEOUT):
    """Writes `source` to `path` and checks it with g++ -fsyntax-only against the kernel sim:
    (path, the CompletedProcess)."""
    path.write_text(source)
    cmd = [CXX, "-std=c++17", "-fsyntax-only", "-fmax-errors=0", "-I", str(SIM_DIR), *defines, str(path)]
    if warnings_as_errors:
        cmd[1:1] = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror"]
    return path, subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def errors_by_line(path, stderr):
    """{line of `path`: diagnostic text} for every diagnostic that points into `path`."""
    lines = stderr.splitlines()
    found = {}
    prefix = f"{path}:"
    for i, text in enumerate(lines):
        if not text.startswith(prefix):
            continue
        try:
            line = int(text[len(prefix):].split(":", 1)[0])
        except ValueError:
            continue
        # the message is on this line ("no matching function") or just after "required from here"
        found[line] = found.get(line, "") + "\n".join(lines[i:i + 4]) + "\n"
    return found


def parse(stdout):
    """(set of passed check names, {failed check name: reason}) from a program's output."""
    passed, failed = set(), {}
    for line in stdout.splitlines():
        if line.startswith("PASS "):
            passed.add(line[5:].strip())
        elif line.startswith("FAIL "):
            name, _, why = line[5:].partition(":")
            failed[name.strip()] = why.strip()
    return passed, failed


class ProgramTestBase(unittest.TestCase):
    """Subclasses set `program` and provide `build(name, arch)` (a future of the executable)
    and `prebuild()` as static methods."""

    program = None
    results = None

    @classmethod
    def setUpClass(cls):
        cls.prebuild()
        cls.results = {}
        for arch in ARCHES:
            proc = run_program(cls.build(cls.program, arch).result())
            cls.results[arch] = (proc, *parse(proc.stdout))

    def assertChecks(self, names, arches=ARCHES):
        for arch in arches:
            proc, passed, failed = self.results[arch]
            for name in names:
                with self.subTest(arch=arch, check=name):
                    if name in failed:
                        self.fail(f"{name} failed on {arch}: {failed[name]}")
                    self.assertIn(name, passed, f"{name} did not run on {arch}\n{proc.stdout[-3000:]}")

    def assertProgramClean(self, min_checks=1):
        for arch in ARCHES:
            proc, passed, failed = self.results[arch]
            with self.subTest(arch=arch):
                self.assertEqual(failed, {}, f"failures on {arch}")
                self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
                self.assertIn("SUMMARY", proc.stdout)
                self.assertGreaterEqual(len(passed), min_checks)
