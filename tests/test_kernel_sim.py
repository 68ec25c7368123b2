"""Tests of the kernel sim (common/ascendc_sim): the CPU emulation of the AscendC subset.

The C++ programs in tests/sim/ are compiled with g++ for both arches (-D__NPU_ARCH__=2201 and
3510) into a temporary directory (once per test run) and run; every check prints
"PASS <name>" or "FAIL <name>: <why>", and each test below asserts that the checks it names ran
and passed on both arches. Negative compile tests prove that what the NPU compiler would reject
(unlisted dtypes, wrong-type scalars, non-listed constructors, arithmetic on half) does not
compile in the sim either, each next to a correct snippet that does compile.

Needs only g++ (CXX overrides it) and, for two cross-checks, numpy or torch.
"""

import atexit
import concurrent.futures
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_harness import ARCHES, CXX, SIM_DIR, ProgramTestBase, errors_by_line, parse, syntax_only  # noqa: E402
from sim_harness import run_program as _run_program  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SRC_DIR = Path(__file__).resolve().parent / "sim"
BASE_FLAGS = ["-std=c++17", "-DAMCT_KERNEL_SIM", "-I", str(SIM_DIR), "-pthread"]
WARN_FLAGS = ["-Wall", "-Wextra", "-Wno-unused-parameter"]
TIMEOUT = 600

# Programs get this module's time limit.
run_program = functools.partial(_run_program, timeout=TIMEOUT)

_tmp_lock = threading.Lock()
_tmp_dir = None
_builds = {}
_builds_lock = threading.Lock()
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)  # the CI machine has 2 cores


def _work_dir():
    global _tmp_dir
    with _tmp_lock:
        if _tmp_dir is None:
            _tmp_dir = Path(tempfile.mkdtemp(prefix="amct_sim_tests_"))
            atexit.register(shutil.rmtree, str(_tmp_dir), True)
        return _tmp_dir


def _run_compiler(cmd, what):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"compiling {what} failed:\n{' '.join(cmd)}\n{proc.stderr[-6000:]}")


def _state_object(arch):
    """amct_sim_state.cpp compiled once per arch (the process-wide state every program links)."""
    out = _work_dir() / f"amct_sim_state_{arch}.o"
    with _builds_lock:
        lock = _builds.setdefault(("state-lock", arch), threading.Lock())
    with lock:
        if not out.exists():
            _run_compiler(
                [
                    CXX,
                    "-O1",
                    "-c",
                    *BASE_FLAGS,
                    *WARN_FLAGS,
                    f"-D__NPU_ARCH__={arch}",
                    str(SIM_DIR / "amct_sim_state.cpp"),
                    "-o",
                    str(out),
                ],
                f"amct_sim_state.cpp for {arch}",
            )
    return out


def _compile(name, arch, opt):
    out = _work_dir() / f"{name}_{arch}{opt}"
    cmd = [
        CXX,
        opt,
        *BASE_FLAGS,
        *WARN_FLAGS,
        f"-D__NPU_ARCH__={arch}",
        str(SRC_DIR / f"{name}.cpp"),
        str(_state_object(arch)),
        "-o",
        str(out),
    ]
    _run_compiler(cmd, f"{name} for {arch}")
    return out


def build(name, arch, opt="-O1"):
    """Future of the compiled program tests/sim/<name>.cpp for arch (cached for the test run)."""
    key = (name, arch, opt)
    with _builds_lock:
        if key not in _builds:
            _builds[key] = _pool.submit(_compile, name, arch, opt)
        return _builds[key]


def _prebuild():
    for arch in ARCHES:
        for name in ("test_sim_checks", "test_sim_cast", "test_sim_launch"):
            build(name, arch)
        build("test_sim_perf", arch, "-O2")


class _ProgramTest(ProgramTestBase):
    """Runs one C++ test program per arch once; tests assert on its PASS/FAIL markers."""

    prebuild = staticmethod(_prebuild)
    build = staticmethod(build)

    def assertProgramClean(self):
        super().assertProgramClean(min_checks=11)


class SimGuardsTest(_ProgramTest):
    """Every guard of the sim (docs/kernel_sim.md, What it enforces) raises SimError naming the problem."""

    program = "test_sim_checks"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_ub_guards(self):
        self.assertChecks(
            [
                "ub_over_limit",
                "ub_exactly_at_limit",
                "ub_override_shrinks_limit",
                "ub_override_allows_up_to_limit",
                "ub_more_than_64_buffers",
                "ub_64_buffers_ok",
                "ub_more_than_8_tque_blocks_per_position",
                "ub_8_tque_blocks_per_position_ok",
                "ub_two_live_tpipes",
                "ub_sequential_tpipes_ok",
                "ub_initbuffer_twice_tque",
                "ub_initbuffer_twice_tbuf",
                "ub_initbuffer_len_zero",
                "ub_initbuffer_num_zero",
                "ub_layout_bump_allocated_rounded_to_32",
                "ub_tpipe_outside_launch",
                "ub_getblockidx_outside_launch",
            ]
        )

    def test_select_184kb_budget(self):
        self.assertChecks(["select_budget_up_to_184KB_ok"])
        self.assertChecks(["select_budget_2201_scratch_collision"], arches=(2201,))
        self.assertChecks(["select_budget_3510_no_scratch"], arches=(3510,))

    def test_alignment_guards(self):
        self.assertChecks(
            [
                "align_ub_operand_not_32B",
                "align_ub_operand_32B_view_ok",
                "align_datacopy_gm_address",
                "align_datacopypad_gm_address_free",
                "align_getwithoffset_offset",
            ]
        )

    def test_bounds_guards(self):
        self.assertChecks(
            [
                "bounds_count_beyond_view",
                "bounds_count_beyond_shrunk_view",
                "bounds_getvalue_index",
                "bounds_setvalue_index",
                "bounds_subscript_past_end",
                "bounds_setsize_growth",
                "bounds_tbuf_get_len",
                "bounds_tbuf_getwithoffset_size",
                "bounds_gm_outside_regions",
                "bounds_gm_past_region_end",
                "bounds_gm_setglobalbuffer_extent",
                "bounds_gm_inside_extent_ok",
                "bounds_gm_write_read_only",
                "bounds_gm_getvalue_outside_region",
                "bounds_gm_getvalue_extent",
                "bounds_gm_getvalue_ok",
                "bounds_no_gm_scope",
                "gm_scope_nesting_pops",
            ]
        )

    def test_parameter_guards(self):
        self.assertChecks(
            [
                "param_count_zero_vector",
                "param_count_negative_vector",
                "param_count_zero_datacopy",
                "param_datacopy_bytes_not_32",
                "param_compare_bytes_not_256",
                "param_compares_bytes_not_256",
                "param_blockcount_range",
                "param_datacopy_params_blockcount_range",
                "param_blocklen_range",
                "param_blocklen_multiple_of_sizeof",
                "param_pads_over_32B",
                "param_pads_32B_ok",
                "param_dma_ub_side_bounds",
                "param_cast_mode_unlisted",
                "param_cast_mode_odd_not_for_int32",
                "param_cast_mode_unknown",
                "param_cast_mode_odd_for_half_ok",
                "param_partial_overlap",
                "param_partial_overlap_cast",
                "param_full_alias_ok",
                "param_shift_amount_negative",
                "param_compare_int32_eq_ok",
                "param_select_mode",
                "param_select_scalar_mode",
            ]
        )
        self.assertChecks(
            ["param_shift_amount_over_width_2201", "param_compare_int32_eq_only_2201"], arches=(2201,)
        )
        self.assertChecks(
            ["param_shift_amount_over_width_3510", "param_div_int_by_zero_3510"], arches=(3510,)
        )

    def test_queue_guards(self):
        self.assertChecks(
            [
                "que_alloc_none_idle",
                "que_enque_foreign",
                "que_enque_tbuf_tensor_foreign",
                "que_enque_queued",
                "que_enque_freed",
                "que_enque_beyond_depth",
                "que_deque_empty",
                "que_free_foreign",
                "que_free_queued",
                "que_free_freed",
                "que_stale_tensor_vector",
                "que_stale_tensor_dma",
                "que_stale_tensor_after_tpipe",
                "que_blocks_held_at_exit",
                "que_blocks_queued_at_exit",
                "que_uninitialised_tensor",
                "que_before_initbuffer",
                "que_state_queries",
            ]
        )

    def test_flag_guards(self):
        self.assertChecks(
            [
                "flag_wait_without_set",
                "flag_set_twice",
                "flag_id_out_of_range",
                "flag_id_negative",
                "flag_non_vector_event",
                "flag_fetch_non_vector_event",
                "flag_pending_at_exit",
                "flag_set_wait_pairs",
                "flag_alloc_event_exhausted",
                "flag_release_unallocated",
                "flag_alloc_release_fetch",
                "flag_pipebarrier_s",
                "flag_pipebarrier_cube_pipe",
                "flag_gettpipeptr_without_pipe",
            ]
        )

    def test_sync_hazard_model(self):
        self.assertChecks(
            [
                "sync_tbuf_dma_to_v_without_flag",
                "sync_tbuf_dma_to_v_with_mte2_v_flag",
                "sync_tbuf_dma_then_wait_mte2_s_orders_all",
                "sync_tbuf_dma_pipe_barrier_all",
                "sync_flag_waited_too_late",
                "sync_v_to_mte3_without_flag",
                "sync_mte3_to_v_reuse_without_flag",
                "sync_tbuf_store_with_flags",
                "sync_v_to_mte2_reuse_without_flag",
                "sync_v_to_mte2_reuse_with_flag",
                "sync_overlapping_mte2_writes_need_barrier",
                "sync_overlapping_mte2_writes_with_barrier",
                "sync_gm_mte3_to_mte2_without_flag",
                "sync_gm_mte3_to_mte2_with_flag",
                "sync_check_disabled_by_env",
                "sync_scalar_access_needs_no_flags",
            ]
        )

    def test_tque_pipeline_passes_hazard_model(self):
        self.assertChecks(
            [
                "pipeline_tque_copyin_compute_copyout_buffers_1",
                "pipeline_tque_copyin_compute_copyout_buffers_1_values",
                "pipeline_tque_copyin_compute_copyout_buffers_2",
                "pipeline_tque_copyin_compute_copyout_buffers_2_values",
            ]
        )

    def test_datacopy_semantics(self):
        self.assertChecks(
            [
                "dcp_spec_example_3x47_pitch64",
                "dcp_spec_example_ub_layout",
                "dcp_spec_example_back_to_gm_pitch64",
                "dcp_left_right_pads_half",
                "dcp_left_right_pads_layout",
                "dcp_dummy_first_element",
                "dcp_dummy_repeats_first_element",
                "dcp_pad_without_ispad_is_undefined_poison",
                "dcp_ub_to_gm_partial_blocks",
                "dcp_ub_to_gm_exact_bytes_and_nops",
                "dc_params_gaps_and_ub_to_ub",
                "dc_params_gaps_layout",
                "dc_gm_to_veccalc_rejected",
                "dc_ub_to_ub_strided",
                "dc_ub_to_ub_strided_layout",
                "dc_ub_to_ub_strided_dst_beyond_view",
                "dc_ub_to_ub_strided_block_count",
                "dc_ub_to_ub_strided_overlap",
                "dc_ub_to_ub_strided_nop",
            ]
        )

    def test_vector_ops(self):
        self.assertChecks(
            [
                "vec_binary_float",
                "vec_binary_int16_wraps",
                "vec_binary_half_in_float_rne",
                "vec_scalar_unary_logic_fill_index",
            ]
        )

    def test_compare_select(self):
        self.assertChecks(
            [
                "compare_select_run",
                "compare_bit_order_lsb_first",
                "compare_bit_order_byte0",
                "select_mode2_and_mode1",
                "select_half_uint32_mask",
            ]
        )


