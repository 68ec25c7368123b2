"""Self-test of the hifloat8_cast operators, run by ``python -m amct_ops selftest``.

Follows the op-package protocol of :mod:`amct_ops._cli`: :func:`run` returns one result dict per
(op, case, dtype). Every case is checked for the contracts of docs/hifloat8.md C1-C4 (output shape = input
shape, contract dtype, input's device, contiguous) and for bitwise equality with
:mod:`amct_ops.hifloat8_cast.reference`, computed on the CPU. Some cases also compare with values
copied from the spec tables (A6, Appendix A), so that a reference bug cannot hide an op bug.

Cases: zeros (incl. -0), signed values, powers of two, the A5 thresholds and every rounding
midpoint with its neighbours, 2^-23, 28672, 40960, 65504 and the dtype maximum, special values
(+-Inf, NaN payloads of both signs), the A6 worked examples, seeded random inputs, exhaustive
inputs (all 65536 fp16/bf16 patterns, all 256 codes), 0-d / 4-d / transposed / step-sliced /
expanded inputs, empty inputs (no kernel launch), a multi-block input, and on the CPU the
independence of thread count, emulated core count and UB size; fake-quant's straight-through
gradient.

On the CPU every case runs twice: on the op (native C++) and on the AscendC kernel through the
kernel sim (the private ``_<op>_emulated`` ops, reported under that name), which is what the NPU
runs. The emulated core count and UB size matter to the kernel only, so those cases run there.
"""
import torch

from amct_ops._cli import check_case, dtype_name, from_bits, result
from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant
from amct_ops.hifloat8_cast import reference as ref

SEED = 20240601
F16, BF16, F32, U8 = torch.float16, torch.bfloat16, torch.float32, torch.uint8
ENCODE, DECODE, FAKE_QUANT = "encode_to_hifloat8", "decode_from_hifloat8", "hifloat8_fake_quant"


def _emulated(op):
    return f"_{op}_emulated"


def _emulated_op(op):
    """The AscendC kernel of ``op`` through the kernel sim (CPU only)."""
    return getattr(torch.ops.amct, _emulated(op))

# A6 worked examples (input bits -> code), plus the A6 NaN rows.
A6_ENCODE = {
    F16: [(0x3C40, 0x09), (0x3C3F, 0x08), (0x3FC0, 0x10), (0x3BC0, 0x08), (0x4BC0, 0x40), (0x4C80, 0x41),
          (0x5B80, 0x60), (0x5D00, 0x61), (0x7700, 0x6E), (0x76FF, 0x6D), (0x7900, 0x6E), (0x7BFF, 0x6E),
          (0xFBFF, 0xEE), (0x01C8, 0x7E), (0x0180, 0x7E), (0x017F, 0x07), (0x0380, 0x7C), (0x03FF, 0x7C),
          (0x0002, 0x01), (0x0001, 0x00), (0x8002, 0x81), (0x8001, 0x00), (0x8000, 0x00), (0x7E00, 0x80),
          (0xFE00, 0x80), (0x7C01, 0x80), (0x7C00, 0x6F), (0xFC00, 0xEF)],
    BF16: [(0x3BA0, 0x71), (0x3BE0, 0x5C), (0x007F, 0x00), (0x0001, 0x00), (0x8001, 0x00), (0x0000, 0x00),
           (0x8000, 0x00), (0x7FC0, 0x80), (0xFFC0, 0x80), (0x7F80, 0x6F), (0xFF80, 0xEF), (0x7F7F, 0x6E),
           (0xFF7F, 0xEE), (0x46E0, 0x6E), (0x46DF, 0x6D)],
}

# A5 threshold table: both ends of every interval and the predecessor of each upper bound.
A5_PATTERNS = {
    F16: [0x0000, 0x0001, 0x0002, 0x0005, 0x0006, 0x00BF, 0x00C0, 0x017F, 0x0180, 0x027F, 0x0280, 0x037F,
          0x0380, 0x04FF, 0x0500, 0x3BBF, 0x3BC0, 0x3C3F, 0x3C40, 0x74FF, 0x7500, 0x76FF, 0x7700, 0x7BFF],
    BF16: [0x0000, 0x33FF, 0x3400, 0x34BF, 0x34C0, 0x373F, 0x3740, 0x37BF, 0x37C0, 0x381F, 0x3820, 0x385F,
           0x3860, 0x389F, 0x38A0, 0x3F77, 0x3F78, 0x3F87, 0x3F88, 0x469F, 0x46A0, 0x46DF, 0x46E0, 0x7F7F],
}

