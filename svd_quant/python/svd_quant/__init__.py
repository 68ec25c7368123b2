"""MXFP4 quantization and SVDQuant: a mixed MXFP4/BF16 matmul with a 16-bit low-rank branch.

>>> import torch
>>> from amct_ops.svd_quant import mxfp4_quantize, mxfp4_dequantize, svd_quant, decompose, SVDQuantLinear
>>> w = torch.randn(256, 512)
>>> codes, scales = mxfp4_quantize(w)            # uint8 (256, 256), uint8 (256, 8, 2)
>>> w_hat = mxfp4_dequantize(codes, scales)      # bfloat16 (256, 512)
>>> w_codes, w_scales, down, up = decompose(w, rank=32)
>>> x = torch.randn(4, 7, 512, dtype=torch.bfloat16)
>>> y = svd_quant(x, w_codes, w_scales, down, up)                       # bfloat16 (4, 7, 256)
>>> layer = SVDQuantLinear.from_linear(torch.nn.Linear(512, 256), rank=32)
>>> a = quant_dequant_mxfp4(torch.randn(4, 100), inv_scale_factor_scale=1.0)  # MXFP4 fake-quant, (4, 100)

See the package README (svd_quant/README.md in the source tree) for the formats, the exact
quantizer, the rounding points of svd_quant and the measured numbers.
"""
import os as _os

from .. import _loader

_loader.load_operator_libraries(_os.path.dirname(_os.path.abspath(__file__)), "svd_quant")

from .ops import OPS, mxfp4_dequantize, mxfp4_quantize, quant_dequant_mxfp4, svd_quant  # noqa: E402
from .layers import SVDQuantLinear, decompose  # noqa: E402
from . import reference  # noqa: E402

__all__ = ["OPS", "SVDQuantLinear", "decompose", "mxfp4_dequantize", "mxfp4_quantize", "quant_dequant_mxfp4", "reference",
           "svd_quant"]