class SimLaunchTest(_ProgramTest):
    """Launch (parallel, serial-shuffled, errors), the race check and the platform stub."""

    program = "test_sim_launch"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_serial_shuffled_equals_parallel(self):
        self.assertChecks(
            [
                "launch_parallel",
                "launch_parallel_values",
                "launch_serial_shuffled",
                "launch_serial_equals_parallel",
                "launch_one_thread",
                "launch_one_thread_equals_parallel",
                "launch_serial_runs_every_block_once",
                "launch_serial_order_is_shuffled",
                "launch_serial_order_reproducible",
                "launch_serial_seed_changes_order",
            ]
        )
        for arch in ARCHES:
            proc = self.results[arch][0]
            self.assertIn(
                "AMCT_SIM_SERIAL=1: blocks run one at a time in an order shuffled with AMCT_SIM_SEED=",
                proc.stderr,
            )
            self.assertEqual(proc.stderr.count("AMCT_SIM_SEED="), 1, "the seed is logged once per process")

    def test_block_context_and_poison(self):
        self.assertChecks(
            [
                "launch_block_idx_num",
                "launch_block_idx_num_values",
                "launch_poison_default",
                "launch_poison_default_0xFF",
                "launch_poison_env",
                "launch_poison_env_value",
                "launch_poison_env_invalid",
                "launch_threads_env_invalid",
            ]
        )

    def test_launch_errors(self):
        self.assertChecks(
            [
                "launch_worker_exception_rethrown",
                "launch_first_error_lowest_block",
                "launch_nested_rejected",
                "launch_blockdim_zero",
                "launch_blockdim_over_cores",
                "launch_blockdim_at_cores",
                "launch_counter_counts_calls",
            ]
        )

    def test_races(self):
        self.assertChecks(
            [
                "race_disjoint_adjacent_ok",
                "race_two_blocks_write_one_byte",
                "race_read_of_other_blocks_write",
                "race_read_own_write_region_ok",
                "race_check_disabled_by_env",
                "race_getvalue_on_written_gm",
                "race_getvalue_on_input_ok",
                "race_interleaved_strided_rows_ok",
                "race_interleaved_strided_rows_values",
                "race_sweep_matches_brute_force",
            ]
        )

    def test_platform_stub(self):
        self.assertChecks(
            [
                "platform_defaults",
                "platform_ub_larger_than_arch_rejected",
                "platform_ub_too_small_rejected",
                "platform_cores_over_65535_rejected",
                "platform_rejected_set_changes_nothing",
                "platform_one_core",
                "platform_one_core_blockdim_2_rejected",
                "platform_prime_core_count",
                "platform_prime_core_count_values",
                "platform_blockdim_over_prime_cores",
                "platform_blockdim_more_than_elements",
                "platform_ub_override_is_launch_limit",
                "platform_ub_override_rejects_more",
                "platform_env_facts",
                "platform_override_beats_env",
                "platform_env_invalid",
                "platform_env_ub_larger_than_arch",
                "platform_env_invalid_reaches_launch",
                "platform_restored",
            ]
        )

    def test_env_platform_from_process_environment(self):
        # The same facts through a real process environment (not setenv inside the program).
        src = _work_dir() / "env_platform.cpp"
        src.write_text(
            '#include "kernel_operator.h"\n#include <cstdio>\n'
            'int main() { auto f = amct_sim::GetPlatform(); std::printf("%u %llu\\n", f.aivCores,'
            " (unsigned long long)f.ubBytes);\n"
            '  try { amct_sim::Launch("k", f.aivCores + 1, [] {}); } catch (const amct_sim::SimError& e) {'
            ' std::printf("%s\\n", e.what()); }\n  return 0; }\n'
        )
        for arch in ARCHES:
            exe = _work_dir() / f"env_platform_{arch}"
            cmd = [
                CXX,
                "-O0",
                *BASE_FLAGS,
                f"-D__NPU_ARCH__={arch}",
                str(src),
                str(SIM_DIR / "amct_sim_state.cpp"),
                "-o",
                str(exe),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            out = run_program(
                exe, env={"AMCT_SIM_CORE_NUM": "7", "AMCT_SIM_UB_SIZE": "40960"}
            ).stdout.splitlines()
            self.assertEqual(out[0], "7 40960")
            self.assertTrue(
                out[1].startswith("amct kernel sim: kernel k: blockDim 8 is not in [1, 7]"), out[1]
            )
            default = run_program(exe).stdout.splitlines()[0]
            self.assertEqual(default, "40 196608" if arch == 2201 else "40 253952")


class SimSharedStateTest(unittest.TestCase):
    """The process-wide state is one object even when several shared libraries use the sim."""

    def test_two_kernel_libraries_share_platform_and_counter(self):
        work = _work_dir() / "shared_state"
        work.mkdir(exist_ok=True)
        kernel = (
            '#include "kernel_operator.h"\n'
            'extern "C" __attribute__((visibility("default"))) int NAME_run(uint32_t blockDim) {\n'
            '  try { amct_sim::Launch("NAME_kernel", blockDim, [] { AscendC::TPipe pipe; }); }\n'
            "  catch (const amct_sim::SimError&) { return 1; }\n  return 0; }\n"
        )
        main = (
            '#include "amct_sim_host.h"\n#include <cstdio>\n'
            'extern "C" int liba_run(uint32_t); extern "C" int libb_run(uint32_t);\n'
            "int main() { amct_sim::SetPlatform(3, 0, 2201);\n"
            "  int r = liba_run(3) * 1 + libb_run(3) * 2 + (1 - liba_run(4)) * 4 + (1 - libb_run(4)) * 8;\n"
            '  std::printf("%d %llu\\n", r, (unsigned long long)amct_sim::LaunchCount()); return 0; }\n'
        )
        (work / "liba.cpp").write_text(kernel.replace("NAME", "liba"))
        (work / "libb.cpp").write_text(kernel.replace("NAME", "libb"))
        (work / "main.cpp").write_text(main)
        arch = ["-D__NPU_ARCH__=2201"]
        steps = [
            [
                CXX,
                "-O1",
                "-fPIC",
                "-shared",
                *BASE_FLAGS,
                *arch,
                str(SIM_DIR / "amct_sim_state.cpp"),
                "-o",
                str(work / "libstate.so"),
            ],
            [
                CXX,
                "-O1",
                "-fPIC",
                "-shared",
                *BASE_FLAGS,
                *arch,
                str(work / "liba.cpp"),
                "-L",
                str(work),
                "-lstate",
                f"-Wl,-rpath,{work}",
                "-o",
                str(work / "liba.so"),
            ],
            [
                CXX,
                "-O1",
                "-fPIC",
                "-shared",
                "-fvisibility=hidden",
                *BASE_FLAGS,
                *arch,
                str(work / "libb.cpp"),
                "-L",
                str(work),
                "-lstate",
                f"-Wl,-rpath,{work}",
                "-o",
                str(work / "libb.so"),
            ],
        ]
        for cmd in steps:
            _run_compiler(cmd, cmd[-1])
        exe = work / "main"
        _run_compiler(
            [
                CXX,
                "-O1",
                *BASE_FLAGS,
                str(work / "main.cpp"),
                str(work / "liba.so"),
                str(work / "libb.so"),
                str(work / "libstate.so"),
                f"-Wl,-rpath,{work}",
                "-o",
                str(exe),
            ],
            "main",
        )
        proc = run_program(exe)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.split(),
            ["0", "4"],
            "both libraries see the main program's SetPlatform(3) and count launches",
        )


