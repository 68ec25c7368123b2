"""The bad-input survey: one test per cell of the "Bad inputs" table of
``docs/errors.md``, op x class (wrong dtype, wrong rank, wrong device, shape mismatch, unsupported
attribute value, non-finite values, empty, huge).

A cell either raises RuntimeError whose message contains the listed key words (the op, the
argument, what was expected and what was given), or is accepted input with a defined result,
checked here against the spec. Every call runs in this process: nothing may crash it.
``test_docs_table_matches`` keeps that table and this file in step.
"""
import re
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal, load_source_module  # noqa: E402

try:
    import amct_ops
except ImportError:  # pragma: no cover
    amct_ops = None

REPO = Path(__file__).resolve().parents[1]
CLASSES = ("wrong dtype", "wrong rank", "wrong device", "shape mismatch", "unsupported attribute",
           "non-finite", "empty", "huge")
HUGE = 1 << 62
# The allocator refuses a 2^62-element output: "can't allocate memory" or "Storage size
# calculation overflowed" (any one of the words in a tuple).
TOO_BIG = ("alloc", "overflow")


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


def _ref(package):
    return load_source_module(f"{package}_reference_bad", REPO / package / "python" / package / "reference.py")


def raises(*words):
    return ("raises", words)


def accepted(check):
    return ("accepted", check)


NA = ("n/a", None)


def _sparse(x):
    return x.to_sparse()


