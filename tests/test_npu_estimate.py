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
        cls.stem_cost_only = subprocess.Popen(
            [sys.executable, "-m", "amct_ops", "bench", "stem_indexer", "--npu-estimate", "--json", "--cost-only",
             *CLI_CASES["stem_indexer"]], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cls.text = subprocess.run([sys.executable, "-m", "amct_ops", "bench", "hifloat8_cast", "--npu-estimate",
                                   "--soc", "ascend950", *CLI_CASES["hifloat8_cast"]], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=900)

    _outputs = {}

    @classmethod
    def output(cls, key, proc):
        """(returncode, stdout, stderr) of a benchmark process, waited for once."""
        if key not in cls._outputs:
            out, err = proc.communicate(timeout=900)
            cls._outputs[key] = (proc.returncode, out, err)
        return cls._outputs[key]

    def test_every_package_estimates(self):
        for pkg, proc in self.procs.items():
            with self.subTest(package=pkg):
                code, out, err = self.output(pkg, proc)
                self.assertEqual(code, 0, err[-3000:])
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

    def test_stem_estimate_keeps_the_scores_under_cost_only(self):
        # Its selection works on the scores: without the arithmetic it would time the NaN-bucket path.
        code, out, err = self.output("stem_indexer --cost-only", self.stem_cost_only)
        self.assertEqual(code, 0, err[-3000:])
        fused = [r for r in json.loads(out)["results"] if r["kernel"] == "amct_stem_indexer_kernel"]
        self.assertTrue(fused)
        code, plain_out, err = self.output("stem_indexer", self.procs["stem_indexer"])
        self.assertEqual(code, 0, err[-3000:])
        plain = [r for r in json.loads(plain_out)["results"] if r["kernel"] == "amct_stem_indexer_kernel"]
        self.assertEqual([r["estimate_us"] for r in fused], [r["estimate_us"] for r in plain])
        self.assertIn("runs with the cube's arithmetic even under --cost-only", " ".join(json.loads(out)["notes"]))

    def test_markdown_for_950(self):
        self.assertEqual(self.text.returncode, 0, self.text.stderr[-3000:])
        self.assertIn("--soc ascend950", self.text.stdout)
        self.assertIn("| bound", self.text.stdout)
        self.assertIn("64 AIV cores", self.text.stdout)


def _tables_of(text):
    """Every markdown table of ``text`` as (header cells, [row cells, ...]), in order."""
    tables, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and set(lines[i + 1].replace("|", "").strip()) <= set("-: "):
            cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]  # noqa: E731
            header, rows = cells(lines[i]), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            tables.append((header, rows))
        else:
            i += 1
    return tables