class SimTwoArchLibrariesTest(unittest.TestCase):
    """Kernels of both arches in one process, as a dav-2201 build runs its KERNEL_3510 kernels
    (docs/kernel_sim.md): one state (compiled without __NPU_ARCH__), a dav-2201 kernel library and
    a dav-3510 one linked with common/cmake/amct_sim_3510.map. Each launch sees its own arch's UB
    default and limit, and the shared switches (platform override, hardware modes, cost model)
    reach both. The same 3510 library linked without the map runs the dav-2201 copies of the
    sim's inline functions (the ODR violation the map prevents)."""

    KERNEL = (
        '#include "kernel_operator.h"\n#include <cstdio>\n'
        'extern "C" __attribute__((visibility("default"))) void NAME(char* out, size_t n) {\n'
        "  try { uint64_t ub = 0; int strict = -1;\n"
        '    amct_sim::Launch("kARCH", 1, [&] { ub = amct_sim::detail::t_ctx->ubLimit;'
        " strict = amct_sim::detail::t_ctx->strictSync; });\n"
        '    std::snprintf(out, n, "%llu/%d", (unsigned long long)ub, strict); }\n'
        '  catch (const amct_sim::SimError& e) { std::snprintf(out, n, "[%s]", e.what()); } }\n'
    )
    MAIN = (
        '#include "amct_sim_host.h"\n#include <cstdio>\n#include <cstdlib>\n'
        'extern "C" void k2201_run(char*, size_t); extern "C" void amct_k3510_launch(char*, size_t);\n'
        "static void report(const char* what) { char a[256] = {0}, b[256] = {0};\n"
        "  k2201_run(a, sizeof(a)); amct_k3510_launch(b, sizeof(b));\n"
        '  std::printf("%s 2201=%s 3510=%s\\n", what, a, b); }\n'
        'int main() { report("default");\n'
        '  amct_sim::SetPlatform(0, 253952, 3510); report("override"); amct_sim::SetPlatform(0, 0, 2201);\n'
        '  amct_sim::SetModes(amct_sim::HardwareModes{false, false, true}); report("strict"); amct_sim::ResetModes();\n'
        "  amct_sim::CostStart(3510, 0);\n"
        "  char a[256], b[256]; k2201_run(a, sizeof(a)); amct_k3510_launch(b, sizeof(b));\n"
        "  for (const amct_sim::CostRecord& r : amct_sim::CostStop())"
        ' std::printf("cost %s build %d table %d\\n", r.kernel, r.buildArch, r.tableArch);\n'
        '  setenv("AMCT_SIM_UB_SIZE", "200000", 1); report("env"); return 0; }\n'
    )

    @classmethod
    def setUpClass(cls):
        work = _work_dir() / "two_arch"
        work.mkdir(exist_ok=True)
        (work / "k2201.cpp").write_text(cls.KERNEL.replace("NAME", "k2201_run").replace("ARCH", "2201"))
        (work / "k3510.cpp").write_text(cls.KERNEL.replace("NAME", "amct_k3510_launch").replace("ARCH", "3510"))
        (work / "main.cpp").write_text(cls.MAIN)
        shared = [CXX, "-O0", "-fPIC", "-shared", *BASE_FLAGS]
        link = ["-L", str(work), "-lstate", f"-Wl,-rpath,{work}"]
        mapfile = Path(__file__).resolve().parents[1] / "common" / "cmake" / "amct_sim_3510.map"
        steps = [
            [*shared, str(SIM_DIR / "amct_sim_state.cpp"), "-o", str(work / "libstate.so")],
            [*shared, "-D__NPU_ARCH__=2201", str(work / "k2201.cpp"), *link, "-o", str(work / "libk2201.so")],
            [*shared, "-D__NPU_ARCH__=3510", "-fvisibility-inlines-hidden", str(work / "k3510.cpp"), *link,
             f"-Wl,--version-script={mapfile}", "-o", str(work / "map" / "libk3510.so")],
            [*shared, "-D__NPU_ARCH__=3510", str(work / "k3510.cpp"), *link, "-o", str(work / "nomap" / "libk3510.so")],
        ]
        (work / "map").mkdir(exist_ok=True)
        (work / "nomap").mkdir(exist_ok=True)
        for cmd in steps:
            _run_compiler(cmd, cmd[-1])
        cls.out = {}
        for variant in ("map", "nomap"):
            exe = work / f"main_{variant}"
            # libk2201 first: its dav-2201 copies come first in the lookup order.
            _run_compiler([CXX, "-O0", *BASE_FLAGS, str(work / "main.cpp"), str(work / "libk2201.so"),
                           str(work / variant / "libk3510.so"), str(work / "libstate.so"),
                           f"-Wl,-rpath,{work}:{work / variant}", "-o", str(exe)], exe)
            proc = run_program(exe)
            assert proc.returncode == 0, proc.stderr
            cls.out[variant] = proc.stdout.splitlines()

    def test_each_launch_sees_its_arch(self):
        out = self.out["map"]
        self.assertEqual(out[0], "default 2201=196608/0 3510=253952/0")
        self.assertTrue(out[1].startswith("override 2201=[amct kernel sim: SetPlatform: UB bytes must be in "
                                          "[1024, 196608] (the usable UB of __NPU_ARCH__ 2201), got 253952]"), out[1])
        self.assertTrue(out[1].endswith(" 3510=253952/0"), out[1])
        self.assertTrue(out[-1].startswith("env 2201=[amct kernel sim: environment AMCT_SIM_UB_SIZE: UB bytes must be "
                                           "in [1024, 196608] (the usable UB of __NPU_ARCH__ 2201), got 200000]"),
                        out[-1])
        self.assertTrue(out[-1].endswith(" 3510=200000/0"), out[-1])

    def test_shared_switches_reach_both(self):
        out = self.out["map"]
        self.assertEqual(out[2], "strict 2201=196608/1 3510=253952/1")
        self.assertEqual(out[3:5], ["cost k2201 build 2201 table 3510", "cost k3510 build 3510 table 3510"])

    def test_without_the_map_the_3510_library_runs_2201_code(self):
        self.assertNotEqual(self.out["nomap"][0], "default 2201=196608/0 3510=253952/0", self.out["nomap"])


