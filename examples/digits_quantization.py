"""Accuracy of a small classifier when its weights and activations are quantized.

A two-layer perceptron is trained in a few seconds on scikit-learn's bundled handwritten digits
(``sklearn.datasets.load_digits``: 1797 images of 8x8 pixels, shipped with scikit-learn, no
download), then evaluated on the held-out quarter of the images:

* in float32 (the baseline);
* with every Linear layer's weight and input fake-quantized by HiFloat8
  (``hifloat8_fake_quant``), HiFloat4 (``hifloat4_fake_quant``, blocks of 64 along the input
  features) and MXFP4 (``mxfp4_quantize`` then ``mxfp4_dequantize``, blocks of 32);
* with every Linear replaced by ``SVDQuantLinear`` (a bf16 low-rank branch plus an MXFP4
  residual, activations quantized to MXFP4 inside ``svd_quant``).

Run ``python examples/digits_quantization.py`` (``--fast`` trains for fewer epochs, ``--json``
prints the results as JSON, ``--plot out.png`` draws them; needs amct_ops, scikit-learn and, for
``--plot``, matplotlib).
"""
import argparse
import json
import sys
import time

import torch

HIDDEN = 128  # a multiple of 64, so HiFloat4 blocks tile the hidden activations exactly


def load_data(seed):
    """(train_x, train_y, test_x, test_y): pixels scaled to [0, 1], a fixed 75/25 split."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0      # (1797, 64)
    y = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(seed))
    cut = len(y) * 3 // 4
    train, test = order[:cut], order[cut:]
    return x[train], y[train], x[test], y[test]


def train(train_x, train_y, epochs, seed):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, 10))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for batch in torch.randperm(len(train_y), generator=g).split(64):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(train_x[batch]), train_y[batch])
            loss.backward()
            opt.step()
    return model.eval()


def mxfp4_round_trip(t):
    from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize

    codes, scales = mxfp4_quantize(t)
    return mxfp4_dequantize(codes, scales, dtype=torch.float32)


def fake_quantizers():
    """{format name: fake-quant function of a float32 tensor, blocks along the last dim}."""
    from amct_ops.hifloat4_cast import hifloat4_fake_quant
    from amct_ops.hifloat8_cast import hifloat8_fake_quant

    return {
        "HiFloat8": hifloat8_fake_quant,
        "HiFloat4": lambda t: hifloat4_fake_quant(t, qdim=-1),
        "MXFP4": mxfp4_round_trip,
    }


class FakeQuantLinear(torch.nn.Module):
    """``linear`` with its weight (rows along the input features) and its input fake-quantized."""

    def __init__(self, linear, quantize):
        super().__init__()
        self.linear, self.quantize = linear, quantize
        self.register_buffer("weight_q", quantize(linear.weight.detach()))

    def forward(self, x):
        return torch.nn.functional.linear(self.quantize(x), self.weight_q, self.linear.bias)


def replace_linears(model, make):
    return torch.nn.Sequential(*[make(m) if isinstance(m, torch.nn.Linear) else m for m in model])


def svd_quant_layer(linear, rank):
    from amct_ops.svd_quant import SVDQuantLinear

    return SVDQuantLinear.from_linear(linear, rank=min(rank, *linear.weight.shape))


@torch.no_grad()
def accuracy(model, x, y):
    return float((model(x).argmax(dim=1) == y).float().mean())


def run(epochs=30, seed=0, rank=8):
    """Train, then evaluate every format: a dict with the accuracy rows and the timings."""
    # The model is tiny: one thread avoids waking worker threads for every small matmul.
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    train_x, train_y, test_x, test_y = load_data(seed)
    model = train(train_x, train_y, epochs, seed)
    trained = time.perf_counter() - t0
    rows = [{"format": "float32", "weights": "float32", "activations": "float32",
             "accuracy": accuracy(model, test_x, test_y)}]
    for name, quantize in fake_quantizers().items():
        q = replace_linears(model, lambda m, f=quantize: FakeQuantLinear(m, f))
        rows.append({"format": name, "weights": name, "activations": name,
                     "accuracy": accuracy(q, test_x, test_y)})
    q = replace_linears(model, lambda m: svd_quant_layer(m, rank))
    rows.append({"format": f"SVDQuant (rank {rank})", "weights": f"MXFP4 + bf16 rank-{rank} branch",
                 "activations": "MXFP4 (bf16 in the low-rank branch)",
                 "accuracy": accuracy(q, test_x, test_y)})
    return {"train_images": len(train_y), "test_images": len(test_y), "epochs": epochs,
            "seed": seed, "train_seconds": trained, "rows": rows}


def print_table(result):
    base = result["rows"][0]["accuracy"]
    print(f"digits: {result['train_images']} training and {result['test_images']} test images, "
          f"{result['epochs']} epochs ({result['train_seconds']:.1f} s)")
    print()
    print("| format | weights | activations | test accuracy | vs float32 |")
    print("|---|---|---|--:|--:|")
    for r in result["rows"]:
        delta = r["accuracy"] - base
        print(f"| {r['format']} | {r['weights']} | {r['activations']} | {r['accuracy']:.4f} | "
              f"{delta:+.4f} |")


def plot(result, path):
    try:
        import matplotlib
    except ImportError:
        sys.exit("--plot needs matplotlib: pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["format"] for r in result["rows"]]
    acc = [r["accuracy"] for r in result["rows"]]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    bars = ax.bar(names, acc, color=["0.5"] + ["C0"] * (len(names) - 1))
    ax.bar_label(bars, labels=[f"{a:.3f}" for a in acc], fontsize=8)
    ax.set_ylim(max(0.0, min(acc) - 0.1), 1.0)
    ax.set_ylabel("test accuracy")
    ax.set_title(f"digits MLP (64-{HIDDEN}-10), weights and activations quantized", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fast", action="store_true", help="train for 8 epochs instead of 30")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default 30; 8 with --fast)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rank", type=int, default=8, help="rank of the SVDQuant low-rank branch")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument("--plot", metavar="PNG", help="also draw the accuracies to PNG")
    args = p.parse_args(argv)
    epochs = args.epochs if args.epochs is not None else (8 if args.fast else 30)
    result = run(epochs=epochs, seed=args.seed, rank=args.rank)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print_table(result)
    if args.plot:
        plot(result, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
