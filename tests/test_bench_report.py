"""``python -m amct_ops bench --all --markdown`` (docs/performance.md) and ``bench --plot``.

The report is checked on synthetic benchmark payloads (running every benchmark would take
minutes): it carries the command, the date, the machine and every package's tables and notes,
and says why a package is missing. ``--plot`` is run for real on a tiny hifloat8_cast
benchmark when matplotlib is installed, and its error message is checked with matplotlib hidden.
"""
import contextlib
import datetime
import io
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

try:
    from amct_ops import _benchplot, _cli
except ImportError:  # pragma: no cover - not built
    raise unittest.SkipTest("amct_ops is not built: run `bash ops_build.sh`") from None

FACTS = {"cpu_model": "Test CPU", "machine": "x86_64", "nproc": 2, "torch_threads": 2,
         "python": "3.11", "torch": "2.13.0", "amct_ops": "0.1.0", "backend": "cpu",
         "soc": "ascend910b", "device": "cpu", "load_average_before": 0.25}


def payload(title, kernel_rows):
    return {"machine": FACTS,
            "tables": [{"title": title, "columns": ["elements", "ms"], "rows": [[1024, 0.5]]}],
            "notes": [f"note of {title}"], "results": kernel_rows}


class MarkdownReportTest(unittest.TestCase):

    def test_report_has_command_date_machine_tables_and_missing_reasons(self):
        now = datetime.datetime(2026, 12, 1, 12, 30, tzinfo=datetime.timezone.utc)
        runs = [("pkg_a", "benchmark A", payload("table A", []), ""),
                ("pkg_b", "benchmark B", None, "the benchmark exited with 2")]
        text = _benchplot.markdown_report("python -m amct_ops bench --all --markdown", runs, now)
        self.assertTrue(text.startswith("# Performance\n"))
        self.assertIn("python -m amct_ops bench --all --markdown\n", text)
        self.assertIn("Date: 2026-12-01 12:30 UTC.", text)
        self.assertIn("## pkg_a", text)
        self.assertIn("Test CPU (x86_64), 2 CPUs available", text)
        self.assertIn("load average 0.25", text)
        self.assertIn("### table A", text)
        self.assertIn("| elements | ms", text)
        self.assertIn("note of table A", text)
        self.assertIn("## pkg_b", text)
        self.assertIn("Not measured: the benchmark exited with 2", text)
        self.assertNotIn("overloaded", text)

    def test_report_warns_when_the_machine_was_overloaded(self):
        busy = payload("table A", [])
        busy["machine"] = dict(FACTS, load_average_before=7.5)
        text = _benchplot.markdown_report("cmd", [("pkg_a", "benchmark A", busy, "")])
        self.assertIn("**Warning: measured on an overloaded machine**", text)
        self.assertIn("pkg_a 7.5", text)

    def test_bench_all_runs_every_package_with_the_common_options(self):
        calls = []

        def fake_payload(pkg, rest):
            calls.append((pkg, list(rest)))
            return 0, payload(f"table {pkg}", [])

        mods = {"p1": (object(), "first"), "p2": (object(), "second")}
        with mock.patch.object(_cli, "_bench_modules", return_value=mods), \
                mock.patch.object(_cli, "_bench_payload", side_effect=fake_payload):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = _cli.main(["bench", "--all", "--repeat", "3", "--markdown", "--quick"])
        self.assertEqual(rc, 0, err.getvalue())
        self.assertEqual(calls, [("p1", ["--repeat", "3", "--quick"]), ("p2", ["--repeat", "3", "--quick"])])
        text = out.getvalue()
        self.assertIn("python -m amct_ops bench --all --markdown --repeat 3 --quick", text)
        self.assertIn("### table p1", text)
        self.assertIn("### table p2", text)

    def test_bench_all_refuses_plot(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = _cli.main(["bench", "--all", "--plot", "x.png"])
        self.assertEqual(rc, 1)
        self.assertIn("not --json or --plot", err.getvalue())

    def test_plot_series_groups_by_part_and_dtype(self):
        rows = [{"part": "quantize", "dtype": "bfloat16", "elements": 1024, "kernel": "op", "time_s": 1e-3},
                {"part": "quantize", "dtype": "bfloat16", "elements": 2048, "kernel": "op", "time_s": 4e-3},
                {"part": "svd_quant", "shape": [1, 2, 3, 4], "kernel": "op", "time_s": 1.0},
                {"tokens": 8192, "kernel": "reference", "time_s": 0.5},
                {"dtype": "float16", "elements": 1024, "kernel": "base", "error": "unavailable"}]
        panels, units = _benchplot.plot_series(rows)
        self.assertEqual(panels, {"quantize, bfloat16": {"op": [(1024, 1024e3), (2048, 512e3)]},
                                  "all sizes": {"reference": [(8192, 16384.0)]}})
        self.assertEqual(units, {"quantize, bfloat16": "elements", "all sizes": "tokens"})


BENCH = ["bench", "hifloat8_cast", "--quick", "--sizes", "1024", "4096", "--dtypes", "bf16",
         "--repeat", "1", "--warmup", "0"]


class PlotTest(unittest.TestCase):

    def test_plot_writes_a_png(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed (pip install 'amct_ops[plot]'): no figure to draw")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.png")
            proc = subprocess.run([sys.executable, "-m", "amct_ops", *BENCH, "--plot", path],
                                  capture_output=True, text=True, timeout=600, check=False)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("| dtype", proc.stdout)
            with open(path, "rb") as fh:
                self.assertEqual(fh.read(8), b"\x89PNG\r\n\x1a\n")

    def test_plot_without_matplotlib_says_how_to_get_it(self):
        code = ("import sys; sys.modules['matplotlib'] = None\n"
                "from amct_ops import _cli\n"
                f"sys.exit(_cli.main({BENCH + ['--plot', 'never.png']!r}))\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=600, check=False)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--plot needs matplotlib", proc.stderr)
        self.assertIn("pip install 'amct_ops[plot]'", proc.stderr)


if __name__ == "__main__":
    unittest.main()