# Appendix A: code -> (fp16 bits, bf16 bits); fp32 is the bf16 pattern << 16. NaN (80) separately.
APPENDIX_A = [(0x00, 0x0000, 0x0000), (0x01, 0x0004, 0x3480), (0x07, 0x0100, 0x3780), (0x08, 0x3C00, 0x3F80),
              (0x0F, 0x3F80, 0x3FF0), (0x18, 0x3800, 0x3F00), (0x2F, 0x4B80, 0x4170), (0x4F, 0x5B00, 0x4360),
              (0x5F, 0x2300, 0x3C60), (0x6D, 0x7600, 0x46C0), (0x6E, 0x7800, 0x4700), (0x6F, 0x7C00, 0x7F80),
              (0x7C, 0x0400, 0x3880), (0x7D, 0x0600, 0x38C0), (0x7E, 0x0200, 0x3800), (0x7F, 0x0300, 0x3840),
              (0x81, 0x8004, 0xB480), (0x88, 0xBC00, 0xBF80), (0xEE, 0xF800, 0xC700), (0xEF, 0xFC00, 0xFF80),
              (0xFE, 0x8200, 0xB800), (0xFF, 0x8300, 0xB840), (0x80, 0x7FFF, 0x7FFF)]

# Fake-quant worked examples (input bits -> output bits), A6 and C4.
FQ_GOLDEN = {
    F16: [(0x3C40, 0x3C80), (0x3C3F, 0x3C00), (0x01C8, 0x0200), (0x7700, 0x7800), (0x76FF, 0x7600),
          (0x7BFF, 0x7800), (0xFBFF, 0xF800), (0x8001, 0x0000), (0x8000, 0x0000), (0x0002, 0x0004),
          (0x0001, 0x0000), (0x7C00, 0x7C00), (0xFC00, 0xFC00)],
    BF16: [(0x3BA0, 0x3BC0), (0x3BE0, 0x3C00), (0x8001, 0x0000), (0x007F, 0x0000), (0x8000, 0x0000),
           (0x7F7F, 0x4700), (0xFF7F, 0xC700), (0x7F80, 0x7F80)],
    F32: [(0x3F87FFFF, 0x3F800000), (0x46DFFFFF, 0x46C00000), (0x7F7FFFFF, 0x47000000),
          (0xFF7FFFFF, 0xC7000000), (0x80000000, 0x00000000), (0x80000001, 0x00000000),
          (0x00000001, 0x00000000), (0x33FFFFFF, 0x00000000), (0x34000000, 0x34800000),
          (0xB4000000, 0xB4800000), (0x46E00000, 0x47000000), (0x47200000, 0x47000000),
          (0x7F800000, 0x7F800000), (0xFF800000, 0xFF800000), (0x3F880000, 0x3F900000)],
}

SPECIAL = {
    F16: [0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0xFC01, 0x7FFF, 0xFFFF, 0x0000, 0x8000],
    BF16: [0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FFF, 0xFFFF, 0x0000, 0x8000],
    F32: [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF,
          0xFFFFFFFF, 0x00000000, 0x80000000],
}

SIGNED = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.75, -3.75, 1.0625, -1.0625, 0.1, -0.1, 100.0, -100.0,
          15.5, -15.5, 240.0, -240.0, 1000.0, -1000.0, 3.14159, -2.71828, 1e-3, -1e-3, 1e-5, -1e-5]

POW2_RANGE = {F16: (-24, 15), BF16: (-133, 127), F32: (-149, 127)}
BITS_WIDTH = {F16: 16, BF16: 16, F32: 32}


def _gen(offset=0):
    return torch.Generator().manual_seed(SEED + offset)


def _random_values(shape, dtype, lo_exp=-6.0, hi_exp=5.0, offset=0):
    """normal x 10^U(lo, hi), seeded; computed in fp32, then rounded to ``dtype``."""
    g = _gen(offset)
    n = torch.randn(shape, generator=g, dtype=torch.float32)
    scale = torch.pow(10.0, torch.empty(shape, dtype=torch.float32).uniform_(lo_exp, hi_exp, generator=g))
    return (n * scale).to(dtype)


def _all_patterns(dtype):
    """All 65536 bit patterns of a 16-bit dtype."""
    return torch.arange(-32768, 32768, dtype=torch.int16).view(dtype)


