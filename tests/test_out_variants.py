"""The out= overloads of every operator, one parametrised test set (docs/architecture.md,
"out= overloads").

Each ``torch.ops.amct.<op>.out`` follows the same rule, checked here for all eight of them with
the exact messages: the result's bits (against ``reference.py``) written into the given tensor
and that tensor returned; an out without elements resized; any strides accepted; a wrong
shape, dtype or device raising ``<op>: <name> <expected>, got <actual>``; no out sharing memory
with an input (fake-quant's may be its input itself); Meta; ``torch.library.opcheck`` (schema,
fake tensors, autograd registration, AOT dispatch static and dynamic);
``torch.func.functionalize``; ``torch.compile`` (aot_eager, and inductor with dynamic shapes);
``torch.export``.
"""
import sys
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal, load_source_module  # noqa: E402

try:
    import amct_ops
except ImportError:  # pragma: no cover
    amct_ops = None

REPO = Path(__file__).resolve().parents[1]
BF16, F16, F32, U8 = torch.bfloat16, torch.float16, torch.float32, torch.uint8


def _ref(package):
    return load_source_module(f"{package}_reference_out", REPO / package / "python" / package / "reference.py")


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


@dataclass
class OutOp:
    """One .out overload: its positional inputs, its out names with (dtype, shape, allowed dtype
    text) each, the reference result (a tuple, one tensor per out), and whether it may run in place."""
    name: str
    package: str
    inputs: Callable[[], tuple]
    outs: dict
    reference: Callable[..., tuple]
    in_place: bool = False

    @property
    def op(self):
        return getattr(torch.ops.amct, self.name).out

    def call(self, args, outs):
        got = self.op(*args, **dict(zip(self.outs, outs)))
        return got if isinstance(got, tuple) else (got,)

    def fresh_outs(self, fill=True):
        outs = []
        for dtype, shape, _ in self.outs.values():
            t = torch.empty(shape, dtype=dtype)
            if fill:
                t.view(U8).fill_(0x5A)  # garbage the op must overwrite
            outs.append(t)
        return outs


def _finite(x):
    return torch.where(x.isfinite(), x, torch.zeros_like(x))


def _codes():
    codes = torch.randint(0, 256, (6, 128), generator=torch.Generator().manual_seed(3), dtype=torch.int32).to(U8)
    codes[codes == 0x80] = 0x81  # no NaN: opcheck compares with assert_close
    return codes


def _x(dtype, scale=50.0, seed=1):
    return (torch.randn(6, 128, generator=torch.Generator().manual_seed(seed)) * scale).to(dtype)


def all_ops():
    ops = []
    if _has("hifloat8_cast"):
        r8 = _ref("hifloat8_cast")
        ops += [
            OutOp("encode_to_hifloat8", "hifloat8_cast", lambda: (_x(BF16),), {"out": (U8, (6, 128), "uint8")},
                  lambda x: (r8.encode_to_hifloat8_ref(x),)),
            OutOp("decode_from_hifloat8", "hifloat8_cast", lambda: (_codes(), F32),
                  {"out": (F32, (6, 128), "float32")}, lambda c, d: (r8.decode_from_hifloat8_ref(c, d),)),
            OutOp("hifloat8_fake_quant", "hifloat8_cast", lambda: (_x(F32),), {"out": (F32, (6, 128), "float32")},
                  lambda x: (r8.hifloat8_fake_quant_ref(x),), in_place=True),
        ]
    if _has("hifloat4_cast"):
        r4 = _ref("hifloat4_cast")
        x4 = lambda: _x(F32, 3.0, 2)  # noqa: E731
        ops += [
            OutOp("hifloat4_fake_quant", "hifloat4_cast", lambda: (x4(), -1), {"out": (F32, (6, 128), "float32")},
                  lambda x, q: (r4.hifloat4_fake_quant_ref(x, q),), in_place=True),
            OutOp("hifloat4_pack", "hifloat4_cast", lambda: (x4(),),
                  {"scale": (U8, (6, 2, 4), "uint8"), "value": (U8, (6, 64), "uint8")},
                  lambda x: tuple(r4.hifloat4_pack_ref(x))),
            OutOp("hifloat4_unpack", "hifloat4_cast", lambda: (*r4.hifloat4_pack_ref(x4()), F16),
                  {"out": (F16, (6, 128), "float16")}, lambda s, v, d: (r4.hifloat4_unpack_ref(s, v, d),)),
        ]
    if _has("svd_quant"):
        rq = _ref("svd_quant")
        xq = lambda: _x(BF16, 4.0, 4)  # noqa: E731
        ops += [
            OutOp("mxfp4_quantize", "svd_quant", lambda: (xq(), "rint"),
                  {"codes": (U8, (6, 64), "uint8 or float4_e2m1fn_x2"),
                   "scales": (U8, (6, 2, 2), "uint8 or float8_e8m0fnu")},
                  lambda x, m: tuple(rq.mxfp4_quantize_ref(x, m))),
            OutOp("mxfp4_dequantize", "svd_quant", lambda: (*rq.mxfp4_quantize_ref(xq()), F32),
                  {"out": (F32, (6, 128), "float32")}, lambda c, s, d: (rq.mxfp4_dequantize_ref(c, s, d),)),
        ]
    return ops


