"""``docs/npu_estimates.md``: the page of ``python -m amct_ops bench --all --npu-estimate --markdown``.

One run collects, from the current build, every package's ``--npu-estimate`` payload for every SOC
of :data:`amct_ops._benchutil.NPU_SOCS`, the cost model's tables and the plain-matmul check, into
a results document (:func:`collect`, committed beside the page as ``docs/npu_estimates.json``);
:func:`render` turns the document into the page: the fixed description of the model (the text
constants below, which say how the model works, not what it estimated), the cost tables, and
per package and SOC the estimate rows, with the arch whose instruction stream ran each row and
the bars computed from the rows of the same run. Nothing on the page is pasted by hand.
"""
import datetime

from amct_ops import _benchutil as bu

__all__ = ["collect", "render"]

DATE_FORMAT = "%Y-%m-%d %H:%M UTC"

# The plain bf16 matmul upstream publishes on Ascend 950 (MatMulV3, S = 32K, K = 2048, N = 10944):
# the model's second calibration point, a check (nothing is fitted to it).
MATMUL_CHECK_SHAPE = (32768, 2048, 10944)
MATMUL_CHECK_PUBLISHED_US = {"ascend950": 3446.0}

MODEL_TEXT = """\
## The model

Code: `common/ascendc_sim/sim_cost.h` (timeline), `common/ascendc_sim/sim_cost_table.h` (numbers).
The model turns a kernel's emulated instruction stream (the kernel sim runs the real AscendC kernel
source on the CPU) into a per-block timeline per pipe and reports the slowest block. It is an
instrument for design decisions (which pipe bounds a kernel, what fusing or vectorising a loop would
buy), not a prediction to be quoted as performance.

* Pipes: S (scalar: issues every instruction, and runs `LocalTensor::GetValue/SetValue` and
  `GlobalTensor::GetValue`), V (vector ops and UB->UB copies), MTE2 (GM->UB), MTE3 (UB->GM).
  MTE1 (L1->L0A/L0B), M (cube) and FIX (L0C->GM) are the AIC's, driven by the Matmul API.
* An instruction starts when the scalar unit issues it (program order), its pipe is free and the
  pipe's waits are satisfied; it keeps its pipe busy for its duration. DMAs complete a latency
  after their transfer (the latency does not occupy the pipe).
* Waits: `WaitFlag<P_Q>` (Q waits for everything P had issued at the `SetFlag`; Q = S stalls the
  scalar unit), the queue edges (VECIN `EnQue`->`DeQue`: MTE2 -> V, VECIN `FreeTensor`->`AllocTensor`:
  V -> MTE2, VECOUT: V -> MTE3 and MTE3 -> V), `PipeBarrier<PIPE_ALL>` (everything), and the
  auto-sync of scalar UB accesses (a scalar read of a 32-B block waits for its last V/MTE2 write,
  a scalar write also for its last V/MTE3 read). Double-buffered stages therefore overlap, a
  barrier serialises, and a scalar loop after vector work waits for the vector pipe.
* Durations: vector = issue + cycles per repeat x repeats (a repeat is 256 B of the widest
  operand; cycles by op class and 16/32-bit width); DMA = issue + bursts x burst cost + bytes /
  (per-core rate = min(MTE peak, HBM bandwidth / cores of the launch)); scalar UB access = a fixed
  cost that includes the loop arithmetic around it (the sim cannot see scalar ALU work).
* Kernel time = the slowest block's end + launch cost. Busy share of a pipe = its busy cycles /
  that block's time (pipes run in parallel, so shares can add up to more than 100%); the bound
  pipe is the busiest one.
* Cube (`CostBlock::CubeTile`): a Matmul base tile (baseM x baseN over K) runs per baseK step
  MTE2 (GM->L1: the A and B chunks at `cube_gm_bytes_per_cycle`) -> MTE1 (the same bytes at
  `mte1_bytes_per_cycle`) -> M (fractals x cycles per fractal: 16x16x16 for bf16/half, 16x64x16
  for MX FP4), with two L1 and two L0 slots, so steps overlap; the tile's FIX (output bytes at
  `fix_bytes_per_cycle`) waits for its last M and the next tile's first M waits for the FIX (one
  L0C tile). No L2: the cube's GM rate is an assumed L2-hit rate.
* MIX kernels (AIC + AIVs, `amct_sim::LaunchMix`): each core has its timeline; a
  `CrossCoreSetFlag` on pipe P is complete when P's issued work is, and the waiting core's scalar
  unit resumes `cross_core_flag_cycles` after the last setter it needs. Kernel time = the slowest
  core; a MIX record's busy cycles per pipe are the busiest core's, so the bound pipe may be an
  AIC pipe (M) or an AIV pipe (V).
* Cost-only mode (`--cost-only`, `_sim_cost_begin(..., cost_only=True)`): the Matmul API times
  its tiles but skips the arithmetic (its outputs are garbage), so large shapes estimate in
  seconds; kernels without a Matmul are unaffected. A kernel whose later work depends on matmul
  outputs would run that work on garbage values and time another path of its code, so such a
  benchmark (stem_indexer: a selection on the scores) runs the arithmetic even in this mode.
* Which code runs: a launch runs the instruction stream its library was compiled for, the build's
  arch (dav-2201 for the default `ascend910b` build), or dav-3510 for the kernels a package lists
  as `KERNEL_3510` (compiled for the sim only, in every build: `amct_ops.build_info()["sim_archs"]`).
  The SOC's cost table times whatever ran; the `code` column of every row says which stream that
  was, and a row run as another arch's code than the SOC's says so (a dav-2201 kernel timed with
  the 950's numbers is not the 950 kernel: rebuild with `--soc ascend950` for that).
* Not modelled: instruction-queue depth (the scalar unit may run arbitrarily far ahead), UB bank
  conflicts, L2 cache, GM address alignment, the host side of a call, HBM sharing between the
  cube's and the vector cores' streams.
"""

