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
import threading
import time
import unittest
from unittest import mock

try:
    from amct_ops import _benchplot, _benchutil, _cli
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

    @staticmethod
    def report_measured_with(**machine):
        measured = payload("table A", [])
        measured["machine"] = dict(FACTS, **machine)
        return _benchplot.markdown_report("cmd", [("pkg_a", "benchmark A", measured, "")])

    def test_machine_line_names_the_simd_copy_that_ran(self):
        simd = {"active": "avx2", "detected": "avx512", "cpu_flags": ["avx2", "avx512f", "avx512_bf16"]}
        text = self.report_measured_with(simd=simd)
        self.assertIn("native CPU kernels ran their AVX2 copy (forced; this CPU supports AVX-512); "
                      "cpu flags avx2 avx512f avx512_bf16", text)
        same = self.report_measured_with(simd=dict(simd, active="avx512"))
        self.assertIn("ran their AVX-512 copy; cpu flags", same)
        self.assertNotIn("forced", same)

    def test_simd_facts_follow_the_capability_hook(self):
        import torch

        active, detected = torch.ops.amct._cpu_capability("reset")  # active: detected, or AMCT_CPU_CAPABILITY's
        try:
            torch.ops.amct._cpu_capability("default")
            facts = _benchutil.simd_facts()
        finally:
            torch.ops.amct._cpu_capability("reset")
        self.assertEqual(facts["active"], "default")
        self.assertEqual(facts["detected"], detected)
        self.assertEqual(_benchutil.simd_facts()["active"], active)

    def test_report_warns_when_the_machine_was_overloaded(self):
        text = self.report_measured_with(load_average_before=7.5, other_load_before=1.5)
        self.assertIn("**Warning: measured on an overloaded machine**", text)
        self.assertIn("pkg_a 1.5", text)

    def test_a_high_load_average_of_our_own_threads_is_no_warning(self):
        # In `bench --all` the load average still counts the previous package's threads.
        text = self.report_measured_with(load_average_before=1.8, other_load_before=0.1)
        self.assertNotIn("overloaded", text)
        self.assertNotIn("warning", text.lower().split("## pkg_a")[1])

    def test_other_work_load_sees_a_busy_child_and_not_our_own_work(self):
        if _benchutil.other_work_load(0.05) is None:
            self.skipTest("no /proc/stat on this OS")
        # Other processes' load adds to both measurements, and the busy child cannot push the
        # second above the CPU count: with more than cpus - 1.2 CPUs already busy the two cannot
        # differ by the margin below, whatever the measure does.
        busy = _benchutil.other_work_load(1.0)
        if busy > (os.cpu_count() or 1) - 1.2:
            self.skipTest(f"the machine is busy with other work ({busy:.2f} CPUs): the test needs a CPU free")
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                pass
        thread = threading.Thread(target=spin)
        thread.start()
        try:
            own = _benchutil.other_work_load(1.0)
        finally:
            stop.set()
            thread.join()
        child = subprocess.Popen([sys.executable, "-c", "import time\nt=time.time()\nwhile time.time()-t<3: pass"])
        try:
            time.sleep(0.3)
            other = _benchutil.other_work_load(1.0)
        finally:
            child.wait()
        self.assertGreater(other, 0.6, "a spinning child process keeps one CPU busy")
        self.assertLess(own, other - 0.4, "our own spinning thread is not other work")

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


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bar_payload(package, records):
    return {"machine": FACTS, "tables": [], "notes": [], "bars": records}


def record(package, label, threads, ratios, headline=None, kind="faster", target=2.0):
    from amct_ops import _benchutil

    bar = _benchutil.Bar(label, "ours", "base", kind, target, f"baseline of {label}", headline=headline)
    return _benchutil.bar_record(package, bar, threads, ratios)


