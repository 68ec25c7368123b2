"""Optional integrations: the torch_npu attributes and the torchair GE converters (docs/stem_indexer.md §7.4).

Both are best effort: without torch_npu (or torchair) nothing happens and nothing is printed.
The attachment works on any module object, so tests can pass a stand-in for torch_npu.
"""
import importlib
import sys
import warnings

from . import ops

#: torch_npu attribute name -> our wrapper.
ATTRIBUTES = {"npu_stem_indexer": ops.npu_stem_indexer, "npu_stem_indexer_metadata": ops.npu_stem_indexer_metadata}


def _is_ours(value):
    return getattr(value, "__module__", None) == ops.__name__


def attach(module):
    """Set ``module.npu_stem_indexer`` and ``module.npu_stem_indexer_metadata`` to our wrappers.

    An attribute of the same name that is not ours is kept, with one UserWarning naming it.
    Returns the names that were set.
    """
    attached, kept = [], []
    for name, fn in ATTRIBUTES.items():
        existing = getattr(module, name, None)
        if existing is not None and not _is_ours(existing):
            kept.append(name)
            continue
        setattr(module, name, fn)
        attached.append(name)
    if kept:
        warnings.warn(f"amct_ops.stem_indexer: {getattr(module, '__name__', module)} already has "
                      f"{', '.join(kept)} (not from amct_ops); kept it, use amct_ops.stem_indexer instead",
                      UserWarning, stacklevel=2)
    return attached


def attach_to_torch_npu():
    """Attach to torch_npu when it is already imported or imports; silent on any failure."""
    module = sys.modules.get("torch_npu")
    if module is None:
        from .. import _loader
        if not _loader.torch_npu_importable():
            return []
        module = sys.modules.get("torch_npu")
    if module is None:
        return []
    return attach(module)


def _converters(register, ge):
    """The two GE converters (IR order of §2), registered with torchair's decorator."""
    import torch

    @register(torch.ops.amct.npu_stem_indexer.default)
    def _stem_indexer(qflat, kflat, vbias, q_seq_lens, kv_seq_lens, *, num_prompt_tokens=None, metadata=None,
                      causal=True, stem_block_size=128, stem_stride=16, alpha=1.0, initial_blocks=4, window_size=4,
                      k_block_num_rate_medium=0.2, k_block_num_bias_medium=30, k_block_num_rate_large=0.1,
                      k_block_num_bias_large=30, topk_score_precision=1, meta_outputs=None):
        return ge.custom_op(
            "StemIndexer",
            inputs={"qflat": qflat, "kflat": kflat, "vbias": vbias, "q_seq_lens": q_seq_lens,
                    "kv_seq_lens": kv_seq_lens, "num_prompt_tokens": num_prompt_tokens, "metadata": metadata},
            attrs={"causal": ge.attr.Bool(causal), "stem_block_size": ge.attr.Int(stem_block_size),
                   "stem_stride": ge.attr.Int(stem_stride), "alpha": ge.attr.Float(alpha),
                   "initial_blocks": ge.attr.Int(initial_blocks), "window_size": ge.attr.Int(window_size),
                   "k_block_num_rate_medium": ge.attr.Float(k_block_num_rate_medium),
                   "k_block_num_bias_medium": ge.attr.Int(k_block_num_bias_medium),
                   "k_block_num_rate_large": ge.attr.Float(k_block_num_rate_large),
                   "k_block_num_bias_large": ge.attr.Int(k_block_num_bias_large),
                   "topk_score_precision": ge.attr.Int(topk_score_precision)},
            outputs=["sparse_indices", "sparse_seq_len"])

    @register(torch.ops.amct.npu_stem_indexer_metadata.default)
    def _stem_indexer_metadata(q_seq_lens, kv_seq_lens, q_heads, kv_heads, *, causal=True, stem_block_size=128,
                               dim_qkflat=2048, window_size=4, meta_outputs=None):
        return ge.custom_op(
            "StemIndexerMetadata",
            inputs={"q_seq_lens": q_seq_lens, "kv_seq_lens": kv_seq_lens},
            attrs={"q_heads": ge.attr.Int(q_heads), "kv_heads": ge.attr.Int(kv_heads), "causal": ge.attr.Bool(causal),
                   "stem_block_size": ge.attr.Int(stem_block_size), "dim_qkflat": ge.attr.Int(dim_qkflat),
                   "window_size": ge.attr.Int(window_size)},
            outputs=["metadata"])

    return _stem_indexer, _stem_indexer_metadata


def register_ge_converters():
    """Register the converters when torchair imports (only with torch_npu); False otherwise."""
    if "torch_npu" not in sys.modules:
        return False
    try:
        torchair = importlib.import_module("torchair")
        ge = importlib.import_module("torchair.ge")
        _converters(torchair.register_fx_node_ge_converter, ge)
    except Exception:  # torchair absent or of another API generation: eager and aclgraph still work
        return False
    return True
