"""Builds and loads the fake-NPU launcher harness: the real NPU glue of every operator
(``*/op_extension/*_npu.cpp``, ``common/op_host/amct_npu.h``, ``platform_npu.cpp``,
``probe_npu.cpp``) compiled as a torch C++ extension against the stub headers of
``tests/npu_fake/include`` (torch_npu's NPUStream, CANN's acl and platform_ascendc), linked to the
staged CPU libraries that hold the shared host logic, with the fake PrivateUse1 device of
``fake_device.cpp``. The glue is compiled as the ascend950 (dav-3510) build compiles it, so every
NPU op has its launcher, whatever arch the staged CPU libraries were built for.

Loading it registers a PrivateUse1 backend for the whole process: use it in a subprocess
(``driver.py``). In a build for another SoC than ascend950 the staged stem_indexer library has
its own PrivateUse1 kernels (which refuse: no dav-3510 kernel there); the harness's override
them, and torch warns about it.
"""
import hashlib
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OPS = ("hifloat8_cast", "hifloat4_cast", "svd_quant", "stem_indexer")
GLUE = [*sorted(ROOT.glob("*/op_extension/*_npu.cpp")),
        ROOT / "common" / "op_host" / "platform_npu.cpp", ROOT / "common" / "op_host" / "probe_npu.cpp"]


def staged_libraries(package_dir):
    """The CPU libraries the glue links: libamct_common and each operator package's."""
    package_dir = Path(package_dir).resolve()
    libs = [package_dir / "lib" / "libamct_common.so"]
    libs += [package_dir / op / f"libamct_{op}.so" for op in OPS]
    missing = [str(p) for p in libs if not p.is_file()]
    if missing:
        raise FileNotFoundError("staged amct_ops libraries missing: " + ", ".join(missing))
    return libs


def libraries_stamp(libs):
    """A digest of the staged libraries (paths, mtimes): the harness's build id, so that ninja
    relinks it (and only relinks it) after a rebuild of the staged libraries."""
    key = hashlib.sha256()
    for path in libs:
        key.update(f"{path}:{path.stat().st_mtime_ns}".encode())
    return key.hexdigest()[:32]


def build_dir(package_dir):
    """One build directory per staged package; ninja rebuilds what changed."""
    key = hashlib.sha256(str(Path(package_dir).resolve()).encode()).hexdigest()[:16]
    path = Path(os.environ.get("AMCT_NPU_FAKE_BUILD", tempfile.gettempdir())) / "amct_npu_fake" / key
    path.mkdir(parents=True, exist_ok=True)
    return path


def load(package_dir, verbose=False):
    """Compile (cached) and import the harness; returns its Python module."""
    from torch.utils import cpp_extension

    libs = staged_libraries(package_dir)
    includes = [HERE / "include", HERE, ROOT / "common" / "op_host", ROOT / "common" / "ascendc_sim",
                ROOT / "common" / "op_kernel"]
    for op in OPS:
        includes += [ROOT / op / "op_extension", ROOT / op / "op_kernel"]
    defines = ["-D__NPU_ARCH__=3510", "-DAMCT_WITH_NPU=1", "-include", str(HERE / "build_config.h")]
    ldflags = [str(p) for p in libs]
    ldflags += [f"-Wl,-rpath,{d}" for d in sorted({str(p.parent) for p in libs})]
    # The stubbed amct_<op>_launch entries must win over the kernel-sim ones the CPU libraries export.
    ldflags += ["-Wl,-Bsymbolic-functions", f"-Wl,--build-id=0x{libraries_stamp(libs)}"]
    return cpp_extension.load(
        name="amct_npu_fake",
        sources=[str(HERE / "fake_device.cpp"), str(HERE / "fake_cann.cpp"), *map(str, GLUE)],
        extra_include_paths=[str(p) for p in includes],
        extra_cflags=["-O0", *defines],
        extra_ldflags=ldflags,
        build_directory=str(build_dir(package_dir)),
        verbose=verbose,
    )