COST_TABLE_INTRO = """\
## Cost table

Each number carries its source in the table itself (`doc:` a CANN page, `published:` a published
figure, `assumed:` with the reasoning, `fitted:` an assumed number pinned by a calibration point).
Rendered from `torch.ops.amct._sim_cost_table(soc)` of this build:
"""

# The calibration of the scalar UB access cost runs in C++ (tests/sim/test_sim_cost.cpp, a test
# kernel of upstream's HiF8 design); its figures are the test's ``COST`` lines, which this page
# cannot run. They are quoted for the model version they were taken with, and the page says so
# when the model it renders is another.
CALIBRATION_MODEL_VERSION = 2
CALIBRATION_TEXT = """\
**Point 1: upstream's HiF8 cast on Ascend 910B3** (upstream README, CANN 9.0.0, fp16, mean of 100
runs). `tests/sim/test_sim_cost.cpp` (run by `tests/test_kernel_sim.py`) has a test kernel with
the same *design* (written for that test, not upstream's code) and runs it on the sim with
upstream's tiling rules (192 KB UB, 40 AIV, LUT 32 KB encode / 512 B decode, tile 32768, at least
4096 / 2048 elements per core): per block one `DataCopyPad` GM->UB of the LUT, then per tile one
`DataCopyPad` of the input, a scalar loop with **three scalar UB accesses per element**
(`GetValue` of the input, of the LUT, `SetValue` of the output) and one `DataCopyPad` UB->GM,
single-buffered. The model runs the first and the last block at the real blockDim.

| case (910B3, fp16) | estimate ms | published ms | estimate / published | bound |
|---|---:|---:|---:|---|
| encode 64K (16 cores) | 0.137 | 0.217 | 0.63 | S |
| encode 256K | 0.209 | 0.288 | 0.73 | S |
| encode 1M | 0.767 | 0.867 | 0.88 | S |
| encode 4M | 3.000 | 3.130 | 0.96 | S |
| **encode 16M** | **11.93** | **12.236** | **0.975** | S (100%) |
| decode 16M | 11.93 | 12.148 | 0.98 | S (100%) |
| encode slope 1M -> 16M | 11.16 | 11.37 | 0.98 | |

What is fitted and what is checked: the scalar UB access cost (17 cycles) was chosen from the
1M -> 4M slope of the published encode times (52 cycles per element of a three-access loop at
1.8 GHz); 16M encode, 16M decode and the 1M -> 16M slope are hold-out checks of that one number
together with the core-count policy and the DMA model (the test requires each within 1.5x).
Small sizes: upstream's ~0.21 ms floor for 1K-64K is per-call host work, which the model does
not estimate; the test checks that the kernel fits under it. The launch cost is assumed, not
calibrated.
"""

