"""Loading of the compiled operator libraries.

Each operator ships a CPU/Meta library that needs torch only, and — in a build made with CANN —
a PrivateUse1 library that needs torch_npu and CANN. The NPU library is loaded only when
torch_npu imports, so an NPU-enabled wheel still imports on a machine without CANN.
"""
import functools
import os

import torch

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_COMMON_LIBRARY = os.path.join(_PACKAGE_DIR, "lib", "libamct_common.so")
_npu_loaded = []


def load_common_library():
    """The shared runtime of every operator (kernel sim state, platform facts, sim-only ops)."""
    torch.ops.load_library(_COMMON_LIBRARY)


@functools.lru_cache(maxsize=None)
def torch_npu_importable():
    """Import torch_npu once; False (not an exception) when it or CANN is missing."""
    try:
        import torch_npu  # noqa: F401
    except Exception:  # ImportError without CANN, OSError for missing CANN libraries
        return False
    return True


def load_operator_libraries(package_dir, op_package):
    """Load ``libamct_<op>.so`` and, when present and usable, ``libamct_<op>_npu.so``."""
    torch.ops.load_library(os.path.join(package_dir, f"libamct_{op_package}.so"))
    npu_library = os.path.join(package_dir, f"libamct_{op_package}_npu.so")
    if os.path.isfile(npu_library) and torch_npu_importable():
        common_npu = os.path.join(_PACKAGE_DIR, "lib", "libamct_common_npu.so")
        if os.path.isfile(common_npu):
            torch.ops.load_library(common_npu)
        torch.ops.load_library(npu_library)
        _npu_loaded.append(op_package)


def npu_libraries_loaded():
    return bool(_npu_loaded)


def npu_device_count():
    if not torch_npu_importable():
        return 0
    try:
        return int(torch.npu.device_count())
    except Exception:
        return 0


def has_op(name):
    try:
        getattr(torch.ops.amct, name)
    except (AttributeError, RuntimeError):
        return False
    return True
