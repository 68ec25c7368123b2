"""Tests of the StemIndexer executable spec ``reference.py`` (docs/stem_indexer.md §5, §6, §8.1).

The reference is loaded from the source tree (no build needed). Expected values are the spec's
tables and acceptance prefixes (tests/stem_cases.py), an exact rational fmaf, and an independent
brute-force selection (float64 numpy scores, Python sorting).

    PYTHONPATH=staging python -m pytest tests/test_stem_indexer_reference.py
"""
import math
import random
import struct
import sys
import unittest
from fractions import Fraction
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stem_cases as sc  # noqa: E402
from amct_testing import load_source_module  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ref = load_source_module("stem_indexer_reference", REPO / "stem_indexer" / "python" / "stem_indexer" / "reference.py")

K_START = {0: 0, 1: 1, 55: 55, 56: 41, 57: 41, 100: 50, 135: 57, 155: 61, 159: 61, 160: 46, 161: 46, 200: 50,
           254: 55, 256: 55, 261: 56, 1024: 132, 2048: 234, 2259: 255, 2260: 256, 2344: 264, 2560: 286}


def f32_nearest(value):
    """An exact rational rounded to binary32, nearest even (independent of struct rounding)."""
    if value == 0:
        return 0.0
    sign = -1 if value < 0 else 1
    a = abs(value)
    e = math.floor(math.log2(a))
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    e = max(e, -126)
    ulp = Fraction(2) ** (e - 23)
    q, r = divmod(a, ulp)
    if r > ulp / 2 or (r == ulp / 2 and q % 2 == 1):
        q += 1
    return sign * float(q * ulp)


class BudgetTableTest(unittest.TestCase):
    def test_k_start_table(self):
        for P, ks in K_START.items():
            self.assertEqual(ref.k_start(P), ks, f"P={P}")

    def test_tier_boundaries_in_tokens(self):
        for tokens, ks in ((7040, 55), (7041, 41), (20352, 61), (20353, 46)):
            self.assertEqual(ref.k_start(ref.cb(tokens)), ks, tokens)

    def test_boundary_rows(self):
        # q = 1024 (Qb = 8), non-causal, kv = prompt.
        rows = {(159, 0.5): [32, 32, 32, 31, 31, 31, 30, 30], (160, 0.75): [35, 35, 35, 34, 34, 34, 34, 34],
                (55, 1.0): [55] * 8, (56, 1.0): [41] * 8}
        for (P, alpha), want in rows.items():
            self.assertEqual([ref.topk_budget(P, i, 8, P, alpha) for i in range(8)], want, (P, alpha))

    def test_decay_table(self):
        for i, (vis, K, L) in sc.DECAY_TABLE.items():
            self.assertEqual(ref.topk_budget(200, i, 200, 200, 0.5), K, i)
            self.assertEqual(ref.visible_blocks(i, 200, 200, True), vis)
            self.assertEqual(vis if vis <= K + 8 else K + 8, L)

    def test_128k_prefill(self):
        want = {132: 132, 133: 131, 500: 104, 1000: 67, 1023: 66}
        for i, K in want.items():
            self.assertEqual(ref.topk_budget(1024, i, 1024, 1024, 0.5), K, i)
        self.assertEqual(ref.topk_budget(1024, 0, 1024, 1024, 0.5), 132)

    def test_fused_step_is_normative(self):
        # P = 254, p = 235, alpha = 0.3: fused 19.999998 -> 19 (separate steps would give 20).
        self.assertEqual(ref.topk_budget(254, 235, 1024, 1024, 0.3), 19)
        self.assertEqual(ref.topk_budget(254, 0, 1, 236, 0.3), 19)

    def test_cap_binds_from_2260(self):
        self.assertEqual(ref.topk_budget(2259, 0, 1, 1, 1.0), 255)
        for P in (2260, 2560):
            self.assertEqual(ref.topk_budget(P, 0, 1, 1, 1.0), 256)

    def test_fma_matches_exact_rational_rounding(self):
        rnd = random.Random(5)
        for _ in range(20000):
            t = ref.f32(rnd.uniform(0, 1))
            d = ref.f32(-rnd.uniform(0, 300))
            c = float(rnd.randint(1, 300))
            want = f32_nearest(Fraction(t) * Fraction(d) + Fraction(c))
            self.assertEqual(ref._fma_f32(t, d, c), want, (t, d, c))

    def test_capacity_table(self):
        table = {(1, 2): 4096, (1, 4): 8192, (2, 2): 8192, (3, 2): 12288, (2, 4): 16384, (1, 8): 16384,
                 (2, 8): 28672, (65536, 2): 226496512, (65536, 4): 452988928, (65536, 8): 905973760}
        for (B, Nk), words in table.items():
            self.assertEqual(ref.metadata_capacity(B, Nk), words)


def run_reference(case, inputs=None):
    inputs = inputs or case.inputs()
    args, kw = sc.call_kwargs(case, inputs)
    return inputs, ref.stem_indexer_reference(*args, **kw)


def assert_prefixes(test, case, out, expect):
    idx, lens = out
    B, Nq, maxQb, _ = idx.shape
    for b in range(B):
        for h in range(Nq):
            for i in range(maxQb):
                want = expect(b, h, i)
                if want is None:
                    continue
                L = int(lens[b, h, i])
                test.assertEqual(idx[b, h, i, :L].tolist(), want, f"{case.name} row (b={b}, h={h}, i={i})")
                test.assertTrue(bool((idx[b, h, i, L:] == -1).all()), f"{case.name} tail (b={b}, h={h}, i={i})")


