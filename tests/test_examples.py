"""The examples run: ``examples/digits_quantization.py`` in its fast mode, as a user would.

It trains a small classifier on scikit-learn's bundled digits and evaluates it with the
operators' formats. The float baseline must reach 0.9 test accuracy (it reaches about 0.97);
every format must report an accuracy in [0, 1]. The quantized accuracies are reported, not
bounded: how much a format costs is what the example is for.
"""
import importlib.util
import json
import subprocess
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "digits_quantization.py"
FORMATS = ("float32", "HiFloat8", "HiFloat4", "MXFP4", "SVDQuant (rank 8)")


@unittest.skipIf(importlib.util.find_spec("sklearn") is None,
                 "scikit-learn is not installed (the README's set-up command installs it); "
                 "the digits example cannot run")
class TestDigitsExample(unittest.TestCase):

    def test_fast_mode_reaches_the_float_baseline(self):
        proc = subprocess.run([sys.executable, str(EXAMPLE), "--fast", "--json"],
                              capture_output=True, text=True, timeout=600, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        result = json.loads(proc.stdout)
        rows = {r["format"]: r["accuracy"] for r in result["rows"]}
        self.assertEqual(tuple(rows), FORMATS)
        self.assertGreaterEqual(rows["float32"], 0.9, rows)
        for name, acc in rows.items():
            self.assertTrue(0.0 <= acc <= 1.0, (name, acc))
        self.assertEqual(result["test_images"] + result["train_images"], 1797)
        print("\ndigits example accuracies: "
              + ", ".join(f"{k} {v:.4f}" for k, v in rows.items()), file=sys.stderr)

    def test_table_output(self):
        proc = subprocess.run([sys.executable, str(EXAMPLE), "--epochs", "1"],
                              capture_output=True, text=True, timeout=600, check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        for name in FORMATS:
            self.assertIn(f"| {name} |", proc.stdout)


if __name__ == "__main__":
    unittest.main()