def _random_bit_patterns(n, offset=0):
    """Uniform random fp32 patterns: subnormals, NaN and Inf included."""
    g = _gen(offset)
    return torch.randint(-(2 ** 31), 2 ** 31, (n,), generator=g, dtype=torch.int64).to(torch.int32).view(F32)


def _powers_of_two(dtype):
    lo, hi = POW2_RANGE[dtype]
    v = torch.tensor([2.0 ** k for k in range(lo, hi + 1)], dtype=torch.float64)
    return torch.cat([v, -v]).to(dtype)


def _hif8_positive_values():
    """The 126 positive finite HiF8 values, ascending (from the reference's decode table)."""
    vals = ref.decode_from_hifloat8_ref(torch.arange(1, 128, dtype=U8), torch.float32).to(torch.float64)
    vals = vals[torch.isfinite(vals)]
    return torch.sort(vals).values


def _boundaries(dtype):
    """Every HiF8 value and rounding midpoint (with its +-2 ulp neighbours in ``dtype``), both signs,
    plus 2^-23, 28672, 40960, 65504, the dtype's maximum and smallest subnormal."""
    vals = _hif8_positive_values()
    grid = torch.cat([torch.zeros(1, dtype=torch.float64), vals])
    mids = (grid[:-1] + grid[1:]) / 2
    finfo = torch.finfo(dtype)
    extra = torch.tensor([2.0 ** -23, 28672.0, 40960.0, 65504.0, finfo.max, finfo.smallest_normal,
                          finfo.smallest_normal * finfo.eps], dtype=torch.float64)
    points = torch.cat([vals, mids, extra])
    width = BITS_WIDTH[dtype]
    sign = 1 << (width - 1)
    x = points.to(dtype)
    x = x[torch.isfinite(x)]
    if width == 16:
        base = x.view(torch.int16).to(torch.int64) & 0xFFFF
    else:
        base = x.view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    patterns = set()
    for b in base.tolist():
        for delta in (-2, -1, 0, 1, 2):
            p = b + delta
            if 0 <= p < sign:
                patterns.add(p)
    patterns = sorted(patterns)
    if dtype in A5_PATTERNS:
        patterns = sorted(set(patterns) | set(A5_PATTERNS[dtype]))
    return from_bits(patterns + [p | sign for p in patterns], dtype)


def _decode_golden(out_dtype):
    codes = torch.tensor([c for c, _, _ in APPENDIX_A], dtype=U8)
    if out_dtype == F16:
        bits = [h for _, h, _ in APPENDIX_A]
    elif out_dtype == BF16:
        bits = [b for _, _, b in APPENDIX_A]
    else:
        bits = [(0x7FFF0000 if c == 0x80 else b << 16) for c, _, b in APPENDIX_A]
    return codes, from_bits(bits, out_dtype)


def _decode_powers_of_two_codes():
    v = ref.decode_from_hifloat8_ref(torch.arange(256, dtype=U8), torch.float32)
    bits = v.view(torch.int32)
    mask = torch.isfinite(v) & (v != 0) & ((bits & 0x7FFFFF) == 0)
    return torch.nonzero(mask).reshape(-1).to(U8)


def _layout_cases(make_input):
    """(case, base tensor, view) for the layout contracts; ``make_input(shape, offset)``."""
    return [
        ("0-d", make_input((), 11), None),
        ("4-d", make_input((2, 3, 4, 5), 12), None),
        ("transposed", make_input((48, 64), 13), lambda t: t.t()),
        ("step-sliced", make_input((3 * 1024 + 2,), 14), lambda t: t[1::3]),
        ("expanded (stride 0)", make_input((1, 64), 15), lambda t: t.expand(32, 64)),
        ("empty (0,)", make_input((0,), 16), None),
        ("empty (3,0,5)", make_input((3, 0, 5), 17), None),
        ("multi-block (1048583)", make_input((1048583,), 18), None),
    ]


def _cpu_independence(device, op, fn, inp, reference, out_dtype, label, kernel=False):
    """CPU only: same bits with 1 thread, and for the emulated kernel with 1 / 7 cores and a 40 KB UB."""
    if device.type != "cpu":
        return []
    out = []

    def one_thread(x):
        saved = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(x)
        finally:
            torch.set_num_threads(saved)

    out.append(check_case(op, "1 thread", one_thread, inp, reference, device, out_dtype, dtype=label))
    if not kernel:
        return out
    try:
        from amct_ops._sim import sim_platform
    except Exception as exc:  # pragma: no cover - the common library is always staged
        out.append(result(op, "sim platform", label, False, f"amct_ops._sim unavailable: {exc}"))
        return out
    for cores, ub in ((1, 0), (7, 40 * 1024)):

        def with_platform(x, cores=cores, ub=ub):
            with sim_platform(aiv_cores=cores, ub_bytes=ub):
                return fn(x)

        name = f"sim {cores} core(s)" + (f", {ub // 1024} KB UB" if ub else "")
        out.append(check_case(op, name, with_platform, inp, reference, device, out_dtype, dtype=label))
    return out