class BarTest(unittest.TestCase):

    def test_a_bar_is_judged_on_the_median_of_its_runs(self):
        r = record("p", "encode", 2, [1.0, 3.0, 2.5, 1.5, 2.2])
        self.assertEqual((r["min"], r["median"], r["max"]), (1.0, 2.2, 3.0))
        self.assertTrue(r["met"])
        self.assertFalse(record("p", "encode", 2, [2.5, 1.9, 1.0])["met"])
        within = record("p", "out=", 2, [2.9, 3.2, 3.1], kind="within", target=3.0)
        self.assertFalse(within["met"])  # median 3.1 > 3
        self.assertTrue(record("p", "out=", 2, [2.9, 3.2, 2.0], kind="within", target=3.0)["met"])

    def test_bar_ratio_is_baseline_over_ours_or_ours_over_baseline(self):
        from amct_ops import _benchutil

        times = {"ours": 2.0, "base": 8.0}
        self.assertEqual(_benchutil.Bar("a", "ours", "base", "faster", 1, "b").ratio(times), 4.0)
        self.assertEqual(_benchutil.Bar("a", "ours", "base", "within", 1, "b").ratio(times), 0.25)
        with self.assertRaises(ValueError):
            _benchutil.Bar("a", "ours", "base", "sideways", 1, "b")

    def test_measure_bars_gives_one_ratio_per_run(self):
        from amct_ops import _benchutil

        calls = {"ours": 0, "base": 0}

        def count(name):
            def fn():
                calls[name] += 1
            return fn

        bar = _benchutil.Bar("a", "ours", "base", "faster", 1, "b")
        ratios = _benchutil.measure_bars([({"ours": count("ours"), "base": count("base")}, (bar,))], runs=4,
                                         repeat=2, warmup=1, min_sample_s=0.0)
        self.assertEqual(len(ratios["a"]), 4)
        self.assertTrue(all(r > 0 for r in ratios["a"]))
        # per run: 1 warm-up + 2 samples of one call each (no calibration call with min_sample_s 0)
        self.assertEqual(calls, {"ours": 12, "base": 12})

    def test_a_cold_first_call_does_not_size_the_samples(self):
        from amct_ops import _benchutil

        calls = []

        def cold_then_fast():  # the first call pays 50 ms (cold caches), the rest almost nothing
            calls.append(None)
            if len(calls) == 1:
                time.sleep(0.05)

        stats = _benchutil.measure_many({"fn": cold_then_fast}, repeat=1, warmup=0, min_sample_s=0.01)["fn"]
        # sized by the 50 ms call, a sample would be that one call; by a warm call, many calls
        self.assertGreater(stats.inner, 100)

    def test_a_group_can_cap_its_runs(self):
        from amct_ops import _benchutil

        bar = _benchutil.Bar("slow", "ours", "base", "faster", 1, "b")
        fast = _benchutil.Bar("fast", "ours", "base", "faster", 1, "b")
        fns = {"ours": lambda: None, "base": lambda: None}
        ratios = _benchutil.measure_bars([(fns, (fast,)), (fns, (bar,), {"runs": 2, "repeat": 1})], runs=5,
                                         repeat=2, warmup=0, min_sample_s=0.0)
        self.assertEqual((len(ratios["fast"]), len(ratios["slow"])), (5, 2))

    def test_bar_table_has_min_median_max_per_thread_count(self):
        from amct_ops import _benchutil

        records = [record("p", "encode", 2, [1.0, 3.0, 2.0]), record("p", "encode", 1, [4.0, 5.0, 6.0])]
        table = _benchutil.bar_table(records, "bars")
        self.assertEqual(table["columns"][2], "2 thread(s): min / median / max over 3 runs")
        self.assertEqual(table["rows"], [["encode", ">= 2x", "1.00x / 2.00x / 3.00x", "met",
                                          "4.00x / 5.00x / 6.00x", "met"]])


