"""No blocking copy per NPU launch, measured on the real launchers.

tests/npu_fake builds every operator's NPU glue (``*_npu.cpp``, ``common/op_host/amct_npu.h`` with
its upload cache ``amct_upload.h``, ``platform_npu.cpp``, ``probe_npu.cpp``), as an ascend950 build
compiles it, into a torch extension linked to the staged CPU libraries, whose shared host logic
(validation, tiling, output allocation, LUTs) it calls as on the NPU. What is stubbed: torch_npu's
stream, CANN's acl and platform queries, the PrivateUse1 device (host memory; every op without a
kernel of its own runs the CPU kernel, uncounted) and the kernels themselves, whose
``amct_<op>_launch`` entries only record the launch (the kernels are tested in the kernel sim by
each operator's tests). Nothing here runs torch_npu, CANN or an NPU: this shows what the launchers
ask of the device, not what the device does with it.

Counted per call: host->device (h2d), device->host (d2h) and device->device (d2d) copies, stream
synchronisations (a blocking host<->device copy counts as one) and launches. The harness runs in
a subprocess (tests/npu_fake/driver.py): it registers a PrivateUse1 backend for the process.
Its first build takes a few minutes (cached under the temp dir, AMCT_NPU_FAKE_BUILD to move it);
when it cannot build, the tests skip with the compiler's reason, except in CI (CI=true), where
that is a failure, as for tests/test_npu_glue.py.
"""
import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import find_op_package  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "npu_fake" / "driver.py"
amct_ops, _SKIP = find_op_package("svd_quant")

# scenario -> the kernel each call launches once (tests/npu_fake/fake_cann.cpp's names).
LAUNCHES = {
    "encode_to_hifloat8": "hifloat8_cast",
    "decode_from_hifloat8": "hifloat8_cast",
    "hifloat8_fake_quant": "hifloat8_cast",
    "hifloat4_fake_quant": "hifloat4_cast",
    "hifloat4_pack": "hifloat4_cast",
    "hifloat4_unpack": "hifloat4_cast",
    "mxfp4_quantize": "svd_quant",
    "quant_dequant_mxfp4": "quant_dequant_mxfp4",
    "quant_dequant_mxfp4.last_dim": "quant_dequant_mxfp4",
    "svd_quant": "svd_quant_fused",
    "npu_stem_indexer": "stem_indexer",
    "_probe": "probe",
    "encode_to_hifloat8.out": "hifloat8_cast",
    "hifloat4_fake_quant.out": "hifloat4_cast",
    "mxfp4_quantize.out": "svd_quant",
}
# Host->device copies of a first call: its tiling, plus the LUTs no earlier call uploaded.
FIRST_UPLOADS = {
    "encode_to_hifloat8": 2,  # the tiling and the bf16 encode LUT
    "decode_from_hifloat8": 2,  # the tiling and the bf16 decode LUT
    "hifloat8_fake_quant": 1,  # fp32 fake-quant is arithmetic: no LUT
    "_probe": 0,  # no tiling
    "encode_to_hifloat8.out": 1,  # the LUT is already on the device
}
OUT_OVERLOADS = {"encode_to_hifloat8.out": 1, "hifloat4_fake_quant.out": 1, "mxfp4_quantize.out": 2}
IN_CI = os.environ.get("CI") == "true"


