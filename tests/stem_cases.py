"""StemIndexer inputs and the test cases of docs/stem_indexer.md §8 (each with its expected
result), shared by the reference and operator tests.

Each case's expected prefixes are written here from the spec's text (never computed by the code
under test): ``expect(b, h, i)`` returns the full valid prefix of row (b, h, i) as a list.
"""
import torch

BLOCK = 128


def cb(tokens):
    return -(-int(tokens) // BLOCK)


def build(q, kv, *, B=None, Nq=32, Nk=2, pattern="R", prompt=None, maxQb=None, maxKb=None, seed=0):
    """(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, num_prompt_tokens) for the given token counts.

    Patterns: R = U(-1, 1) with seeds 17/23/31 (+ seed); VA = zeros with vbias[..., j] = j; Z = zeros.
    """
    B = B or len(q)
    maxQb = maxQb or max(1, cb(max(q)))
    maxKb = maxKb or max(1, cb(max(kv)))
    if pattern == "R":
        gq, gk, gv = (torch.Generator().manual_seed(s + seed) for s in (17, 23, 31))
        qflat = (torch.rand(B, Nq, maxQb, 2048, generator=gq) * 2 - 1).to(torch.bfloat16)
        kflat = (torch.rand(B, Nk, maxKb, 2048, generator=gk) * 2 - 1).to(torch.bfloat16)
        vbias = torch.rand(B, Nk, maxKb, generator=gv) * 2 - 1
    else:
        qflat = torch.zeros(B, Nq, maxQb, 2048, dtype=torch.bfloat16)
        kflat = torch.zeros(B, Nk, maxKb, 2048, dtype=torch.bfloat16)
        vbias = torch.zeros(B, Nk, maxKb)
        if pattern == "VA":
            vbias[...] = torch.arange(maxKb, dtype=torch.float32)
    lens = lambda v: torch.tensor(v, dtype=torch.int32)  # noqa: E731
    return qflat, kflat, vbias, lens(q), lens(kv), None if prompt is None else lens(prompt)


def rng(a, b):
    """[a, b] inclusive."""
    return list(range(a, b + 1))


class Case:
    def __init__(self, name, inputs, expect, causal=True, **attrs):
        self.name = name
        self.inputs = inputs
        self.expect = expect      # (b, h, i) -> prefix list, or None to skip the spec check
        self.causal = causal
        self.attrs = attrs

    def kwargs(self):
        return dict(causal=self.causal, **self.attrs)


def _all(prefix):
    return lambda b, h, i: prefix


def _topk(K, vis):
    """VA pattern Top-K row: 0..3, (vis-4-K)..(vis-1)."""
    return rng(0, 3) + rng(vis - 4 - K, vis - 1)


def _causal_prefix(Qb, Kb):
    def f(b, h, i):
        vis = max(Kb - Qb + i + 1, 0)
        return list(range(vis)) if i < Qb else []
    return f


def _a21_inputs(Nq=32, Nk=2):
    qflat, kflat, vbias, ql, kl, _ = build([128], [8192], Nq=Nq, Nk=Nk, pattern="Z")
    qflat.fill_(2.0 ** -5)
    j = torch.arange(kflat.size(2))
    kflat[...] = ((j % 7).float() * 2.0 ** -5).view(1, 1, -1, 1).to(torch.bfloat16)
    return qflat, kflat, vbias, ql, kl, None


A21_PREFIX = rng(0, 6) + rng(8, 13) + rng(15, 20) + rng(23, 27) + rng(30, 34) + rng(37, 41) + rng(44, 48) + \
    rng(51, 55) + rng(58, 63)


def _z_vbias(values):
    qflat, kflat, vbias, ql, kl, _ = build([128], [8192], pattern="Z")
    vbias[...] = values
    return qflat, kflat, vbias, ql, kl, None


def _a23_vbias(v45):
    v = torch.zeros(64)
    v[4:45] = 2.0
    v[45] = v45
    v[46] = 1 + 2.0 ** -7
    return v


def _a19():
    qflat, kflat, vbias, ql, kl, _ = build([128], [8192], pattern="Z")
    j = torch.arange(64, dtype=torch.float32)
    vbias[0, 0] = j
    vbias[0, 1] = -j
    return qflat, kflat, vbias, ql, kl, None


def _a29(b, h, i):
    if b == 0:
        return rng(0, 3) + rng(18, 63) if i == 0 else []
    if b == 1:
        return list(range(i - 3)) if i >= 4 else []
    return []


def _a03(b, h, i):
    if b == 0:
        return [[0], [0, 1]][i]
    return [0, 1, 2] if i == 0 else []


def acceptance_cases():
    """A01-A33 (A34 and A32's head variants are built by the tests from these)."""
    va = "VA"
    c = [
        Case("A01", lambda: build([1024], [1024]), _causal_prefix(8, 8)),
        Case("A02", lambda: build([256], [512]), _all(rng(0, 3)), causal=False),
        Case("A03", lambda: build([129, 1], [129, 300]), _a03),
        Case("A04", lambda: build([1024], [512]), _causal_prefix(8, 4)),
        Case("A05", lambda: build([0, 128, 256], [512, 0, 512]),
             lambda b, h, i: [] if b < 2 else list(range(3 + i))),
        Case("A06", lambda: build([256], [512], maxQb=4), lambda b, h, i: list(range(3 + i)) if i < 2 else []),
        Case("A07", lambda: build([128], [7040], pattern=va), _all(rng(0, 54)), causal=False),
        Case("A08a", lambda: build([128], [7168], pattern=va), _all(rng(0, 3) + rng(11, 55)), causal=False),
        Case("A08b", lambda: build([128], [7041], pattern=va), _all(rng(0, 3) + rng(11, 55)), causal=False),
        Case("A09", lambda: build([128], [20352], pattern=va), _all(rng(0, 3) + rng(94, 158)), causal=False),
        Case("A10", lambda: build([128], [20352], pattern=va), _all(rng(0, 3) + rng(125, 158)), causal=False,
             alpha=0.5),
        Case("A11", lambda: build([128], [20480], pattern=va), _all(rng(0, 3) + rng(110, 159)), causal=False),
        Case("A12", lambda: build([128], [20480], pattern=va), _all(rng(0, 3) + rng(122, 159)), causal=False,
             alpha=0.75),
        Case("A13", lambda: build([512], [8320], prompt=[17280], pattern=va), _all(rng(0, 64)), causal=False),
        Case("A14", lambda: build([512], [8448], prompt=[17280], pattern=va), _all(rng(0, 3) + rng(5, 65)),
             causal=False),
        Case("A15", lambda: build([25600], [25600], pattern=va), None, alpha=0.5),
        Case("A16a", lambda: build([1], [327680], pattern=va), _all(rng(0, 3) + rng(2300, 2559))),
        Case("A16b", lambda: build([1], [327680], pattern=va), _all(rng(0, 3) + rng(2413, 2559)), alpha=0.5),
        Case("A17a", lambda: build([128], [8192], prompt=[25600], pattern=va), _all(rng(0, 3) + rng(10, 63)),
             causal=False),
        Case("A17b", lambda: build([128], [8192], pattern=va), _all(rng(0, 3) + rng(18, 63)), causal=False),
        Case("A18", lambda: build([128], [8192], prompt=[25600], pattern=va), _all(rng(0, 3) + rng(13, 63)),
             causal=False, alpha=0.5),
        Case("A19", _a19, lambda b, h, i: rng(0, 3) + rng(18, 63) if h < 16 else rng(0, 45) + rng(60, 63),
             causal=False),
        Case("A20", lambda: build([128], [8192], pattern="Z"), _all(rng(0, 45) + rng(60, 63)), causal=False),
        Case("A21p1", _a21_inputs, _all(A21_PREFIX), causal=False),
        Case("A21p2", _a21_inputs, _all(A21_PREFIX), causal=False, topk_score_precision=2),
        Case("A22p1", lambda: _z_vbias(1000 + 0.001 * torch.arange(64, dtype=torch.float32)),
             _all(rng(0, 3) + rng(18, 63)), causal=False),
        Case("A22p2", lambda: _z_vbias(1000 + 0.001 * torch.arange(64, dtype=torch.float32)),
             _all(rng(0, 45) + rng(60, 63)), causal=False, topk_score_precision=2),
        Case("A23p1", lambda: _z_vbias(_a23_vbias(1 + 2.0 ** -8)), _all(rng(0, 44) + [46] + rng(60, 63)),
             causal=False),
        Case("A23p2", lambda: _z_vbias(_a23_vbias(1 + 2.0 ** -8)), _all(rng(0, 44) + [46] + rng(60, 63)),
             causal=False, topk_score_precision=2),
        Case("A24p1", lambda: _z_vbias(_a23_vbias(1 + 3 * 2.0 ** -9)), _all(rng(0, 44) + [46] + rng(60, 63)),
             causal=False),
        Case("A24p2", lambda: _z_vbias(_a23_vbias(1 + 3 * 2.0 ** -9)), _all(rng(0, 45) + rng(60, 63)),
             causal=False, topk_score_precision=2),
        Case("A25", lambda: build([128], [33408], pattern=va), _all(rng(0, 3) + rng(201, 260)), causal=False),
        Case("A26", lambda: build([1024], [25600], pattern=va),
             lambda b, h, i: _topk([26, 26, 25, 25, 25, 25, 25, 25][i], 193 + i), alpha=0.5),
        Case("A27", lambda: build([1], [25600], pattern=va), _all(rng(0, 3) + rng(195, 199)), alpha=0.01),
        Case("A28", lambda: build([129], [8193], pattern=va), _all(rng(0, 3) + rng(18, 64)), causal=False),
        Case("A29", lambda: build([1, 1024, 0], [8192, 512, 128], pattern=va), _a29),
        Case("A30", lambda: build([1024], [512]), _all(rng(0, 3)), causal=False),
        Case("A31", lambda: build([128], [30208], prompt=[32512], pattern=va), _all(rng(0, 3) + rng(213, 235)),
             causal=False, alpha=0.3),
    ]
    return c


# §5 decay table (A15): i -> (vis, K, L).
DECAY_TABLE = {0: (1, 50, 1), 49: (50, 50, 50), 50: (51, 50, 51), 55: (56, 49, 56), 56: (57, 48, 56),
               60: (61, 48, 56), 100: (101, 41, 49), 124: (125, 37, 45), 150: (151, 33, 41), 199: (200, 25, 33)}


def a15_expect(b, h, i):
    """Rows of the §5 decay table (VA pattern): short rows 0..vis-1, Top-K rows 0..3, (vis-4-K)..vis-1."""
    vis, K, L = DECAY_TABLE[i]
    return list(range(vis)) if L == vis else _topk(K, vis)


def random_cases():
    """The random cases R1-R5, compared with exact=False."""
    return [
        Case("R1", lambda: build([1000, 3000], [9000, 20000], Nk=4, prompt=[9000, 25000]), None),
        Case("R2", lambda: build([1000, 3000], [9000, 20000], Nk=4, prompt=[9000, 25000]), None, causal=False,
             topk_score_precision=2, alpha=0.5),
        Case("R3p1", lambda: build([1, 128, 700], [33408, 100, 12000], Nq=64, Nk=8), None, alpha=0.75),
        Case("R3p2", lambda: build([1, 128, 700], [33408, 100, 12000], Nq=64, Nk=8), None, alpha=0.75,
             topk_score_precision=2),
        Case("R4", lambda: build([1], [300000], Nq=64, Nk=2), None),
        Case("R5", lambda: build([8192, 0, 32, 8192], [32768, 32, 0, 192]), None),
    ]


def call_kwargs(case, inputs):
    qflat, kflat, vbias, ql, kl, prompt = inputs
    kw = case.kwargs()
    kw["num_prompt_tokens"] = prompt
    return (qflat, kflat, vbias, ql, kl), kw