def _section(text, heading):
    """The text under ``heading`` (a whole line) up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines()
    start = lines.index(heading) + 1
    end = next((j for j in range(start, len(lines))
                if lines[j].startswith("#") and len(lines[j]) - len(lines[j].lstrip("#")) <= level), len(lines))
    return "\n".join(lines[start:end])


class PageTest(unittest.TestCase):
    """The generator of docs/npu_estimates.md (``bench --all --npu-estimate --markdown``) on the tiny
    cases of CLI_CASES: every section, both SOCs per package, parseable tables whose rows say which
    arch's code ran."""

    @classmethod
    def setUpClass(cls):
        from amct_ops import _cli, _estimatepage

        cls.info = amct_ops.build_info()
        packages = {pkg: entry for pkg, entry in _cli._bench_modules().items() if pkg in CLI_CASES}
        cls.document = _estimatepage.collect(
            "python -m amct_ops bench --all --npu-estimate --cost-only --markdown", packages,
            lambda pkg, rest: _cli._bench_payload(pkg, list(rest) + CLI_CASES[pkg]), ["--cost-only"])
        cls.page = _estimatepage.render(cls.document)

    def test_sections(self):
        self.assertEqual(self.document["exit_code"], 0)
        version = bu.npu_cost_table("ascend910b")["model_version"]
        self.assertTrue(self.page.startswith(f"# NPU time estimates (kernel sim cost model, version {version})\n"))
        for heading in ("## The model", "## Cost table", "## Calibration", "## Bars", "## Estimates per package",
                        "## Reading these numbers"):
            self.assertIn(f"\n{heading}\n", self.page)
        self.assertIn("python -m amct_ops bench --all --npu-estimate --cost-only --markdown", self.page)
        self.assertRegex(self.page, r"Date: \d{4}-\d\d-\d\d \d\d:\d\d UTC; the run took ")
        self.assertIn("Machine (the CPU that ran the kernel sim", self.page)
        self.assertIn("None of them is a measurement", self.page)
        for pkg in CLI_CASES:
            self.assertIn(f"\n### {pkg}\n", self.page)
            for soc in bu.NPU_SOCS:
                self.assertIn(f"(`--soc {soc}`)", self.page)

    def test_cost_table_has_every_quantity_of_both_socs(self):
        header, rows = _tables_of(_section(self.page, "## Cost table"))[0]
        self.assertEqual(len(header), 5, "quantity, then value and source per SOC")
        t910, t950 = bu.npu_cost_table("ascend910b"), bu.npu_cost_table("ascend950")
        quantities = {k for k, v in t910.items() if isinstance(v, dict)}
        self.assertEqual({r[0] for r in rows}, quantities)
        by = {r[0]: r for r in rows}
        self.assertEqual(float(by["aiv_cores"][1]), t910["aiv_cores"]["value"])
        self.assertEqual(float(by["aiv_cores"][3]), t950["aiv_cores"]["value"])
        for r in rows:
            self.assertTrue(r[2].startswith(SOURCE_KINDS) and r[4].startswith(SOURCE_KINDS), r)

    def test_estimate_tables_parse_and_name_the_code_arch(self):
        build_arch = self.info["npu_arch"]
        pipes_at = None
        for soc in bu.NPU_SOCS:
            table_arch = f"dav-{bu.npu_cost_table(soc)['arch']}"
            heading = next(line for line in self.page.splitlines()
                           if line.startswith("#### hifloat8_cast on ") and line.endswith(f"(`--soc {soc}`)"))
            header, rows = _tables_of(_section(self.page, heading))[0]
            with self.subTest(soc=soc):
                self.assertEqual(header[:3], ["case", "kernel", "code"])
                pipes_at = header.index("S")
                self.assertEqual(header[pipes_at:], list(PIPES))
                # 3 ops (encode, decode, fake-quant) x 1 size x 1 dtype, one launch each
                self.assertEqual(len(rows), 3)
                for r in rows:
                    self.assertEqual(len(r), len(header))
                    self.assertGreater(float(r[header.index("est. us")]), 0)
                    self.assertIn(r[header.index("bound")], PIPES)
                    self.assertTrue(all(c.endswith("%") for c in r[pipes_at:]))
                    code = r[2]
                    self.assertTrue(code.startswith(build_arch), "a dav-2201 library runs dav-2201 code")
                    if build_arch == table_arch:
                        self.assertEqual(code, build_arch)
                    else:
                        self.assertIn(f"not the SOC's {table_arch}", code, "the row says it is not the SOC's code")

    def test_fused_svd_quant_rows_are_dav_3510_code_and_only_on_950(self):
        sections = {soc: _section(self.page, next(
            line for line in self.page.splitlines()
            if line.startswith("#### svd_quant on ") and line.endswith(f"(`--soc {soc}`)"))) for soc in bu.NPU_SOCS}
        fused = lambda soc: [r for r in _tables_of(sections[soc])[0][1] if "fused kernel" in r[0]]  # noqa: E731
        self.assertEqual(fused("ascend910b"), [], "the fused kernel is dav-3510 code: not estimated on 910B")
        if "dav-3510" in self.info.get("sim_archs", {}).get("svd_quant", []):
            rows = fused("ascend950")
            self.assertTrue(rows)
            self.assertTrue(all(r[2] == "dav-3510" for r in rows), rows)

    def test_the_document_renders_the_same_page_from_its_json(self):
        from amct_ops import _estimatepage

        again = json.loads(json.dumps(self.document))
        self.assertEqual(_estimatepage.render(again), self.page)


