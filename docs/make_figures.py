"""Regenerate the quantization-error figures of docs/img/: ``python docs/make_figures.py``.

* ``quant_error_hif8.png``: the worst relative error |q(x) − x| / |x| per quarter binade of |x|, for HiFloat8
  (``hifloat8_fake_quant`` on float32), torch's float8_e4m3fn and float8_e5m2 casts. A value that
  becomes 0, Inf or NaN counts as error 1 (all of it lost).
* ``quant_error_hif4_mxfp4.png``: the block formats HiFloat4 (blocks of 64) and MXFP4 (blocks of
  32), on blocks of Gaussian values: left, the median relative error against the blocks' scale
  (the formats' range); right, against an element's magnitude relative to its block's largest
  one (the range within one block).

The throughput figures ``bench_<package>.png`` come from the same run as docs/performance.md:
``python -m amct_ops bench --all --markdown --output docs/performance.md --plot-dir docs/img``.

Needs an installed (or staged) amct_ops and matplotlib.
"""
import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

IMG = Path(__file__).resolve().parent / "img"


def relative_error(q, x):
    """|q − x| / |x| in float64, 1 where q is not finite or x was flushed to 0."""
    q, x = q.double(), x.double()
    err = (q - x).abs() / x.abs()
    lost = ~torch.isfinite(q) | ((q == 0) & (x != 0))
    return torch.where(lost, torch.ones_like(err), err).clamp(max=1.0)


def hif8_figure(path):
    from amct_ops.hifloat8_cast import hifloat8_fake_quant

    x = torch.logspace(-27, 18, 40000, base=2.0, dtype=torch.float64).float()
    curves = {
        "HiFloat8 (amct_ops)": hifloat8_fake_quant(x),
        "float8_e4m3fn (torch)": x.to(torch.float8_e4m3fn).float(),
        "float8_e5m2 (torch)": x.to(torch.float8_e5m2).float(),
    }
    # The error of single values is a sawtooth; draw its envelope, the worst case per 1/4 binade.
    edges = torch.logspace(-27, 18, 45 * 4 + 1, base=2.0, dtype=torch.float64)
    idx = torch.bucketize(x.double(), edges)
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    for (name, q), style in zip(curves.items(), ("-", "--", ":")):
        err = relative_error(q, x)
        worst = [float(err[idx == b].max()) for b in range(1, len(edges))]
        ax.stairs(worst, edges.numpy(), baseline=None, linestyle=style, linewidth=1.4, label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(1e-2, 1.5)
    ax.set_xlabel("|x| (float32 input)")
    ax.set_ylabel("worst relative error |q(x) − x| / |x|")
    ax.set_title("8-bit formats: worst relative error per quarter binade (1 = flushed to 0, Inf or NaN)",
                 fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mxfp4_round_trip(t):
    from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize

    return mxfp4_dequantize(*mxfp4_quantize(t), dtype=torch.float32)


def block_quantizers():
    from amct_ops.hifloat4_cast import hifloat4_fake_quant

    return {"HiFloat4 (64-element blocks)": (hifloat4_fake_quant, 64),
            "MXFP4 (32-element blocks)": (mxfp4_round_trip, 32)}


def median_by_bins(keys, values, edges):
    idx = torch.bucketize(keys, edges)
    mids, meds = [], []
    for b in range(1, len(edges)):
        sel = values[idx == b]
        if sel.numel():
            mids.append(float((edges[b - 1] * edges[b]).sqrt()))
            meds.append(float(sel.median()))
    return mids, meds


def block_figure(path, blocks=2048, seed=0):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(blocks, 64, generator=g, dtype=torch.float64)
    base[base == 0] = 1.0
    scales = torch.logspace(-160, 140, 301, base=2.0, dtype=torch.float64)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.9))
    for name, (quantize, block) in block_quantizers().items():
        # Left: Gaussian blocks of standard deviation s, for s across the float32 range.
        med = []
        for s in scales:
            x = (base[:64] * s).float()
            ok = (x != 0) & torch.isfinite(x)
            med.append(float(relative_error(quantize(x), x)[ok].median()) if bool(ok.any()) else 1.0)
        left.plot(scales, med, label=name)
        # Right: within unit-scale blocks, the error against |x| / (its block's max |x|).
        x = base.float()
        rel = relative_error(quantize(x), x).reshape(-1)
        bmax = x.abs().reshape(blocks, 64 // block, block).amax(dim=2, keepdim=True)
        ratio = (x.abs().reshape(blocks, 64 // block, block) / bmax).reshape(-1).double()
        edges = torch.logspace(-12, 0, 49, base=2.0, dtype=torch.float64)
        edges[-1] = 1.0 + 1e-9
        mids, meds = median_by_bins(ratio, rel, edges)
        right.plot(mids, meds, marker=".", label=name)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(5e-3, 1.5)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_ylabel("median relative error")
    left.set_xlabel("standard deviation of the block's Gaussian values")
    left.set_title("range: blocks at every scale (1 = flushed or lost)", fontsize=9)
    right.set_xlabel("|x| / largest |x| of its block")
    right.set_title("within a block (Gaussian blocks of scale 1)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    IMG.mkdir(exist_ok=True)
    torch.set_num_threads(1)
    hif8_figure(IMG / "quant_error_hif8.png")
    block_figure(IMG / "quant_error_hif4_mxfp4.png")


if __name__ == "__main__":
    main()