class SummaryTest(unittest.TestCase):

    def document(self):
        runs = [("p1", "first", bar_payload("p1", [
                    record("p1", "encode 16M", 2, [1.5, 2.5, 2.25], headline="encode_op"),
                    record("p1", "encode 16M", 1, [3.0, 3.5, 4.0], headline="encode_op"),
                    record("p1", "not a headline", 2, [9.0])]), ""),
                ("p2", "second", None, "the benchmark exited with 2")]
        now = datetime.datetime(2026, 12, 1, 12, 30, tzinfo=datetime.timezone.utc)
        return _benchplot.results_document("python -m amct_ops bench --all --markdown", runs, now, 123.0)

    def test_summary_has_one_row_per_headline_bar_with_both_thread_counts_and_the_baseline(self):
        block = _benchplot.summary_block(self.document())
        self.assertTrue(block.startswith(_benchplot.SUMMARY_BEGIN))
        self.assertTrue(block.endswith(_benchplot.SUMMARY_END))
        self.assertIn("| `encode_op` | encode 16M | >= 2x | **2.25x** (1.50-2.50) | **3.50x** (3.00-4.00) | "
                      "baseline of encode 16M |", block)
        self.assertIn("2 thread(s)", block)
        self.assertNotIn("not a headline", block)
        self.assertIn("Measured 2026-12-01 12:30 UTC on Test CPU", block)
        self.assertNotIn("busy machine", block)

    def test_summary_warns_when_the_machine_was_busy(self):
        doc = self.document()
        doc["packages"][0]["payload"]["machine"] = dict(FACTS, load_average_before=5.0, other_load_before=1.2)
        self.assertIn("**Measured on a busy machine", _benchplot.summary_block(doc))

    def test_summary_replaces_only_the_marked_block(self):
        block = _benchplot.summary_block(self.document())
        readme = f"# Title\n\nbefore\n\n{_benchplot.SUMMARY_BEGIN}\nold table\n{_benchplot.SUMMARY_END}\n\nafter\n"
        text = _benchplot.replace_summary_block(readme, block)
        self.assertEqual(text, f"# Title\n\nbefore\n\n{block}\n\nafter\n")
        self.assertEqual(_benchplot.summary_block_of(text), block)
        with self.assertRaises(ValueError):
            _benchplot.replace_summary_block("# no markers\n", block)

    def test_render_report_from_the_document_keeps_date_duration_and_missing_reasons(self):
        text = _benchplot.render_report(self.document())
        self.assertIn("Date: 2026-12-01 12:30 UTC; the run took 2.0 min of wall time.", text)
        self.assertIn("## Method", text)
        self.assertIn("Not measured: the benchmark exited with 2", text)

    def test_render_command_writes_the_page_and_the_readme_summary(self):
        import json

        doc = self.document()
        with tempfile.TemporaryDirectory() as tmp:
            results, page, readme = (os.path.join(tmp, n) for n in ("perf.json", "perf.md", "README.md"))
            with open(results, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            with open(readme, "w", encoding="utf-8") as fh:
                fh.write(f"top\n{_benchplot.SUMMARY_BEGIN}\n{_benchplot.SUMMARY_END}\nbottom\n")
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = _cli.main(["bench", "--all", "--render", results, "--output", page, "--readme", readme])
            self.assertEqual(rc, 0, err.getvalue())
            with open(page, encoding="utf-8") as fh:
                self.assertEqual(fh.read(), _benchplot.render_report(doc))
            with open(readme, encoding="utf-8") as fh:
                self.assertEqual(fh.read(), f"top\n{_benchplot.summary_block(doc)}\nbottom\n")


class CommittedPerformancePageTest(unittest.TestCase):
    """docs/performance.md and README.md's summary are what the generator renders from the
    committed docs/performance.json (no benchmark runs here)."""

    def setUp(self):
        import json

        path = os.path.join(REPO, "docs", "performance.json")
        self.assertTrue(os.path.exists(path), "docs/performance.json (written beside docs/performance.md by "
                                              "bench --all --markdown --output docs/performance.md) is missing")
        with open(path, encoding="utf-8") as fh:
            self.document = json.load(fh)

    def test_the_page_is_rendered_from_the_results(self):
        with open(os.path.join(REPO, "docs", "performance.md"), encoding="utf-8") as fh:
            self.assertEqual(fh.read(), _benchplot.render_report(self.document))

    def test_the_readme_summary_is_rendered_from_the_results(self):
        with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
            readme = fh.read()
        self.assertEqual(_benchplot.summary_block_of(readme), _benchplot.summary_block(self.document))

    def test_the_results_carry_a_headline_bar_per_benchmarked_package(self):
        for p in self.document["packages"]:
            if p["payload"] is not None:
                self.assertTrue(any(r.get("headline") for r in p["payload"]["bars"]), p["package"])


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
