"""StemIndexer: block scoring and dynamic Top-K block selection for block-sparse attention.

>>> import torch
>>> from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
>>> q_lens = kv_lens = torch.tensor([8192], dtype=torch.int32)
>>> qflat = torch.randn(1, 32, 64, 2048).bfloat16(); kflat = torch.randn(1, 4, 64, 2048).bfloat16()
>>> vbias = torch.zeros(1, 4, 64)
>>> md = npu_stem_indexer_metadata(q_lens, kv_lens, 32, 4, causal=True)
>>> idx, lens = npu_stem_indexer(qflat, kflat, vbias, q_lens, kv_lens, metadata=md, causal=True)

Ported from ops-transformer's ``torch.ops.custom`` ops: the same signatures in ``torch.ops.amct``.
When torch_npu imports, ``torch_npu.npu_stem_indexer`` and ``torch_npu.npu_stem_indexer_metadata``
are set to these wrappers (an existing foreign attribute is kept, with a warning); when torchair
imports, GE converters are registered. See stem_indexer/README.md in the source tree.
"""
import os as _os

from .. import _loader

_loader.load_operator_libraries(_os.path.dirname(_os.path.abspath(__file__)), "stem_indexer")

from .ops import OPS, npu_stem_indexer, npu_stem_indexer_metadata  # noqa: E402
from . import reference  # noqa: E402
from . import _integration  # noqa: E402

_integration.attach_to_torch_npu()
_integration.register_ge_converters()

__all__ = ["OPS", "npu_stem_indexer", "npu_stem_indexer_metadata", "reference"]
