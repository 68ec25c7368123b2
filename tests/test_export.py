"""torch.export and torch.compile of a small model built from the package's layers: HiFloat8 fake-quant of the activations, HiFloat4 fake-quant of a weight, and an
SVDQuantLinear layer when svd_quant is built. The exported program round-trips through
torch.export.save / load and runs with the eager results; torch.compile(fullgraph=True) of the
same model gives the eager results bit for bit.
"""
import io
import unittest

import torch

try:
    import amct_ops
except ImportError:  # pragma: no cover
    amct_ops = None


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


class SmallQuantModel(torch.nn.Module):
    """x -> hif8 fake-quant -> linear with a hif4 fake-quantised weight -> [SVDQuantLinear]."""

    def __init__(self, with_svd):
        super().__init__()
        gen = torch.Generator().manual_seed(7)
        self.weight = torch.nn.Parameter(torch.randn(128, 128, generator=gen) * 0.1)
        self.svd = None
        if with_svd:
            from amct_ops.svd_quant import SVDQuantLinear
            base = torch.nn.Linear(128, 64, bias=True)
            with torch.no_grad():
                base.weight.copy_(torch.randn(64, 128, generator=gen) * 0.05)
                base.bias.copy_(torch.randn(64, generator=gen))
            self.svd = SVDQuantLinear.from_linear(base, rank=8)

    def forward(self, x):
        from amct_ops.hifloat4_cast import hifloat4_fake_quant
        from amct_ops.hifloat8_cast import hifloat8_fake_quant
        h = hifloat8_fake_quant(x)
        h = torch.nn.functional.linear(h, hifloat4_fake_quant(self.weight))
        if self.svd is not None:
            h = self.svd(h.to(torch.bfloat16))
        return h


@unittest.skipUnless(_has("hifloat8_cast") and _has("hifloat4_cast"), "hifloat8_cast / hifloat4_cast not built")
class TestExportAndCompile(unittest.TestCase):
    def setUp(self):
        self.model = SmallQuantModel(with_svd=_has("svd_quant")).eval()
        self.x = torch.randn(4, 16, 128, generator=torch.Generator().manual_seed(8))
        with torch.no_grad():
            self.eager = self.model(self.x)

    def assert_same(self, got, what):
        self.assertEqual(got.dtype, self.eager.dtype, what)
        self.assertEqual(got.shape, self.eager.shape, what)
        self.assertTrue(torch.equal(got, self.eager), f"{what}: max |diff| {(got.float() - self.eager.float()).abs().max()}")

    def test_model_uses_the_ops(self):
        """The export graph calls the amct ops (not a decomposition or a Python fallback)."""
        ep = torch.export.export(self.model, (self.x,))
        targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
        self.assertIn("amct.hifloat8_fake_quant.default", targets)
        self.assertIn("amct.hifloat4_fake_quant.default", targets)
        if _has("svd_quant"):
            self.assertTrue(any(t.startswith("amct.svd_quant") for t in targets), targets)

    def test_export_round_trip(self):
        ep = torch.export.export(self.model, (self.x,))
        buf = io.BytesIO()
        torch.export.save(ep, buf)
        buf.seek(0)
        loaded = torch.export.load(buf)
        with torch.no_grad():
            self.assert_same(ep.module()(self.x), "exported program")
            self.assert_same(loaded.module()(self.x), "saved and loaded program")

    def test_export_dynamic_batch(self):
        batch = torch.export.Dim("batch", min=1, max=64)
        ep = torch.export.export(self.model, (self.x,), dynamic_shapes=({0: batch},))
        x2 = torch.randn(7, 16, 128, generator=torch.Generator().manual_seed(9))
        with torch.no_grad():
            self.assertTrue(torch.equal(ep.module()(x2), self.model(x2)))

    def test_compile_fullgraph(self):
        torch._dynamo.reset()
        compiled = torch.compile(self.model, fullgraph=True)
        with torch.no_grad():
            self.assert_same(compiled(self.x), "torch.compile(fullgraph=True)")


if __name__ == "__main__":
    unittest.main()
