"""Self-test of the hifloat4_cast operators, run by ``python -m amct_ops selftest``.

Follows the op-package protocol of :mod:`amct_ops._cli`: :func:`run` returns one result dict per
(op, case, dtype). Every case checks the contracts of docs/hifloat4.md C1-C5 (shapes, dtypes, the input's
device, contiguous outputs) and bitwise equality with :mod:`amct_ops.hifloat4_cast.reference`,
computed on the CPU. The worked examples of docs/hifloat4.md A6 are also compared with the bytes and values
written in the spec, so that a reference bug cannot hide an op bug.

Cases: the A6 examples (all-2.0 block -> B9 FF FF FF / 66 / 1.875, zero block, poisoned blocks),
signed zeros, seeded random data, a wide dynamic range, random bit patterns (NaN, Inf and
subnormals included), blocks of structured values (clamps, E6M2 ties and carries), qdim 0 /
middle / last, rank 1 and rank 4, transposed / step-sliced / expanded inputs, empty inputs (no
kernel launch), rows that are not multiples of 512, on the CPU the independence of the thread
count, emulated core count and UB size; the identity unpack(pack(x)).to(x.dtype) ==
fake_quant(x); unpack of every scale byte; fake-quant's straight-through gradient.

On the CPU every case runs twice: on the ops (native C++) and on the AscendC kernel through the
kernel sim (the private ops ``_hifloat4_*_emulated``, the code the NPU runs); the emulated core
count and UB size cases apply to the kernel only, the gradient case to the ops only.
"""
import collections
import math

import torch

from amct_ops._cli import bitwise_mismatch, check_case, dtype_name, result
from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
from amct_ops.hifloat4_cast import reference as ref

SEED = 20240602
F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
DTYPES = (F16, BF16, F32)

# The three operations under test and the names their result rows carry.
Ops = collections.namedtuple("Ops", "fq pack unpack fq_name pack_name unpack_name emulated")
NATIVE = Ops(hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack,
             "hifloat4_fake_quant", "hifloat4_pack", "hifloat4_unpack", False)


def _emulated_ops():
    ops = torch.ops.amct
    return Ops(ops._hifloat4_fake_quant_emulated, ops._hifloat4_pack_emulated, ops._hifloat4_unpack_emulated,
               "_hifloat4_fake_quant_emulated", "_hifloat4_pack_emulated", "_hifloat4_unpack_emulated", True)


def _gen(offset=0):
    return torch.Generator().manual_seed(SEED + offset)


def _random(shape, dtype, spread=8, offset=0):
    """randn times 2^U(-spread, spread) per element, seeded, rounded to ``dtype``."""
    g = _gen(offset)
    x = torch.randn(shape, generator=g) * torch.exp2(
        torch.randint(-spread, spread + 1, shape, generator=g).float())
    return x.to(dtype)


def _wide(blocks, dtype, offset=0):
    """Per-block scales 2^U(-60, 20) times randn, clipped to the dtype's range."""
    g = _gen(offset)
    scale = torch.exp2(torch.randint(-60, 21, (blocks, 1), generator=g).float())
    x = torch.randn(blocks, 64, generator=g) * scale
    finfo = torch.finfo(dtype)
    return x.clamp(-finfo.max, finfo.max).to(dtype)


