"""Tests of the kernel sim's repeat-form primitives and of the hifloat4_cast kernel on both arches.

The primitives (reductions, Brcb/Gather; docs/kernel_sim.md) live in ``common/ascendc_sim/sim_reduce.h``
(BlockReduceMax/Min/Sum, WholeReduceMax/Min/Sum), ``sim_gather.h`` (Brcb, Gather, GatherMask)
and their shared machinery ``sim_repeat.h``. Like tests/test_kernel_sim.py, the C++ programs in
tests/sim/ are compiled with g++ for both arches (-D__NPU_ARCH__=2201 and 3510) into a temporary
directory and run; every check prints "PASS <name>" or "FAIL <name>: <why>":

* ``test_sim_reduce.cpp`` / ``test_sim_gather.cpp``: values against brute-force references built
  from the spec's lane/block/stride formulas, and every guard (parameters, alignment units,
  bounds, overlap, stale tensors, sync) with its SimError text;
* ``test_sim_cast_modes.cpp``: the Cast (pair, mode)s the hifloat4 kernel uses, at their ties;
* ``test_sim_ops_perf.cpp``: the primitives are fast (generous bounds; built with -O3 as the
  CPU backend is);
* ``test_hif4_kernel.cpp``: a torch-free driver of ``hifloat4_cast_kernel.cpp``, so that the one
  kernel source is checked on the sim of both arches (the CPU build compiles only its SOC's),
  against the golden vectors and the executable spec (reference.py), for several core counts
  and tile sizes.

Negative compile tests prove that what bisheng rejects (unlisted dtypes per arch, wrong pattern
types, unlisted constructors, isSetMask = false) does not compile in the sim either.

Needs g++ (CXX overrides it); the kernel checks also need torch and numpy.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_harness import ARCHES, CXX, SIM_DIR, ProgramTestBase, errors_by_line, parse, syntax_only  # noqa: E402
from sim_harness import run_program as _run_program  # noqa: E402
from amct_testing import load_vector_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SRC_DIR = Path(__file__).resolve().parent / "sim"
HIF4_KERNEL_DIR = ROOT / "hifloat4_cast" / "op_kernel"
COMMON_KERNEL_DIR = ROOT / "common" / "op_kernel"
STEM_KERNEL_DIR = ROOT / "stem_indexer" / "op_kernel"
KERNEL_COMMON_DIR = ROOT / "common" / "op_kernel"  # amct_kernel_common.h, shared by the kernels
BASE_FLAGS = ["-std=c++17", "-DAMCT_KERNEL_SIM", "-I", str(SIM_DIR), "-I", str(KERNEL_COMMON_DIR), "-pthread"]
WARN_FLAGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror"]
TIMEOUT = 900

run_program = functools.partial(_run_program, timeout=TIMEOUT)  # this module's time limit

_lock = threading.Lock()
_tmp = None
_futures = {}
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)  # the CI machine has 2 cores


def _work_dir():
    global _tmp
    with _lock:
        if _tmp is None:
            _tmp = Path(tempfile.mkdtemp(prefix="amct_sim_ops_tests_"))
            atexit.register(shutil.rmtree, str(_tmp), True)
        return _tmp


def _compile(name, arch, opt, includes):
    out = _work_dir() / f"{name}_{arch}{opt}"
    cmd = [CXX, opt, *BASE_FLAGS, *WARN_FLAGS, f"-D__NPU_ARCH__={arch}"]
    for inc in includes:
        cmd += ["-I", str(inc)]
    cmd += [str(SRC_DIR / f"{name}.cpp"), str(SIM_DIR / "amct_sim_state.cpp"), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        raise AssertionError(f"compiling {name} for {arch} failed:\n{' '.join(cmd)}\n{proc.stderr[-6000:]}")
    return out


def build(name, arch, opt="-O1", includes=()):
    """Future of the compiled program tests/sim/<name>.cpp for arch (once per test run)."""
    key = (name, arch, opt)
    with _lock:
        if key not in _futures:
            _futures[key] = _pool.submit(_compile, name, arch, opt, tuple(includes))
        return _futures[key]


def _prebuild():
    for arch in ARCHES:
        for name in ("test_sim_reduce", "test_sim_gather", "test_sim_cast_modes"):
            build(name, arch)
        build("test_hif4_kernel", arch, "-O2", (HIF4_KERNEL_DIR,))
        build("test_sim_reduce_names", arch, "-O1", (COMMON_KERNEL_DIR,))
        build("test_stem_kernel_bounds", arch, "-O1", (STEM_KERNEL_DIR,))
        build("test_probe_kernel", arch, "-O1", (COMMON_KERNEL_DIR,))
        build("test_sim_ops_perf", arch, "-O3")


class _ProgramTest(ProgramTestBase):
    """Runs one C++ test program per arch once; tests assert on its PASS/FAIL markers."""

    prebuild = staticmethod(_prebuild)
    build = staticmethod(build)

    def assertPrefixChecks(self, prefix, at_least):
        """Every check named prefix* passed on both arches, and there are at least `at_least`."""
        for arch in ARCHES:
            _proc, passed, failed = self.results[arch]
            with self.subTest(arch=arch, prefix=prefix):
                bad = {k: v for k, v in failed.items() if k.startswith(prefix)}
                self.assertEqual(bad, {})
                self.assertGreaterEqual(len([p for p in passed if p.startswith(prefix)]), at_least)

    def assertProgramClean(self):
        super().assertProgramClean(min_checks=1)


class ProbeKernelTest(_ProgramTest):
    """The NPU probe kernel (common/op_kernel/amct_probe.cpp) reports the emulated modes: the
    saturation flag at launch, GetRuntimeUBSize, exact or flushed subnormal Cast/Mul results;
    it runs under strict sync."""

    program = "test_probe_kernel"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_reports(self):
        self.assertChecks(["probe_default", "probe_flush_subnormals", "probe_saturation", "probe_strict_sync"])


class StemKernelBoundsTest(_ProgramTest):
    """The stem_indexer kernel stays inside its outputs' rows by itself: a crafted metadata table
    (sections above B * Nk, records past and outside the grid, a negative one) and out-of-contract
    lengths (clamped Qb/Kb, K = 1 and K = 0 from short prompts) never make it write outside the
    outputs or past L elements of a row (also under strict sync); its Top-K budget equals the
    spec's std::fmaf formula for every P <= 3000 and row p. dav-3510 only: the kernel is dav-3510
    code (its AIC program uses the dav-3510 cube API); the dav-2201 build checks nothing."""

    program = "test_stem_kernel_bounds"

    def test_program_clean(self):
        ProgramTestBase.assertProgramClean(self, min_checks=0)  # its checks: the tests below, on dav-3510

    def test_crafted_rows(self):
        for prefix in ("stem_bounds_", "stem_bounds_strict_"):
            self.assertChecks([prefix + name for name in ("launch", "guards_untouched", "lengths",
                                                          "rows_within_L")], arches=(3510,))

    def test_budget(self):
        self.assertChecks(["stem_budget_fused_step", "stem_budget_spec_example"], arches=(3510,))


class SimReduceNamesTest(_ProgramTest):
    """CANN >= 9.1's ReduceRepeat / ReduceDataBlock equal WholeReduce* / BlockReduce*, and so do
    the version-selected wrappers of common/op_kernel/amct_reduce.h."""

    program = "test_sim_reduce_names"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_new_names_equal_old_names(self):
        self.assertPrefixChecks("names_reduce_", 6)

    def test_wrappers(self):
        self.assertChecks(["names_wrapper_each_repeat_max", "names_wrapper_each_block_sum_bit_mask",
                           "names_wrapper_version_macro"])


class SimReduceTest(_ProgramTest):
    """BlockReduceMax/Min/Sum and WholeReduceMax/Min/Sum (sim_reduce.h)."""

    program = "test_sim_reduce"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_block_reduce_values(self):
        # 7 mask/stride layouts x {max, min, sum} x {half, float}: full count, a count mask
        # spanning blocks, the two half-blocks (the HiF4 subgroups), masked-off blocks (2201
        # keeps the result, 3510 writes 0 / -inf / +inf), strides, repeat stride 0.
        self.assertPrefixChecks("block_reduce_", 42)
        self.assertChecks(["block_reduce_max_float_low_half_of_each_block",
                           "block_reduce_max_float_high_half_of_each_block",
                           "block_reduce_max_half_blocks_masked_off", "block_reduce_sum_float_strided",
                           "block_reduce_sum_half_exact_and_tree_rounding"])

    def test_whole_reduce_values(self):
        # the four record orders (value/index layout, smallest index on ties), masks, strides,
        # one record per 64-element block (the HiF4 poison flag), sums as trees.
        self.assertPrefixChecks("whole_reduce_", 26)
        for order in ("value_index", "index_value", "only_value", "only_index"):
            self.assertChecks([f"whole_reduce_max_float_{order}", f"whole_reduce_min_half_{order}"])
        self.assertChecks(["whole_reduce_max_half_bit_mask", "whole_reduce_sum_float_tree_tolerance",
                           "whole_reduce_max_float_per_block_of_64", "whole_reduce_max_half_64_lanes_rep_stride_4",
                           "whole_reduce_max_float_signed_zero_first_lane"])
        self.assertChecks(["whole_reduce_min_int32_3510"], arches=(3510,))

    def test_guards(self):
        self.assertChecks([
            "reduce_repeat_time_over_255", "reduce_repeat_time_negative", "reduce_count_mask_zero",
            "reduce_count_mask_over_lanes", "reduce_bit_mask_empty", "reduce_negative_stride", "reduce_bad_order",
            "reduce_src_footprint_beyond_view", "reduce_dst_footprint_beyond_view",
            "reduce_whole_dst_stride_beyond_view", "reduce_block_dst_unit_alignment_float",
            "reduce_block_dst_unit_16B_half_ok", "reduce_whole_only_value_4B_unit_ok",
            "reduce_whole_value_index_unit_alignment", "reduce_src_not_32B_aligned", "reduce_dst_overlaps_src",
            "reduce_stale_tensor", "reduce_outside_launch", "reduce_repeat_time_zero_is_nop"])

    def test_sync(self):
        self.assertChecks(["reduce_sync_dma_without_flag", "reduce_sync_dma_with_flag",
                           "reduce_sync_masked_block_not_read"])


class SimGatherTest(_ProgramTest):
    """Brcb, Gather and GatherMask (sim_gather.h)."""

    program = "test_sim_gather"

    def test_program_clean(self):
        self.assertProgramClean()

    def test_brcb(self):
        for t in ("float", "half", "bf16", "uint16", "int16", "int32", "uint32"):
            self.assertChecks([f"brcb_{t}_{c}" for c in ("default_1_8", "blk_0_means_1", "blk_2_rep_16",
                                                          "blk_1_rep_9_gaps", "255_repeats")])
        self.assertChecks(["brcb_params_ctor_and_defaults"])

    def test_gather(self):
        self.assertChecks(["gather_float_random", "gather_float_base_addr", "gather_half_random", "gather_bf16_random",
                           "gather_uint16_random", "gather_int32_random", "gather_uint32_broadcast_x4",
                           "gather_float_subgroup_broadcast"])

    def test_gathermask(self):
        for t in ("half", "float", "bf16", "uint16", "int32", "uint32"):
            self.assertChecks([f"gathermask_{t}_{c}" for c in ("even", "odd", "lane0_of_4", "lane1_of_4",
                                                                "lane2_of_4", "lane3_of_4", "all", "user_pattern",
                                                                "strided")])
        self.assertChecks(["gathermask_params_ctor_and_defaults", "gathermask_default_mode_per_arch"])
        self.assertChecks(["gathermask_float_per_repeat_pattern_stride1", "gathermask_int32_per_repeat_pattern_stride2_gapped_src",
                           "gathermask_half_per_repeat_pattern_stride1", "gathermask_uint16_per_repeat_pattern_stride3"])

    def test_guards(self):
        self.assertChecks([
            "brcb_dst_beyond_view", "brcb_src_beyond_view", "brcb_overlap", "brcb_dst_misaligned",
            "brcb_repeat_zero_is_nop", "gather_offset_not_multiple_of_sizeof", "gather_offset_outside_src",
            "gather_base_addr_outside_src", "gather_count_zero", "gather_offsets_beyond_view",
            "gather_dst_overlaps_read_range", "gathermask_reduce_mode_rejected", "gathermask_counter_mask_rejected",
            "gathermask_builtin_pattern_range", "gathermask_per_repeat_pattern_beyond_view",
            "gathermask_shared_pattern_fits_its_view", "gathermask_repeat_over_255",
            "gathermask_src_beyond_view", "gathermask_dst_beyond_view"])
        self.assertChecks(["gather_count_limit_2201"], arches=(2201,))
        self.assertChecks(["gather_count_16384_3510"], arches=(3510,))

    def test_sync(self):
        self.assertChecks(["brcb_sync_dma_without_flag", "brcb_sync_dma_with_flag", "gather_sync_dma_without_flag",
                           "gather_sync_dma_with_flag", "gathermask_sync_dma_without_flag",
                           "gathermask_sync_dma_with_flag"])


class SimCastModesTest(_ProgramTest):
    """The Cast (pair, mode)s of the hifloat4 kernel at their ties (hand-written bit patterns)."""

    program = "test_sim_cast_modes"

    def test_casts_used_by_hifloat4(self):
        self.assertProgramClean()
        self.assertChecks([
            "hif4_cast_float_to_bf16_rint", "hif4_cast_bf16_to_float_none", "hif4_cast_half_to_float_none",
            "hif4_cast_float_to_float_rint", "hif4_cast_float_to_float_trunc", "hif4_cast_float_to_half_rint",
            "hif4_cast_int16_to_float_none", "hif4_cast_int32_to_float_none", "hif4_cast_half_to_uint8_rint",
            "hif4_cast_uint8_to_half_none"])


@unittest.skipUnless(os.environ.get("AMCT_PERF_TESTS") == "1",
                     "timing checks run only with AMCT_PERF_TESTS=1: the default suite has no timed tests")
class SimOpsPerfTest(unittest.TestCase):
    """The new primitives are fast: one set of checks per call, then vectorisable loops."""

    def test_speed(self):
        _prebuild()
        for arch in ARCHES:
            with self.subTest(arch=arch):
                exe = build("test_sim_ops_perf", arch, "-O3").result()
                for _attempt in range(3):  # the machine may be busy: more chances
                    proc = run_program(exe)
                    passed, failed = parse(proc.stdout)
                    if not failed and proc.returncode == 0:
                        break
                self.assertEqual(failed, {}, proc.stdout)
                for name in ("perf_values", "perf_block_reduce_under_0.6ns", "perf_whole_reduce_float_under_1.5ns",
                             "perf_whole_reduce_half_under_3ns", "perf_brcb_under_0.6ns", "perf_gather_under_3ns",
                             "perf_gathermask_under_1.6ns"):
                    self.assertIn(name, passed)


# ---------------------------------------------------------------- the hifloat4 kernel on both arches

def _torch_and_reference():
    try:
        import numpy  # noqa: F401
        import torch
    except ImportError:  # pragma: no cover
        return None, None
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_hif4_reference_for_sim_tests", ROOT / "hifloat4_cast" / "python" / "hifloat4_cast" / "reference.py")
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    return torch, ref


class Hif4KernelBothArchesTest(unittest.TestCase):
    """hifloat4_cast_kernel.cpp on the sim of dav-2201 and dav-3510, bit-exact with the spec."""

    DT = {"float16": 0, "bfloat16": 1, "float32": 2}

    @classmethod
    def setUpClass(cls):
        cls.torch, cls.ref = _torch_and_reference()
        if cls.torch is None:
            raise unittest.SkipTest("needs torch and numpy")
        _prebuild()
        cls.exe = {arch: build("test_hif4_kernel", arch, "-O2", (HIF4_KERNEL_DIR,)).result() for arch in ARCHES}

    # -- running the driver
    def _run(self, arch, mode, dtype_name, blocks, in0, in1=None, cores=8, tile=16):
        d = _work_dir() / f"k{threading.get_ident()}"
        d.mkdir(exist_ok=True)
        f0, f1, o0, o1 = d / "in0", d / "in1", d / "out0", d / "out1"
        f0.write_bytes(in0)
        if in1 is not None:
            f1.write_bytes(in1)
        proc = run_program(self.exe[arch], mode, self.DT[dtype_name], blocks, cores, tile, f0,
                           f1 if in1 is not None else "-", o0, o1 if mode == 1 else "-")
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        return o0.read_bytes(), (o1.read_bytes() if mode == 1 else None)

    def _bits(self, t):
        torch = self.torch
        width = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32}[t.dtype]
        return t.contiguous().view(width)

    def _from_bytes(self, raw, dtype, shape):
        torch = self.torch
        u8 = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
        return u8.view(dtype).reshape(shape).clone()

    def assertBitsEqual(self, got, want, what):
        torch = self.torch
        self.assertEqual(got.dtype, want.dtype, what)
        gn, wn = torch.isnan(got.float()), torch.isnan(want.float())
        self.assertTrue(torch.equal(gn, wn), f"{what}: NaN positions differ")
        gb, wb = self._bits(got)[~wn], self._bits(want)[~wn]
        bad = (gb != wb).nonzero()
        self.assertEqual(bad.numel(), 0, f"{what}: {bad.numel()} elements differ, first at {bad[:4].tolist()}")

    def _all_ops(self, arch, x, cores, tile, what):
        """fake-quant, pack, unpack (fp32 and x.dtype) of x (rows of 64-multiples) vs the reference."""
        torch, ref = self.torch, self.ref
        name = str(x.dtype).replace("torch.", "")
        blocks = x.numel() // 64
        raw = x.contiguous().view(torch.uint8).numpy().tobytes()
        y, _ = self._run(arch, 0, name, blocks, raw, cores=cores, tile=tile)
        self.assertBitsEqual(self._from_bytes(y, x.dtype, x.shape), ref.hifloat4_fake_quant_ref(x), f"{what} fq")
        s, v = self._run(arch, 1, name, blocks, raw, cores=cores, tile=tile)
        want_s, want_v = ref.hifloat4_pack_ref(x)
        self.assertEqual(s, want_s.numpy().tobytes(), f"{what} pack scale")
        self.assertEqual(v, want_v.numpy().tobytes(), f"{what} pack value")
        for out_name, out_dtype in (("float32", torch.float32), (name, x.dtype)):
            u, _ = self._run(arch, 2, out_name, blocks, s, v, cores=cores, tile=tile)
            got = self._from_bytes(u, out_dtype, (blocks, 64))
            self.assertBitsEqual(got, ref.hifloat4_unpack_ref(want_s.reshape(blocks, 1, 4),
                                                              want_v.reshape(blocks, 32), out_dtype),
                                 f"{what} unpack to {out_name}")

    def test_golden_vectors(self):
        torch = self.torch
        vectors = load_vector_file("hif4_vectors.json")["vectors"]  # a missing file is an error
        self.assertEqual(len(vectors), 15)
        for arch in ARCHES:
            for vec in vectors:
                with self.subTest(arch=arch, vector=vec["name"]):
                    dtype = getattr(torch, vec["dtype"])
                    width = torch.int32 if dtype == torch.float32 else torch.int16
                    bits = [int(b, 16) for b in vec["input_bits"]]
                    wide = torch.tensor(bits, dtype=torch.int64)
                    if width == torch.int16:
                        wide = torch.where(wide >= 0x8000, wide - 0x10000, wide)
                    else:
                        wide = torch.where(wide >= 0x80000000, wide - 0x100000000, wide)
                    x = wide.to(width).view(dtype).reshape(1, 64)
                    raw = x.view(torch.uint8).numpy().tobytes()
                    y, _ = self._run(arch, 0, vec["dtype"], 1, raw, cores=1, tile=8)
                    got = self._from_bytes(y, dtype, (1, 64))
                    want = [int(b, 16) for b in vec["expected_out_dtype_bits"]]
                    got_bits = [int(b) & (0xFFFFFFFF if width == torch.int32 else 0xFFFF)
                                for b in self._bits(got).reshape(-1).tolist()]
                    expected_nan = torch.isnan(ref_values(torch, want, dtype, width)).tolist()
                    for i, (g, w, isnan) in enumerate(zip(got_bits, want, expected_nan)):
                        if isnan:
                            self.assertTrue(bool(torch.isnan(got.reshape(-1)[i].float())), f"{i}: NaN expected")
                        else:
                            self.assertEqual(g, w, f"element {i}: got {g:#x} want {w:#x}")
                    s, v = self._run(arch, 1, vec["dtype"], 1, raw, cores=1, tile=8)
                    self.assertEqual(list(s), [int(b, 16) for b in vec["pack_scale_bytes"]], "scale bytes")
                    self.assertEqual(list(v), [int(b, 16) for b in vec["pack_value_bytes"]], "value bytes")
                    u, _ = self._run(arch, 2, vec["dtype"], 1, s, v, cores=1, tile=8)
                    back = self._from_bytes(u, dtype, (1, 64))
                    self.assertBitsEqual(back, got, "unpack(pack(x)).to(dtype) == fake_quant(x)")

    def test_worked_example_all_two(self):
        torch = self.torch
        x = torch.full((1, 64), 2.0, dtype=torch.bfloat16)
        raw = x.view(torch.uint8).numpy().tobytes()
        for arch in ARCHES:
            with self.subTest(arch=arch):
                s, v = self._run(arch, 1, "bfloat16", 1, raw, cores=1, tile=8)
                self.assertEqual(list(s), [0xB9, 0xFF, 0xFF, 0xFF])
                self.assertEqual(set(v), {0x66})
                y, _ = self._run(arch, 0, "bfloat16", 1, raw, cores=1, tile=8)
                self.assertTrue(bool((self._from_bytes(y, torch.bfloat16, (1, 64)).float() == 1.875).all()))

    def test_random_blocks_cores_and_tiles(self):
        torch = self.torch
        g = torch.Generator().manual_seed(4)
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            rows = 75  # 75 x 128: 150 blocks, not a multiple of 8 or of any tile below
            x = torch.randn(rows, 128, generator=g) * torch.exp2(torch.randint(-12, 13, (rows, 128), generator=g).float())
            x[3, 5] = float("nan")
            x[10, 64] = float("-inf")
            x[20, :64] = -0.0
            x[21, :64] = 1e-30
            x = x.to(dtype)
            for arch in ARCHES:
                for cores, tile in ((1, 8), (3, 16), (8, 48), (40, 24)):
                    with self.subTest(dtype=str(dtype), arch=arch, cores=cores, tile=tile):
                        self._all_ops(arch, x, cores, tile, f"{dtype} arch {arch} cores {cores} tile {tile}")


def ref_values(torch, bits, dtype, width):
    """The values of a list of bit patterns of `dtype`."""
    wide = torch.tensor(bits, dtype=torch.int64)
    if width == torch.int16:
        wide = torch.where(wide >= 0x8000, wide - 0x10000, wide)
    else:
        wide = torch.where(wide >= 0x80000000, wide - 0x100000000, wide)
    return wide.to(width).view(dtype).float()


# ---------------------------------------------------------------- compile-time guards
# name: (snippet, arches where it must NOT compile, expected compiler message, correct snippet)
NEGATIVE = {
    "blockreducemax_int32": (
        "void f(const LocalTensor<int32_t>& a) { BlockReduceMax(a, a, 1, 64, 1, 1, 8); }", ARCHES,
        "BlockReduceMax: dtype not supported",
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) { BlockReduceMax(d, a, 1, 64, 1, 1, 8); }"),
    "blockreducesum_bf16": (
        "void f(const LocalTensor<bfloat16_t>& a) { BlockReduceSum(a, a, 1, 64, 1, 1, 8); }", ARCHES,
        "BlockReduceSum: dtype not supported",
        "void f(const LocalTensor<half>& d, const LocalTensor<half>& a) { BlockReduceSum(d, a, 1, 128, 1, 1, 8); }"),
    "wholereducemax_int32_on_2201": (
        "void f(const LocalTensor<int32_t>& d, const LocalTensor<int32_t>& a) "
        "{ WholeReduceMax(d, a, 64, 1, 1, 1, 8); }", (2201,), "WholeReduceMax: dtype not supported",
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) { WholeReduceMax(d, a, 64, 1, 1, 1, 8); }"),
    "wholereducesum_uint8": (
        "void f(const LocalTensor<uint8_t>& d, const LocalTensor<uint8_t>& a) { WholeReduceSum(d, a, 64, 1, 1, 1, 8); }",
        ARCHES, "WholeReduceSum: dtype not supported",
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) { WholeReduceSum(d, a, 64, 1, 1, 1, 8); }"),
    "wholereducesum_has_no_order": (
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) "
        "{ WholeReduceSum(d, a, 64, 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE); }", ARCHES, "no matching function",
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) "
        "{ WholeReduceMax(d, a, 64, 1, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE); }"),
    "reduce_is_set_mask_false": (
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) "
        "{ BlockReduceMax<float, false>(d, a, 1, 64, 1, 1, 8); }", ARCHES, "isSetMask stays true",
        "void f(const LocalTensor<float>& d, const LocalTensor<float>& a) "
        "{ BlockReduceMax<float, true>(d, a, 1, 64, 1, 1, 8); }"),
    "brcb_uint8_on_2201": (
        "void f(const LocalTensor<uint8_t>& d, const LocalTensor<uint8_t>& a) { Brcb(d, a, 1, BrcbRepeatParams(1, 8)); }",
        (2201,), "Brcb: dtype not supported",
        "void f(const LocalTensor<uint16_t>& d, const LocalTensor<uint16_t>& a) "
        "{ Brcb(d, a, 1, BrcbRepeatParams(1, 8)); }"),
    "brcb_params_3_args": ("void f() { BrcbRepeatParams p{1, 8, 0}; (void)p; }", ARCHES, "no matching function",
                           "void f() { BrcbRepeatParams p{1, 8}; (void)p; }"),
    "gather_uint8_on_2201": (
        "void f(const LocalTensor<uint8_t>& d, const LocalTensor<uint32_t>& o) { Gather(d, d, o, 0u, 64u); }", (2201,),
        "Gather: dtype not supported",
        "void f(const LocalTensor<uint16_t>& d, const LocalTensor<uint32_t>& o) { Gather(d, d, o, 0u, 64u); }"),
    "gather_offsets_not_uint32": (
        "void f(const LocalTensor<float>& d, const LocalTensor<int32_t>& o) { Gather(d, d, o, 0u, 64u); }", ARCHES,
        "no matching function",
        "void f(const LocalTensor<float>& d, const LocalTensor<uint32_t>& o) { Gather(d, d, o, 0u, 64u); }"),
    "gathermask_pattern_type_mismatch": (
        "void f(const LocalTensor<half>& d, const LocalTensor<uint32_t>& p, uint64_t& n) "
        "{ GatherMask(d, d, p, false, 0u, GatherMaskParams(1, 1, 8, 0), n); }", ARCHES,
        "the pattern type U must be uint16_t",
        "void f(const LocalTensor<half>& d, const LocalTensor<uint16_t>& p, uint64_t& n) "
        "{ GatherMask(d, d, p, false, 0u, GatherMaskParams(1, 1, 8, 0), n); }"),
    "gathermask_int8_on_2201": (
        "void f(const LocalTensor<int8_t>& d, uint64_t& n) "
        "{ GatherMask(d, d, uint8_t(1), false, 0u, GatherMaskParams(1, 1, 8, 0), n); }", (2201,),
        "GatherMask: dtype not supported",
        "void f(const LocalTensor<int16_t>& d, uint64_t& n) "
        "{ GatherMask(d, d, uint8_t(1), false, 0u, GatherMaskParams(1, 1, 8, 0), n); }"),
    "gathermaskparams_2_args": ("void f() { GatherMaskParams p{1, 2}; (void)p; }", ARCHES, "no matching function",
                                "void f() { GatherMaskParams p{1, 2, 8, 0}; (void)p; }"),
}

PRELUDE = '#include "kernel_operator.h"\nusing namespace AscendC;\n'


def _syntax_only(name, source, defines, warnings_as_errors=False):
    return syntax_only(_work_dir() / f"{name}.cpp", source, defines, warnings_as_errors, TIMEOUT)


class SimOpsCompileTimeGuardsTest(unittest.TestCase):
    """What bisheng rejects does not compile in the sim (each next to a correct form that does)."""

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
        good_src = PRELUDE + "".join(f"namespace good_{n} {{ {g} }}\n" for n, (_b, _f, _m, g) in NEGATIVE.items())
        for arch in ARCHES:
            defines = ["-DAMCT_KERNEL_SIM", f"-D__NPU_ARCH__={arch}"]
            jobs[("bad", arch)] = _pool.submit(_syntax_only, f"ops_rejected_{arch}", bad_src, defines)
            jobs[("good", arch)] = _pool.submit(_syntax_only, f"ops_accepted_{arch}", good_src, defines, True)
        cls.results = {k: f.result() for k, f in jobs.items()}

    def test_correct_snippets_compile_warning_free(self):
        for arch in ARCHES:
            with self.subTest(arch=arch):
                _path, proc = self.results[("good", arch)]
                self.assertEqual(proc.returncode, 0, proc.stderr[-6000:])

    def test_no_error_outside_the_snippets(self):
        for arch in ARCHES:
            path, proc = self.results[("bad", arch)]
            stray = sorted(set(errors_by_line(path, proc.stderr)) - set(self.bad_lines.values()))
            self.assertEqual(stray, [], proc.stderr[-4000:])


def _make_negative_test(name):
    def test(self):
        _bad, failing, msg, _good = NEGATIVE[name]
        line = self.bad_lines[name]
        for arch in ARCHES:
            with self.subTest(arch=arch):
                path, proc = self.results[("bad", arch)]
                errors = errors_by_line(path, proc.stderr)
                if arch in failing:
                    self.assertIn(line, errors, f"{name} compiled on {arch} but must not")
                    self.assertIn(msg, errors[line], errors[line])
                else:
                    self.assertNotIn(line, errors, errors.get(line))
    test.__doc__ = f"{name} must not compile where the NPU compiler rejects it"
    return test


for _name in NEGATIVE:
    setattr(SimOpsCompileTimeGuardsTest, f"test_rejects_{_name}", _make_negative_test(_name))


if __name__ == "__main__":
    sys.exit(unittest.main())