class SimCostTest(_ProgramTest):
    """NPU cost model (sim_cost.h): timeline rules with hand-computed cycle counts, off by default,
    block sampling, and the calibration against upstream's published HiF8 times on 910B3."""

    program = "test_sim_cost"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_timeline_rules(self):
        self.assertChecks(
            [
                "cost_overlap_is_max_not_sum",
                "cost_barrier_is_sum",
                "cost_busy_per_pipe",
                "cost_scalar_read_waits_for_vector_write",
                "cost_scalar_read_of_other_buffer_does_not_wait",
                "cost_vector_scales_with_repeats",
                "cost_dma_scales_with_bytes",
                "cost_single_buffer_serialises_stages",
                "cost_double_buffer_overlaps_stages",
            ]
        )

    def test_off_by_default_and_sampling(self):
        self.assertChecks(
            ["cost_off_by_default_records_nothing", "cost_sampling_runs_first_and_last_block", "cost_estimate_us_from_cycles"]
        )

    def test_calibration_hif8_910b3(self):
        self.assertChecks(
            [
                "cost_calibration_kernel_values",
                "cost_calibration_hif8_encode_16M_within_1.5x",
                "cost_calibration_hif8_decode_16M_within_1.5x",
                "cost_calibration_hif8_slope_1M_16M_within_1.5x",
                "cost_calibration_hif8_64K_kernel_under_published_floor",
                "cost_calibration_scalar_bound_hif8_encode_16M",
            ]
        )


class SimHardwareModesTest(_ProgramTest):
    """The hardware-mode switches: saturation, flush-to-zero and strict sync, and their guards."""

    program = "test_sim_modes"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_switches(self):
        self.assertChecks(["mode_switches_set_and_reset"])

    def test_saturation(self):
        self.assertChecks(
            [
                "mode_default_half_add_keeps_inf_nan",
                "mode_saturation_half_add_inf_to_max_nan_to_zero",
                "mode_saturation_float_add_keeps_inf_nan",
                "mode_default_cast_float_to_half_overflows_to_inf",
                "mode_saturation_cast_float_to_half",
                "mode_saturation_cast_float_to_bf16",
                "mode_saturation_cast_half_to_float_keeps_inf",
            ]
        )

    def test_flush_subnormals(self):
        self.assertChecks(
            [
                "mode_default_mul_float_subnormals_exact",
                "mode_flush_mul_float_subnormals_to_signed_zero",
                "mode_default_cast_float_to_half_subnormal",
                "mode_flush_cast_float_to_half_subnormal_to_zero",
                "mode_flush_cast_half_subnormal_input_to_zero",
                "mode_default_compares_subnormal_not_zero",
                "mode_flush_compares_subnormal_equals_zero",
            ]
        )

    def test_kernel_side_control_apis(self):
        self.assertChecks(["ctrl_get_runtime_ub_size"])
        self.assertChecks(["ctrl_saturation_flag_off_at_entry_by_default", "ctrl_set_saturation_flag_saturates_later_ops",
                           "ctrl_saturation_flag_does_not_leak_into_the_next_launch",
                           "ctrl_saturation_flag_reports_the_launch_mode"], arches=(2201,))

    def test_strict_sync_guards(self):
        self.assertChecks(
            [
                "mode_default_auto_sync_variant_0",
                "mode_default_auto_sync_variant_2",
                "mode_default_auto_sync_variant_4",
                "mode_strict_scalar_read_after_dma_needs_mte2_s",
                "mode_strict_scalar_read_after_mte2_s_flag",
                "mode_strict_vector_read_after_scalar_write_needs_s_v",
                "mode_strict_vector_read_after_s_v_flag",
                "mode_strict_scalar_write_after_mte3_read_needs_mte3_s",
                "mode_strict_scalar_write_after_mte3_s_flag",
                "mode_strict_pipe_barrier_all_orders_the_scalar_unit",
            ]
        )


class SimCastTest(_ProgramTest):
    """Cast: every (pair, mode) implemented, bit-exact against an independent oracle."""

    program = "test_sim_cast"

    PAIRS_BOTH: ClassVar[dict] = {
        "half_to_float": "N",
        "bf16_to_float": "N",
        "int16_to_float": "N",
        "int8_to_half": "N",
        "uint8_to_half": "N",
        "int32_to_int16": "N",
        "int32_to_int64": "N",
        "int64_to_int32": "N",
        "float_to_half": "RFCATON",
        "float_to_bf16": "RFCAT",
        "float_to_float": "RFCAT",
        "float_to_int32": "RFCAT",
        "float_to_int16": "RFCAT",
        "float_to_int64": "RFCAT",
        "half_to_int32": "RFCAT",
        "half_to_int16": "RFCAT",
        "bf16_to_int32": "RFCAT",
        "int64_to_float": "RFCAT",
        "half_to_int8": "RFCATN",
        "half_to_uint8": "RFCATN",
        "int16_to_half": "RFCATN",
        "int32_to_float": "RFCATN",
    }
    PAIRS_3510: ClassVar[dict] = {
        "half_to_bf16": "RFCAT",
        "bf16_to_half": "RFCAT",
        "int8_to_int16": "N",
        "int8_to_int32": "N",
        "uint8_to_uint16": "N",
        "uint8_to_uint32": "N",
        "int16_to_int32": "N",
        "uint16_to_uint8": "N",
        "uint16_to_uint32": "N",
        "int32_to_uint8": "N",
        "int32_to_uint16": "N",
        "uint32_to_uint8": "N",
        "uint32_to_uint16": "N",
        "uint32_to_int16": "N",
    }

    @staticmethod
    def _names(pairs):
        names = []
        for pair, listed in pairs.items():
            for mode in "NRFCATO":
                if mode in listed:
                    names.append(f"cast_{pair}_{mode}")
                    if mode != "N":
                        names.append(f"cast_{pair}_{mode}_reference_path")
                else:
                    names.append(f"cast_{pair}_{mode}_unlisted_raises")
        return names

    def test_program_clean(self):
        self.assertProgramClean()

    def test_pairs_and_modes_both_arches(self):
        self.assertChecks(self._names(self.PAIRS_BOTH))

    def test_pairs_and_modes_3510_only(self):
        self.assertChecks(self._names(self.PAIRS_3510), arches=(3510,))

    def test_scalar_types_and_ties(self):
        self.assertChecks(
            [
                "half_from_float_rne_stride_of_all_floats",
                "bf16_from_float_rne_stride_of_all_floats",
                "half_to_float_exact_all_65536",
                "half_ties",
                "cast_float_to_int16_saturates_2pow22",
                "cast_round_ties_away",
                "cast_rint_ties_even",
            ]
        )

    def test_rint_conversions_match_numpy_and_torch(self):
        try:
            import numpy as np
        except ImportError:  # pragma: no cover
            self.skipTest("numpy is not installed")
        for arch in ARCHES:
            with self.subTest(arch=arch):
                out = _work_dir() / f"cast_dump_{arch}"
                out.mkdir(exist_ok=True)
                proc = run_program(build(self.program, arch).result(), "dump", str(out))
                self.assertEqual(proc.returncode, 0, proc.stderr)
                f = np.fromfile(out / "f32_in.bin", dtype=np.float32)
                self.assertGreater(f.size, 100000)
                with np.errstate(over="ignore", invalid="ignore"):
                    want16 = f.astype(np.float16)
                got16 = np.fromfile(out / "f32_to_f16.bin", dtype=np.uint16).view(np.float16)
                nan = np.isnan(want16)
                np.testing.assert_array_equal(np.isnan(got16), nan)
                np.testing.assert_array_equal(got16.view(np.uint16)[~nan], want16.view(np.uint16)[~nan])
                halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
                got = np.fromfile(out / "f16_to_f32.bin", dtype=np.float32)
                want = halves.astype(np.float32)
                nan = np.isnan(want)
                np.testing.assert_array_equal(np.isnan(got), nan)
                np.testing.assert_array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
                ints = np.fromfile(out / "i32_in.bin", dtype=np.int32)
                np.testing.assert_array_equal(
                    np.fromfile(out / "i32_to_f32.bin", dtype=np.float32).view(np.uint32),
                    ints.astype(np.float32).view(np.uint32),
                )
                try:
                    import torch
                except ImportError:  # pragma: no cover
                    continue
                wantb = torch.from_numpy(f.copy()).to(torch.bfloat16)
                gotb = torch.from_numpy(np.fromfile(out / "f32_to_bf16.bin", dtype=np.int16)).view(
                    torch.bfloat16
                )
                nanb = torch.isnan(wantb)
                self.assertTrue(torch.equal(torch.isnan(gotb), nanb))
                self.assertTrue(torch.equal(gotb.view(torch.int16)[~nanb], wantb.view(torch.int16)[~nanb]))
                allb = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).float()
                gotbf = torch.from_numpy(np.fromfile(out / "bf16_to_f32.bin", dtype=np.float32))
                nanf = torch.isnan(allb)
                self.assertTrue(torch.equal(torch.isnan(gotbf), nanf))
                self.assertTrue(torch.equal(gotbf[~nanf], allb[~nanf]))


