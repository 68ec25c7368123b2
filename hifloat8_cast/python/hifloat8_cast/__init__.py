"""HiFloat8 (HiF8) casts: encode, decode and fake-quant, bit-exact on every backend.

>>> import torch
>>> from amct_ops.hifloat8_cast import encode_to_hifloat8, decode_from_hifloat8, hifloat8_fake_quant
>>> codes = encode_to_hifloat8(torch.randn(1024, 256, dtype=torch.bfloat16))   # uint8, same shape
>>> values = decode_from_hifloat8(codes)                                         # bfloat16

See the package README (hifloat8_cast/README.md in the source tree) for the format and the
numerics: round to nearest with ties away from zero, finite values saturate to +-32768,
NaN <-> code 0x80, +-Inf <-> 0x6F/0xEF, no -0.
"""
import os as _os

from .. import _loader

_loader.load_operator_libraries(_os.path.dirname(_os.path.abspath(__file__)), "hifloat8_cast")

from .ops import OPS, decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant  # noqa: E402
from . import reference  # noqa: E402

__all__ = ["OPS", "decode_from_hifloat8", "encode_to_hifloat8", "hifloat8_fake_quant", "reference"]