def _encode_cases(device, dtype, emulated=False):
    op, fn, reference = ENCODE, encode_to_hifloat8, ref.encode_to_hifloat8_ref
    if emulated:
        op, fn = _emulated(ENCODE), _emulated_op(ENCODE)
    label = dtype_name(dtype)
    rows = []

    def case(name, inp, view=None, golden=None, f=fn):
        rows.append(check_case(op, name, f, inp, reference, device, U8, dtype=label, view=view,
                               golden=golden))

    case("zeros", from_bits([0x0000, 0x8000] * 4, dtype).reshape(2, 4))
    case("signed values", torch.tensor(SIGNED, dtype=torch.float64).to(dtype))
    case("powers of two", _powers_of_two(dtype))
    case("boundaries", _boundaries(dtype))
    case("special values", from_bits(SPECIAL[dtype], dtype))
    examples = A6_ENCODE[dtype]
    case("spec examples (A6)", from_bits([i for i, _ in examples], dtype),
         golden=torch.tensor([c for _, c in examples], dtype=U8))
    case("random (seeded)", _random_values((256, 256), dtype))
    case("exhaustive (65536)", _all_patterns(dtype))

    def no_grad_out(x):
        y = fn(x.detach().requires_grad_(True))
        if y.requires_grad:
            raise AssertionError("the output requires grad")
        return y

    if not emulated:  # the private op has no autograd registration
        case("requires_grad input", _random_values((1000,), dtype, offset=3), f=no_grad_out)
    for name, base, view in _layout_cases(lambda shape, off: _random_values(shape, dtype, offset=off)):
        case(name, base, view=view)
    rows += _cpu_independence(device, op, fn, _random_values((300007,), dtype, offset=21), reference, U8,
                              label, kernel=emulated)
    return rows


def _decode_cases(device, out_dtype, default=False, emulated=False):
    op = _emulated(DECODE) if emulated else DECODE
    decode = _emulated_op(DECODE) if emulated else decode_from_hifloat8
    if default:
        label = "bfloat16 (default)"
        out_dtype = BF16

        def fn(x):
            return decode(x)

        def fn_none(x):
            return decode(x, dtype=None)

        def reference(c):
            return ref.decode_from_hifloat8_ref(c)
    else:
        label = dtype_name(out_dtype)

        def fn(x):
            return decode(x, dtype=out_dtype)

        fn_none = None

        def reference(c):
            return ref.decode_from_hifloat8_ref(c, out_dtype)

    rows = []

    def case(name, inp, view=None, golden=None, f=fn):
        rows.append(check_case(op, name, f, inp, reference, device, out_dtype, dtype=label, view=view,
                               golden=golden))

    def codes(values):
        return torch.tensor(values, dtype=U8)

    all_codes = torch.arange(256, dtype=U8)
    if default:
        case("exhaustive (256), dtype omitted", all_codes)
        case("exhaustive (256), dtype=None", all_codes, f=fn_none)
        return rows
    case("zeros", codes([0x00] * 8).reshape(2, 4))
    case("signed values", codes([0x08, 0x88, 0x10, 0x90, 0x18, 0x98, 0x0B, 0x8B, 0x4A, 0xCA, 0x27, 0xA7]))
    case("powers of two", _decode_powers_of_two_codes())
    case("boundaries", codes([0x01, 0x81, 0x07, 0x87, 0x7E, 0xFE, 0x7F, 0xFF, 0x7C, 0xFC, 0x7D, 0xFD,
                              0x6D, 0xED, 0x6E, 0xEE, 0x08, 0x88, 0x0F, 0x8F]))
    case("special values", codes([0x80, 0x6F, 0xEF, 0x00, 0x80]))
    golden_codes, golden = _decode_golden(out_dtype)
    case("spec table (Appendix A)", golden_codes, golden=golden)
    g = _gen(5)
    case("random (seeded)", torch.randint(0, 256, (128, 512), generator=g, dtype=torch.int64).to(U8))
    case("exhaustive (256)", all_codes)

    def make(shape, off):
        return torch.randint(0, 256, shape, generator=_gen(off), dtype=torch.int64).to(U8)

    for name, base, view in _layout_cases(make):
        case(name, base, view=view)
    rows += _cpu_independence(device, op, fn, make((300007,), 22), reference, out_dtype, label, kernel=emulated)
    return rows