@unittest.skipUnless(os.environ.get("AMCT_PERF_TESTS") == "1",
                     "timing checks run only with AMCT_PERF_TESTS=1: the default suite has no timed tests")
class SimPerfTest(unittest.TestCase):
    """Speed (the sim runs the emulated kernels): scalar LUT loop, vector ops, DMA + race check on 16M."""

    def test_speed(self):
        _prebuild()
        for arch in ARCHES:
            with self.subTest(arch=arch):
                exe = build("test_sim_perf", arch, "-O2").result()
                # The CI machine may be busy: a second run gets another chance.
                for attempt in range(2):
                    proc = run_program(exe)
                    passed, failed = parse(proc.stdout)
                    if not failed and proc.returncode == 0:
                        break
                self.assertEqual(failed, {}, proc.stdout)
                for name in (
                    "perf_lut_kernel_values",
                    "perf_scalar_lut_loop_under_4ns",
                    "perf_vec_kernel_values",
                    "perf_vec_kernel_under_8ns",
                    "perf_race_check_cheap",
                    "perf_adds_under_2ns",
                ):
                    self.assertIn(name, passed)


# ---------------------------------------------------------------- compile-time guards
# name: (snippet, arches where it must NOT compile, expected compiler message, correct snippet)
NEGATIVE = {
    "div_int32_on_2201": (
        "void f(const LocalTensor<int32_t>& a) { Div(a, a, a, 64); }",
        (2201,),
        "Div: dtype not supported",
        "void f(const LocalTensor<float>& a) { Div(a, a, a, 64); }",
    ),
    "duplicate_uint8_on_2201": (
        "void f(const LocalTensor<uint8_t>& a) { Duplicate(a, uint8_t(1), 64); }",
        (2201,),
        "Duplicate: dtype not supported",
        "void f(const LocalTensor<uint16_t>& a) { Duplicate(a, uint16_t(1), 64); }",
    ),
    "add_bf16_on_2201": (
        "void f(const LocalTensor<bfloat16_t>& a) { Add(a, a, a, 64); }",
        (2201,),
        "Add: dtype not supported",
        "void f(const LocalTensor<float>& a) { Add(a, a, a, 64); }",
    ),
    "mul_uint16_on_2201": (
        "void f(const LocalTensor<uint16_t>& a) { Mul(a, a, a, 64); }",
        (2201,),
        "Mul: dtype not supported",
        "void f(const LocalTensor<int16_t>& a) { Mul(a, a, a, 64); }",
    ),
    "compares_int16_on_2201": (
        (
            "void f(const LocalTensor<uint8_t>& m, const LocalTensor<int16_t>& a) "
            "{ Compares(m, a, int16_t(1), CMPMODE::LT, 128); }"
        ),
        (2201,),
        "Compares: dtype not supported",
        (
            "void f(const LocalTensor<uint8_t>& m, const LocalTensor<half>& a) "
            "{ Compares(m, a, half(1.0f), CMPMODE::LT, 128); }"
        ),
    ),
    "cast_half_to_bf16_on_2201": (
        (
            "void f(const LocalTensor<bfloat16_t>& d, const LocalTensor<half>& s) "
            "{ Cast(d, s, RoundMode::CAST_RINT, 64); }"
        ),
        (2201,),
        "Cast: dtype not supported",
        (
            "void f(const LocalTensor<bfloat16_t>& d, const LocalTensor<float>& s) "
            "{ Cast(d, s, RoundMode::CAST_RINT, 64); }"
        ),
    ),
    "cast_int32_to_half_excluded": (
        (
            "void f(const LocalTensor<half>& d, const LocalTensor<int32_t>& s) "
            "{ Cast(d, s, RoundMode::CAST_RINT, 64); }"
        ),
        ARCHES,
        "Cast: dtype not supported",
        (
            "void f(const LocalTensor<float>& d, const LocalTensor<int32_t>& s) "
            "{ Cast(d, s, RoundMode::CAST_RINT, 64); }"
        ),
    ),
    "shiftleft_float": (
        "void f(const LocalTensor<float>& a) { ShiftLeft(a, a, 1.0f, 64); }",
        ARCHES,
        "ShiftLeft: dtype not supported",
        "void f(const LocalTensor<uint32_t>& a) { ShiftLeft(a, a, uint32_t(1), 64); }",
    ),
    "adds_double_scalar": (
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& s, int32_t n) { Adds(d, s, 1.0, n); }",
        ARCHES,
        "no matching function",
        (
            "void f(const LocalTensor<float>& d, const LocalTensor<float>& s, int32_t n) "
            "{ Adds(d, s, 1.0f, n); }"
        ),
    ),
    "adds_float_scalar_on_half": (
        "void f(const LocalTensor<half>& d) { Adds(d, d, 1.0f, 64); }",
        ARCHES,
        "no matching function",
        "void f(const LocalTensor<half>& d) { Adds(d, d, half(1.0f), 64); }",
    ),
    "duplicate_int_scalar_on_float": (
        "void f(const LocalTensor<float>& d) { Duplicate(d, 0, 64); }",
        ARCHES,
        "no matching function",
        "void f(const LocalTensor<float>& d) { Duplicate(d, 0.0f, 64); }",
    ),
    "select_scalar_wrong_type": (
        (
            "void f(const LocalTensor<half>& d, const LocalTensor<uint8_t>& m) "
            "{ Select(d, m, d, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64); }"
        ),
        ARCHES,
        "no matching function",
        (
            "void f(const LocalTensor<half>& d, const LocalTensor<uint8_t>& m) "
            "{ Select(d, m, d, half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, 64); }"
        ),
    ),
    "compare_mask_not_uint8": (
        (
            "void f(const LocalTensor<uint16_t>& m, const LocalTensor<float>& a) "
            "{ Compare(m, a, a, CMPMODE::LT, 64); }"
        ),
        ARCHES,
        "mask type U must be uint8_t",
        (
            "void f(const LocalTensor<uint8_t>& m, const LocalTensor<float>& a) "
            "{ Compare(m, a, a, CMPMODE::LT, 64); }"
        ),
    ),
    "datacopyextparams_4_args": (
        "void f(uint32_t n) { DataCopyExtParams p{1, n, 0, 0}; (void)p; }",
        ARCHES,
        "no matching function",
        "void f(uint32_t n) { DataCopyExtParams p{1, n, 0, 0, 0}; (void)p; }",
    ),
    "datacopyparams_3_args": (
        "void f() { DataCopyParams p{1, 2, 0}; (void)p; }",
        ARCHES,
        "no matching function",
        "void f() { DataCopyParams p{1, 2, 0, 0}; (void)p; }",
    ),
    "datacopy_type_mismatch": (
        "void f(const LocalTensor<float>& d, const GlobalTensor<half>& s) { DataCopy(d, s, 64); }",
        ARCHES,
        "no matching function",
        "void f(const LocalTensor<half>& d, const GlobalTensor<half>& s) { DataCopy(d, s, 64); }",
    ),
    "half_arithmetic": (
        "float f(half a) { half b = a + a; return static_cast<float>(b); }",
        ARCHES,
        "no match for",
        (
            "float f(half a) { half b = half(static_cast<float>(a) + "
            "static_cast<float>(a)); return static_cast<float>(b); }"
        ),
    ),
    "half_comparison": (
        "bool f(half a) { return a < a; }",
        ARCHES,
        "no match for",
        "bool f(half a) { return static_cast<float>(a) < static_cast<float>(a); }",
    ),
    "half_from_double": (
        "half f() { half h = 1.0; return h; }",
        ARCHES,
        "conversion from",
        "half f() { half h = 1.0f; return h; }",
    ),
    "half_implicit_to_float": (
        "float f(half h) { float x = h; return x; }",
        ARCHES,
        "cannot convert",
        "float f(half h) { float x = static_cast<float>(h); return x; }",
    ),
    "bf16_arithmetic": (
        "float f(bfloat16_t a) { return static_cast<float>(a * a); }",
        ARCHES,
        "no match for",
        "float f(bfloat16_t a) { return static_cast<float>(a) * static_cast<float>(a); }",
    ),
    "tque_veccalc": (
        "void f() { TQue<TPosition::VECCALC, 1> q; (void)q; }",
        ARCHES,
        "only TPosition::VECIN",
        "void f() { TQue<TPosition::VECOUT, 1> q; (void)q; }",
    ),
    "tque_depth_2": (
        "void f() { TQue<TPosition::VECIN, 2> q; (void)q; }",
        ARCHES,
        "depth must be 1",
        "void f() { TQue<TPosition::VECIN, 1> q; (void)q; }",
    ),
    "tbuf_vecout": (
        "void f() { TBuf<TPosition::VECOUT> b; (void)b; }",
        ARCHES,
        "only TBuf<TPosition::VECCALC>",
        "void f() { TBuf<> b; TBuf<TPosition::VECIN> c; (void)b; (void)c; }",
    ),
    # the AIC's basic cube API (sim_cube.h): the dav-3510 forms are refused on dav-2201
    "fixpipe_l0c_to_ub_on_2201": (
        (
            "constexpr FixpipeConfig kUb = {CO2Layout::ROW_MAJOR, true}; void f(const LocalTensor<float>& d, "
            "const LocalTensor<float>& s) { FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> p; p.dualDstCtl = 1; "
            "Fixpipe<float, float, kUb>(d, s, p); }"
        ),
        (2201,),
        "Fixpipe: L0C -> UB (FixpipeParamsArch3510) is dav-3510 only",
        "void f() { FixpipeParamsArch3510<CO2Layout::ROW_MAJOR> p; p.dualDstCtl = 1; (void)p; }",
    ),
    "load_data_2d_v2_on_2201": (
        "void f(const LocalTensor<bfloat16_t>& d, const LocalTensor<bfloat16_t>& s) { LoadData2DParamsV2 p; "
        "LoadData(d, s, p); }",
        (2201,),
        "LoadData(LoadData2DParamsV2): dav-3510 only",
        "void f() { LoadData2DParamsV2 p; p.mStep = 4; (void)p; }",
    ),
    "mmad_on_2201": (
        "void f(const LocalTensor<float>& c, const LocalTensor<bfloat16_t>& a) { MmadParams p; Mmad(c, a, a, p); }",
        (2201,),
        "Mmad: the sim emulates the dav-3510 L0A layout (Nz) only",
        "void f() { MmadParams p; p.cmatrixInitVal = false; (void)p; }",
    ),
    "mmad_int8": (
        "void f(const LocalTensor<int32_t>& c, const LocalTensor<int8_t>& a) { MmadParams p; Mmad(c, a, a, p); }",
        ARCHES,
        "Mmad: the sim emulates float = bfloat16_t x bfloat16_t",
        "void f(const LocalTensor<float>& c, const LocalTensor<half>& a) { MmadParams p; (void)c; (void)a; (void)p; }",
    ),
}

