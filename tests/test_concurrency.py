"""Concurrency: every operator called from 4 Python threads at once gives results identical to
serial calls, and the operators release the GIL while they run.

Each case builds its inputs once, computes the serial result, then 4 threads each call the op
several times on the same inputs (and on private copies) while the other threads do the same;
every result must equal the serial one bit for bit. The ``.out`` overloads are cases too (each
call writes a fresh out tensor of its own), and their serial result must equal the functional
op's. The MXFP4 inputs are large enough (32768 blocks) to be cut into several chunks that the
intra-op threads share (common/op_host/amct_parallel.h), inside each of the 4 Python threads.
The first call of each op in a fresh process builds its lazily initialised tables (the HiFloat8
LUTs, the kernel sim's per-thread block contexts), so the threaded phase also starts from cold
state in a subprocess.

Run from the repository root after ``bash ops_build.sh``::

    PYTHONPATH=staging python -m pytest tests/test_concurrency.py
"""
import importlib
import os
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import bitwise_mismatches  # noqa: E402

try:
    amct_ops = importlib.import_module("amct_ops")
except ImportError:  # pragma: no cover - reported as a skip
    amct_ops = None

THREADS = 4
CALLS_PER_THREAD = 6
# The stem_indexer case's token lengths (q, kv), causal, alpha 0.5: 5 query rows of 67-71
# visible blocks, each above its budget + 8 (K <= 44), so every row is scored and selected.
STEM_LENS = ([600], [9000])
STEM_ALPHA = 0.5
U8 = torch.uint8
OPS = torch.ops.amct
# ".out" case -> the functional case whose serial result it must equal.
OUT_OF = {
    "hifloat8_fake_quant.out fp32": "hifloat8_fake_quant fp32",
    "decode_from_hifloat8.out": "decode_from_hifloat8",
    "hifloat4_fake_quant.out fp16 qdim 0": "hifloat4_fake_quant fp16 qdim 0",
    "hifloat4_pack.out": "hifloat4_pack",
    "hifloat4_unpack.out": "hifloat4_unpack",
    "mxfp4_quantize.out": "mxfp4_quantize",
    "mxfp4_dequantize.out": "mxfp4_dequantize",
}
# (512, 2048) bf16: 32768 MXFP4 blocks, chunks of 4096 blocks (svd_quant_cpu.cpp: at least
# kGrainBlocks, about n / 16): 8 chunks for the intra-op threads.
MXFP4_SHAPE = (512, 2048)


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