READING_TEXT = """\
## Reading these numbers

* They rank designs under one set of assumptions; their absolute values are as good as the
  table's assumed numbers, and only the scalar UB access cost is pinned by a measurement.
* A scalar-bound kernel (S near 100%) gains nothing from double buffering or more DMA bandwidth;
  only fewer scalar accesses (vectorising the loop) help.
* A bar verdict here compares two estimates of the same run (the kernel against the model's plain
  matmul); it says what the model expects, not what an NPU does.
"""


# ----------------------------------------------------------------------------------------------
# collecting
# ----------------------------------------------------------------------------------------------


def _build_facts():
    import amct_ops

    info = dict(getattr(amct_ops, "build_info", lambda: {})())
    return {key: info.get(key) for key in ("version", "soc", "npu_arch", "backend", "revision", "sim_archs")}


def _matmul_check(soc):
    import json

    import torch

    m, k, n = MATMUL_CHECK_SHAPE
    return json.loads(torch.ops.amct._sim_matmul_estimate(soc, m, k, n, "bfloat16"))


def _estimate_description(mod):
    """What a package's ``npu_estimate`` estimates: its docstring, as one markdown paragraph."""
    doc = getattr(getattr(mod, "npu_estimate", None), "__doc__", None) or ""
    text = " ".join(doc.split()).replace("``", "`")
    prefix = "`--npu-estimate`:"
    text = text[len(prefix):].strip() if text.startswith(prefix) else text
    return text[:1].upper() + text[1:]


def collect(command, packages, payload, rest=(), socs=bu.NPU_SOCS, progress=None):
    """The results document of one run.

    packages: ``{pkg: (bench module or None, description or the reason it is unavailable)}``;
    payload(pkg, args) -> (exit code, the package's ``--json`` object or None), run once per package
    and SOC with ``rest`` (the options given to every package) plus ``--npu-estimate --soc SOC``."""
    import time

    started = time.perf_counter()
    document = {"command": command, "date": datetime.datetime.now(datetime.timezone.utc).strftime(DATE_FORMAT),
                "machine": bu.machine_facts(), "build": _build_facts(),
                "cost_tables": {soc: bu.npu_cost_table(soc) for soc in socs},
                "matmul_check": {soc: _matmul_check(soc) for soc in socs}, "packages": [], "exit_code": 0}
    for pkg, (mod, text) in packages.items():
        entry = {"package": pkg, "description": _estimate_description(mod), "runs": []}
        for soc in socs:
            if mod is None:
                entry["runs"].append({"soc": soc, "payload": None, "reason": f"the benchmark module {text}"})
                document["exit_code"] = max(document["exit_code"], 2)
                continue
            if progress is not None:
                progress(f"{pkg} --soc {soc}")
            code, obj = payload(pkg, list(rest) + ["--npu-estimate", "--soc", soc])
            document["exit_code"] = max(document["exit_code"], code)
            if obj is not None:
                obj.pop("cost_table", None)  # the document holds each SOC's table once
            entry["runs"].append({"soc": soc, "payload": obj, "reason": f"the estimate exited with {code}"})
        document["packages"].append(entry)
    document["duration_s"] = round(time.perf_counter() - started, 1)
    return document


# ----------------------------------------------------------------------------------------------
# rendering
# ----------------------------------------------------------------------------------------------