# name: (source, -D flags, expected message): the sim's #error guards (docs/kernel_sim.md R6).
PREPROCESSOR = {
    "requires_amct_kernel_sim": (
        '#include "kernel_operator.h"\n',
        ["-D__NPU_ARCH__=2201"],
        "requires -DAMCT_KERNEL_SIM",
    ),
    "requires_npu_arch": (
        '#include "kernel_operator.h"\n',
        ["-DAMCT_KERNEL_SIM"],
        "define __NPU_ARCH__ as 2201",
    ),
    "rejects_other_arch": (
        '#include "kernel_operator.h"\n',
        ["-DAMCT_KERNEL_SIM", "-D__NPU_ARCH__=2200"],
        "define __NPU_ARCH__ as 2201",
    ),
    "rejects_ascendc_cpu_debug": (
        '#include "kernel_operator.h"\n',
        ["-DAMCT_KERNEL_SIM", "-D__NPU_ARCH__=3510", "-DASCENDC_CPU_DEBUG"],
        "ASCENDC_CPU_DEBUG",
    ),
}

PRELUDE = '#include "kernel_operator.h"\nusing namespace AscendC;\n'


def _syntax_only(name, source, defines, warnings_as_errors=False):
    return syntax_only(_work_dir() / f"{name}.cpp", source, defines, warnings_as_errors, TIMEOUT)


class SimCompileTimeGuardsTest(unittest.TestCase):
    """R3/R4/R5/R7: what bisheng rejects does not compile in the sim; the correct forms do.

    All rejected snippets of an arch sit in one translation unit, one per line, each in its own
    namespace; g++ reports every error, and each must point at its snippet's line (and no
    snippet valid on that arch may have one). The correct snippets form another TU that must
    compile warning-free with -Wall -Wextra -Werror.
    """

    results = None
    bad_lines = None

    @classmethod
    def setUpClass(cls):
        jobs = {}
        lines = PRELUDE.count("\n")
        cls.bad_lines = {}
        bad_src = PRELUDE
        for name, (bad, _failing, _msg, _good) in NEGATIVE.items():
            lines += 1
            cls.bad_lines[name] = lines
            bad_src += f"namespace bad_{name} {{ {bad} }}\n"
        good_src = PRELUDE + "".join(
            f"namespace good_{n} {{ {g} }}\n" for n, (_b, _f, _m, g) in NEGATIVE.items()
        )
        for arch in ARCHES:
            defines = ["-DAMCT_KERNEL_SIM", f"-D__NPU_ARCH__={arch}"]
            jobs[("bad", arch)] = _pool.submit(_syntax_only, f"rejected_{arch}", bad_src, defines)
            jobs[("good", arch)] = _pool.submit(_syntax_only, f"accepted_{arch}", good_src, defines, True)
        for name, (src, defines, _msg) in PREPROCESSOR.items():
            jobs[("pp", name)] = _pool.submit(_syntax_only, f"pp_{name}", src, defines)
        host = (
            '#include "amct_sim_host.h"\nint main() { amct_sim::GmScope s{{nullptr, 0, false}};'
            " amct_sim::PlatformFacts f = amct_sim::GetPlatform(2201); amct_sim::SetPlatform(0, 0, 3510);"
            " return static_cast<int>(amct_sim::LaunchCount() + amct_sim::ArchUbBytes(3510) + f.aivCores); }\n"
        )
        jobs[("host", 0)] = _pool.submit(_syntax_only, "host_header", host, [], True)
        cls.results = {k: f.result() for k, f in jobs.items()}

    def test_correct_snippets_compile_warning_free(self):
        for arch in ARCHES:
            with self.subTest(arch=arch):
                _path, proc = self.results[("good", arch)]
                self.assertEqual(proc.returncode, 0, proc.stderr[-6000:])

    def test_host_header_alone_compiles_without_sim_defines(self):
        _path, proc = self.results[("host", 0)]
        self.assertEqual(proc.returncode, 0, proc.stderr[-4000:])

    def test_preprocessor_guards(self):
        for name, (_src, _defines, msg) in PREPROCESSOR.items():
            with self.subTest(guard=name):
                _path, proc = self.results[("pp", name)]
                self.assertNotEqual(proc.returncode, 0)
                self.assertIn("#error", proc.stderr)
                self.assertIn(msg, proc.stderr)

    def test_no_error_outside_the_snippets(self):
        for arch in ARCHES:
            path, proc = self.results[("bad", arch)]
            errors = errors_by_line(path, proc.stderr)
            stray = sorted(set(errors) - set(self.bad_lines.values()))
            self.assertEqual(stray, [], proc.stderr[-4000:])


def _make_negative_test(name):
    def test(self):
        _bad, failing, msg, _good = NEGATIVE[name]
        line = self.bad_lines[name]
        for arch in ARCHES:
            with self.subTest(arch=arch):
                path, proc = self.results[("bad", arch)]
                self.assertNotEqual(proc.returncode, 0)
                errors = errors_by_line(path, proc.stderr)
                if arch in failing:
                    self.assertIn(line, errors, f"{name} compiled on {arch} but must not")
                    self.assertIn(msg, errors[line], errors[line])
                else:  # valid on the other arch: the guard is per arch, not blanket
                    self.assertNotIn(line, errors, errors.get(line))

    test.__doc__ = f"{name} must not compile where the NPU compiler rejects it"
    return test