def _bit_patterns(n, dtype, offset=0):
    """Uniformly random bit patterns (NaN, Inf and subnormals included)."""
    g = _gen(offset)
    if dtype == F32:
        return torch.randint(-(2 ** 31), 2 ** 31, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(F32)
    return torch.randint(-(2 ** 15), 2 ** 15, (n,), generator=g, dtype=torch.int64).to(torch.int16).view(dtype)


def _structured(dtype):
    """Blocks of one kind each: all equal, one outlier, zeros with -0.0, tiny negatives (-> -0.0),
    both S clamps, the E6M2 double-rounding tie and carry of A6, NaN and Inf blocks."""
    rows = [
        [2.0] * 64,
        [0.0, -0.0] * 32,
        [1.0] * 63 + [1000.0],
        [-1e-30, 1e-30] * 32 if dtype == F32 else [-2.0 ** -24, 2.0 ** -24] * 32,
        [7.90625] + [1.0] * 63,
        [13.125] + [-1.0] * 63,
        [-(2.0 ** 21)] + [3.0] * 63 if dtype != F16 else [-60000.0] + [3.0] * 63,
        [float("nan")] + [1.0] * 63,
        [-float("inf")] + [0.5] * 63,
        [((-1) ** i) * (i + 1) / 8 for i in range(64)],
    ]
    return torch.tensor(rows, dtype=torch.float64).to(dtype)


def _fq_cases(device, dtype, ops):
    label = dtype_name(dtype)
    rows = []

    def case(name, inp, qdim=-1, view=None, golden=None, fn=None):
        f = fn or (lambda x: ops.fq(x, qdim))
        rows.append(check_case(ops.fq_name, name, f, inp, lambda x: ref.hifloat4_fake_quant_ref(x, qdim), device, dtype,
                               dtype=label, view=view, golden=golden))

    two = torch.full((1, 64), 2.0, dtype=dtype)
    case("A6 all-2.0 block -> 1.875", two, golden=torch.full((64,), 1.875, dtype=dtype))
    case("A6 zero block (with -0.0) -> +0.0", torch.tensor([0.0, -0.0] * 32, dtype=dtype),
         golden=torch.zeros(64, dtype=dtype))
    case("structured blocks", _structured(dtype))
    case("random (seeded)", _random((256, 512), dtype, offset=1))
    case("wide dynamic range", _wide(2048, dtype, offset=2))
    case("random bit patterns", _bit_patterns(1 << 17, dtype, offset=3).reshape(-1, 128))
    case("qdim 0", _random((128, 24), dtype, offset=4), qdim=0)
    case("middle qdim (rank 4)", _random((2, 3, 128, 5), dtype, offset=5), qdim=2)
    case("rank 1", _random((64,), dtype, offset=6))
    case("rows of 576 (not a multiple of 512)", _random((37, 576), dtype, offset=7))
    case("transposed (qdim 0)", _random((96, 64), dtype, offset=8), qdim=0, view=lambda t: t.t())
    case("step-sliced", _random((6, 384), dtype, offset=9), view=lambda t: t[::2, ::3])
    case("expanded (stride 0)", _random((1, 128), dtype, offset=10), view=lambda t: t.expand(16, 128))
    case("empty (0, 64)", torch.zeros(0, 64, dtype=dtype))
    case("empty (3, 0)", torch.zeros(3, 0, dtype=dtype))
    case("multi-block (1, 1048576)", _random((1, 1 << 20), dtype, offset=11))
    rows += _cpu_independence(device, dtype, _random((97, 1088), dtype, offset=12), ops)
    if not ops.emulated:
        rows.append(_ste_case(device, dtype))
    return rows


def _cpu_independence(device, dtype, inp, ops):
    """CPU only: same bits with 1 thread; for the kernel, emulated 1 / 3 cores and a 40 KB UB."""
    if device.type != "cpu":
        return []
    label = dtype_name(dtype)
    out = []

    def one_thread(x):
        saved = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return ops.fq(x)
        finally:
            torch.set_num_threads(saved)

    out.append(check_case(ops.fq_name, "1 thread", one_thread, inp, ref.hifloat4_fake_quant_ref, device, dtype,
                          dtype=label))
    if not ops.emulated:
        return out
    from amct_ops._sim import sim_platform

    for cores, ub in ((1, 0), (3, 40 * 1024)):

        def with_platform(x, cores=cores, ub=ub):
            with sim_platform(aiv_cores=cores, ub_bytes=ub):
                return ops.fq(x)

        name = f"sim {cores} core(s)" + (f", {ub // 1024} KB UB" if ub else "")
        out.append(check_case(ops.fq_name, name, with_platform, inp, ref.hifloat4_fake_quant_ref, device, dtype,
                              dtype=label))
    return out


def _ste_case(device, dtype):
    """Straight-through gradient, poisoned blocks included: grad_input == grad_output bitwise."""
    label = dtype_name(dtype)
    name = "autograd (straight-through)"
    FQ = NATIVE.fq_name
    try:
        x = _random((6, 128), dtype, offset=13)
        x[0, 3] = math.nan
        x[2, 70] = math.inf
        grad = _random((6, 128), dtype, spread=3, offset=14)
        xd = x.to(device).requires_grad_(True)
        hifloat4_fake_quant(xd).backward(grad.to(device))
        got = xd.grad
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        return result(FQ, name, label, False, f"raised {type(exc).__name__}: {msg[0] if msg else ''}")
    if got is None or got.dtype != dtype or tuple(got.shape) != tuple(x.shape):
        return result(FQ, name, label, False, "no gradient of the input's shape and dtype reached the input")
    bad = bitwise_mismatch(got.detach().cpu(), grad)
    passed = not bool(bad.any()) and bool(torch.isfinite(got.detach().cpu().float()).all())
    detail = "gradient identical to grad_output (finite through poisoned blocks)" if passed else "gradient differs"
    return result(FQ, name, label, passed, detail, got.device)


def _check_outputs(op, case, label, device, fn, inputs, expected, golden=None, expect_no_launch=False):
    """Runs fn(*device inputs); every output must match `expected` (CPU tensors) in shape, dtype
    and bits, be contiguous and on the device; optional `golden` (spec) values too."""
    try:
        from amct_ops import _sim

        before = _sim.launch_count() if expect_no_launch else None
        outs = fn(*[t.to(device) for t in inputs])
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        return result(op, case, label, False, f"raised {type(exc).__name__}: {msg[0] if msg else ''}")
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    if len(outs) != len(expected):
        return result(op, case, label, False, f"{len(outs)} outputs, expected {len(expected)}")
    for k, (got, want) in enumerate(zip(outs, expected)):
        where = f"output {k}"
        if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
            return result(op, case, label, False, f"{where}: {dtype_name(got.dtype)}{tuple(got.shape)} != "
                          f"{dtype_name(want.dtype)}{tuple(want.shape)}", got.device)
        if got.device != torch.device(device) and got.device.type != torch.device(device).type:
            return result(op, case, label, False, f"{where}: on {got.device}", got.device)
        if not got.is_contiguous():
            return result(op, case, label, False, f"{where}: not contiguous", got.device)
        got_cpu = got.detach().cpu()
        bad = bitwise_mismatch(got_cpu, want)
        if bool(bad.any()):
            i = int(torch.nonzero(bad).reshape(-1)[0])
            return result(op, case, label, False, f"{where}: {int(bad.sum())} mismatch(es), first at flat index "
                          f"{i}: got {got_cpu.reshape(-1)[i].item()!r}, expected {want.reshape(-1)[i].item()!r}",
                          got.device)
        if golden is not None and golden[k] is not None:
            bad = bitwise_mismatch(got_cpu, golden[k].reshape(got_cpu.shape))
            if bool(bad.any()):
                return result(op, case, label, False, f"{where}: differs from the spec's values", got.device)
    if expect_no_launch and before is not None and _sim.launch_count() != before:
        return result(op, case, label, False, "kernel launch for an empty input", outs[0].device)
    detail = ", ".join(f"{dtype_name(o.dtype)}{tuple(o.shape)}" for o in outs)
    if golden is not None:
        detail += ", matches the spec"
    return result(op, case, label, True, detail, outs[0].device)


def _pack_cases(device, dtype, ops):
    label = dtype_name(dtype)
    rows = []

    def case(name, x, golden=None):
        empty = x.numel() == 0 and device.type == "cpu"
        rows.append(_check_outputs(ops.pack_name, name, label, device, ops.pack, [x], list(ref.hifloat4_pack_ref(x)),
                                   golden=golden, expect_no_launch=empty))

    two = torch.full((1, 64), 2.0, dtype=dtype)
    case("A6 all-2.0 block -> B9 FF FF FF / 66", two,
         golden=[torch.tensor([0xB9, 0xFF, 0xFF, 0xFF], dtype=U8), torch.full((32,), 0x66, dtype=U8)])
    case("A6 zero block -> 00 00 00 00 / 00", torch.zeros(1, 64, dtype=dtype),
         golden=[torch.zeros(4, dtype=U8), torch.zeros(32, dtype=U8)])
    case("structured blocks (poison byte FF)", _structured(dtype))
    case("random (seeded)", _random((64, 1024), dtype, offset=21))
    case("random bit patterns", _bit_patterns(1 << 16, dtype, offset=22).reshape(-1, 256))
    case("rank 3", _random((3, 4, 192), dtype, offset=23))
    case("rank 1", _random((128,), dtype, offset=24))
    case("empty (0, 64)", torch.zeros(0, 64, dtype=dtype))
    case("empty (3, 0)", torch.zeros(3, 0, dtype=dtype))
    return rows


def _unpack_cases(device, out_dtype, ops):
    label = "float32 (default)" if out_dtype is None else dtype_name(out_dtype)
    rows = []

    def fn(s, v):
        return ops.unpack(s, v) if out_dtype is None else ops.unpack(s, v, out_dtype)

    def case(name, s, v, golden=None):
        empty = s.numel() == 0 and device.type == "cpu"
        rows.append(_check_outputs(ops.unpack_name, name, label, device, fn, [s, v], [ref.hifloat4_unpack_ref(s, v, out_dtype)],
                                   golden=golden, expect_no_launch=empty))

    g = _gen(31)
    every = torch.stack([torch.arange(256), torch.randint(0, 256, (256,), generator=g),
                         torch.randint(0, 256, (256,), generator=g), torch.randint(0, 256, (256,), generator=g)],
                        dim=-1).to(U8).reshape(256, 1, 4)
    case("every scale byte (00..FF)", every, torch.randint(0, 256, (256, 32), generator=g).to(U8))
    # hand-built: S = 0.5 (byte 0 = 47*4 + 0 = BC), l2 = 1 for group 0, code 4 -> 0.5 * 2 * 4/4 = 1.0
    s = torch.tensor([[[0xBC, 0x80, 0x00, 0x00]]], dtype=U8)
    v = torch.zeros(1, 32, dtype=U8)
    v[0, 0] = 0x04
    want = torch.zeros(64, dtype=torch.float32)
    want[0] = 1.0
    case("hand-built bytes (S 0.5, l2 1, code 4 -> 1.0)", s, v,
         golden=[want.to(out_dtype if out_dtype is not None else torch.float32)])
    case("random bytes", torch.randint(0, 256, (8, 16, 4), generator=g).to(U8),
         torch.randint(0, 256, (8, 512), generator=g).to(U8))
    case("empty", torch.zeros(3, 0, 4, dtype=U8), torch.zeros(3, 0, dtype=U8))
    return rows


def _identity_cases(device, dtype, ops):
    """C5: unpack(pack(x)).to(x.dtype) equals fake_quant(x) bitwise (qdim -1)."""
    label = dtype_name(dtype)
    what = "identity (C5)" + (" of the emulated kernel" if ops.emulated else "")
    x = torch.cat([_structured(dtype).reshape(-1), _random((64 * 200,), dtype, offset=41),
                   _bit_patterns(64 * 200, dtype, offset=42)]).reshape(-1, 128)
    try:
        xd = x.to(device)
        back = ops.unpack(*ops.pack(xd)).to(dtype)
        fq = ops.fq(xd)
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        return [result(what, "unpack(pack(x)).to(dtype) == fake_quant(x)", label, False,
                       f"raised {type(exc).__name__}: {msg[0] if msg else ''}")]
    bad = bitwise_mismatch(back.cpu(), fq.cpu())
    return [result(what, "unpack(pack(x)).to(dtype) == fake_quant(x)", label, not bool(bad.any()),
                   f"{x.numel()} elements" + (f", {int(bad.sum())} differ" if bool(bad.any()) else ""),
                   fq.device)]


def run(device):
    """All hifloat4_cast cases on ``device`` (a torch.device) -> list of result dicts."""
    device = torch.device(device)
    rows = []
    for ops in (NATIVE, _emulated_ops()) if device.type == "cpu" else (NATIVE,):
        for dtype in DTYPES:
            rows += _fq_cases(device, dtype, ops)
        for dtype in DTYPES:
            rows += _pack_cases(device, dtype, ops)
        for out_dtype in (None, F16, BF16, F32):
            rows += _unpack_cases(device, out_dtype, ops)
        for dtype in DTYPES:
            rows += _identity_cases(device, dtype, ops)
    return rows
