"""Runs every NPU op of amct_ops through the fake-NPU harness (harness.py) and prints, as one JSON
object, what each call cost: host->device / device->host / device->device copies, stream
synchronisations and the kernel launches the stubs recorded. tests/test_npu_launch.py runs it in a
subprocess (the harness registers a PrivateUse1 backend for the whole process) and asserts.

Each scenario is called four times with inputs already on the device: `first` (a tiling never
seen, maybe LUTs), `warm` (the same call again), `other` (a shape with another tiling) and
`warm_again` (the first shape once more). Counts exclude the preparation of inputs.

    PYTHONPATH=staging python tests/npu_fake/driver.py    # prints {"skip": reason} if it cannot build
"""
import json
import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

BF16, U8, I32 = torch.bfloat16, torch.uint8, torch.int32
STEPS = ("first", "warm", "other", "warm_again")


def device_inputs(dev, *tensors):
    return [t.to(dev) if isinstance(t, torch.Tensor) else t for t in tensors]


def scenarios(dev):
    """name -> (call, inputs of the first shape, inputs of the other shape); inputs are on `dev`
    unless a scenario says otherwise."""
    amct = torch.ops.amct
    g = torch.Generator().manual_seed(14)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype)

    def codes(*shape):
        return torch.randint(0, 256, shape, generator=g, dtype=U8)

    def hif4_packed(n):
        return amct.hifloat4_pack(randn(4, n, dtype=BF16))

    def mxfp4(n):
        return amct.mxfp4_quantize(randn(4, n, dtype=BF16), "round")

    def svd(m, k):
        x = randn(m, k, dtype=BF16)
        w_codes, w_scales = amct.mxfp4_quantize(randn(16, k), "round")
        return x, w_codes, w_scales, (randn(k, 8) / 8).to(BF16), randn(8, 16, dtype=BF16)

    def stem(kv_len, max_kb, lengths_on_device=True):
        ql, kvl = torch.tensor([200], dtype=I32), torch.tensor([kv_len], dtype=I32)
        md = amct.npu_stem_indexer_metadata(ql, kvl, 32, 2)
        q, k = randn(1, 32, 2, 2048, dtype=BF16), randn(1, 2, max_kb, 2048, dtype=BF16)
        q, k, vb, md = device_inputs(dev, q, k, torch.zeros(1, 2, max_kb), md)
        if lengths_on_device:
            ql, kvl = device_inputs(dev, ql, kvl)
        return q, k, vb, ql, kvl, md

    def stem_call(q, k, vb, ql, kvl, md):
        return amct.npu_stem_indexer(q, k, vb, ql, kvl, metadata=md)

    def x_and_out(x, dtype=None):
        return x, torch.empty(x.shape, dtype=dtype or x.dtype)

    def x_and_outs(x):
        return (x, *amct.mxfp4_quantize(x, "round"))

    on_dev = lambda *t: device_inputs(dev, *t)  # noqa: E731
    table = {
        "encode_to_hifloat8": (amct.encode_to_hifloat8, on_dev(randn(256, dtype=BF16)), on_dev(randn(1000, dtype=BF16))),
        "decode_from_hifloat8": (amct.decode_from_hifloat8, on_dev(codes(256), BF16), on_dev(codes(1000), BF16)),
        "hifloat8_fake_quant": (amct.hifloat8_fake_quant, on_dev(randn(256)), on_dev(randn(1000))),
        "hifloat4_fake_quant": (amct.hifloat4_fake_quant, on_dev(randn(4, 64, dtype=BF16), -1),
                                on_dev(randn(8, 128, dtype=BF16), -1)),
        "hifloat4_pack": (amct.hifloat4_pack, on_dev(randn(4, 64, dtype=BF16)), on_dev(randn(8, 128, dtype=BF16))),
        "hifloat4_unpack": (amct.hifloat4_unpack, on_dev(*hif4_packed(64), BF16), on_dev(*hif4_packed(192), BF16)),
        "mxfp4_quantize": (amct.mxfp4_quantize, on_dev(randn(4, 64, dtype=BF16), "round"),
                           on_dev(randn(8, 96, dtype=BF16), "round")),
        "mxfp4_dequantize": (amct.mxfp4_dequantize, on_dev(*mxfp4(64), BF16), on_dev(*mxfp4(96), BF16)),
        "quant_dequant_mxfp4": (amct.quant_dequant_mxfp4, on_dev(randn(64), 1.0), on_dev(randn(160), 1.0)),
        "quant_dequant_mxfp4.last_dim": (amct.quant_dequant_mxfp4.last_dim, on_dev(randn(4, 64), 32, 1.0),
                                         on_dev(randn(4, 96), 32, 1.0)),
        "svd_quant": (amct.svd_quant, on_dev(*svd(2, 64)), on_dev(*svd(3, 96))),
        "npu_stem_indexer": (stem_call, stem(400, 4), stem(300, 3)),
        "npu_stem_indexer (CPU lengths)": (stem_call, stem(550, 5, False), stem(700, 6, False)),
        "npu_stem_indexer_metadata": (lambda ql, kvl: amct.npu_stem_indexer_metadata(ql, kvl, 32, 2),
                                      on_dev(torch.tensor([200], dtype=I32), torch.tensor([400], dtype=I32)),
                                      on_dev(torch.tensor([200, 100], dtype=I32), torch.tensor([400, 300], dtype=I32))),
        "_probe": (amct._probe, on_dev(torch.zeros(8, dtype=I32)), on_dev(torch.zeros(8, dtype=I32))),
        # out= overloads (CompositeExplicitAutograd on every device but the CPU: the functional op, a copy)
        "encode_to_hifloat8.out": (lambda x, o: amct.encode_to_hifloat8.out(x, out=o),
                                   on_dev(*x_and_out(randn(320, dtype=BF16), U8)),
                                   on_dev(*x_and_out(randn(1100, dtype=BF16), U8))),
        "hifloat4_fake_quant.out": (lambda x, o: amct.hifloat4_fake_quant.out(x, -1, out=o),
                                    on_dev(*x_and_out(randn(2, 64))), on_dev(*x_and_out(randn(2, 192)))),
        "mxfp4_quantize.out": (lambda x, c, s: amct.mxfp4_quantize.out(x, "round", codes=c, scales=s),
                               on_dev(*x_and_outs(randn(2, 64, dtype=BF16))),
                               on_dev(*x_and_outs(randn(2, 160, dtype=BF16)))),
    }
    return table


