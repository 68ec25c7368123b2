"""Self-test of the svd_quant operators, run by ``python -m amct_ops selftest``.

Follows the op-package protocol of :mod:`amct_ops._cli`: :func:`run` returns one result dict per
(op, case, dtype). Inputs are built on the CPU and moved to the device; the oracle
(:mod:`amct_ops.svd_quant.reference`) runs on the CPU. Checked contracts: output shapes, dtypes,
device, contiguity; quantize and dequantize bit-exact against the reference (plus the spec's
first worked example byte for byte), every quantize case run twice on the CPU: by the op (native
code) and by the AscendC kernel through the kernel sim (``_mxfp4_quantize_emulated``); svd_quant within the docs/mxfp4.md A7 norm bounds of the float64
golden and within 1 bf16 ulp when the low-rank branch is zero.

Cases: the A2 worked example, seeded random data with per-block magnitudes 2^U(-20, 20) in the
three input dtypes and the three round modes, special blocks (zero, -0, tiny, NaN, Inf),
K = 96 (pad byte), a transposed input, empty inputs; dequantize to the three dtypes and from the
float4_e2m1fn_x2 / float8_e8m0fnu views; svd_quant on 3-D input, K = 96, a zero low-rank branch
and an empty batch, on the CPU also through the fused kernel in the sim (``_svd_quant_emulated``);
quant_dequant_mxfp4 (native and, on the CPU, the emulated kernel) in the three
dtypes and five scales, special blocks and the flat schema.
"""
import torch

from amct_ops._cli import bitwise_mismatch, dtype_name, result
from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize, svd_quant
from amct_ops.svd_quant import reference as ref

SEED = 20241201
Q, D, S = "mxfp4_quantize", "mxfp4_dequantize", "svd_quant"
QE = "mxfp4_quantize (AscendC kernel, sim)"


def _quantizers(device):
    """(op label, quantize function): the op, plus on the CPU the emulated AscendC kernel."""
    out = [(Q, mxfp4_quantize)]
    if _resolved(device).type == "cpu":
        out.append((QE, torch.ops.amct._mxfp4_quantize_emulated))
    return out


def _gen(offset=0):
    return torch.Generator().manual_seed(SEED + offset)


