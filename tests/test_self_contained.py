"""The repository stands on its own: its test data lives in ``tests/data`` and no tracked file
points at a directory outside the checkout.

The golden vectors themselves are checked against the executable references and the
independent oracles where those are tested: ``test_hifloat8_reference.py`` (``TestReferenceVsVectors``
and ``test_oracle_matches_encode_vectors``) and ``test_hifloat4_reference.py`` (``TestD1Vectors``,
``test_oracle_reproduces_vectors``). This module checks that those tests read the copies in
``tests/data`` and re-checks each file end to end against both its reference and its oracle, so
a corrupted copy fails here by name.
"""

import io
import json
import re
import shutil
import subprocess
import sys
import tokenize
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


def _tracked_files():
    """The tracked files (relative paths), or None outside a git checkout."""
    if shutil.which("git") is None:
        return None
    listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=False)
    if listing.returncode != 0:
        return None
    return [rel for rel in filter(None, listing.stdout.decode().split("\0")) if (REPO / rel).is_file()]


# A section label: "§7.1", or one capital letter of the families the documentation uses (parts
# A-D of a page, the validation checks S/M/Q/V, test cases E/F/R) and one or two digits, with
# optional ".n" parts ("A2", "A2.7", "S10", "A01"). Not a label: part of a longer word or
# identifier ("AVX2", "E2M1", "V16::size", "TPosition::A1"), a one-word string constant ("A1"), a
# compiler flag ("-O1"), a path or version, a product ("Atlas A2"), code in Markdown backticks.
LABEL = re.compile(r"(?<![\w\-./§:])(?<!Atlas )(§\d+(?:\.\d+)*|[ABCDEFMQRSV]\d{1,2}(?:\.\d+)*)(?![\w(<{\[]|::|\.\d)")
# A docs page named before a label: "docs/mxfp4.md A2" (inside docs/, "mxfp4.md A2" too).
PAGE = re.compile(r"(?:docs/|(?<![\w/]))(\w+)\.md\b")
# Byte dumps ("FF 6B B6 F5") are not labels.
HEX_RUN = re.compile(r"\b[0-9A-F]{2}(?: [0-9A-F]{2}){2,}\b")
CPP_TEXT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)


def _prose_lines(rel, text):
    """(line number, text) of the prose of a file: comments and strings of Python and C++ (code
    names such as U8 or K3 are not citations), every line of anything else."""
    suffix = Path(rel).suffix
    pieces = []
    if suffix == ".py":
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.STRING and re.fullmatch(r"[rbuRBU]?(['\"])\w+\1", tok.string):
                    continue  # a one-word constant such as matplotlib's colour "C0"
                if tok.type in (tokenize.COMMENT, tokenize.STRING) or \
                        tok.type == getattr(tokenize, "FSTRING_MIDDLE", None):
                    pieces.append((tok.start[0], tok.string))
        except (tokenize.TokenError, SyntaxError):
            pieces = [(1, text)]
    elif suffix in (".cpp", ".h", ".cc"):
        pieces = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in CPP_TEXT.finditer(text)
                  if not re.fullmatch(r'"\w+"', m.group(0))]  # a one-word constant such as the name "A1"
    elif suffix == ".md":  # code spans blanked, columns kept
        pieces = [(1, re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), text))]
    else:
        pieces = [(1, text)]
    for start, piece in pieces:
        for i, line in enumerate(piece.split("\n")):
            yield start + i, line


def docs_labels(page):
    """The labels a docs page defines: headings ("## A2. ...", "### §4.1 ...") and bold labels
    ("**S10**"). None if there is no such page."""
    path = REPO / "docs" / f"{page}.md"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    heads = re.findall(r"^#+\s+(§?[A-Z]?\d+(?:\.\d+)*)\b", text, re.M)
    bold = re.findall(r"\*\*(§?[A-Z]?\d+(?:\.\d+)*)\b", text)
    return set(heads) | set(bold)