def register_backend_name():
    """PrivateUse1 as "fake_npu", with the device module torch's Python side asks for."""
    torch.utils.rename_privateuse1_backend("fake_npu")
    module = types.ModuleType("fake_npu")
    module._lazy_init = lambda: None
    module.is_available = lambda: True
    module.device_count = lambda: 1
    module.current_device = lambda: 0
    torch._register_device_module("fake_npu", module)
    return torch.device("fake_npu", 0)


def platform_scenarios(fake, dev):
    """What the stubbed platform queries change: the SoC checks (svd_quant and stem_indexer need
    an Ascend950) and the core count the stem kernel's blockDim comes from (AI cores = vector
    cores / 2). Each entry: the error (or None) and the counts of one call."""
    table = scenarios(dev)
    out = {}
    for soc, cores in (("Ascend910B3", 8), ("Ascend950PR", 4)):
        fake.set_platform(soc, aiv_cores=cores)
        for name in ("svd_quant", "npu_stem_indexer"):
            call, first, _ = table[name]
            fake.reset()
            try:
                call(*first)
                error = None
            except RuntimeError as exc:
                error = str(exc).splitlines()[0]
            out[f"{name} on {soc} with {cores} vector cores"] = dict(fake.counts(), error=error,
                                                                     launches=fake.launches())
    fake.set_platform("Ascend950PR", aiv_cores=8)
    return out


def measure(fake, call, args):
    fake.reset()
    call(*args)
    result = dict(fake.counts())
    result["launches"] = fake.launches()
    return result


def main():
    import amct_ops
    for op in harness.OPS:
        __import__(f"amct_ops.{op}")
    try:
        fake = harness.load(Path(amct_ops.__file__).parent)
    except Exception as exc:  # a compiler or linker failure: the test skips with this reason
        errors = [line for line in str(exc).splitlines() if "error" in line] or [str(exc)[-1000:]]
        print(json.dumps({"skip": f"the fake-NPU harness does not build ({type(exc).__name__}): " + "; ".join(errors)[:2000]}))
        return 0
    fake.set_platform("Ascend950PR", aiv_cores=8)
    dev = register_backend_name()
    results = {}
    for name, (call, first, other) in scenarios(dev).items():
        try:
            results[name] = {step: measure(fake, call, args)
                             for step, args in zip(STEPS, (first, first, other, first))}
        except Exception as exc:
            results[name] = {"error": f"{type(exc).__name__}: {exc}"[-1500:]}
    results.update(platform_scenarios(fake, dev))
    print(json.dumps({"results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