def _format_value(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def _arch_label(table):
    chip = table["chip"]
    return chip if f"dav-{table['arch']}" in chip else f"{chip} (dav-{table['arch']})"


def cost_table_markdown(tables):
    """The scalar quantities and the vector classes of every SOC's table, side by side."""
    socs = list(tables)
    first = tables[socs[0]]
    names = [k for k, v in first.items() if isinstance(v, dict) and "value" in v]
    columns = ["quantity"]
    for soc in socs:
        columns += [_arch_label(tables[soc]), "source"]
    rows = [[name] + [c for soc in socs
                      for c in (_format_value(tables[soc][name]["value"]), tables[soc][name]["source"])]
            for name in names]
    vcolumns = ["vector class"]
    for soc in socs:
        vcolumns += [f"{_arch_label(tables[soc])} cycles/repeat 16-bit", "32-bit", "source"]
    vrows = []
    for i, entry in enumerate(first["vector"]):
        row = [entry["class"]]
        for soc in socs:
            e = tables[soc]["vector"][i]
            row += [_format_value(e["cycles_per_repeat_16bit"]), _format_value(e["cycles_per_repeat_32bit"]),
                    e["source"]]
        vrows.append(row)
    return bu.markdown_table(columns, rows) + "\n\n" + bu.markdown_table(vcolumns, vrows)


def _shares(record, pipes):
    cycles = record["slowest_cycles"] or 1.0
    return ", ".join(f"{p} {100 * record['busy_cycles'][p] / cycles:.0f}%" for p in pipes)


def matmul_check_text(document):
    m, k, n = MATMUL_CHECK_SHAPE
    lines = [f"**Point 2 (a check, not fitted): the plain bf16 matmul** S = {m}, K = {k}, N = {n} through the "
             f"emulated Matmul API (`torch.ops.amct._sim_matmul_estimate(soc, {m}, {k}, {n})`, cost-only), "
             "in this run:", ""]
    for soc, r in document["matmul_check"].items():
        table = document["cost_tables"][soc]
        flops = 2.0 * m * k * n / (r["estimate_us"] * 1e-6) / 1e12
        published = MATMUL_CHECK_PUBLISHED_US.get(soc)
        vs = (f"; upstream publishes MatMulV3 at {published:g} us measured: estimate / published = "
              f"{r['estimate_us'] / published:.2f}x"
              if published else "; no published point")
        lines.append(f"* {table['chip']} ({soc}): **{r['estimate_us']:.0f} us** ({flops:.0f} TFLOPS), code "
                     f"{bu.code_arch(r)}, {r['block_dim']} AIC, bound {bu.bound_pipe(r)} "
                     f"({_shares(r, ('M', 'MTE2', 'MTE1', 'FIX'))}){vs}.")
    lines += ["", "The cube rate is the assumed one fractal per cycle from the published peak (cost table); the "
              "matmul's tiling (base block) is the code arch's, so a dav-2201 build tiles the 950 matmul as "
              "dav-2201 does."]
    return "\n".join(lines)


def _package_notes(payload):
    """The notes of a payload that are the package's own (the model's common ones are said once)."""
    notes = payload.get("notes", [])
    return notes[int(payload.get("common_notes", 0)):]


def _tiling_note(payload):
    common = payload.get("notes", [])[:int(payload.get("common_notes", 0))]
    return next((n for n in common if n.startswith("tiling as on the NPU")), "")


def _bars(document):
    return [(entry["package"], bar) for entry in document["packages"] for run in entry["runs"]
            if run["payload"] for bar in run["payload"].get("bars", [])]


def bar_table(document):
    rows = []
    for pkg, b in _bars(document):
        rows.append([b["label"], b["soc"], f"{b['ours_us']:.4g} us ({b['ours_code']}, {b['ours_bound']})",
                     f"{b['base_us']:.4g} us ({b['base_code']}, {b['base_bound']})", f"{b['ratio']:.3g}x",
                     f"<= {b['target']:g}x", "met" if b["met"] else "not met"])
    if not rows:
        return "No package reported a bar in this run."
    return bu.markdown_table(["bar (estimate / estimate)", "SOC", "ours (code, bound)", "baseline (code, bound)",
                              "ratio", "target", "verdict"], rows)


def _package_section(entry, tables):
    out = [f"### {entry['package']}", ""]
    if entry["description"]:
        out += [entry["description"], ""]
    for run in entry["runs"]:
        table = tables[run["soc"]]
        out += [f"#### {entry['package']} on {table['chip']} (`--soc {run['soc']}`)", ""]
        payload = run["payload"]
        if payload is None:
            out += [f"Not estimated: {run['reason']}.", ""]
            continue
        tiling = _tiling_note(payload)
        if tiling:
            out += [tiling[0].upper() + tiling[1:], ""]
        for t in payload.get("tables", []):
            out += [bu.markdown_table(t["columns"], t["rows"]), ""]
        for bar in payload.get("bars", []):
            out += [f"* Bar: {bar['label']}: {bar['ours_us']:.4g} / {bar['base_us']:.4g} us = "
                    f"{bar['ratio']:.3g}x (<= {bar['target']:g}x): **{'met' if bar['met'] else 'not met'}**."]
        out += [f"* {n}" for n in _package_notes(payload)]
        out.append("")
    return out


def _minutes(seconds):
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def _build_line(build):
    archs = build.get("sim_archs") or {}
    streams = "; ".join(f"{pkg} {', '.join(a)}" for pkg, a in archs.items()) or "not recorded"
    return (f"Build: amct_ops {build.get('version')}, soc {build.get('soc')} (NPU arch {build.get('npu_arch')}), "
            f"backend {build.get('backend')}, revision {build.get('revision')}; the arches of the kernel sim's "
            f"instruction streams per package (`build_info()['sim_archs']`): {streams}.")


def _machine_line(facts):
    return (f"Machine (the CPU that ran the kernel sim; it does not enter the estimates): {facts.get('cpu_model')} "
            f"({facts.get('machine')}), {facts.get('nproc')} CPUs available; python {facts.get('python')}, torch "
            f"{facts.get('torch')}; load average {' / '.join(str(v) for v in facts.get('load_averages') or [])} "
            "at the start.")


def render(document):
    """The markdown page of a results document."""
    tables = document["cost_tables"]
    versions = sorted({t["model_version"] for t in tables.values()})
    version = versions[0] if len(versions) == 1 else "/".join(str(v) for v in versions)
    out = [f"# NPU time estimates (kernel sim cost model, version {version})", "",
           "Generated by a command, not edited by hand: regenerate it with", "", "```bash",
           document["command"], "```", "",
           f"Date: {document['date']}; the run took {_minutes(document['duration_s'])} of wall time.", "",
           _build_line(document["build"]), "", _machine_line(document["machine"]), "",
           f"**Every number on this page is an estimate of the kernel sim's cost model (version {version}). None "
           "of them is a measurement: no NPU ran.** Each benchmark case runs once in the kernel sim with the "
           "SOC's AIV core count and UB (so the host tiles as on the NPU), with the cost model on; every kernel "
           "launch of the call is one row. Time per call in microseconds, the kernel only. Columns: `code` the "
           "arch whose instruction stream ran; `blockDim` the launch's blocks (MIX kernels: AI cores); "
           "`blocks emulated` how many of them ran in the sim (`all`, or k of n with `--sample-blocks`); `bound` "
           "the busiest pipe; S/V/MTE2/MTE3 (vector core) and MTE1/M/FIX (cube) each pipe's busy share of the "
           "slowest core's time (MIX kernels: the busiest core of each pipe).", "",
           MODEL_TEXT, COST_TABLE_INTRO, cost_table_markdown(tables), "", "## Calibration", ""]
    if version != CALIBRATION_MODEL_VERSION:
        out += [f"*The point-1 figures below were taken with cost model version {CALIBRATION_MODEL_VERSION}; this "
                f"page renders version {version}: rerun tests/sim/test_sim_cost.cpp and update them "
                "(`amct_ops._estimatepage.CALIBRATION_TEXT`).*", ""]
    out += [CALIBRATION_TEXT, matmul_check_text(document), "", "## Bars", "",
            "Computed from the rows of this run (section of each package below):", "", bar_table(document), "",
            "## Estimates per package", ""]
    for entry in document["packages"]:
        out += _package_section(entry, tables)
    out.append(READING_TEXT)
    return "\n".join(out).rstrip("\n") + "\n"
