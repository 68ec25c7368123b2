"""The NPU probe (common/op_kernel/amct_probe.cpp): facts about the device the AscendC
documentation leaves open, measured by a one-block kernel, decoded for ``selftest``'s JSON.

``selftest --device npu`` runs it on the device first; on the CPU it runs in the kernel sim,
whose answers follow the emulated hardware modes (``amct_ops._sim.hardware_modes``). The kernel
writes eight int32 words:

  0  the FLOAT saturation flag at launch (dav-2201; -1 on dav-3510, which has no such flag)
  1  GetRuntimeUBSize(): the UB bytes the API leaves to TPipe buffers (0 on dav-2201)
  2  fp16 0x0001 (2^-24) widened by Cast half -> float: 0x33800000 exact, 0 flushed
  3  fp32 2^-100 * 2^-30 by Mul (a subnormal result): 0x00080000 exact, 0 flushed
  4  fp32 2^-20 narrowed by Cast float -> half CAST_RINT (a subnormal result): 0x0010 exact
  5  fp32 2^-130 (a subnormal input) * 2^10 by Mul: 0x03800000 exact, 0 flushed
  6  fp32 1.5 * 2^-125 * 2^-6 by Muls (a subnormal result, 3 * 2^-132): 0x00060000 exact, 0 flushed
  7  fp32 2^-149 + 2^-148 by Add (subnormal inputs and result): 0x00000003 exact, 0 flushed
(6 and 7 are stem_indexer's score steps dot * 2^-6 and + vbias, docs/stem_indexer.md)

Whether the kernels were built with bisheng's auto-sync is a fact of the build, not of the
device: the build records its kernel flags (``kernel_flags`` in the build info, "" for a CPU
build) and the probe result repeats them, with what they imply (``auto_sync``):
``build_auto_sync_flag`` true or false, and ``build_auto_sync_basis`` saying why. The last
``--cce-auto-sync[=on|off]`` decides; without one, bisheng's default applies, which the CANN
documentation (asc-devkit docs/zh/api/SIMD-API/基础API/同步控制/核内同步/关键特性说明.md) gives as
``--cce-auto-sync=on`` for heterogeneous <<<>>> kernel compilation, as amct's build is. No
recorded flags (a CPU build: no kernel compiled by bisheng) give null.
"""
import re

FACTS = 8

# The exact IEEE results of words 2-7 (written out by hand: see the table above).
SUBNORMAL_CASES = (
    ("cast_half_to_float_input", 2, 0x33800000),
    ("mul_result", 3, 0x00080000),
    ("cast_float_to_half_result", 4, 0x0010),
    ("mul_input", 5, 0x03800000),
    ("muls_result", 6, 0x00060000),
    ("add_input", 7, 0x00000003),
)


def behaviour(word, exact):
    """'exact', 'flushed' (0) or the unexpected pattern in hex."""
    if word == exact:
        return "exact"
    if word == 0:
        return "flushed"
    return f"other {word & 0xFFFFFFFF:#010x}"


AUTO_SYNC_FLAG = re.compile(r"^--cce-auto-sync(?:=(.*))?$")
AUTO_SYNC_DEFAULT = ("bisheng's default: on for <<<>>> kernel compilation "
                     "(asc-devkit docs, 核内同步/关键特性说明.md)")


def auto_sync(flags):
    """(on, basis) implied by the bisheng flags string: on is True, False or None (unknown)."""
    if not flags:
        return None, "no kernel compiled by bisheng"
    given = [m for m in map(AUTO_SYNC_FLAG.match, flags.split()) if m]
    if not given:
        return True, AUTO_SYNC_DEFAULT
    last = given[-1]
    value = "on" if last.group(1) is None else last.group(1)
    on = {"on": True, "off": False}.get(value)
    return on, f"flag {last.group(0)}" if on is not None else f"unrecognised flag {last.group(0)}"


def decode(words, source, build_info=None, sim_modes=None):
    """The probe's JSON object from its eight words."""
    words = [int(w) for w in words]
    if len(words) != FACTS:
        raise ValueError(f"the probe writes {FACTS} words, got {len(words)}")
    info = build_info or {}
    flags = info.get("kernel_flags") or None
    facts = {
        "source": source,
        "saturation_flag_at_launch": None if words[0] == -1 else bool(words[0]),
        "runtime_ub_bytes": words[1],
        "subnormals": {name: behaviour(words[i], exact) for name, i, exact in SUBNORMAL_CASES},
        "build_kernel_flags": flags,
        "build_auto_sync_flag": auto_sync(flags)[0],
        "build_auto_sync_basis": auto_sync(flags)[1],
        "words": [f"{w & 0xFFFFFFFF:#010x}" for w in words],
    }
    if sim_modes is not None:
        facts["sim_modes"] = dict(zip(("saturation", "flush_subnormals", "strict_sync"), (bool(m) for m in sim_modes)))
    return facts


def run(device, build_info=None):
    """Run the probe on ``device`` (torch.device): the kernel on an NPU, the kernel sim on the
    CPU. Never raises: a failure is reported as ``{"source": ..., "error": ...}``."""
    import torch

    source = "kernel sim" if device.type == "cpu" else str(device)
    try:
        if device.type == "cpu":
            from . import _sim

            modes = _sim.get_modes()
            words = torch.ops.amct._probe_emulated().tolist()
            return decode(words, source, build_info, modes)
        out = torch.zeros(FACTS, dtype=torch.int32, device=device)
        torch.ops.amct._probe(out)
        return decode(out.cpu().tolist(), source, build_info)
    except Exception as exc:  # the selftest reports it and goes on with the operators
        return {"source": source, "error": f"{type(exc).__name__}: {exc}"}