def _random(rows, k, dtype, offset=0):
    g = _gen(offset)
    scale = torch.exp2(torch.randint(-20, 21, (rows, k // 32, 1), generator=g).float())
    return (torch.randn(rows, k // 32, 32, generator=g) * scale).reshape(rows, k).to(dtype)


def _special():
    x = torch.zeros(1, 256)
    x[0, 32:64] = -0.0
    x[0, 64 + 7] = 2.0 ** -126
    x[0, 96 + 3], x[0, 96 + 4] = 1.0, float("nan")
    x[0, 128], x[0, 160 + 9] = float("inf"), -float("inf")
    x[0, 200] = 1.5
    return x


def _first_problem(outs, expected, device):
    for i, (got, want) in enumerate(zip(outs, expected)):
        where = f"output {i}"
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            return f"{where}: {dtype_name(got.dtype)}{tuple(got.shape)} != {dtype_name(want.dtype)}{tuple(want.shape)}"
        if got.device != device:
            return f"{where}: on {got.device}"
        if not got.is_contiguous():
            return f"{where}: not contiguous"
        bad = bitwise_mismatch(got.detach().cpu(), want)
        if bool(bad.any()):
            first = int(bad.reshape(-1).nonzero()[0, 0])
            return f"{where}: {int(bad.sum())} mismatch(es), first at flat index {first}"
    return None


def _exact_case(op, case, label, device, fn, inputs, expected):
    try:
        outs = fn(*[t.to(device) for t in inputs])
    except Exception as exc:  # reported, never raised
        return result(op, case, label, False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    outs = outs if isinstance(outs, tuple) else (outs,)
    problem = _first_problem(outs, expected, _resolved(device))
    detail = problem or f"bit-exact, input shape {tuple(inputs[0].shape)}"
    return result(op, case, label, problem is None, detail, outs[0].device)


def _resolved(device):
    return torch.empty(0, device=device).device


def _quantize_cases(device):
    return [r for op, quantize in _quantizers(device) for r in _quantize_cases_of(op, quantize, device)]


def _quantize_cases_of(Q, mxfp4_quantize, device):
    out = []
    example = torch.zeros(1, 32)
    example[0, :8] = torch.tensor([6, 5, 2.5, 1.25, 0.25, 0.2, -3.5, -7])
    spec_bytes = torch.zeros(1, 16, dtype=torch.uint8)
    spec_bytes[0, :4] = torch.tensor([0x77, 0x35, 0x01, 0xFE])
    spec_scales = torch.tensor([[[0x7F, 0x00]]], dtype=torch.uint8)
    out.append(_exact_case(Q, "A2 worked example", "float32", device, lambda x: mxfp4_quantize(x), [example],
                           (spec_bytes, spec_scales)))
    for i, dtype in enumerate((torch.float16, torch.bfloat16, torch.float32)):
        x = _random(16, 1024, dtype, offset=i)
        for mode in ("round", "rint", "floor"):
            out.append(_exact_case(Q, f"random 2^U(-20,20), {mode}", dtype_name(dtype), device,
                                   lambda t, m=mode: mxfp4_quantize(t, m), [x], ref.mxfp4_quantize_ref(x, mode)))
    special = _special()
    out.append(_exact_case(Q, "zero/-0/tiny/NaN/Inf blocks", "float32", device, mxfp4_quantize, [special],
                           ref.mxfp4_quantize_ref(special)))
    x96 = _random(7, 96, torch.bfloat16, offset=5)
    out.append(_exact_case(Q, "K = 96 (pad byte)", "bfloat16", device, mxfp4_quantize, [x96],
                           ref.mxfp4_quantize_ref(x96)))
    base = _random(64, 96, torch.float32, offset=6)
    out.append(_exact_case(Q, "transposed input", "float32", device, lambda t: mxfp4_quantize(t.t()), [base],
                           ref.mxfp4_quantize_ref(base.t().contiguous())))
    empty = torch.zeros(0, 64)
    out.append(_exact_case(Q, "empty input", "float32", device, mxfp4_quantize, [empty],
                           (torch.zeros(0, 32, dtype=torch.uint8), torch.zeros(0, 1, 2, dtype=torch.uint8))))
    return out


def _dequantize_cases(device):
    out = []
    codes, scales = ref.mxfp4_quantize_ref(_random(8, 160, torch.float32, offset=7) * 64)
    for dtype in (None, torch.bfloat16, torch.float16, torch.float32):
        label = "None" if dtype is None else dtype_name(dtype)
        out.append(_exact_case(D, "random codes", label, device, lambda c, s, t=dtype: mxfp4_dequantize(c, s, t),
                               [codes, scales], (ref.mxfp4_dequantize_ref(codes, scales, dtype),)))
    out.append(_exact_case(D, "float4_e2m1fn_x2 / float8_e8m0fnu views", "bfloat16", device,
                           lambda c, s: mxfp4_dequantize(c.view(torch.float4_e2m1fn_x2), s.view(torch.float8_e8m0fnu)),
                           [codes, scales], (ref.mxfp4_dequantize_ref(codes, scales),)))
    return out


def _svd_inputs(shape, n, r, offset):
    g = _gen(100 + offset)
    k = shape[-1]
    x = torch.randn(shape, generator=g).to(torch.bfloat16)
    codes, scales = ref.mxfp4_quantize_ref(torch.randn(n, k, generator=g))
    down = (torch.randn(k, r, generator=g) / k ** 0.5).to(torch.bfloat16)
    up = torch.randn(r, n, generator=g).to(torch.bfloat16)
    return [x, codes, scales, down, up]


def _within_bounds(got, golden, isolated):
    a, g = got.double(), golden.double()
    if not torch.equal(a.isnan(), g.isnan()):
        return "NaN positions differ"
    if isolated:
        e = torch.where(g == 0, torch.full_like(g, -133.0), torch.floor(torch.log2(g.abs())).clamp(min=-126) - 7)
        bad = (a - g).abs() > torch.exp2(e)
        return f"{int(bad.sum())} element(s) beyond 1 ulp" if bool(bad.any()) else None
    err = (a - g).abs()
    if float(err.max()) > 2.0 ** -6 * float(g.abs().max()) or float(err.mean()) > 2.0 ** -8 * float(g.abs().mean()):
        return f"error max {float(err.max()):.3g} / mean {float(err.mean()):.3g} beyond A7"
    return None


def _svd_case(case, device, inputs, isolated=False, op=S, fn=svd_quant):
    try:
        got = fn(*[t.to(device) for t in inputs])
    except Exception as exc:
        return result(op, case, "bfloat16", False, f"raised {type(exc).__name__}: {str(exc).splitlines()[0]}")
    golden = ref.svd_quant_ref(*inputs)
    x, up = inputs[0], inputs[4]
    want_shape = tuple(x.shape[:-1]) + (up.shape[1],)
    if tuple(got.shape) != want_shape or got.dtype != torch.bfloat16 or not got.is_contiguous():
        return result(op, case, "bfloat16", False, f"got {dtype_name(got.dtype)}{tuple(got.shape)}", got.device)
    if got.device != _resolved(device):
        return result(op, case, "bfloat16", False, f"on {got.device}", got.device)
    problem = _within_bounds(got.cpu(), golden, isolated) if got.numel() else None
    detail = problem or ("within 1 ulp of the float64 golden" if isolated else "within the A7 bounds of the golden")
    return result(op, case, "bfloat16", problem is None, detail + f", x {tuple(x.shape)}", got.device)


SE = "svd_quant (fused AscendC kernel, sim)"


def _svd_cases(device):
    # On the CPU each case runs twice: the op, and the fused dav-3510 kernel in the kernel sim
    # (every build has it: docs/kernel_sim.md, "Kernels of two arches in one process").
    ops = [(S, svd_quant)]
    if _resolved(device).type == "cpu":
        ops.append((SE, torch.ops.amct._svd_quant_emulated))
    out = []
    for op, fn in ops:
        out += [_svd_case("x (2, 3, 64), N 16, R 8", device, _svd_inputs((2, 3, 64), 16, 8, 0), op=op, fn=fn),
                _svd_case("K = 96 (pad byte), N 40, R 32", device, _svd_inputs((7, 96), 40, 32, 1), op=op, fn=fn)]
        iso = _svd_inputs((33, 512), 64, 4, 2)
        iso[3], iso[4] = torch.zeros_like(iso[3]), torch.zeros_like(iso[4])
        out.append(_svd_case("FP4 branch isolated (down = up = 0)", device, iso, isolated=True, op=op, fn=fn))
        out.append(_svd_case("empty batch", device, _svd_inputs((0, 3, 64), 16, 8, 3), op=op, fn=fn))
    return out


QDQ = "quant_dequant_mxfp4"


def _qdq_cases(device):
    """quant_dequant_mxfp4 bit-exact against the reference: random rows with ragged last dims in
    the three dtypes and five scales, special blocks, the flat schema; the AscendC kernel through
    the sim (_quant_dequant_mxfp4_emulated) on the same inputs when the device is the CPU."""
    from amct_ops.svd_quant import quant_dequant_mxfp4

    emulated = _resolved(device).type == "cpu"
    out = []
    special = _special()
    for i, dtype in enumerate((torch.float16, torch.bfloat16, torch.float32)):
        x = _random(8, 1024, dtype, offset=20 + i)[:, :1000]
        for s in (0.25, 0.5, 1.0, 1.5, 2.0):
            want = (ref.quant_dequant_mxfp4_ref(x, 32, s),)
            out.append(_exact_case(QDQ, f"random, last dim 1000, s={s}", dtype_name(dtype), device,
                                   lambda t, v=s: quant_dequant_mxfp4(t, 32, v), [x], want))
            if emulated:
                out.append(_exact_case(QDQ, f"emulated kernel, last dim 1000, s={s}", dtype_name(dtype), device,
                                       lambda t, v=s: torch.ops.amct._quant_dequant_mxfp4_emulated(t, 32, v), [x], want))
    want = (ref.quant_dequant_mxfp4_ref(special),)
    out.append(_exact_case(QDQ, "zero/-0/tiny/NaN/Inf blocks", "float32", device, quant_dequant_mxfp4, [special], want))
    if emulated:
        out.append(_exact_case(QDQ, "emulated kernel, zero/-0/tiny/NaN/Inf blocks", "float32", device,
                               lambda t: torch.ops.amct._quant_dequant_mxfp4_emulated(t, 32, 1.0), [special], want))
    flat = _random(1, 4096, torch.float32, offset=30)[0]
    out.append(_exact_case(QDQ, "flat schema torch.ops.amct.quant_dequant_mxfp4(x, 2.0)", "float32", device,
                           lambda t: torch.ops.amct.quant_dequant_mxfp4(t, 2.0), [flat],
                           (ref.quant_dequant_mxfp4_ref(flat, 32, 2.0),)))
    return out


def run(device):
    return _quantize_cases(device) + _dequantize_cases(device) + _svd_cases(device) + _qdq_cases(device)