for _name in NEGATIVE:
    setattr(SimCompileTimeGuardsTest, f"test_rejects_{_name}", _make_negative_test(_name))


if __name__ == "__main__":
    unittest.main()


class SimCubeTest(_ProgramTest):
    """The cube side (tests/sim/test_sim_matmul.cpp): the Matmul API against brute-force loops, its
    guards, the host tiling API, MIX launches with cross-core flags, and the cube cost model."""

    program = "test_sim_matmul"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_matmul_numerics(self):
        names = []
        for case in ("1x16x16_iterateall", "37x70x45_bias_iterateall", "300x130x200_transB_iterateall",
                     "64x512x96_transB_bias_iterate", "17x33x64_iterate"):
            names += [f"matmul_bf16_{case}_bitexact_vs_bruteforce", f"matmul_bf16_{case}_within_fp32_sum_bound"]
        self.assertChecks(names + ["matmul_half_bf16out_atomic_add_values", "tiling_single_core_ok"])
        self.assertChecks([f"matmul_mxfp4_k{k}_{w}" for k in (64, 96, 160) for w in ("bitexact_vs_bruteforce", "close_to_exact")],
                          arches=(3510,))

    def test_matmul_guards(self):
        self.assertChecks([
            "matmul_guard_on_aiv", "matmul_guard_in_vector_launch", "matmul_guard_before_init", "matmul_guard_after_end",
            "matmul_guard_missing_tensor_a", "matmul_guard_missing_tensor_b", "matmul_guard_transpose_not_enabled",
            "matmul_guard_tail_beyond_tiling", "matmul_guard_single_beyond_org", "matmul_guard_l0c_overflow",
            "matmul_guard_base_not_fractal", "matmul_guard_gm_outside_regions", "matmul_guard_gm_beyond_extent",
            "matmul_guard_gm_unaligned", "matmul_guard_get_tensor_c_without_iterate", "matmul_guard_aic_has_no_ub",
            "tiling_rejects_mixed_dtypes"])
        self.assertChecks(["tiling_default_base_block", "tiling_fix_split_sets_base",
                           "tiling_fix_split_minus_one_keeps_choice", "tiling_fix_split_rejects_base_k",
                           "tiling_fix_split_rejects_base_beyond_block", "tiling_fix_split_rejects_unaligned_base",
                           "tiling_fix_split_rejects_l0c_overflow"])
        self.assertChecks(["matmul_guard_mx_missing_scale", "matmul_guard_mx_odd_k", "matmul_guard_mx_transposed_scale_a"],
                          arches=(3510,))

    def test_mix_and_cross_core_flags(self):
        self.assertChecks([
            "mix_block_idx_sub_block_num_ratio", "mix_kernel_type_mismatch", "mix_too_many_blocks",
            "mix_mode2_orders_aic_and_aivs", "mix_mode0_no_aic_passes_before_all_set", "mix_deadlock_detected",
            "mix_deadlock_after_partial_progress", "mix_counter_over_15", "mix_flag_never_waited", "mix_flag_id_over_15",
            "mix_pipe_s_rejected", "mix_cross_core_in_vector_launch", "mix_mode1_on_aic", "mix_error_beats_deadlock",
            "mix_race_between_ai_cores", "mix_setter_returns_before_waiters_wake"])
        self.assertChecks(["mix_mode4_pairs_aic_with_each_aiv"], arches=(3510,))
        self.assertChecks(["mix_mode4_rejected_on_2201"], arches=(2201,))

    def test_cube_cost(self):
        self.assertChecks(["cost_matmul_cost_only_same_estimate", "cost_matmul_large_shape_is_m_bound",
                           "cost_matmul_m_busy_near_fractal_count", "cost_cross_core_flag_latency"])


class SimMatmulKfcTest(_ProgramTest):
    """The KFC form of the Matmul API (tests/sim/test_sim_matmul_kfc.cpp): AIVs call it, results go
    into their UB (L0C -> UB), the vector pipe is ordered by a VECIN queue; guards and cost."""

    program = "test_sim_matmul_kfc"

    def test_program_clean(self):
        ProgramTestBase.assertProgramClean(self, min_checks=9)

    def test_ub_output_values(self):
        self.assertChecks(["kfc_iterate_get_tensor_c_ub_values", "kfc_iterate_all_ub_values"])

    def test_guards(self):
        self.assertChecks(["kfc_guard_vector_reads_ub_without_queue_edge", "kfc_guard_ub_output_too_small",
                           "kfc_guard_needs_mix_launch", "kfc_guard_matmul_on_aic"])

    def test_cost(self):
        self.assertChecks(["kfc_cost_m_pipe_charged_at_ratio"])


class SimCubeDataPathTest(_ProgramTest):
    """The AIC's low-level cube data path (tests/sim/test_sim_cube.cpp, sim_cube.h): a MIX 1:2 kernel's
    own AIC program (DataCopy ND2NZ -> LoadData -> Mmad -> Fixpipe L0C -> UB, dual and single
    destination) checked bit-exactly against brute-force fp32 sums in K order; the cube buffers'
    capacities per arch; one test per guard; sub-blocks, tails and strides of every stage against the
    brute-force product of the selected sub-blocks; the cost model's charge per pipe."""

    program = "test_sim_cube"

    def test_program_clean(self):
        ProgramTestBase.assertProgramClean(self, min_checks=7)

    def test_capacities_and_positions(self):
        self.assertChecks(["cube_guard_l0a_over_capacity", "cube_l0a_full_capacity_ok", "cube_guard_l1_shared_over_capacity",
                           "cube_l0c_capacity_per_arch", "cube_guard_cube_position_on_aiv",
                           "cube_guard_cube_position_in_vector_launch", "cube_guard_cube_event_on_aiv",
                           "cube_guard_nd2nz_src_d_value", "cube_guard_nd2nz_on_aiv"])

    def test_score_tile_values(self):
        self.assertChecks(["cube_dual_dst_64x256x2048_runs", "cube_dual_dst_aiv0_rows_bitexact_vs_bruteforce",
                           "cube_dual_dst_aiv1_rows_bitexact_vs_bruteforce", "cube_dual_dst_integer_block_exact",
                           "cube_single_dst_sub1_runs", "cube_single_dst_sub1_all_rows_bitexact_vs_bruteforce"],
                          arches=(3510,))

    def test_guards(self):
        self.assertChecks([
            "cube_guard_read_without_mte2_mte1", "cube_guard_fixpipe_without_m_fix",
            "cube_guard_overwrite_without_mte1_mte2", "cube_guard_odd_m_dual_dst", "cube_guard_nsize_not_multiple_of_16",
            "cube_guard_config_not_to_ub", "cube_guard_load_data_wrong_position", "cube_guard_aiv_reads_before_wait",
            "cube_guard_aiv_never_waits", "cube_guard_delivery_beyond_aiv_buffers", "cube_guard_aiv_calls_mmad",
            "cube_guard_ub_view_on_aiv", "cube_sync_check_off_lets_missing_flag_pass",
            "cube_guard_small_accumulation_without_pipe_m_barrier", "cube_small_accumulation_after_pipe_m_barrier",
            "cube_mmad_zero_k_is_not_refused",
            "cube_guard_nd2nz_matrix_stride_not_32_bytes"], arches=(3510,))

    def test_cube_queue_edges(self):
        self.assertChecks(["cube_tque_edges_order_the_chain", "cube_tque_edges_values_bitexact_vs_bruteforce",
                           "cube_guard_tque_without_l1_edge", "cube_nd2nz_pads_rows_with_zeros"], arches=(3510,))

    def test_write_after_read_guards(self):
        self.assertChecks(["cube_war_with_m_mte1_and_fix_m", "cube_war_ping_pong_l1_values_bitexact_vs_bruteforce",
                           "cube_guard_l0_overwrite_without_m_mte1", "cube_guard_l0c_overwrite_without_fix_m"],
                          arches=(3510,))

    def test_sub_blocks_tails_and_strides(self):
        """LoadData2DParamsV2 start positions / srcStride / dstStride (sub-blocks of larger L1 matrices into
        L0A and L0B), Mmad and Fixpipe with m and n tails and Fixpipe srcStride != mSize, dstStride != nSize
        (single and dual destination, a sub-tile from L0C row 5), ND2NZ with ndNum > 1, matrix strides,
        dstNzNStride 2 and Z columns taller than the rows; bf16 and half, bit-exact against the brute-force
        product of the selected sub-blocks; each area's guards (negative twins, bf16)."""
        checks = []
        for t in ("bf16", "half"):
            cases = [f"cube_load_data_sub_blocks_{t}", f"cube_nd2nz_nd_num_strides_{t}"]
            tails = ("m37_n40_k40", "m1_n16_k32", "m17_n32_k64", "sub_tile_rows5_m34_dual")
            cases += [f"cube_tail_{c}_{t}" for c in tails]
            checks += [f"{c}_{s}" for c in cases for s in ("runs", "bitexact_vs_bruteforce")]
        checks += ["cube_guard_load_data_k_start_beyond_src", "cube_guard_load_data_dst_stride_beyond_l0a",
                   "cube_guard_fixpipe_src_stride_below_m16", "cube_guard_fixpipe_dst_stride_below_n_size",
                   "cube_guard_mmad_m1_without_disable_gemv", "cube_guard_nd2nz_nz_matrix_beyond_l1",
                   "cube_guard_nd2nz_nd_matrix_beyond_gm"]
        self.assertEqual(len(checks), 31)
        self.assertChecks(checks, arches=(3510,))

    def test_cost(self):
        self.assertChecks(["cube_cost_pipes_charged", "cube_cost_slowest_core_at_least_the_m_pipe"], arches=(3510,))


