"""HiFloat4 (HiF4): block fake-quant, pack and unpack, bit-exact on every backend.

>>> import torch
>>> from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
>>> w = torch.randn(1024, 256, dtype=torch.bfloat16)
>>> wq = hifloat4_fake_quant(w)                    # same shape and dtype, 64-element blocks
>>> scale, value = hifloat4_pack(w)                # uint8 (1024, 4, 4) and (1024, 128)
>>> back = hifloat4_unpack(scale, value)           # float32; .to(w.dtype) equals wq bitwise

See the package README (hifloat4_cast/README.md in the source tree) for the format and the
numerics: 64-element blocks with an E6M2 block scale, per-8 and per-4 exponent flags and S1P2
element codes; a block holding NaN or +-Inf becomes all NaN.
"""
import os as _os

from .. import _loader

_loader.load_operator_libraries(_os.path.dirname(_os.path.abspath(__file__)), "hifloat4_cast")

from .ops import OPS, hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack  # noqa: E402
from . import reference  # noqa: E402

__all__ = ["OPS", "hifloat4_fake_quant", "hifloat4_pack", "hifloat4_unpack", "reference"]
