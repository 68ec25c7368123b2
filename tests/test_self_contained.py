"""The repository stands on its own: its test data lives in ``tests/data`` and no tracked file
points at a directory outside the checkout.

The golden vectors themselves are checked against the executable references and the
independent oracles where those are tested: ``test_hifloat8_reference.py`` (``TestReferenceVsVectors``
and ``test_oracle_matches_encode_vectors``) and ``test_hifloat4_reference.py`` (``TestD1Vectors``,
``test_oracle_reproduces_vectors``). This module checks that those tests read the copies in
``tests/data`` and re-checks each file end to end against both its reference and its oracle, so
a corrupted copy fails here by name.
"""

import json
import shutil
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import amct_testing  # noqa: E402
import hif4_oracle  # noqa: E402
import hif8_oracle  # noqa: E402
from amct_testing import load_source_module  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

# Written split so that this file does not match its own search.
FORBIDDEN = ("../" + "shared", "shared" + "/spec", "shared" + "/vectors")


def _reference(package, name):
    try:
        return __import__(f"amct_ops.{package}.reference", fromlist=["reference"])
    except Exception:  # not built: the source tree's copy is the same module
        return load_source_module(name, REPO / package / "python" / package / "reference.py")


class TestDataIsInTheRepository(unittest.TestCase):

    def test_loader_reads_tests_data(self):
        self.assertEqual(amct_testing.DATA_DIR.resolve(), DATA.resolve())
        for name in ("hif8_vectors.json", "hif4_vectors.json"):
            path = DATA / name
            self.assertTrue(path.is_file(), f"{path} is missing")
            with open(path, encoding="utf-8") as fh:
                self.assertEqual(json.load(fh), amct_testing.load_vector_file(name))

    def test_hif8_vectors_against_reference_and_oracle(self):
        ref = _reference("hifloat8_cast", "_hif8_ref_for_data")
        vec = hif8_oracle.load_vectors()
        oracle = hif8_oracle.oracle()
        # decode: all 256 codes, the fp32 value equals the exact n*2^e form of the file.
        codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        got = ref.decode_from_hifloat8_ref(codes, torch.float32).double().numpy()
        want = np.array([hif8_oracle.parse_exact(v["exact"]) for v in vec["decode"]])
        np.testing.assert_array_equal(got, want, err_msg="hif8_vectors.json decode vs reference")
        np.testing.assert_array_equal(oracle.code_values, want, err_msg="decode vs oracle")
        for key, dtype, values in (("encode_fp16", torch.float16, hif8_oracle.fp16_values),
                                   ("encode_bf16", torch.bfloat16, hif8_oracle.bf16_values)):
            rows = vec[key]
            self.assertGreater(len(rows), 0, key)
            bits = np.array([int(r["in_bits"], 16) for r in rows], dtype=np.uint16)
            want = np.array([int(r["code"], 16) for r in rows], dtype=np.uint8)
            x = torch.from_numpy(bits.view(np.int16).copy()).view(dtype)
            np.testing.assert_array_equal(ref.encode_to_hifloat8_ref(x).numpy(), want,
                                          err_msg=f"hif8_vectors.json {key} vs reference")
            np.testing.assert_array_equal(oracle.encode(values(bits)), want,
                                          err_msg=f"hif8_vectors.json {key} vs oracle")

    def test_hif4_vectors_against_reference_and_oracle(self):
        ref = _reference("hifloat4_cast", "_hif4_ref_for_data")
        vectors = hif4_oracle.load_vectors()
        self.assertEqual(len(vectors), 15)
        for v in vectors:
            with self.subTest(vector=v["name"]):
                bits = [int(b, 16) for b in v["input_bits"]]
                x = hif4_oracle.to_torch(bits, v["dtype"]).reshape(1, 64)
                scale, value = ref.hifloat4_pack_ref(x)
                want_scale = [int(b, 16) for b in v["pack_scale_bytes"]]
                want_value = [int(b, 16) for b in v["pack_value_bytes"]]
                self.assertEqual(scale.reshape(-1).tolist(), want_scale, "reference scale bytes")
                self.assertEqual(value.reshape(-1).tolist(), want_value, "reference value bytes")
                r = hif4_oracle.quantise_block(bits, v["dtype"])
                self.assertEqual(list(hif4_oracle.pack_block(r)), [want_scale, want_value],
                                 "oracle bytes")
                out = ref.hifloat4_fake_quant_ref(x)
                want = hif4_oracle.to_torch([int(b, 16) for b in v["expected_out_dtype_bits"]],
                                            v["dtype"]).reshape(1, 64)
                bad = amct_testing.bitwise_mismatches(out, want)
                self.assertFalse(bool(bad.any()), "reference fake-quant output bits")


class TestNoReferenceOutsideTheRepository(unittest.TestCase):

    def test_tracked_files_do_not_point_outside(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed, so the tracked files cannot be listed")
        listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"],
                                 capture_output=True, check=False)
        if listing.returncode != 0:
            self.skipTest(f"{REPO} is not a git checkout (an sdist or a copy): no tracked files")
        offenders = []
        for rel in filter(None, listing.stdout.decode().split("\0")):
            path = REPO / rel
            if not path.is_file():
                continue  # deleted in the work tree
            text = path.read_bytes().decode("utf-8", errors="replace")
            hits = sorted({f for f in FORBIDDEN if f in text})
            if hits:
                offenders.append(f"{rel} ({', '.join(hits)})")
        self.assertEqual(offenders, [], "tracked files refer to a directory outside the "
                         "repository; cite docs/ instead: " + "; ".join(offenders))


class TestReadmeCommandsAreWhatCiRuns(unittest.TestCase):
    """The README's set-up and test commands are the ones ``.ci/run`` runs, character for
    character, so a user who follows the README does what CI checks."""

    def _block_after(self, text, heading):
        part = text.split(f"## {heading}\n", 1)[1]
        return part.split("```bash\n", 1)[1].split("```", 1)[0].strip()

    def test_set_up_and_test_commands(self):
        readme = (REPO / "README.md").read_text(encoding="utf-8")
        ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        for heading in ("Set up", "Test"):
            with self.subTest(section=heading):
                command = self._block_after(readme, heading)
                self.assertIn(command, ci, f".ci/run does not run the README's {heading!r} command")


if __name__ == "__main__":
    unittest.main()