def _ste_case(device, dtype):
    """Straight-through gradient: grad_input == grad_output bitwise, NaN/Inf/saturated included."""
    label = dtype_name(dtype)
    name = "autograd (straight-through)"
    try:
        x = torch.cat([_random_values((512,), dtype, -9, 6, offset=31), from_bits(SPECIAL[dtype], dtype),
                       torch.tensor([40960.0, -65504.0, 1e-30], dtype=torch.float64).to(dtype)])
        grad = _random_values(x.shape, dtype, -3, 3, offset=32)
        xd = x.to(device).requires_grad_(True)
        y = hifloat8_fake_quant(xd)
        y.backward(grad.to(device))
        got = xd.grad
    except Exception as exc:
        msg = str(exc).strip().splitlines()
        return result(FAKE_QUANT, name, label, False, f"raised {type(exc).__name__}: {msg[0] if msg else ''}")
    if got is None:
        return result(FAKE_QUANT, name, label, False, "no gradient reached the input", device)
    if got.dtype != dtype or tuple(got.shape) != tuple(x.shape):
        return result(FAKE_QUANT, name, label, False,
                      f"gradient is {dtype_name(got.dtype)}{tuple(got.shape)}", got.device)
    width = 2 if dtype != F32 else 4
    view = torch.int16 if width == 2 else torch.int32
    same = torch.equal(got.detach().cpu().contiguous().view(view), grad.contiguous().view(view))
    detail = f"{x.numel()} elements, gradient identical to grad_output" if same else "gradient != grad_output"
    return result(FAKE_QUANT, name, label, same, detail, got.device)


def _fake_quant_cases(device, dtype, emulated=False):
    op, fn, reference = FAKE_QUANT, hifloat8_fake_quant, ref.hifloat8_fake_quant_ref
    if emulated:
        op, fn = _emulated(FAKE_QUANT), _emulated_op(FAKE_QUANT)
    label = dtype_name(dtype)
    rows = []

    def case(name, inp, view=None, golden=None):
        rows.append(check_case(op, name, fn, inp, reference, device, dtype, dtype=label, view=view,
                               golden=golden))

    case("zeros", from_bits([0, 1 << (BITS_WIDTH[dtype] - 1)] * 4, dtype).reshape(2, 4))
    case("signed values", torch.tensor(SIGNED, dtype=torch.float64).to(dtype))
    case("powers of two", _powers_of_two(dtype))
    case("boundaries", _boundaries(dtype))
    case("special values", from_bits(SPECIAL[dtype], dtype))
    pairs = FQ_GOLDEN[dtype]
    case("spec examples (A6, C4)", from_bits([i for i, _ in pairs], dtype),
         golden=from_bits([o for _, o in pairs], dtype))
    if dtype == F32:
        case("random (seeded, normal x 10^U(-9,6))", _random_values((512, 512), dtype, -9.0, 6.0))
        case("random bit patterns (seeded)", _random_bit_patterns(1 << 18))
    else:
        case("random (seeded)", _random_values((256, 256), dtype))
        case("exhaustive (65536)", _all_patterns(dtype))
    for name, base, view in _layout_cases(lambda shape, off: _random_values(shape, dtype, offset=off)):
        case(name, base, view=view)
    rows += _cpu_independence(device, op, fn, _random_values((300007,), dtype, -9, 6, offset=23), reference,
                              dtype, label, kernel=emulated)
    if not emulated:
        rows.append(_ste_case(device, dtype))
    return rows


def run(device):
    """All hifloat8_cast cases on ``device`` (a torch.device) -> list of result dicts."""
    device = torch.device(device)
    rows = []
    for emulated in ((False, True) if device.type == "cpu" else (False,)):
        for dtype in (F16, BF16):
            rows += _encode_cases(device, dtype, emulated)
        for dtype in (F16, BF16, F32):
            rows += _decode_cases(device, dtype, emulated=emulated)
        rows += _decode_cases(device, BF16, default=True, emulated=emulated)
        for dtype in (F16, BF16, F32):
            rows += _fake_quant_cases(device, dtype, emulated)
    return rows