def _huge_view(dtype, last=1):
    """A zero-copy view of 2^62 elements (stride 0): any attempt to materialise it must fail
    cleanly (allocation error), never wrap a size or write out of bounds."""
    return torch.zeros(1, dtype=dtype).expand(HUGE // last, last)


def hif8_cells():
    from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant
    ref = _ref("hifloat8_cast")
    nf16 = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.0], dtype=torch.float16)
    nf32 = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.0])
    x16 = torch.tensor([1.0, -2.5, 300.0, 1e-6], dtype=torch.bfloat16)
    c8 = torch.tensor([0x08, 0x80, 0x6F, 0xEE], dtype=torch.uint8)
    return {
        "encode_to_hifloat8": {
            "wrong dtype": (lambda: encode_to_hifloat8(torch.ones(4)),
                            raises("encode_to_hifloat8", "input dtype", "float16 or bfloat16", "got float32")),
            "wrong rank": NA,
            "wrong device": (lambda: encode_to_hifloat8(_sparse(torch.ones(4, dtype=torch.float16))),
                             raises("encode_to_hifloat8", "Sparse")),
            "shape mismatch": NA,
            "unsupported attribute": NA,
            "non-finite": (lambda: encode_to_hifloat8(nf16),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.encode_to_hifloat8_ref(nf16)))),
            "empty": (lambda: encode_to_hifloat8(torch.ones(0, 3, dtype=torch.bfloat16)),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((0, 3), torch.uint8)))),
            "huge": (lambda: encode_to_hifloat8(_huge_view(torch.bfloat16)), raises(TOO_BIG)),
        },
        "decode_from_hifloat8": {
            "wrong dtype": (lambda: decode_from_hifloat8(torch.ones(4)),
                            raises("decode_from_hifloat8", "dtype", "uint8", "got float32")),
            "wrong rank": NA,
            "wrong device": (lambda: decode_from_hifloat8(_sparse(torch.ones(4, dtype=torch.uint8))),
                             raises("decode_from_hifloat8", "Sparse")),
            "shape mismatch": NA,
            "unsupported attribute": (lambda: decode_from_hifloat8(torch.ones(4, dtype=torch.uint8), torch.int32),
                                      raises("decode_from_hifloat8", "dtype", "float16, bfloat16 or float32",
                                             "got int32")),
            "non-finite": NA,
            "empty": (lambda: decode_from_hifloat8(torch.ones(2, 0, dtype=torch.uint8), torch.float32),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((2, 0), torch.float32)))),
            "huge": (lambda: decode_from_hifloat8(_huge_view(torch.uint8)), raises(TOO_BIG)),
        },
        "hifloat8_fake_quant": {
            "wrong dtype": (lambda: hifloat8_fake_quant(torch.ones(4, dtype=torch.float64)),
                            raises("hifloat8_fake_quant", "input dtype", "float32", "got float64")),
            "wrong rank": NA,
            "wrong device": (lambda: hifloat8_fake_quant(_sparse(torch.ones(4))), raises("hifloat8_fake_quant", "Sparse")),
            "shape mismatch": NA,
            "unsupported attribute": NA,
            "non-finite": (lambda: hifloat8_fake_quant(nf32),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat8_fake_quant_ref(nf32)))),
            "empty": (lambda: hifloat8_fake_quant(torch.ones(0)),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((0,), torch.float32)))),
            "huge": (lambda: hifloat8_fake_quant(_huge_view(torch.float32)), raises(TOO_BIG)),
        },
        # The out= overloads: out must have the op's output dtype, the input's device, and the
        # input's shape or no elements (then it is resized).
        "encode_to_hifloat8.out": {
            "wrong dtype": (lambda: encode_to_hifloat8(x16, out=torch.empty(4, dtype=torch.int8)),
                            raises("encode_to_hifloat8", "out dtype", "uint8", "got int8")),
            "wrong rank": (lambda: encode_to_hifloat8(x16, out=torch.empty(2, 2, dtype=torch.uint8)),
                           raises("encode_to_hifloat8", "out shape", "[4]", "got [2, 2]")),
            "wrong device": (lambda: encode_to_hifloat8(x16, out=torch.empty(4, dtype=torch.uint8, device="meta")),
                             raises("encode_to_hifloat8: out device must be cpu, got meta")),
            "shape mismatch": (lambda: encode_to_hifloat8(x16, out=torch.empty(5, dtype=torch.uint8)),
                               raises("encode_to_hifloat8", "out shape", "[4]", "got [5]")),
            "unsupported attribute": NA,
            "non-finite": (lambda: encode_to_hifloat8(nf16, out=torch.empty(4, dtype=torch.uint8)),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.encode_to_hifloat8_ref(nf16)))),
            "empty": (lambda: encode_to_hifloat8(x16, out=torch.empty(0, dtype=torch.uint8)),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.encode_to_hifloat8_ref(x16)))),
            "huge": (lambda: encode_to_hifloat8(_huge_view(torch.bfloat16), out=torch.empty(0, dtype=torch.uint8)),
                     raises(TOO_BIG)),
        },
        "decode_from_hifloat8.out": {
            "wrong dtype": (lambda: decode_from_hifloat8(c8, torch.float32, out=torch.empty(4, dtype=torch.float16)),
                            raises("decode_from_hifloat8", "out dtype", "float32", "got float16")),
            "wrong rank": (lambda: decode_from_hifloat8(c8, out=torch.empty(1, 4, dtype=torch.bfloat16)),
                           raises("decode_from_hifloat8", "out shape", "[4]", "got [1, 4]")),
            "wrong device": (lambda: decode_from_hifloat8(c8, out=torch.empty(4, dtype=torch.bfloat16, device="meta")),
                             raises("decode_from_hifloat8: out device must be cpu, got meta")),
            "shape mismatch": (lambda: decode_from_hifloat8(c8, out=torch.empty(3, dtype=torch.bfloat16)),
                               raises("decode_from_hifloat8", "out shape", "[4]", "got [3]")),
            "unsupported attribute": (lambda: decode_from_hifloat8(c8, torch.int32, out=torch.empty(4, dtype=torch.int32)),
                                      raises("decode_from_hifloat8", "dtype", "float16, bfloat16 or float32",
                                             "got int32")),
            "non-finite": NA,
            "empty": (lambda: decode_from_hifloat8(c8, torch.float32, out=torch.empty(0)),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.decode_from_hifloat8_ref(c8, torch.float32)))),
            "huge": (lambda: decode_from_hifloat8(_huge_view(torch.uint8), out=torch.empty(0, dtype=torch.bfloat16)),
                     raises(TOO_BIG)),
        },
        "hifloat8_fake_quant.out": {
            "wrong dtype": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(4, dtype=torch.bfloat16)),
                            raises("hifloat8_fake_quant", "out dtype", "float32", "got bfloat16")),
            "wrong rank": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(4, 1)),
                           raises("hifloat8_fake_quant", "out shape", "[4]", "got [4, 1]")),
            "wrong device": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(4, device="meta")),
                             raises("hifloat8_fake_quant: out device must be cpu, got meta")),
            "shape mismatch": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(8)),
                               raises("hifloat8_fake_quant", "out shape", "[4]", "got [8]")),
            "unsupported attribute": NA,
            "non-finite": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(4)),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat8_fake_quant_ref(nf32)))),
            "empty": (lambda: hifloat8_fake_quant(nf32, out=torch.empty(0)),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat8_fake_quant_ref(nf32)))),
            "huge": (lambda: hifloat8_fake_quant(_huge_view(torch.float32), out=torch.empty(0)), raises(TOO_BIG)),
        },
    }