class SimGmOrderTest(_ProgramTest):
    """GM ordering (tests/sim/test_sim_gm_order.cpp): within a core by pipe flags or barriers, and
    between the cores of one AI core of a MIX launch by cross-core flags on the pipe that made the
    access (sim_gm_order.h); each guard with its passing twin, data checked against a matmul."""

    program = "test_sim_gm_order"

    def test_program_clean(self):
        ProgramTestBase.assertProgramClean(self, min_checks=21)

    def test_in_core(self):
        self.assertChecks(["gm_order_in_core_mte3_mte2_flag", "gm_order_in_core_barrier_all",
                           "gm_order_in_core_without_sync", "gm_order_in_core_barrier_of_mte3_only",
                           "gm_order_in_core_scalar_read_of_written_gm"])

    def test_cube_and_vector_cores(self):
        self.assertChecks([
            "gm_order_cube_to_vector_fix_flag", "gm_order_cube_to_vector_values",
            "gm_order_cube_to_vector_barrier_then_other_pipe", "gm_order_cube_to_vector_without_flag",
            "gm_order_cube_to_vector_flag_on_wrong_pipe", "gm_order_vector_to_cube_mte3_flag",
            "gm_order_vector_to_cube_values", "gm_order_vector_to_cube_v_flag_after_mte3_v",
            "gm_order_vector_to_cube_v_flag_without_mte3_v", "gm_order_vector_to_cube_flag_before_write",
            "gm_order_write_after_read_ordered", "gm_order_write_after_read_unordered"])

    def test_vector_cores(self):
        self.assertChecks(["gm_order_vector_to_vector_meet_after_write", "gm_order_vector_to_vector_without_meet",
                           "gm_order_vector_to_vector_meet_before_write", "gm_order_check_disabled_by_env"])


MATMUL_PRELUDE = ('#define ASCENDC_CUBE_ONLY\n#include "kernel_operator.h"\n#include "lib/matmul_intf.h"\n'
                  "using namespace AscendC;\n"
                  "template <class T, bool tr = false> using Gm = MatmulType<TPosition::GM, CubeFormat::ND, T, tr>;\n"
                  "template <class T, bool tr = false> using Mx = MatmulTypeWithScale<TPosition::GM, TPosition::GM, "
                  "CubeFormat::ND, T, tr>;\n")
# name -> (snippet instantiating a Matmul, {arch: expected static_assert text})
MATMUL_NEGATIVE = {
    "mixed_half_bf16": ("Matmul<Gm<half>, Gm<bfloat16_t>, Gm<float>> mm;",
                        {2201: "A and B must both be half or both bfloat16_t", 3510: "A and B must both be half"}),
    "float_operands": ("Matmul<Gm<float>, Gm<float>, Gm<float>> mm;",
                       {2201: "float/int8 operands are not", 3510: "float/int8 operands are not"}),
    "nz_format": ("Matmul<MatmulType<TPosition::GM, CubeFormat::NZ, half>, Gm<half>, Gm<float>> mm;",
                  {2201: "only CubeFormat::ND", 3510: "only CubeFormat::ND"}),
    "c_in_co1": ("Matmul<Gm<half>, Gm<half>, MatmulType<TPosition::CO1, CubeFormat::ND, float>> mm;",
                 {2201: "C must be in GM or UB", 3510: "C must be in GM or UB"}),
    "int_output": ("Matmul<Gm<half>, Gm<half>, Gm<int32_t>> mm;",
                   {2201: "C must be float, half or bfloat16_t", 3510: "C must be float, half or bfloat16_t"}),
    "mx_without_policy": ("Matmul<Mx<fp4x2_e2m1_t>, Mx<fp4x2_e2m1_t, true>, Gm<float>> mm;",
                          {2201: "MxMatmul exists only on dav-3510", 3510: "MatmulWithScalePolicy"}),
    "mx_half_with_scale": ("Matmul<Mx<half>, Mx<half>, Gm<float>, Gm<float>, CFG_MDL, "
                           "MatmulCallBackFunc<nullptr, nullptr, nullptr>, Impl::Detail::MatmulWithScalePolicy> mm;",
                           {2201: "only fp4x2_e2m1_t x fp4x2_e2m1_t", 3510: "only fp4x2_e2m1_t x fp4x2_e2m1_t"}),
}
MATMUL_GOOD = (
    "inline void good() { Matmul<Gm<bfloat16_t>, Gm<bfloat16_t, true>, Gm<float>, Gm<float>, CFG_MDL> a; "
    "Matmul<Gm<half>, Gm<half>, Gm<bfloat16_t>> b; (void)a; (void)b; }\n"
    "#if __NPU_ARCH__ == 3510\n"
    "inline void good_mx() { Matmul<Mx<fp4x2_e2m1_t>, Mx<fp4x2_e2m1_t, true>, Gm<bfloat16_t>, Gm<float>, CFG_NORM, "
    "MatmulCallBackFunc<nullptr, nullptr, nullptr>, Impl::Detail::MatmulWithScalePolicy> mm; (void)mm; }\n"
    "#endif\n")


class SimMatmulCompileTimeGuardsTest(unittest.TestCase):
    """The Matmul's dtype/format/position/policy guards are static_asserts: each rejected snippet
    must fail at its own line with its message, and the correct declarations compile warning-free."""

    @classmethod
    def setUpClass(cls):
        cls.lines, src, line = {}, MATMUL_PRELUDE, MATMUL_PRELUDE.count("\n")
        for name, (snippet, _msgs) in MATMUL_NEGATIVE.items():
            line += 1
            cls.lines[name] = line
            src += f"namespace bad_{name} {{ inline void f() {{ {snippet} (void)mm; }} }}\n"
        jobs = {}
        for arch in ARCHES:
            defines = ["-DAMCT_KERNEL_SIM", f"-D__NPU_ARCH__={arch}"]
            jobs[("bad", arch)] = _pool.submit(_syntax_only, f"matmul_rejected_{arch}", src, defines)
            jobs[("good", arch)] = _pool.submit(_syntax_only, f"matmul_accepted_{arch}", MATMUL_PRELUDE + MATMUL_GOOD,
                                                defines, True)
        cls.results = {k: f.result() for k, f in jobs.items()}

    def test_correct_declarations_compile(self):
        for arch in ARCHES:
            with self.subTest(arch=arch):
                self.assertEqual(self.results[("good", arch)][1].returncode, 0, self.results[("good", arch)][1].stderr[-4000:])

    def test_each_guard_fires_at_its_line(self):
        for arch in ARCHES:
            path, proc = self.results[("bad", arch)]
            errors = errors_by_line(path, proc.stderr)
            for name, (_snippet, msgs) in MATMUL_NEGATIVE.items():
                with self.subTest(arch=arch, guard=name):
                    line = self.lines[name]
                    self.assertIn(line, errors, f"{name} compiled on {arch}")
                    self.assertIn(msgs[arch], errors[line], errors[line])