def _shape_text(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestOutRule(unittest.TestCase):
    """The same cases for every .out overload."""

    def setUp(self):
        self.ops = all_ops()
        self.assertEqual(len(self.ops), 3 * _has("hifloat8_cast") + 3 * _has("hifloat4_cast") + 2 * _has("svd_quant"))

    def check_values(self, spec, outs, got, what):
        want = spec.reference(*spec.inputs())
        self.assertEqual(len(got), len(outs))
        for name, o, g, w in zip(spec.outs, outs, got, want):
            self.assertIs(g, o, f"{spec.name} {what}: returns {name} itself")
            assert_bits_equal(self, o, w, f"{spec.name} {what} {name}")

    def test_writes_and_returns_out(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                outs = spec.fresh_outs()
                self.check_values(spec, outs, spec.call(spec.inputs(), outs), "out=")

    def test_empty_out_is_resized(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                outs = [torch.empty(0, dtype=dtype) for dtype, _, _ in spec.outs.values()]
                self.check_values(spec, outs, spec.call(spec.inputs(), outs), "resized out")

    def test_non_contiguous_out(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                bases, outs = [], []
                for dtype, shape, _ in spec.outs.values():
                    base = torch.zeros((*shape[:-1], 2 * shape[-1]), dtype=dtype)
                    bases.append(base)
                    outs.append(base[..., ::2])  # every other element of the last dim
                self.assertFalse(any(o.is_contiguous() for o in outs))
                self.check_values(spec, outs, spec.call(spec.inputs(), outs), "strided out")
                for base in bases:  # the elements between were left alone
                    self.assertTrue(bool((base[..., 1::2] == 0).all()), f"{spec.name}: wrote between")

    def check_raises(self, call, message):
        with self.assertRaises(RuntimeError) as cm:
            call()
        self.assertEqual(str(cm.exception).splitlines()[0], message)

    def test_wrong_shape(self):
        for spec in self.ops:
            for i, (name, (dtype, shape, _)) in enumerate(spec.outs.items()):
                for bad in ((*shape[:-1], shape[-1] + 1), (shape[0] * shape[1],) + tuple(shape[2:])):
                    with self.subTest(op=spec.name, out=name, shape=bad):
                        outs = spec.fresh_outs()
                        outs[i] = torch.empty(bad, dtype=dtype)
                        self.check_raises(lambda: spec.call(spec.inputs(), outs),
                                          f"{spec.name}: {name} shape must be {_shape_text(shape)} (or an empty "
                                          f"tensor, which is resized to it), got {_shape_text(bad)}")

    def test_wrong_dtype(self):
        for spec in self.ops:
            for i, (name, (_, shape, allowed)) in enumerate(spec.outs.items()):
                with self.subTest(op=spec.name, out=name):
                    outs = spec.fresh_outs()
                    outs[i] = torch.empty(shape, dtype=torch.float64)
                    self.check_raises(lambda: spec.call(spec.inputs(), outs),
                                      f"{spec.name}: {name} dtype must be {allowed}, got float64")

    def test_wrong_device(self):
        for spec in self.ops:
            for i, (name, (dtype, shape, _)) in enumerate(spec.outs.items()):
                with self.subTest(op=spec.name, out=name):
                    outs = spec.fresh_outs()
                    outs[i] = torch.empty(shape, dtype=dtype, device="meta")
                    self.check_raises(lambda: spec.call(spec.inputs(), outs),
                                      f"{spec.name}: {name} device must be cpu, got meta")

    def test_expanded_out(self):
        for spec in self.ops:
            for i, (name, (dtype, shape, _)) in enumerate(spec.outs.items()):
                with self.subTest(op=spec.name, out=name):
                    outs = spec.fresh_outs()
                    outs[i] = torch.empty(1, dtype=dtype).expand(shape)
                    strides = _shape_text([0] * len(shape))
                    self.check_raises(lambda: spec.call(spec.inputs(), outs),
                                      f"{spec.name}: {name} must not have elements sharing memory (an expanded "
                                      f"tensor), got strides {strides}")

    def test_out_sharing_memory_with_the_input(self):
        for spec in self.ops:
            args = list(spec.inputs())
            first = args[0]
            input_name = spec.op._schema.arguments[0].name
            name, (dtype, shape, _) = next(iter(spec.outs.items()))
            # The first input and the first out carved from one byte buffer, out starting inside it.
            nbytes_in = first.numel() * first.element_size()
            nbytes_out = int(torch.empty(shape, dtype=dtype).numel() * torch.empty(0, dtype=dtype).element_size())
            buf = torch.zeros(nbytes_in + nbytes_out + 64, dtype=U8)
            buf[:nbytes_in].copy_(first.reshape(-1).view(U8))
            args[0] = buf[:nbytes_in].view(first.dtype).view(first.shape)
            offset = 32
            outs = spec.fresh_outs()
            outs[0] = buf[offset:offset + nbytes_out].view(dtype).view(shape)
            with self.subTest(op=spec.name, case="partial overlap"):
                expected = (f"{spec.name}: {name} must be {input_name} itself or not share memory with it, got a "
                            f"partial overlap") if spec.in_place else \
                    f"{spec.name}: {name} must not share memory with {input_name}, got an overlap"
                self.check_raises(lambda: spec.call(args, outs), expected)
            if spec.in_place:
                with self.subTest(op=spec.name, case="in place"):
                    x = spec.inputs()[0].clone()
                    want = spec.reference(*spec.inputs())
                    got = spec.call((x, *spec.inputs()[1:]), [x])
                    self.assertIs(got[0], x)
                    assert_bits_equal(self, x, want[0], f"{spec.name} in place")

    def test_meta(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                args = tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in spec.inputs())
                outs = [torch.empty(0, dtype=dtype, device="meta") for dtype, _, _ in spec.outs.values()]
                got = spec.call(args, outs)
                for o, g, (dtype, shape, _) in zip(outs, got, spec.outs.values()):
                    self.assertIs(g, o)
                    self.assertEqual((tuple(o.shape), o.dtype, o.device.type), (shape, dtype, "meta"))
                name, (dtype, shape, _) = next(iter(spec.outs.items()))
                bad = [torch.empty((*shape[:-1], shape[-1] + 1), dtype=dtype, device="meta")] + outs[1:]
                self.check_raises(lambda: spec.call(args, bad),
                                  f"{spec.name}: {name} shape must be {_shape_text(shape)} (or an empty tensor, "
                                  f"which is resized to it), got {_shape_text((*shape[:-1], shape[-1] + 1))}")

    def test_opcheck(self):
        for spec in self.ops:
            for empty in (False, True):
                with self.subTest(op=spec.name, empty_out=empty):
                    outs = [torch.empty(0, dtype=d) for d, _, _ in spec.outs.values()] if empty else spec.fresh_outs()
                    torch.library.opcheck(spec.op, spec.inputs(), dict(zip(spec.outs, outs)))

    def test_functionalize(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                outs = spec.fresh_outs()

                def f(*a):
                    return spec.call(a[:-len(outs)], list(a[-len(outs):]))

                got = torch.func.functionalize(f)(*spec.inputs(), *outs)
                for o, w in zip(outs, spec.reference(*spec.inputs())):
                    assert_bits_equal(self, o, w, f"{spec.name} functionalized out")
                self.assertEqual(len(got), len(outs))

    def test_compile(self):
        # aot_eager with static shapes; inductor with dynamic shapes, the case in which
        # torch 2.13 fails for ops whose .out is tagged `out` (docs/architecture.md).
        for spec in self.ops:
            for backend, dynamic in (("aot_eager", False), ("inductor", True)):
                with self.subTest(op=spec.name, backend=backend):
                    n_out = len(spec.outs)

                    def f(*a):
                        got = spec.call(a[:-n_out], list(a[-n_out:]))
                        functional = getattr(torch.ops.amct, spec.name).default(*a[:-n_out])
                        return [g.view(U8).int() + 1 for g in got], functional

                    torch._dynamo.reset()
                    compiled = torch.compile(f, backend=backend, dynamic=dynamic, fullgraph=True)
                    outs = spec.fresh_outs()
                    bumped, functional = compiled(*spec.inputs(), *outs)
                    want = spec.reference(*spec.inputs())
                    functional = functional if isinstance(functional, tuple) else (functional,)
                    for o, b, fn, w in zip(outs, bumped, functional, want):
                        assert_bits_equal(self, o, w, f"{spec.name} {backend} out")
                        assert_bits_equal(self, fn, w, f"{spec.name} {backend} functional")
                        self.assertTrue(torch.equal(b, w.view(U8).int() + 1), f"{spec.name} {backend} use of out")

    def test_export(self):
        for spec in self.ops:
            with self.subTest(op=spec.name):
                template = spec.inputs()
                n_in = sum(isinstance(a, torch.Tensor) for a in template)

                class M(torch.nn.Module):
                    """The tensors as inputs; the other arguments (dtype, mode, qdim) as constants."""
                    def forward(self, *a):
                        tensors = iter(a[:n_in])
                        args = [next(tensors) if isinstance(t, torch.Tensor) else t for t in template]
                        return spec.call(args, list(a[n_in:]))

                tensors = [a for a in spec.inputs() if isinstance(a, torch.Tensor)]
                exported = torch.export.export(M(), (*tensors, *spec.fresh_outs()))
                outs = spec.fresh_outs()
                got = exported.module()(*tensors, *outs)
                for o, g, w in zip(outs, got, spec.reference(*spec.inputs())):
                    assert_bits_equal(self, o, w, f"{spec.name} exported: the out buffer")
                    assert_bits_equal(self, g, w, f"{spec.name} exported: the result")

if __name__ == "__main__":
    unittest.main()
