"""Self-test of the StemIndexer operators, run by ``python -m amct_ops selftest``.

Follows the op-package protocol of :mod:`amct_ops._cli`. Each case runs the op on ``device``
(inputs built on the CPU and moved there), checks the output contracts (int32, contiguous,
shapes, device) and compares with :mod:`amct_ops.stem_indexer.reference` run on the CPU:
exactly for the patterned acceptance cases, whose expected prefixes are also written here from
the spec (so that a reference bug cannot hide an op bug), and with the spec's near-tie tolerance
for random inputs. The metadata op is checked against the spec's worked example word for word.
On the CPU the same cases also run the fused AscendC kernel through the kernel sim
(``_npu_stem_indexer_emulated``), which the CPU op does not use (it selects natively).
"""
import torch

from amct_ops._cli import result
from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
from amct_ops.stem_indexer import reference as ref

OP, META_OP, EMULATED_OP = "npu_stem_indexer", "npu_stem_indexer_metadata", "_npu_stem_indexer_emulated"


def _lens(v):
    return torch.tensor(v, dtype=torch.int32)


def _inputs(q, kv, Nq=32, Nk=2, pattern="VA", seed=17):
    maxQb, maxKb = max(1, ref.cb(max(q))), max(1, ref.cb(max(kv)))
    B = len(q)
    if pattern == "R":
        g = torch.Generator().manual_seed(seed)
        qflat = (torch.rand(B, Nq, maxQb, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
        kflat = (torch.rand(B, Nk, maxKb, 2048, generator=g) * 2 - 1).to(torch.bfloat16)
        vbias = torch.rand(B, Nk, maxKb, generator=g) * 2 - 1
    else:
        qflat = torch.zeros(B, Nq, maxQb, 2048, dtype=torch.bfloat16)
        kflat = torch.zeros(B, Nk, maxKb, 2048, dtype=torch.bfloat16)
        vbias = torch.arange(maxKb, dtype=torch.float32).expand(B, Nk, maxKb).contiguous()
    return qflat, kflat, vbias, _lens(q), _lens(kv)


def _a21():
    qflat, kflat, vbias, ql, kl = _inputs([128], [8192])
    qflat.fill_(2.0 ** -5)
    j = torch.arange(kflat.size(2))
    kflat[...] = ((j % 7).float() * 2.0 ** -5).view(1, 1, -1, 1).to(torch.bfloat16)
    vbias.zero_()
    return qflat, kflat, vbias, ql, kl


def _r(a, b):
    return list(range(a, b + 1))


A21 = _r(0, 6) + _r(8, 13) + _r(15, 20) + _r(23, 27) + _r(30, 34) + _r(37, 41) + _r(44, 48) + _r(51, 55) + _r(58, 63)

# name (the cases of docs/stem_indexer.md §8.1 and §8.2), inputs, attributes, num_prompt_tokens,
# (b, h, i) -> prefix written in the spec (or None)
CASES = (
    ("A07 P=55 short path", lambda: _inputs([128], [7040]), dict(causal=False), None, lambda b, h, i: _r(0, 54)),
    ("A08 P=56 tier", lambda: _inputs([128], [7168]), dict(causal=False), None, lambda b, h, i: _r(0, 3) + _r(11, 55)),
    ("A17 prompt 25600", lambda: _inputs([128], [8192]), dict(causal=False), [25600],
     lambda b, h, i: _r(0, 3) + _r(10, 63)),
    ("A21 ties, precision 1", _a21, dict(causal=False), None, lambda b, h, i: A21),
    ("A21 ties, precision 2", _a21, dict(causal=False, topk_score_precision=2), None, lambda b, h, i: A21),
    ("A26 causal decay", lambda: _inputs([1024], [25600]), dict(alpha=0.5), None,
     lambda b, h, i: _r(0, 3) + _r(193 + i - 4 - [26, 26, 25, 25, 25, 25, 25, 25][i], 192 + i)),
    ("A29 mixed batch", lambda: _inputs([1, 1024, 0], [8192, 512, 128]), dict(), None, None),
    ("R1 random GQA 32/4", lambda: _inputs([1000, 3000], [9000, 20000], Nk=4, pattern="R"), dict(), [9000, 25000],
     None),
)


def _check_contracts(out, qflat, kflat, device):
    idx, lens = out
    want = (tuple(qflat.shape[:3]) + (kflat.size(2),), tuple(qflat.shape[:3]))
    for t, shape, name in ((idx, want[0], "sparse_indices"), (lens, want[1], "sparse_seq_len")):
        if t.dtype != torch.int32 or tuple(t.shape) != shape or not t.is_contiguous() or t.device != device:
            return f"{name}: {t.dtype}{tuple(t.shape)} on {t.device}, expected int32{shape} contiguous on {device}"
    return None


def _spec_mismatch(idx, lens, expect):
    B, Nq, maxQb, _ = idx.shape
    for b in range(B):
        for h in range(Nq):
            for i in range(maxQb):
                L = int(lens[b, h, i])
                if idx[b, h, i, :L].tolist() != expect(b, h, i):
                    return f"row (b={b}, h={h}, i={i}) differs from the spec's prefix"
    return None


def _run_case(name, make, attrs, prompt, expect, device, op=OP):
    run_op = npu_stem_indexer if op == OP else getattr(torch.ops.amct, op)
    try:
        qflat, kflat, vbias, ql, kl = make()
        pt = None if prompt is None else _lens(prompt)
        md = npu_stem_indexer_metadata(ql.to(device), kl.to(device), qflat.size(1), kflat.size(1),
                                       causal=attrs.get("causal", True))
        dev = [t.to(device) for t in (qflat, kflat, vbias, ql, kl)]
        out = run_op(*dev, num_prompt_tokens=None if pt is None else pt.to(device), metadata=md, **attrs)
    except Exception as exc:  # reported, never raised
        return result(op, name, "bfloat16", False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    bad = _check_contracts(out, qflat, kflat, torch.device(device))
    if bad:
        return result(op, name, "bfloat16", False, bad, out[0].device)
    got = tuple(t.cpu() for t in out)
    want = ref.stem_indexer_reference(qflat, kflat, vbias, ql, kl, num_prompt_tokens=pt, **attrs)
    exact = not name.startswith("R")
    try:
        ref.compare_stem_indexer_outputs(got, want, qflat, kflat, vbias, ql, kl, num_prompt_tokens=pt,
                                         causal=attrs.get("causal", True),
                                         topk_score_precision=attrs.get("topk_score_precision", 1), exact=exact)
    except AssertionError as exc:
        return result(op, name, "bfloat16", False, f"vs reference: {exc}", out[0].device)
    if expect is not None:
        bad = _spec_mismatch(*got, expect)
        if bad:
            return result(op, name, "bfloat16", False, bad, out[0].device)
    rows = int((got[1] > 0).sum())
    return result(op, name, "bfloat16", True, f"{rows} non-empty rows, {'exact' if exact else 'within tolerance'}",
                  out[0].device)


def _metadata_example(device):
    """docs/stem_indexer.md §6: B=1, Nq=32, Nk=2, q = kv = 1024, causal -> 1 section, 4 records."""
    name = "section 6 example"
    try:
        lens = _lens([1024]).to(device)
        md = npu_stem_indexer_metadata(lens, lens, 32, 2, causal=True)
    except Exception as exc:
        return result(META_OP, name, "int32", False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    want = [0] * 4096
    want[0] = 1
    for c, rec in enumerate(([0, 0, 0, 0, 1, 0], [0, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1, 0], [1, 1, 0, 2, 0, 0])):
        want[16 + 16 * c: 22 + 16 * c] = rec
    got = md.cpu().tolist()
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    passed = md.dtype == torch.int32 and len(got) == 4096 and not bad
    detail = "4096 words as the spec" if passed else f"{len(got)} words, first difference at {bad[:1]}"
    return result(META_OP, name, "int32", passed, detail, md.device)


def run(device):
    device = str(device)
    out = [_metadata_example(device)]
    ops = (OP, EMULATED_OP) if torch.device(device).type == "cpu" else (OP,)
    out += [_run_case(name, make, attrs, prompt, expect, device, op)
            for op in ops for name, make, attrs, prompt, expect in CASES]
    return out