def _cases():
    """name -> (package, zero-argument callable returning a tuple of output tensors)."""
    gen = torch.Generator().manual_seed(1234)
    cases = {}
    if _has("hifloat8_cast"):
        from amct_ops.hifloat8_cast import decode_from_hifloat8, encode_to_hifloat8, hifloat8_fake_quant
        xb = (torch.randn(257, 1031, generator=gen) * 8).to(torch.bfloat16)
        xf = torch.randn(300, 517, generator=gen) * 100
        codes = torch.randint(0, 256, (513, 129), generator=gen, dtype=torch.uint8)
        cases["encode_to_hifloat8 bf16"] = ("hifloat8_cast", lambda: (encode_to_hifloat8(xb),))
        cases["hifloat8_fake_quant fp32"] = ("hifloat8_cast", lambda: (hifloat8_fake_quant(xf),))
        cases["decode_from_hifloat8"] = ("hifloat8_cast", lambda: (decode_from_hifloat8(codes, torch.float16),))
        cases["hifloat8_fake_quant.out fp32"] = (
            "hifloat8_cast", lambda: (OPS.hifloat8_fake_quant.out(xf, out=torch.empty_like(xf)),))
        cases["decode_from_hifloat8.out"] = (
            "hifloat8_cast", lambda: (OPS.decode_from_hifloat8.out(codes, torch.float16,
                                                                   out=torch.empty(0, dtype=torch.float16)),))
    if _has("hifloat4_cast"):
        from amct_ops.hifloat4_cast import hifloat4_fake_quant, hifloat4_pack, hifloat4_unpack
        wb = (torch.randn(96, 1088, generator=gen) * 3).to(torch.bfloat16)
        wb[5, 64:128] = float("nan")  # one poisoned block
        wh = torch.randn(130, 640, generator=gen).to(torch.float16)
        scale, value = hifloat4_pack(wb)
        cases["hifloat4_fake_quant bf16"] = ("hifloat4_cast", lambda: (hifloat4_fake_quant(wb),))
        cases["hifloat4_fake_quant fp16 qdim 0"] = ("hifloat4_cast", lambda: (hifloat4_fake_quant(wh.t(), 0),))
        cases["hifloat4_pack"] = ("hifloat4_cast", lambda: hifloat4_pack(wb))
        cases["hifloat4_unpack"] = ("hifloat4_cast", lambda: (hifloat4_unpack(scale, value, torch.bfloat16),))
        cases["hifloat4_fake_quant.out fp16 qdim 0"] = (
            "hifloat4_cast", lambda: (OPS.hifloat4_fake_quant.out(wh.t(), 0, out=torch.empty(640, 130,
                                                                                             dtype=torch.float16)),))
        cases["hifloat4_pack.out"] = (
            "hifloat4_cast", lambda: OPS.hifloat4_pack.out(wb, scale=torch.empty_like(scale),
                                                           value=torch.empty(0, dtype=U8)))
        cases["hifloat4_unpack.out"] = (
            "hifloat4_cast", lambda: (OPS.hifloat4_unpack.out(scale, value, torch.bfloat16,
                                                              out=torch.empty(wb.shape, dtype=torch.bfloat16)),))
    if _has("svd_quant"):
        from amct_ops.svd_quant import mxfp4_dequantize, mxfp4_quantize, svd_quant
        w = torch.randn(72, 160, generator=gen).to(torch.bfloat16)
        codes4, scales4 = mxfp4_quantize(w)
        x = torch.randn(2, 33, 160, generator=gen).to(torch.bfloat16)
        down = (torch.randn(160, 8, generator=gen) * 0.1).to(torch.bfloat16)
        up = (torch.randn(8, 72, generator=gen) * 0.1).to(torch.bfloat16)
        rows, k = MXFP4_SHAPE
        block_scale = torch.exp2(torch.randint(-20, 20, (rows, k // 32, 1), generator=gen).float())
        wbig = (torch.randn(rows, k // 32, 32, generator=gen) * block_scale).reshape(rows, k).to(torch.bfloat16)
        big_codes, big_scales = mxfp4_quantize(wbig, "rint")
        cases["mxfp4_quantize"] = ("svd_quant", lambda: mxfp4_quantize(wbig, "rint"))
        cases["mxfp4_dequantize"] = ("svd_quant", lambda: (mxfp4_dequantize(big_codes, big_scales),))
        cases["mxfp4_quantize.out"] = (
            "svd_quant", lambda: OPS.mxfp4_quantize.out(wbig, "rint", codes=torch.empty_like(big_codes),
                                                        scales=torch.empty(0, dtype=U8)))
        cases["mxfp4_dequantize.out"] = (
            "svd_quant", lambda: (OPS.mxfp4_dequantize.out(big_codes, big_scales, None,
                                                           out=torch.empty(MXFP4_SHAPE, dtype=torch.bfloat16)),))
        cases["svd_quant"] = ("svd_quant", lambda: (svd_quant(x, codes4, scales4, down, up),))
    if _has("stem_indexer"):
        from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
        (q_tokens,), (kv_tokens,) = STEM_LENS
        qflat = (torch.rand(1, 32, -(-q_tokens // 128), 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
        kflat = (torch.rand(1, 4, -(-kv_tokens // 128), 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
        vbias = torch.rand(1, 4, kflat.size(2), generator=gen)
        ql, kl = torch.tensor([q_tokens], dtype=torch.int32), torch.tensor([kv_tokens], dtype=torch.int32)
        md = npu_stem_indexer_metadata(ql, kl, 32, 4)
        cases["npu_stem_indexer_metadata"] = ("stem_indexer", lambda: (npu_stem_indexer_metadata(ql, kl, 32, 4),))
        cases["npu_stem_indexer"] = ("stem_indexer", lambda: npu_stem_indexer(qflat, kflat, vbias, ql, kl, metadata=md,
                                                                               alpha=STEM_ALPHA))
    return cases


def _differs(got, expected):
    """True unless the output tuples match in shape, dtype and bits."""
    return any(g.shape != e.shape or g.dtype != e.dtype or bool(bitwise_mismatches(g, e).any())
               for g, e in zip(got, expected))


def _in_threads(work):
    """Calls work(tid, call) CALLS_PER_THREAD times in each of THREADS threads started together;
    the messages of the calls that returned one or raised."""
    errors = []
    barrier = threading.Barrier(THREADS)

    def worker(tid):
        try:
            barrier.wait()
            for call in range(CALLS_PER_THREAD):
                message = work(tid, call)
                if message:
                    errors.append(f"thread {tid} call {call}: {message}")
        except Exception as exc:  # noqa: BLE001 - reported to the main thread
            errors.append(f"thread {tid}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestThreadsEqualSerial(unittest.TestCase):
    def test_every_op_from_four_threads(self):
        cases = _cases()
        self.assertTrue(cases, "no operator cases: is any operator built?")
        if any(_has(p) for p in ("hifloat8_cast", "hifloat4_cast", "svd_quant")):
            self.assertTrue(any(name in cases for name in OUT_OF), "no out= case")
        for name, (_, fn) in cases.items():
            with self.subTest(op=name):
                expected = fn()
                if name in OUT_OF:
                    self.assertFalse(_differs(expected, cases[OUT_OF[name]][1]()),
                                     f"{name}: the serial out= result differs from the functional op's")
                self.assertEqual(_in_threads(lambda tid, call: _differs(fn(), expected) and "differs from serial"), [])

    @unittest.skipUnless(_has("stem_indexer"), "stem_indexer not built")
    def test_stem_case_reaches_topk(self):
        """The threads race the scoring and the selection, not only the short-path prefill."""
        from stem_oracle import topk_rows
        top, rows = topk_rows(*STEM_LENS, None, True, STEM_ALPHA, 32)
        self.assertEqual((top, rows), (32 * 5, 32 * 5))
        _, lens = _cases()["npu_stem_indexer"][1]()
        self.assertTrue(bool((lens < 64).all()), "every row is a Top-K row (L = K + 8 < vis)")

    def test_mixed_ops_at_once(self):
        """Different ops interleaved in the 4 threads (shared sim state, different kernels)."""
        cases = list(_cases().values())
        expected = [fn() for _, fn in cases]

        def work(tid, call):
            i = (tid + call) % len(cases)
            return _differs(cases[i][1](), expected[i]) and f"case {i} differs from serial"

        self.assertEqual(_in_threads(work), [])


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestColdStart(unittest.TestCase):
    """The first calls of a fresh process happen in 4 threads at once (lazy tables)."""

    def test_cold_threads(self):
        code = (
            "import sys, threading, torch\n"
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
            "import test_concurrency as tc\n"
            "cases = tc._cases()\n"
            "results = {}\n"
            "def worker(tid):\n"
            "    for name, (_, fn) in cases.items():\n"
            "        results[(tid, name)] = fn()\n"
            "threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "bad = [k for k in results if tc._differs(results[k], cases[k[1]][1]())]\n"
            "print('BAD', bad) if bad else print('OK', len(results))\n"
        )
        env = dict(os.environ)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertTrue(proc.stdout.strip().startswith("OK"), proc.stdout + proc.stderr[-2000:])


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestGilReleased(unittest.TestCase):
    """While an op runs in one thread, Python code keeps running in another.

    With the switch interval raised to an hour, a thread holding the GIL never has to give it up
    to a waiting one: the counting thread (which releases the GIL in every sleep) can advance only
    while the op's thread has released it. So a count that advances across one op call proves the
    call released the GIL, on any machine and at any load; an op holding it gives exactly 0. A
    call that is too short to see the other thread scheduled is repeated, up to CALL_ATTEMPTS
    times (a limit on failing only, never on speed)."""

    CALL_ATTEMPTS = 20

    def test_python_runs_during_an_op(self):
        cases = _cases()
        self.assertTrue(cases)
        for package in sorted({p for p, _ in cases.values()}):
            with self.subTest(package=package):
                self.assertGreater(self.progress_during(self._slow_call(package)), 0,
                                   f"{package}: no Python progress in another thread during the call: GIL held?")

    def progress_during(self, fn):
        """The most counts the other thread made during one call of fn (CALL_ATTEMPTS calls at most)."""
        count = [0]
        stop = threading.Event()

        def counter():
            while not stop.is_set():
                count[0] += 1
                time.sleep(0.0002)  # releases the GIL

        old = sys.getswitchinterval()
        thread = threading.Thread(target=counter)
        sys.setswitchinterval(3600.0)
        thread.start()
        best = 0
        try:
            for _ in range(self.CALL_ATTEMPTS):
                time.sleep(0.01)  # the counter thread runs, then blocks again
                before = count[0]
                fn()
                best = max(best, count[0] - before)
                if best > 0:
                    break
        finally:
            stop.set()
            sys.setswitchinterval(old)
            thread.join()
        return best

    @staticmethod
    def _slow_call(package):
        if package == "hifloat8_cast":
            from amct_ops.hifloat8_cast import hifloat8_fake_quant
            x = torch.randn(24 << 20)
            return lambda: [hifloat8_fake_quant(x) for _ in range(2)]
        if package == "hifloat4_cast":
            from amct_ops.hifloat4_cast import hifloat4_fake_quant
            x = torch.randn(16 << 20)  # the native op is fast: enough work to last > 50 ms
            return lambda: [hifloat4_fake_quant(x) for _ in range(4)]
        if package == "svd_quant":
            from amct_ops.svd_quant import mxfp4_quantize
            w = torch.randn(4096, 4096).to(torch.bfloat16)
            return lambda: [mxfp4_quantize(w) for _ in range(3)]
        if package == "stem_indexer":
            from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
            qflat = torch.rand(1, 32, 64, 2048).to(torch.bfloat16)
            kflat = torch.rand(1, 4, 64, 2048).to(torch.bfloat16)
            vbias = torch.zeros(1, 4, 64)
            lens = torch.tensor([8192], dtype=torch.int32)
            md = npu_stem_indexer_metadata(lens, lens, 32, 4)
            return lambda: [npu_stem_indexer(qflat, kflat, vbias, lens, lens, metadata=md) for _ in range(10)]
        raise AssertionError(f"no slow call for {package}")


if __name__ == "__main__":
    unittest.main()