def run_driver():
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    result = subprocess.run([sys.executable, str(DRIVER)], capture_output=True, text=True, env=env, timeout=900)
    if result.returncode != 0:
        raise AssertionError(f"driver failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


@unittest.skipIf(amct_ops is None, _SKIP)
class NpuLaunchCostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        report = run_driver()
        if "skip" in report:
            if IN_CI:
                raise AssertionError(report["skip"])
            raise unittest.SkipTest(report["skip"])
        cls.results = report["results"]

    def scenario(self, name):
        result = self.results[name]
        self.assertNotIn("error", result, f"{name}: {result.get('error')}")
        return result

    def assert_launched_once(self, name, step):
        launches = step["launches"]
        self.assertEqual([launch["kernel"] for launch in launches], [LAUNCHES[name]], f"{name}: launches")
        launch = launches[0]
        self.assertGreater(launch["block_dim"], 0)
        self.assertTrue(launch["on_stream"], f"{name}: launched on the current NPU stream")
        # Every pointer a kernel gets is fake-device memory (1) or null (0): no host pointer.
        self.assertNotIn(-1, launch["pointers"], f"{name}: pointers {launch['pointers']}")

    def test_every_npu_implementation_is_measured(self):
        registered = set()
        for path in [*ROOT.glob("*/op_extension/*_npu.cpp"), ROOT / "common" / "op_host" / "probe_npu.cpp"]:
            block = path.read_text().split("TORCH_LIBRARY_IMPL(amct, PrivateUse1, m)", 1)[1]
            registered |= set(re.findall(r'm\.impl\("([\w.]+)"', block))
        self.assertEqual(registered - set(self.results), set())

    def test_a_warm_launch_copies_nothing_and_never_synchronises(self):
        for name in LAUNCHES:
            for label in ("warm", "warm_again"):
                with self.subTest(op=name, call=label):
                    step = self.scenario(name)[label]
                    self.assertEqual((step["h2d"], step["d2h"], step["syncs"]), (0, 0, 0), name)
                    self.assert_launched_once(name, step)

    def test_a_first_call_uploads_its_tiling_and_tables_once(self):
        for name in LAUNCHES:
            with self.subTest(op=name):
                first = self.scenario(name)["first"]
                self.assertEqual(first["h2d"], FIRST_UPLOADS.get(name, 1), name)
                self.assertEqual(first["syncs"], first["h2d"], "each cold upload is one blocking copy")
                self.assertEqual(first["d2h"], 0)
                self.assert_launched_once(name, first)

    def test_another_tiling_is_uploaded_once(self):
        for name in LAUNCHES:
            if name == "_probe":
                continue  # no tiling
            with self.subTest(op=name):
                other = self.scenario(name)["other"]
                self.assertEqual((other["h2d"], other["d2h"], other["syncs"]), (1, 0, 1), name)
                self.assert_launched_once(name, other)

    def test_host_lengths_go_in_one_non_blocking_copy(self):
        """npu_stem_indexer with CPU length tensors (allowed on the NPU): both lengths (B = 1,
        int32) packed into one pinned buffer, one non-blocking copy per call, no sync."""
        result = self.scenario("npu_stem_indexer (CPU lengths)")
        for label in ("warm", "warm_again"):
            with self.subTest(call=label):
                warm = result[label]
                self.assertEqual((warm["h2d"], warm["h2d_bytes"], warm["d2h"], warm["syncs"]), (1, 8, 0, 0))
                self.assertEqual([launch["kernel"] for launch in warm["launches"]], ["stem_indexer"])
        first = result["first"]
        self.assertEqual((first["h2d"], first["syncs"]), (2, 1), "the tiling (blocking) and the lengths")

    def test_the_metadata_op_is_a_host_planner(self):
        """npu_stem_indexer_metadata launches nothing: both length tensors come to the host
        (blocking), the plan goes back (blocking), on every call (docs/npu.md)."""
        for label, step in self.scenario("npu_stem_indexer_metadata").items():
            with self.subTest(call=label):
                self.assertEqual((step["d2h"], step["h2d"], step["syncs"], step["launches"]), (2, 1, 3, []))

    def test_dequantize_uploads_its_tables_once(self):
        """mxfp4_dequantize on the NPU is ATen ops on the device (no kernel of ours) over two
        tables uploaded on the first call."""
        result = self.scenario("mxfp4_dequantize")
        self.assertEqual((result["first"]["h2d"], result["first"]["launches"]), (2, []))
        for label in ("warm", "other", "warm_again"):
            with self.subTest(call=label):
                step = result[label]
                self.assertEqual((step["h2d"], step["d2h"], step["syncs"], step["launches"]), (0, 0, 0, []))

    def test_the_stubbed_platform_reaches_the_launchers(self):
        """aclrtGetSocName: svd_quant and npu_stem_indexer refuse another SoC before any copy or
        launch. GetCoreNumAiv: the stem kernel runs on one AI core per two vector cores."""
        for name in ("svd_quant", "npu_stem_indexer"):
            with self.subTest(op=name):
                refused = self.results[f"{name} on Ascend910B3 with 8 vector cores"]
                self.assertIn("ascend950", refused["error"])
                self.assertIn("Ascend910B3", refused["error"])
                self.assertEqual((refused["h2d"], refused["launches"]), (0, []))
        self.assertEqual(self.scenario("npu_stem_indexer")["warm"]["launches"][0]["block_dim"], 8 // 2)
        four = self.results["npu_stem_indexer on Ascend950PR with 4 vector cores"]
        self.assertIsNone(four["error"])
        self.assertEqual([launch["block_dim"] for launch in four["launches"]], [4 // 2])

    def test_out_overloads_launch_once_and_copy_on_the_device(self):
        for name, outputs in OUT_OVERLOADS.items():
            with self.subTest(op=name):
                warm = self.scenario(name)["warm"]
                self.assertEqual(warm["d2d"], outputs, "the functional result copied into each out")


if __name__ == "__main__":
    unittest.main()