def unresolved_labels(rel, text, labels_of=docs_labels):
    """file:line: label of every label in ``text`` that no docs page defines. A label refers to
    the docs page named last before it: on its own line, else on an earlier line of the file;
    inside docs/, a label without a page on its line is the page's own."""
    in_docs = rel.startswith("docs/")
    own = Path(rel).stem if in_docs else None
    raw = text.split("\n")
    last_page = {}  # line number -> the last docs page named on that line

    def page_before(number, column):
        line = raw[number - 1] if number - 1 < len(raw) else ""
        named = [m for m in PAGE.finditer(line[:column]) if in_docs or m.group(0).startswith("docs/")]
        if named:
            return named[-1].group(1)
        if in_docs:
            return own
        for k in range(number - 2, -1, -1):
            if k not in last_page:
                hits = re.findall(r"docs/(\w+)\.md", raw[k])
                last_page[k] = hits[-1] if hits else None
            if last_page[k]:
                return last_page[k]
        return None

    bad = []
    for number, line in _prose_lines(rel, text):
        hex_spans = [m.span() for m in HEX_RUN.finditer(line)]
        full = raw[number - 1] if number - 1 < len(raw) else line
        offset = max(full.find(line), 0) if Path(rel).suffix != ".md" else 0
        for m in LABEL.finditer(line):
            if any(a <= m.start() < b for a, b in hex_spans):
                continue
            page = page_before(number, offset + m.start())
            defined = labels_of(page) if page else None
            if not defined or m.group(1) not in defined:
                bad.append(f"{rel}:{number}: {m.group(1)}" + (f" (not a label of docs/{page}.md)" if page else
                                                              " (no docs page named before it)"))
    return bad


# This file's own examples of the rule (test_the_rule) are not citations.
_NOT_SCANNED = {"tests/test_self_contained.py"}


class TestSectionLabelsResolve(unittest.TestCase):
    """Every section label cited in a tracked file ("A2 step 6", "§7.1", "S10") is qualified by
    a docs page that defines it ("docs/hifloat4.md A2"), so a reader can look it up."""

    def test_labels_are_defined_by_a_docs_page(self):
        files = _tracked_files()
        if files is None:
            self.skipTest("not a git checkout: no tracked files to scan")
        bad = []
        for rel in files:
            if rel in _NOT_SCANNED or Path(rel).suffix in (".json", ".png"):
                continue
            bad += unresolved_labels(rel, (REPO / rel).read_text(encoding="utf-8", errors="replace"))
        self.assertEqual(bad, [], f"section labels no docs page defines (qualify them as docs/<page>.md "
                         "<label> with a page that has that heading or bold label, or state the fact without a "
                         "label):\n" + "\n".join(bad))

    def test_the_rule(self):
        pages = {"hifloat4": {"A2", "A3"}, "stem_indexer": {"§4.1"}}.get
        cases = {
            "// docs/hifloat4.md A2 step 6": [],
            "// A2 (docs/hifloat4.md)": ["x.cpp:1: A2 (no docs page named before it)"],
            "// see docs/hifloat4.md\n// then A3": [],
            "// docs/hifloat4.md D2": ["x.cpp:1: D2 (not a label of docs/hifloat4.md)"],
            "// docs/stem_indexer.md §4.1 and §5": ["x.cpp:1: §5 (not a label of docs/stem_indexer.md)"],
            "int U8 = 0; // AVX2, E2M1, V16::size(), -O1, bytes FF 6B B6 F5, Atlas A2": [],
            'case P::A1: return "A1"; // TQue<TPosition::A1/::B1>': [],
            'Fail("A1 is wrong");': ["x.cpp:1: A1 (no docs page named before it)"],
        }
        for text, want in cases.items():
            with self.subTest(text=text):
                self.assertEqual(unresolved_labels("x.cpp", text, pages), want)
        self.assertEqual(unresolved_labels("docs/hifloat4.md", "A2, A7; stem_indexer.md §4.1", pages),
                         ["docs/hifloat4.md:1: A7 (not a label of docs/hifloat4.md)"])


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