def hif4_cells():
    from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
    ref = _ref("hifloat4_cast")
    nf = torch.ones(2, 128, dtype=torch.bfloat16)
    nf[0, 3], nf[1, 70] = float("nan"), float("-inf")
    s_ok, v_ok = torch.zeros(3, 2, 4, dtype=torch.uint8), torch.zeros(3, 64, dtype=torch.uint8)
    return {
        "hifloat4_fake_quant": {
            "wrong dtype": (lambda: hifloat4_fake_quant(torch.ones(2, 64, dtype=torch.float64)),
                            raises("hifloat4_fake_quant: input dtype must be float16, bfloat16 or float32, got float64")),
            "wrong rank": (lambda: hifloat4_fake_quant(torch.tensor(1.0)),
                           raises("hifloat4_fake_quant: input must have at least 1 dimension, got 0")),
            "wrong device": (lambda: hifloat4_fake_quant(_sparse(torch.ones(2, 64))),
                             raises("hifloat4_fake_quant", "Sparse")),
            "shape mismatch": (lambda: hifloat4_fake_quant(torch.ones(3, 100)),
                               raises("hifloat4_fake_quant: quant dim length must be a multiple of 64, got 100")),
            "unsupported attribute": (lambda: hifloat4_fake_quant(torch.ones(2, 64), HUGE),
                                      raises("hifloat4_fake_quant: qdim out of range", "[-2, 1]", f"got {HUGE}")),
            "non-finite": (lambda: hifloat4_fake_quant(nf),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat4_fake_quant_ref(nf)))),
            "empty": (lambda: hifloat4_fake_quant(torch.ones(0, 64)),
                      accepted(lambda t, y: t.assertEqual(tuple(y.shape), (0, 64)))),
            "huge": (lambda: hifloat4_fake_quant(_huge_view(torch.bfloat16, 64)), raises(TOO_BIG)),
        },
        "hifloat4_pack": {
            "wrong dtype": (lambda: hifloat4_pack(torch.ones(2, 64, dtype=torch.int32)),
                            raises("hifloat4_pack: input dtype must be float16, bfloat16 or float32, got int32")),
            "wrong rank": (lambda: hifloat4_pack(torch.tensor(1.0)),
                           raises("hifloat4_pack: input must have at least 1 dimension, got 0")),
            "wrong device": (lambda: hifloat4_pack(_sparse(torch.ones(2, 64))), raises("hifloat4_pack", "Sparse")),
            "shape mismatch": (lambda: hifloat4_pack(torch.ones(3, 100)),
                               raises("hifloat4_pack: last dim length must be a multiple of 64, got 100")),
            "unsupported attribute": NA,
            "non-finite": (lambda: hifloat4_pack(nf),
                           accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                  zip(y, ref.hifloat4_pack_ref(nf))])),
            "empty": (lambda: hifloat4_pack(torch.ones(3, 0)),
                      accepted(lambda t, y: t.assertEqual([tuple(v.shape) for v in y], [(3, 0, 4), (3, 0)]))),
            "huge": (lambda: hifloat4_pack(_huge_view(torch.float32, 64)), raises(TOO_BIG)),
        },
        "hifloat4_unpack": {
            "wrong dtype": (lambda: hifloat4_unpack(s_ok.int(), v_ok),
                            raises("hifloat4_unpack: scale dtype must be uint8, got int32")),
            "wrong rank": (lambda: hifloat4_unpack(torch.zeros(4, dtype=torch.uint8), v_ok),
                           raises("hifloat4_unpack: scale must have at least 2 dimensions, got 1")),
            "wrong device": (lambda: hifloat4_unpack(s_ok, v_ok.to("meta")),
                             raises("hifloat4_unpack: value device must be cpu to match scale, got meta")),
            "shape mismatch": (lambda: hifloat4_unpack(torch.zeros(3, 4, 4, dtype=torch.uint8), v_ok),
                               raises("hifloat4_unpack: value shape must be [3, 128] to match scale [3, 4, 4], "
                                      "got [3, 64]")),
            "unsupported attribute": (lambda: hifloat4_unpack(s_ok, v_ok, torch.int32),
                                      raises("hifloat4_unpack: dtype must be float16, bfloat16 or float32, got int32")),
            "non-finite": (lambda: hifloat4_unpack(torch.full((1, 1, 4), 255, dtype=torch.uint8),
                                                   torch.zeros(1, 32, dtype=torch.uint8)),
                           accepted(lambda t, y: t.assertTrue(bool(y.isnan().all())))),
            "empty": (lambda: hifloat4_unpack(torch.zeros(0, 2, 4, dtype=torch.uint8),
                                              torch.zeros(0, 64, dtype=torch.uint8)),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((0, 128), torch.float32)))),
            "huge": (lambda: hifloat4_unpack(torch.zeros(1, 1, 4, dtype=torch.uint8).expand(HUGE // 64, 1, 4),
                                             torch.zeros(1, 32, dtype=torch.uint8).expand(HUGE // 64, 32)),
                     raises(TOO_BIG)),
        },
    }


def hif4_out_cells():
    """The out= overloads of the hifloat4_cast ops (the rule of every out=: the result's dtype,
    the inputs' device, the result's shape or an empty tensor that is resized; any strides).
    Checked by TestHif4OutBadInputs; rows of the docs/errors.md table too."""
    from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
    ref = _ref("hifloat4_cast")
    nf = torch.ones(2, 128, dtype=torch.bfloat16)
    nf[0, 3], nf[1, 70] = float("nan"), float("-inf")
    x = torch.ones(2, 128)
    s_ok, v_ok = torch.zeros(2, 2, 4, dtype=torch.uint8), torch.zeros(2, 64, dtype=torch.uint8)
    u8 = torch.uint8

    def fq(out, inp=x):
        return hifloat4_fake_quant(inp, out=out)

    def pack(scale, value, inp=x):
        return hifloat4_pack(inp, out=(scale, value))

    def unpack(out, dtype=None):
        return hifloat4_unpack(s_ok, v_ok, dtype, out=out)

    return {
        "hifloat4_fake_quant.out": {
            "wrong dtype": (lambda: fq(torch.empty(2, 128, dtype=torch.float16)),
                            raises("hifloat4_fake_quant: out dtype must be float32, got float16")),
            "wrong rank": (lambda: fq(torch.empty(256)),
                           raises("hifloat4_fake_quant: out shape must be [2, 128]", "got [256]")),
            "wrong device": (lambda: fq(torch.empty(2, 128, device="meta")),
                             raises("hifloat4_fake_quant: out device must be cpu, got meta")),
            "shape mismatch": (lambda: fq(torch.empty(2, 64)),
                               raises("hifloat4_fake_quant: out shape must be [2, 128] (or an empty tensor, "
                                      "which is resized to it), got [2, 64]")),
            "unsupported attribute": (lambda: fq(torch.empty(128, 2).t()),  # any strides: accepted
                                      accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat4_fake_quant_ref(x)))),
            "non-finite": (lambda: fq(torch.empty(2, 128, dtype=torch.bfloat16), nf),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat4_fake_quant_ref(nf)))),
            "empty": (lambda: fq(torch.empty(0)),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat4_fake_quant_ref(x)))),
            "huge": (lambda: fq(torch.empty(0, dtype=torch.bfloat16), _huge_view(torch.bfloat16, 64)),
                     raises(TOO_BIG)),
        },
        "hifloat4_pack.out": {
            "wrong dtype": (lambda: pack(torch.empty(2, 2, 4, dtype=torch.int32), torch.empty(2, 64, dtype=u8)),
                            raises("hifloat4_pack: scale dtype must be uint8, got int32")),
            "wrong rank": (lambda: pack(torch.empty(16, dtype=u8), torch.empty(2, 64, dtype=u8)),
                           raises("hifloat4_pack: scale shape must be [2, 2, 4]", "got [16]")),
            "wrong device": (lambda: pack(torch.empty(2, 2, 4, dtype=u8), torch.empty(2, 64, dtype=u8, device="meta")),
                             raises("hifloat4_pack: value device must be cpu, got meta")),
            "shape mismatch": (lambda: pack(torch.empty(2, 2, 4, dtype=u8), torch.empty(2, 32, dtype=u8)),
                               raises("hifloat4_pack: value shape must be [2, 64] (or an empty tensor, which is "
                                      "resized to it), got [2, 32]")),
            "unsupported attribute": (lambda: pack(torch.empty(2, 4, 2, dtype=u8).transpose(1, 2),
                                                   torch.empty(2, 64, dtype=u8)),
                                      accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                             zip(y, ref.hifloat4_pack_ref(x))])),
            "non-finite": (lambda: pack(torch.empty(2, 2, 4, dtype=u8), torch.empty(2, 64, dtype=u8), nf),
                           accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                  zip(y, ref.hifloat4_pack_ref(nf))])),
            "empty": (lambda: pack(torch.empty(0, dtype=u8), torch.empty(0, dtype=u8)),
                      accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in zip(y, ref.hifloat4_pack_ref(x))])),
            "huge": (lambda: pack(torch.empty(0, dtype=u8), torch.empty(0, dtype=u8), _huge_view(torch.float32, 64)),
                     raises(TOO_BIG)),
        },
        "hifloat4_unpack.out": {
            "wrong dtype": (lambda: unpack(torch.empty(2, 128, dtype=torch.bfloat16)),
                            raises("hifloat4_unpack: out dtype must be float32, got bfloat16")),
            "wrong rank": (lambda: unpack(torch.empty(2, 2, 64)),
                           raises("hifloat4_unpack: out shape must be [2, 128]", "got [2, 2, 64]")),
            "wrong device": (lambda: unpack(torch.empty(2, 128, device="meta")),
                             raises("hifloat4_unpack: out device must be cpu, got meta")),
            "shape mismatch": (lambda: unpack(torch.empty(2, 129)),
                               raises("hifloat4_unpack: out shape must be [2, 128] (or an empty tensor, which is "
                                      "resized to it), got [2, 129]")),
            "unsupported attribute": (lambda: unpack(torch.empty(2, 128, dtype=torch.float16), torch.int32),
                                      raises("hifloat4_unpack: dtype must be float16, bfloat16 or float32, got int32")),
            "non-finite": (lambda: hifloat4_unpack(torch.full((1, 1, 4), 255, dtype=u8), torch.zeros(1, 32, dtype=u8),
                                                   out=torch.empty(1, 64)),
                           accepted(lambda t, y: t.assertTrue(bool(y.isnan().all())))),
            "empty": (lambda: unpack(torch.empty(0, dtype=torch.float16), torch.float16),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.hifloat4_unpack_ref(s_ok, v_ok, torch.float16)))),
            "huge": (lambda: hifloat4_unpack(torch.zeros(1, 1, 4, dtype=u8).expand(HUGE // 64, 1, 4),
                                             torch.zeros(1, 32, dtype=u8).expand(HUGE // 64, 32), out=torch.empty(0)),
                     raises(TOO_BIG)),
        },
    }


def svd_cells():
    from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize, svd_quant
    ref = _ref("svd_quant")
    gen = torch.Generator().manual_seed(5)
    w = torch.randn(40, 96, generator=gen).to(torch.bfloat16)
    codes, scales = mxfp4_quantize(w)
    x = torch.randn(3, 7, 96, generator=gen).to(torch.bfloat16)
    down = (torch.randn(96, 4, generator=gen) * 0.1).to(torch.bfloat16)
    up = (torch.randn(4, 40, generator=gen) * 0.1).to(torch.bfloat16)
    nf = torch.randn(2, 64, generator=gen).to(torch.bfloat16)
    nf[0, 5], nf[1, 40] = float("nan"), float("inf")
    xnf = x.clone()
    xnf[0, 0, 0] = float("nan")
    return {
        "mxfp4_quantize": {
            "wrong dtype": (lambda: mxfp4_quantize(torch.ones(2, 32, dtype=torch.float64)),
                            raises("mxfp4_quantize", "input", "float64")),
            "wrong rank": (lambda: mxfp4_quantize(torch.tensor(1.0)),
                           raises("mxfp4_quantize: input must have at least 1 dimension")),
            "wrong device": (lambda: mxfp4_quantize(_sparse(torch.ones(2, 32))), raises("mxfp4_quantize", "Sparse")),
            "shape mismatch": (lambda: mxfp4_quantize(torch.ones(2, 40)),
                               raises("mxfp4_quantize: the last dimension K must be a multiple of 32, got K = 40")),
            "unsupported attribute": (lambda: mxfp4_quantize(w, "nearest"),
                                      raises("mxfp4_quantize: round_mode must be one of", "got 'nearest'")),
            "non-finite": (lambda: mxfp4_quantize(nf),
                           accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                  zip(y, ref.mxfp4_quantize_ref(nf))])),
            "empty": (lambda: mxfp4_quantize(torch.ones(0, 64)),
                      accepted(lambda t, y: t.assertEqual([tuple(v.shape) for v in y], [(0, 32), (0, 1, 2)]))),
            "huge": (lambda: mxfp4_quantize(_huge_view(torch.bfloat16, 64)), raises(TOO_BIG)),
        },
        "mxfp4_dequantize": {
            "wrong dtype": (lambda: mxfp4_dequantize(codes.int(), scales),
                            raises("mxfp4_dequantize: codes must have dtype uint8 or float4_e2m1fn_x2, got int32")),
            "wrong rank": (lambda: mxfp4_dequantize(torch.tensor(1, dtype=torch.uint8), scales),
                           raises("mxfp4_dequantize: codes must have at least 1 dimension")),
            "wrong device": (lambda: mxfp4_dequantize(codes, scales.to("meta")),
                             raises("mxfp4_dequantize: scales must be on codes' device cpu, got meta")),
            "shape mismatch": (lambda: mxfp4_dequantize(codes, scales[:, :1]),
                               raises("mxfp4_dequantize: expected scales of shape", "for codes of shape")),
            "unsupported attribute": (lambda: mxfp4_dequantize(codes, scales, torch.int32),
                                      raises("mxfp4_dequantize", "dtype", "got int32")),
            "non-finite": (lambda: mxfp4_dequantize(codes[:1], torch.full_like(scales[:1], 255)),
                           accepted(lambda t, y: t.assertTrue(bool(y.isnan().all())))),
            "empty": (lambda: mxfp4_dequantize(codes[:0], scales[:0]),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((0, 96), torch.bfloat16)))),
            "huge": (lambda: mxfp4_dequantize(codes[:1, :16].expand(HUGE // 32, 16),
                                              scales[:1, :1].expand(HUGE // 32, 1, 2)), raises(TOO_BIG)),
        },
        "svd_quant": {
            "wrong dtype": (lambda: svd_quant(x.float(), codes, scales, down, up),
                            raises("svd_quant: Data Type is wrong: activation must be bfloat16, got float32")),
            "wrong rank": (lambda: svd_quant(x[0, 0], codes, scales, down, up),
                           raises("svd_quant: invalid input shapes: activation must be at least 2-D")),
            "wrong device": (lambda: svd_quant(x, codes, scales, down.to("meta"), up),
                             raises("svd_quant: all inputs must be on the same device", "down is on meta")),
            "shape mismatch": (lambda: svd_quant(x, codes, scales, down[:64], up),
                               raises("svd_quant: Input shapes are incompatible: expected down of shape [96, 4]",
                                      "got [64, 4]")),
            "unsupported attribute": NA,
            "non-finite": (lambda: svd_quant(xnf, codes, scales, down, up),
                           accepted(lambda t, y: t.assertTrue(bool(y[0, 0].isnan().all()) and
                                                              not bool(y[1:].isnan().any())))),
            "empty": (lambda: svd_quant(x[:, :0], codes, scales, down, up),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((3, 0, 40), torch.bfloat16)))),
            "huge": (lambda: svd_quant(x[:1, :1].expand(HUGE // 96, 1, 96), codes, scales, down, up), raises(TOO_BIG)),
        },
        **qdq_cells(ref, gen),
    }


def qdq_cells(ref, gen):
    from amct_ops.svd_quant import quant_dequant_mxfp4
    a = torch.randn(3, 50, generator=gen)
    anf = a.clone()
    anf[1, 40] = float("inf")
    return {
        "quant_dequant_mxfp4": {
            "wrong dtype": (lambda: quant_dequant_mxfp4(a.double()),
                            raises("quant_dequant_mxfp4: x dtype must be", "float32, got float64")),
            "wrong rank": (lambda: quant_dequant_mxfp4(torch.tensor(1.0)),
                           raises("quant_dequant_mxfp4: x must have at least 1 dimension")),
            "wrong device": (lambda: quant_dequant_mxfp4(_sparse(a)), raises("quant_dequant_mxfp4", "Sparse")),
            "shape mismatch": (lambda: torch.ops.amct.quant_dequant_mxfp4(torch.ones(40), 1.0),
                               raises("quant_dequant_mxfp4: x.numel() must be a multiple of 32, got 40")),
            "unsupported attribute": (lambda: quant_dequant_mxfp4(a, 16),
                                      raises("quant_dequant_mxfp4: block_size must be 32, got 16")),
            "non-finite": (lambda: quant_dequant_mxfp4(anf),
                           accepted(lambda t, y: assert_bits_equal(t, y, ref.quant_dequant_mxfp4_ref(anf)))),
            "empty": (lambda: quant_dequant_mxfp4(a[:0]),
                      accepted(lambda t, y: t.assertEqual((tuple(y.shape), y.dtype), ((0, 50), torch.float32)))),
            "huge": (lambda: quant_dequant_mxfp4(_huge_view(torch.bfloat16, 64)), raises(TOO_BIG)),
        },
    }


def svd_out_cells():
    """The out= overloads of mxfp4_quantize / mxfp4_dequantize: the checks of the out tensors
    (dtype, device, shape: exact or no elements, then resized; any strides). Rows of the docs/errors.md
    table too."""
    from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize
    ref = _ref("svd_quant")
    x = torch.randn(4, 96, generator=torch.Generator().manual_seed(6)).to(torch.bfloat16)
    nf = x.clone()
    nf[1, 50] = float("nan")
    codes, scales = mxfp4_quantize(x)

    def q_out(c=None, s=None, inp=x, mode="round"):
        c = torch.empty(4, 48, dtype=torch.uint8) if c is None else c
        s = torch.empty(4, 2, 2, dtype=torch.uint8) if s is None else s
        return mxfp4_quantize(inp, mode, out=(c, s))

    def d_out(out, c=codes, s=scales, dtype=None):
        return mxfp4_dequantize(c, s, dtype, out=out)

    empty_u8 = lambda: torch.empty(0, dtype=torch.uint8)  # noqa: E731
    return {
        "mxfp4_quantize.out": {
            "wrong dtype": (lambda: q_out(c=torch.empty(4, 48, dtype=torch.int8)),
                            raises("mxfp4_quantize: codes dtype must be uint8 or float4_e2m1fn_x2, got int8")),
            "wrong rank": (lambda: q_out(s=torch.empty(4, 4, dtype=torch.uint8)),
                           raises("mxfp4_quantize: scales shape must be [4, 2, 2]", "got [4, 4]")),
            "wrong device": (lambda: q_out(c=torch.empty(4, 48, dtype=torch.uint8, device="meta")),
                             raises("mxfp4_quantize: codes device must be cpu, got meta")),
            "shape mismatch": (lambda: q_out(c=torch.empty(4, 47, dtype=torch.uint8)),
                               raises("mxfp4_quantize: codes shape must be [4, 48] (or an empty tensor, which is "
                                      "resized to it), got [4, 47]")),
            "unsupported attribute": (lambda: q_out(c=torch.empty(48, 4, dtype=torch.uint8).t()),  # any strides
                                      accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                             zip(y, ref.mxfp4_quantize_ref(x))])),
            "non-finite": (lambda: q_out(inp=nf),
                           accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                                  zip(y, ref.mxfp4_quantize_ref(nf))])),
            "empty": (lambda: q_out(c=empty_u8(), s=empty_u8()),
                      accepted(lambda t, y: [assert_bits_equal(t, a, b) for a, b in
                                             zip(y, ref.mxfp4_quantize_ref(x))])),
            "huge": (lambda: q_out(c=empty_u8(), s=empty_u8(), inp=_huge_view(torch.bfloat16, 64)), raises(TOO_BIG)),
        },
        "mxfp4_dequantize.out": {
            "wrong dtype": (lambda: d_out(torch.empty(4, 96, dtype=torch.float16)),
                            raises("mxfp4_dequantize: out dtype must be bfloat16, got float16")),
            "wrong rank": (lambda: d_out(torch.empty(4, 2, 48, dtype=torch.bfloat16)),
                           raises("mxfp4_dequantize: out shape must be [4, 96]", "got [4, 2, 48]")),
            "wrong device": (lambda: d_out(torch.empty(4, 96, dtype=torch.bfloat16, device="meta")),
                             raises("mxfp4_dequantize: out device must be cpu, got meta")),
            "shape mismatch": (lambda: d_out(torch.empty(4, 95, dtype=torch.bfloat16)),
                               raises("mxfp4_dequantize: out shape must be [4, 96] (or an empty tensor, which is "
                                      "resized to it), got [4, 95]")),
            "unsupported attribute": (lambda: d_out(torch.empty(96, 4, dtype=torch.float32).t(), dtype=torch.float32),
                                      accepted(lambda t, y: assert_bits_equal(
                                          t, y, ref.mxfp4_dequantize_ref(codes, scales, torch.float32)))),
            "non-finite": (lambda: d_out(torch.empty(1, 96, dtype=torch.float32), codes[:1],
                                         torch.full_like(scales[:1], 255), torch.float32),
                           accepted(lambda t, y: t.assertTrue(bool(y.isnan().all())))),
            "empty": (lambda: d_out(torch.empty(0, dtype=torch.bfloat16)),
                      accepted(lambda t, y: assert_bits_equal(t, y, ref.mxfp4_dequantize_ref(codes, scales)))),
            "huge": (lambda: d_out(torch.empty(0, dtype=torch.bfloat16), codes[:1, :16].expand(HUGE // 32, 16),
                                   scales[:1, :1].expand(HUGE // 32, 1, 2)), raises(TOO_BIG)),
        },
    }


def stem_cells():
    from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
    from stem_oracle import sequential_reference
    gen = torch.Generator().manual_seed(6)
    # One query block against 64 key blocks: row 0 sees 64 blocks, K = 42 (docs/stem_indexer.md §5), a Top-K
    # row and every vbias entry of blocks 4..59 is scored.
    B, Nq, Nk, qb, kb = 1, 32, 4, 1, 64
    qflat = (torch.rand(B, Nq, qb, 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
    kflat = (torch.rand(B, Nk, kb, 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
    vbias = torch.rand(B, Nk, kb, generator=gen)
    ql = torch.tensor([128], dtype=torch.int32)
    kl = torch.tensor([8192], dtype=torch.int32)
    md = npu_stem_indexer_metadata(ql, kl, Nq, Nk)

    def run(q=qflat, k=kflat, v=vbias, qlens=ql, klens=kl, **kw):
        return npu_stem_indexer(q, k, v, qlens, klens, metadata=md, **kw)

    # Non-finite biases on candidate blocks, one per kv head: NaN ranks lowest (never chosen),
    # +inf highest (always chosen), -inf above NaN only (§4.1).
    vnf = vbias.clone()
    special = {0: (10, float("nan")), 1: (20, float("inf")), 2: (30, float("-inf")), 3: (40, float("nan"))}
    for n, (j, value) in special.items():
        vnf[0, n, j] = value
    zero = torch.zeros(1, dtype=torch.int32)

    def same_as_reference(t, y, **kw):
        """Bit-exact against the reference's selection of the op's sequential fp32 scores."""
        want = sequential_reference(qflat, kflat, kw.get("v", vbias), kw.get("qlens", ql), kw.get("klens", kl),
                                    metadata=md)
        for got, exp in zip(y, want):
            t.assertTrue(torch.equal(got, exp))

    def non_finite_scored(t, y):
        same_as_reference(t, y, v=vnf)
        idx, lens = y
        t.assertTrue(bool((lens == 42 + 8).all()), "row 0 is a Top-K row (K = 42)")
        for n, (j, value) in special.items():
            chosen = [bool((idx[0, h, 0] == j).any()) for h in range(n * Nq // Nk, (n + 1) * Nq // Nk)]
            t.assertEqual(chosen, [value == float("inf")] * (Nq // Nk), f"block {j} with vbias {value}")

    return {
        "npu_stem_indexer": {
            "wrong dtype": (lambda: run(q=qflat.float()), raises("npu_stem_indexer", "qflat", "bfloat16", "float32")),
            "wrong rank": (lambda: run(v=vbias[0]), raises("npu_stem_indexer: vbias must have rank 3", "got rank 2")),
            "wrong device": (lambda: run(v=vbias.to("meta")),
                             raises("npu_stem_indexer: vbias must be on cpu (the device of qflat), but got meta")),
            "shape mismatch": (lambda: run(k=kflat[..., :1024]),
                               raises("npu_stem_indexer: kflat.size(3) must be 2048", "got 1024")),
            "unsupported attribute": (lambda: run(topk_score_precision=3),
                                      raises("npu_stem_indexer: topk_score_precision must be", "got 3")),
            "non-finite": (lambda: run(v=vnf), accepted(non_finite_scored)),
            "empty": (lambda: run(qlens=zero, klens=zero),
                      accepted(lambda t, y: same_as_reference(t, y, qlens=zero, klens=zero))),
            "huge": (lambda: run(qlens=torch.tensor([2**31 - 1], dtype=torch.int32)),
                     raises("npu_stem_indexer", "q_seq_lens")),
        },
        "npu_stem_indexer_metadata": {
            "wrong dtype": (lambda: npu_stem_indexer_metadata(ql.long(), kl, Nq, Nk),
                            raises("npu_stem_indexer_metadata", "q_seq_lens", "int32", "int64")),
            "wrong rank": (lambda: npu_stem_indexer_metadata(ql[0], kl, Nq, Nk),
                           raises("npu_stem_indexer_metadata", "q_seq_lens", "rank")),
            "wrong device": (lambda: npu_stem_indexer_metadata(ql, kl.to("meta"), Nq, Nk),
                             raises("npu_stem_indexer_metadata: kv_seq_lens must be on cpu (the device of q_seq_lens), "
                                    "but got meta")),
            "shape mismatch": (lambda: npu_stem_indexer_metadata(ql, torch.tensor([1, 2], dtype=torch.int32), Nq, Nk),
                               raises("npu_stem_indexer_metadata", "kv_seq_lens")),
            "unsupported attribute": (lambda: npu_stem_indexer_metadata(ql, kl, 48, Nk),
                                      raises("npu_stem_indexer_metadata", "q_heads", "48")),
            "non-finite": NA,
            "empty": (lambda: npu_stem_indexer_metadata(zero, zero, Nq, Nk),
                      accepted(lambda t, y: t.assertEqual(y.dtype, torch.int32))),
            "huge": (lambda: npu_stem_indexer_metadata(torch.zeros(1 << 20, dtype=torch.int32),
                                                       torch.zeros(1 << 20, dtype=torch.int32), Nq, Nk),
                     raises("npu_stem_indexer_metadata", "q_seq_lens")),
        },
    }


CELL_BUILDERS = {"hifloat8_cast": hif8_cells, "hifloat4_cast": hif4_cells, "svd_quant": svd_cells,
                 "stem_indexer": stem_cells}


def all_cells():
    cells = {}
    for package, build in CELL_BUILDERS.items():
        if _has(package):
            cells.update(build())
    return cells


def check_cells(case, cells):
    """Every cell of ``cells`` (op -> class -> cell) raises as listed or is accepted as checked."""
    for op, row in cells.items():
        case.assertEqual(tuple(row), CLASSES, f"{op}: every class has a cell")
        for cls, cell in row.items():
            if cell is NA:
                continue
            call, (kind, detail) = cell
            with case.subTest(op=op, bad_input=cls):
                if kind == "raises":
                    with case.assertRaises(RuntimeError) as ctx:
                        call()
                    message = str(ctx.exception)
                    for word in detail:
                        options = word if isinstance(word, tuple) else (word,)
                        case.assertTrue(any(w.lower() in message.lower() for w in options),
                                        f"{op} / {cls}: none of {options} in {message[:400]!r}")
                else:
                    detail(case, call())


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestBadInputSurvey(unittest.TestCase):
    def test_every_cell(self):
        missing = [package for package in CELL_BUILDERS if not _has(package)]
        cells = all_cells()
        self.assertTrue(cells)
        check_cells(self, cells)
        self.assertEqual(missing, [], "operator packages not built: their cells did not run")

    @unittest.skipUnless(_has("svd_quant"), "svd_quant is not built")
    def test_out_variants(self):
        check_cells(self, svd_out_cells())

    def test_docs_table_matches(self):
        text = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
        section = text.split("## Bad inputs", 1)
        self.assertEqual(len(section), 2, "docs/errors.md has no '## Bad inputs' section")
        rows = {}
        for line in section[1].split("\n## ", 1)[0].splitlines():
            cols = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cols) == len(CLASSES) + 1 and cols[0].startswith("`"):
                rows[cols[0].strip("`")] = cols[1:]
        cells = dict(all_cells())
        if _has("hifloat4_cast"):
            cells.update(hif4_out_cells())
        if _has("svd_quant"):
            cells.update(svd_out_cells())
        for op, row in cells.items():
            with self.subTest(op=op):
                self.assertIn(op, rows, f"docs/errors.md Bad inputs table has no row for {op}")
                for cls, cell_text in zip(CLASSES, rows[op]):
                    kind = row[cls][1][0] if row[cls] is not NA else "n/a"
                    want = {"raises": "RuntimeError", "accepted": "ok", "n/a": "—"}[kind]
                    self.assertTrue(cell_text.startswith(want) or (kind == "raises" and re.match("^Runtime", cell_text)),
                                    f"{op} / {cls}: docs/errors.md says {cell_text!r}, the test expects {want}")


@unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast is not built")
class TestHif4OutBadInputs(unittest.TestCase):
    def test_every_cell(self):
        check_cells(self, hif4_out_cells())


if __name__ == "__main__":
    unittest.main()