class AcceptanceTest(unittest.TestCase):
    """The reference gives the spec's prefixes on A01-A31."""

    def test_acceptance_cases(self):
        for case in sc.acceptance_cases():
            with self.subTest(case=case.name):
                _, out = run_reference(case)
                if case.name == "A15":
                    expect = lambda b, h, i: sc.a15_expect(b, h, i) if i in sc.DECAY_TABLE else None  # noqa: E731
                    assert_prefixes(self, case, out, expect)
                else:
                    assert_prefixes(self, case, out, case.expect)

    def test_a15_top_k_rows_follow_the_budget(self):
        case = [c for c in sc.acceptance_cases() if c.name == "A15"][0]
        _, (idx, lens) = run_reference(case)
        self.assertEqual(idx[0, 0, 60, :int(lens[0, 0, 60])].tolist(), sc.rng(0, 3) + sc.rng(9, 60))
        self.assertEqual(idx[0, 0, 199, :int(lens[0, 0, 199])].tolist(), sc.rng(0, 3) + sc.rng(171, 199))

    def test_example_of_section_4(self):
        qflat, kflat, vbias, ql, kl, _ = sc.build([128], [8192], pattern="VA")
        idx, lens = ref.stem_indexer_reference(qflat, kflat, vbias, ql, kl, causal=False)
        self.assertEqual(idx[0, 0, 0, :50].tolist(), sc.rng(0, 3) + sc.rng(18, 63))
        self.assertEqual(idx[0, 0, 0, 50:].tolist(), [-1] * 14)
        self.assertEqual(int(lens[0, 0, 0]), 50)


def brute_force(qflat, kflat, vbias, q_lens, kv_lens, prompt, causal, alpha, precision):
    """Independent selection: float64 numpy dot products, f32 rounding of the two spec steps,
    Python sort by (-score, index)."""
    B, Nq, maxQb, _ = qflat.shape
    Nk, maxKb = kflat.shape[1], kflat.shape[2]
    G = Nq // Nk
    q = qflat.float().numpy().astype(np.float64)
    k = kflat.float().numpy().astype(np.float64)
    vb = vbias.numpy()
    idx = np.full((B, Nq, maxQb, maxKb), -1, dtype=np.int32)
    lens = np.zeros((B, Nq, maxQb), dtype=np.int32)
    for b in range(B):
        Qb, Kb, P = ref.cb(q_lens[b]), ref.cb(kv_lens[b]), ref.cb(prompt[b])
        for h in range(Nq):
            n = h // G
            for i in range(min(Qb, maxQb) if Kb else 0):
                vis = Kb if not causal else max(Kb - Qb + i + 1, 0)
                if vis == 0:
                    continue
                K = ref.topk_budget(P, i, Qb, Kb, alpha)
                if vis <= K + 8:
                    chosen = list(range(vis))
                else:
                    dots = k[b, n, :vis] @ q[b, h, i]
                    s = (dots.astype(np.float32) * np.float32(2 ** -6)) + vb[b, n, :vis].astype(np.float32)
                    if precision == 2:
                        s = torch.from_numpy(s).to(torch.bfloat16).float().numpy()
                    cand = sorted(range(4, vis - 4), key=lambda j: (-float(s[j]), j))[:K]
                    chosen = sorted(set(range(4)) | set(cand) | set(range(vis - 4, vis)))
                idx[b, h, i, :len(chosen)] = chosen
                lens[b, h, i] = len(chosen)
    return torch.from_numpy(idx), torch.from_numpy(lens)


class BruteForceTest(unittest.TestCase):
    """The reference against an independent selection on random inputs (near-ties tolerated)."""

    def check(self, q, kv, prompt, causal, alpha, precision, Nq=32, Nk=4, seed=0):
        qflat, kflat, vbias, ql, kl, pt = sc.build(q, kv, Nq=Nq, Nk=Nk, prompt=prompt, seed=seed)
        out = ref.stem_indexer_reference(qflat, kflat, vbias, ql, kl, num_prompt_tokens=pt, causal=causal,
                                         alpha=alpha, topk_score_precision=precision)
        brute = brute_force(qflat, kflat, vbias, q, kv, prompt, causal, alpha, precision)
        ref.compare_stem_indexer_outputs(brute, out, qflat, kflat, vbias, ql, kl, num_prompt_tokens=pt,
                                         causal=causal, topk_score_precision=precision)

    def test_causal_fp32(self):
        self.check([1000, 300], [9000, 12000], [9000, 20000], True, 1.0, 1)

    def test_non_causal_bf16_alpha_half(self):
        self.check([700], [12000], [25000], False, 0.5, 2, Nq=64, Nk=8, seed=3)

    def test_decode_long(self):
        self.check([1], [40000], [40000], True, 0.75, 1, Nq=32, Nk=2, seed=5)


class KeysTest(unittest.TestCase):
    def test_key_order_of_signed_zero_infinities_and_nan(self):
        s = torch.tensor([float("nan"), -float("inf"), -1.0, -0.0, 0.0, 1.0, float("inf")])
        for precision in (1, 2):
            keys = ref._keys(s, precision).tolist()
            self.assertEqual(keys[0], 0)
            self.assertEqual(keys[1:], sorted(keys[1:]), precision)
            self.assertEqual(len(set(keys[1:])), 6, precision)

    def test_bf16_rounding_is_to_nearest_even(self):
        # 1 + 2^-8 is a tie between 1 and 1 + 2^-7: even gives 1.0 (A23's design).
        s = torch.tensor([1 + 2.0 ** -8, 1.0])
        k = ref._keys(s, 2)
        self.assertEqual(int(k[0]), int(k[1]))
        self.assertEqual(struct.unpack("<f", struct.pack("<f", 1 + 2.0 ** -8))[0], 1 + 2.0 ** -8)


if __name__ == "__main__":
    unittest.main()