class EstimateBarTest(unittest.TestCase):
    """Bar verdicts from two launch records (hand-made records: the verdict is arithmetic)."""

    @staticmethod
    def _record(us, code, table, bound):
        busy = {p: 0.0 for p in PIPES}
        busy[bound] = 100.0
        return {"estimate_us": us, "build_arch": code, "table_arch": table, "busy_cycles": busy,
                "slowest_cycles": 100.0}

    def test_met_and_not_met(self):
        ours, base = self._record(30.0, 3510, 3510, "M"), self._record(100.0, 2201, 3510, "M")
        bar = bu.estimate_bar("x vs y", ours, base, 0.7, "ascend950")
        self.assertAlmostEqual(bar["ratio"], 0.3)
        self.assertTrue(bar["met"])
        self.assertEqual((bar["ours_code"], bar["base_code"]), ("dav-3510", "dav-2201, not the SOC's dav-3510"))
        self.assertFalse(bu.estimate_bar("x vs y", self._record(71.0, 3510, 3510, "V"), base, 0.7, "ascend950")["met"])

    def test_the_page_prints_the_verdicts(self):
        from amct_ops import _estimatepage

        ours, base = self._record(30.0, 2201, 2201, "M"), self._record(100.0, 2201, 2201, "M")
        document = {"packages": [{"package": "p", "description": "", "runs": [
            {"soc": "ascend910b", "payload": {"bars": [bu.estimate_bar("fast", ours, base, 0.7, "ascend910b"),
                                                       bu.estimate_bar("slow", base, ours, 1.5, "ascend910b")]}}]}]}
        header, rows = _tables_of(_estimatepage.bar_table(document))[0]
        verdicts = {r[0]: r[header.index("verdict")] for r in rows}
        self.assertEqual(verdicts, {"fast": "met", "slow": "not met"})


class CommittedPageTest(unittest.TestCase):
    """docs/npu_estimates.md is what the generator renders from the committed docs/npu_estimates.json
    (no estimate runs here)."""

    def test_the_page_is_rendered_from_the_results(self):
        from amct_ops import _estimatepage

        with open(ROOT / "docs" / "npu_estimates.json", encoding="utf-8") as fh:
            document = json.load(fh)
        self.assertEqual((ROOT / "docs" / "npu_estimates.md").read_text(encoding="utf-8"),
                         _estimatepage.render(document))
        self.assertEqual(document["exit_code"], 0)
        self.assertEqual({p["package"] for p in document["packages"]}, set(CLI_CASES))
        for p in document["packages"]:
            self.assertEqual([r["soc"] for r in p["runs"]], list(bu.NPU_SOCS))


class PageCliTest(unittest.TestCase):
    def test_refuses_options_that_make_no_page(self):
        for extra in (["--soc", "ascend950"],):  # one process: importing amct_ops takes seconds
            with self.subTest(extra=extra):
                proc = subprocess.run([sys.executable, "-m", "amct_ops", "bench", "--all", "--npu-estimate",
                                       "--markdown", *extra], cwd=ROOT, capture_output=True, text=True, timeout=300,
                                      env=dict(os.environ, PYTHONPATH=str(Path(amct_ops.__file__).parents[1])))
                self.assertEqual(proc.returncode, 1, proc.stderr[-2000:])
                self.assertIn("--all --npu-estimate runs every SOC", proc.stderr)


if __name__ == "__main__":
    unittest.main()
