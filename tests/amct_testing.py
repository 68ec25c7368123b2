"""Test helpers shared by every operator's tests: the golden vectors (``tests/data``), bitwise
comparison in the formats' sense ("identical bits where the expected value is not NaN, NaN exactly
where it is NaN; payloads are never compared") and a readable report of the first mismatches."""
import contextlib
import functools
import importlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import torch

INT_VIEW = {torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float32: torch.int32, torch.float64: torch.int64}


DATA_DIR = Path(__file__).resolve().parent / "data"


@functools.lru_cache(maxsize=None)
def load_vector_file(name):
    """A parsed golden-vector file of ``tests/data`` (the test data of this repository)."""
    with open(DATA_DIR / name, encoding="utf-8") as fh:
        return json.load(fh)


def load_source_module(name, path):
    """Import a Python file of the source tree by path (e.g. a reference.py before a build)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def to_tensor(a):
    """numpy array (or tensor) -> CPU tensor; numpy is copied so the result owns its memory."""
    if isinstance(a, torch.Tensor):
        return a.detach().cpu()
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def bitwise_mismatches(actual, expected):
    """Boolean tensor: where ``actual`` differs from ``expected`` in the specs' bitwise sense."""
    if expected.is_floating_point():
        a_nan, e_nan = actual.isnan(), expected.isnan()
        iv = INT_VIEW[expected.dtype]
        differ = actual.contiguous().view(iv) != expected.contiguous().view(iv)
        return (a_nan != e_nan) | (~e_nan & differ)
    return actual != expected


def assert_bits_equal(case, actual, expected, what="", inputs=None, show_input=repr):
    """``case.fail`` with the first 8 mismatches unless ``actual`` equals ``expected`` bitwise."""
    actual, expected = to_tensor(actual), to_tensor(expected)
    case.assertEqual(actual.dtype, expected.dtype, f"{what}: dtype")
    case.assertEqual(tuple(actual.shape), tuple(expected.shape), f"{what}: shape")
    bad = bitwise_mismatches(actual, expected).reshape(-1)
    if bool(bad.any()):
        idx = torch.nonzero(bad).reshape(-1)[:8].tolist()
        fa, fe = actual.reshape(-1), expected.reshape(-1)
        flat_in = None if inputs is None else np.asarray(to_tensor(inputs)).reshape(-1)
        rows = []
        for i in idx:
            src = "" if flat_in is None else f" input={show_input(flat_in[i])}"
            rows.append(f"[{i}]{src} got={fa[i].item()!r} want={fe[i].item()!r}")
        case.fail(f"{what}: {int(bad.sum())} of {bad.numel()} differ; first: " + "; ".join(rows))


def assert_compiled_ste_backward(case, fake_quant, fake_quant_ref, x):
    """torch.compile(fullgraph=True, aot_eager) of (3 * fake_quant(x)).sum(): the loss equals the
    reference's and the straight-through gradient is exactly 3 everywhere."""
    torch._dynamo.reset()

    def step(v):
        return (fake_quant(v) * 3.0).sum()

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    x = x.detach().requires_grad_()
    loss = compiled(x)
    loss.backward()
    case.assertEqual(loss.item(), (fake_quant_ref(x.detach()) * 3.0).sum().item())
    case.assertTrue(bool((x.grad == 3.0).all()))


@contextlib.contextmanager
def num_threads(n):
    """torch's intra-op thread count set to n inside the block, restored after."""
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def find_op_package(name):
    """(the built ``amct_ops.<name>`` module or None, the reason). A missing package is a reason
    to skip; a package that exists but fails to import raises here (an error, not a skip)."""
    try:
        importlib.import_module("amct_ops")
    except ImportError as exc:
        return None, f"amct_ops is not importable ({exc})"
    if importlib.util.find_spec(f"amct_ops.{name}") is None:
        return None, f"amct_ops.{name} is not built yet"
    return importlib.import_module(f"amct_ops.{name}"), ""
