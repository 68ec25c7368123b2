"""amct_ops: low-bit quantization and sparse-attention operators for Ascend NPUs.

Every operator is registered in the ``torch.ops.amct`` namespace and has a documented Python
wrapper in its sub-package:

* ``amct_ops.hifloat8_cast``: ``encode_to_hifloat8``, ``decode_from_hifloat8``,
  ``hifloat8_fake_quant`` (HiFloat8 casts, bit-exact on every backend).
* ``amct_ops.hifloat4_cast``: ``hifloat4_fake_quant``, ``hifloat4_pack``, ``hifloat4_unpack``
  (HiFloat4 block fake-quant and its packed storage format).
* ``amct_ops.svd_quant``: ``mxfp4_quantize``, ``mxfp4_dequantize``, ``svd_quant`` (+ ``decompose``, ``SVDQuantLinear``).
* ``amct_ops.stem_indexer``: ``npu_stem_indexer``, ``npu_stem_indexer_metadata`` (block
  scoring and dynamic Top-K key-block selection for block-sparse attention).

Each operator runs on the CPU through the project's emulation of the AscendC API (the same
kernel source the NPU build compiles) and, in a build made with CANN, on the NPU
(``PrivateUse1``/"npu" tensors). ``python -m amct_ops info`` tells what this build contains,
``python -m amct_ops selftest`` checks it against the executable specs (``reference.py``).

This file is ``ops_init.py`` in the source tree; ``ops_build.sh`` stages it as
``amct_ops/__init__.py``.
"""
import importlib as _importlib

from . import _loader, _sim  # noqa: F401  (_sim: amct_ops._sim.launch_count() etc.)
from ._build_info import BUILD_INFO as _BUILD_INFO

__version__ = _BUILD_INFO["version"]

#: Sub-packages compiled into this build, in build order.
OPERATOR_PACKAGES = tuple(_BUILD_INFO["libraries"])

_loader.load_common_library()

for _name in OPERATOR_PACKAGES:
    _importlib.import_module(f"{__name__}.{_name}")


def build_info():
    """What this build is: version, SOC, NPU arch, backend, torch, compiler, revision, libraries."""
    return dict(_BUILD_INFO)


def available_ops():
    """Map each sub-package to the names of its ``torch.ops.amct`` operators that are registered."""
    result = {}
    for name in OPERATOR_PACKAGES:
        module = _importlib.import_module(f"{__name__}.{name}")
        result[name] = [op for op in getattr(module, "OPS", ()) if _loader.has_op(op)]
    return result


def npu_available():
    """True when this build's NPU libraries are loaded and torch_npu sees at least one device."""
    return _loader.npu_libraries_loaded() and _loader.npu_device_count() > 0


__all__ = ["OPERATOR_PACKAGES", "available_ops", "build_info", "npu_available", "__version__"]
