"""No blocking copy per NPU launch: the launchers' tilings and LUTs go through one upload cache
(common/op_host/amct_upload.h), so a warm launch makes no host->device copy and no launch
synchronises the stream.

Here the cache is driven over a counting CPU copy (torch.ops.amct._device_uploads_test), and the
NPU sources are checked to use nothing else; tests/test_npu_launch.py counts the copies and syncs
of the real launchers against stubs of torch_npu and CANN.
"""
import re
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import find_op_package  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
amct_ops, _SKIP = find_op_package("hifloat8_cast")


def tiling(*words):
    return torch.tensor(words, dtype=torch.int64).view(torch.uint8)


@unittest.skipIf(amct_ops is None, _SKIP)
class UploadCacheTest(unittest.TestCase):
    def test_one_copy_per_distinct_tiling_none_when_warm(self):
        a, b = tiling(1, 2, 3), tiling(1, 2, 4)
        same_as_a = tiling(1, 2, 3)  # another tensor, the same bytes
        counts = torch.ops.amct._device_uploads_test([a, b, a, same_as_a, b, a], [])
        self.assertEqual(counts, [1, 2, 2, 2, 2, 2])

    def test_constants_once_per_table(self):
        lut1, lut2 = torch.arange(256, dtype=torch.uint8), torch.arange(256, dtype=torch.uint8)
        counts = torch.ops.amct._device_uploads_test([], [lut1, lut1, lut2, lut1, lut2])
        self.assertEqual(counts, [1, 1, 2, 2, 2])  # keyed by the table, not its contents

    def test_a_warm_launch_sequence_makes_no_copy(self):
        tilings = [tiling(i % 3, 7) for i in range(30)]
        counts = torch.ops.amct._device_uploads_test(tilings, [])
        self.assertEqual(counts[2], 3)
        self.assertEqual(counts[-1], 3, "launches after the first of each tiling copy nothing")


class NpuSourcesTest(unittest.TestCase):
    NPU_SOURCES = sorted(ROOT.glob("*/op_extension/*_npu.cpp"))

    def test_launchers_take_tilings_and_luts_from_the_cache(self):
        self.assertTrue(self.NPU_SOURCES)
        for path in self.NPU_SOURCES:
            text = path.read_text()
            with self.subTest(source=path.name):
                self.assertIn("amct::deviceTiling(", text)
                self.assertNotIn("uploadTo(", text)

    def test_no_launch_synchronises(self):
        sync = re.compile(r"synchronize|aclrtSynchronize|non_blocking\s*=\s*\*/\s*false|\.to\([^)]*false")
        for path in [*self.NPU_SOURCES, ROOT / "common" / "op_host" / "amct_npu.h"]:
            text = path.read_text()
            if path.name == "amct_npu.h":  # its one copy is the cache's cold path
                text = text.replace(text[text.index("inline at::Tensor copyToNpu"):text.index("// The process's cache")], "")
            with self.subTest(source=path.name):
                self.assertEqual(sync.findall(text), [])


class SharedHostSourcesTest(unittest.TestCase):
    """The shared host sources (*_host.cpp, reached by the NPU path too) copy no process-lifetime
    table to a device per call: such a table (a function returning a `static const at::Tensor*`)
    goes through an upload cache. A `.to(...)` of one, other than to a dtype, fails."""

    HOST_SOURCES = sorted(ROOT.glob("*/op_extension/*_host.cpp"))
    TABLE_FN = re.compile(r"const at::Tensor& (\w+)\(\) \{\s*static const at::Tensor\* ")

    def per_call_table_copies(self, text):
        tables = self.TABLE_FN.findall(text)
        names = set()
        for fn in tables:
            names |= set(re.findall(rf"(\w+) = {fn}\(\)", text))
            names.add(rf"{fn}\(\)")
        return [m.group(0) for name in names for m in re.finditer(rf"\b{name}\.to\((?!at::k)[^;]*", text)]

    def test_no_per_call_device_copy_of_a_constant_table(self):
        self.assertTrue(self.HOST_SOURCES)
        found_tables = False
        for path in self.HOST_SOURCES:
            text = path.read_text()
            found_tables |= bool(self.TABLE_FN.search(text))
            with self.subTest(source=path.name):
                self.assertEqual(self.per_call_table_copies(text), [])
        self.assertTrue(found_tables, "the scan found no table function: its pattern is stale")

    def test_the_scan_catches_the_old_lut_copy(self):
        old = ("const at::Tensor& lutTable() {\n  static const at::Tensor* t = make();\n  return *t;\n}\n"
               "void f(const at::Tensor& codes) {\n  const at::Tensor& pairs = lutTable();\n"
               "  at::Tensor a = pairs.device() == codes.device() ? pairs : pairs.to(codes.device());\n"
               "  at::Tensor b = lutTable().to(codes.device());\n  at::Tensor ok = pairs.to(at::kInt);\n}\n")
        self.assertEqual(sorted(self.per_call_table_copies(old)),
                         ["lutTable().to(codes.device())", "pairs.to(codes.device())"])


class StemKernelPathTest(unittest.TestCase):
    """stem_indexer's kernel path (the NPU and the emulated kernel) hands the device tensors to one
    launch: the fused kernel scores on its cube and reads the lengths itself, so the host copies no
    length to the host and runs no matmul (docs/stem_indexer.md §7.3)."""

    def test_run_kernel_reads_nothing_back_and_runs_no_matmul(self):
        text = (ROOT / "stem_indexer" / "op_extension" / "stem_indexer_host.cpp").read_text()
        body = text[text.index("std::tuple<at::Tensor, at::Tensor> runKernel("):]
        body = body[:body.index("\n}\n")]
        self.assertIn("backend.launch(", body)
        for forbidden in ("hostValues", "kCPU", ".cpu()", ".item"):
            self.assertNotIn(forbidden, body)
        for aten_matmul in ("at::mm(", "at::matmul(", "at::bmm("):  # the CPU op has its own score kernel
            self.assertNotIn(aten_matmul, text)


if __name__ == "__main__":
    unittest.main()
