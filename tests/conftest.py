"""pytest set-up shared by every test module.

torch.compile caches compiled graphs machine-wide (``/tmp/torchinductor_<user>``) and a cached
graph can name operator overloads of another build of this project (seen when two checkouts of
different revisions ran their tests on one machine). Each test run therefore compiles into a
private cache, removed at exit, unless the caller chose a cache with TORCHINDUCTOR_CACHE_DIR.
"""
import atexit
import os
import shutil
import tempfile

if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="amct_ops_inductor_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
