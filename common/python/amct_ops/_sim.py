"""Control of the kernel sim, which runs the AscendC kernels on the CPU (the ``_<op>_emulated`` ops).

The sim reports the target SOC's platform facts to the host tiling code: the AIV core count
(default 40) and the UB bytes per core (196608 on dav-2201, 253952 on dav-3510). Tests
override them to force tiling edge cases; results must not change. A build runs kernels of
two arches (the dav-3510 ones of every build, docs/kernel_sim.md): each sees the UB default of
its own arch, and an override must fit the usable UB of every kernel that launches under it.
"""
import contextlib

import torch


def get_platform(arch=None):
    """(aiv_cores, ub_bytes) the kernel sim currently reports to the tiling code of a kernel of
    ``arch`` (2201 or 3510; default: the build's arch)."""
    cores, ub_bytes = torch.ops.amct._sim_get_platform(int(arch or 0))
    return int(cores), int(ub_bytes)


def set_platform(aiv_cores=0, ub_bytes=0):
    """Override the emulated core count and UB size; 0 restores that fact's default."""
    torch.ops.amct._sim_set_platform(int(aiv_cores), int(ub_bytes))


def launch_count():
    """Number of kernel launches the sim has run in this process (all operators)."""
    return int(torch.ops.amct._sim_launch_count())


@contextlib.contextmanager
def sim_platform(aiv_cores=0, ub_bytes=0):
    """Run a block with overridden platform facts, restoring the previous override (or none)
    afterwards."""
    previous = [int(v) for v in torch.ops.amct._sim_get_platform_override()]
    set_platform(aiv_cores, ub_bytes)
    try:
        yield
    finally:
        torch.ops.amct._sim_set_platform(*previous)


def get_modes():
    """(saturation, flush_subnormals, strict_sync): the hardware modes the sim emulates."""
    return tuple(bool(v) for v in torch.ops.amct._sim_get_modes())


@contextlib.contextmanager
def hardware_modes(saturation=False, flush_subnormals=False, strict_sync=False):
    """Run a block with the sim emulating hardware modes: FLOAT saturation (half/bf16 results
    +-Inf -> +-MAX, NaN -> 0), flush-to-zero of subnormal vector float inputs and results, and
    strict synchronisation (no auto-sync: scalar <-> pipe orderings need explicit flags). Back
    to the environment's modes (AMCT_SIM_SATURATION, AMCT_SIM_FLUSH_SUBNORMALS,
    AMCT_SIM_STRICT_SYNC; default all off) afterwards."""
    torch.ops.amct._sim_set_modes(bool(saturation), bool(flush_subnormals), bool(strict_sync))
    try:
        yield
    finally:
        torch.ops.amct._sim_set_modes(None, None, None)
