"""64-bit sizes: every element-wise op handles a tensor of more than 2^31 elements (the
HiFloat8 encode / decode / fake-quant, the HiFloat4 fake-quant along the last and a leading dim,
pack and unpack, the MXFP4 quantizer and dequantizer, and ``.out`` calls among them),
spot-checked against reference.py on slices at the start, across element 2^31 and at the end;
the StemIndexer scores query rows past element 2^31 of qflat; shapes whose element counts
overflow 32 bits never wrap in host code or tiling (Meta shapes, the tiling test hooks).

The large cases need ~6-10 GB of free memory each (inputs and outputs are freed between cases)
and are skipped (with the reason) when /proc/meminfo shows less; ``AMCT_SKIP_LARGE=1`` skips
them explicitly. The inputs are a random pattern of a length coprime to 2^31 repeated, so the
data around element 2^31 differs from the data at the start; byte inputs (codes, scales) are
random bytes, every pattern valid.
"""
import gc
import os
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from amct_testing import assert_bits_equal, load_source_module  # noqa: E402

try:
    import amct_ops
except ImportError:  # pragma: no cover
    amct_ops = None

REPO = Path(__file__).resolve().parents[1]
BIG = (1 << 31) + (1 << 14)  # > 2^31 elements, a multiple of 64 * 256
PATTERN = (1 << 20) + 64 * 7  # repeated; not a divisor of 2^31


def _has(package):
    return amct_ops is not None and package in amct_ops.OPERATOR_PACKAGES


def _available_bytes():
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _skip_large(needed_gb):
    if os.environ.get("AMCT_SKIP_LARGE") == "1":
        return "AMCT_SKIP_LARGE=1"
    if _available_bytes() < needed_gb * (1 << 30):
        return f"needs ~{needed_gb} GB free memory, /proc/meminfo shows {_available_bytes() / 2**30:.1f} GB"
    return None


def _repeated(pattern, n):
    reps = -(-n // pattern.numel())
    return pattern.repeat(reps)[:n]


def _random_packed(seed, scale_bytes):
    """BIG 4-bit codes as rows of 2^14 (a repeated random byte pattern, two codes a byte) and
    random scale bytes, `scale_bytes` per 64-element block: (rows, k, codes, scales)."""
    gen = torch.Generator().manual_seed(seed)
    k = 1 << 14
    rows = BIG // k
    byte_pattern = torch.randint(0, 256, (PATTERN,), generator=gen, dtype=torch.int32).to(torch.uint8)
    codes = _repeated(byte_pattern, BIG // 2).view(rows, k // 2)
    scales = torch.randint(0, 256, (rows, k // 64, scale_bytes), generator=gen, dtype=torch.int32).to(torch.uint8)
    return rows, k, codes, scales


def _windows(n, width):
    """Slices to check: start, across element 2^31 (and 2^32 when present), end."""
    mid = (1 << 31) - width // 2
    return [slice(0, width), slice(mid, mid + width), slice(n - width, n)]


def _reference(package, name):
    path = REPO / package / "python" / package / "reference.py"
    return getattr(load_source_module(f"{package}_reference_large", path), name)


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestMoreThan2e31Elements(unittest.TestCase):
    def tearDown(self):
        gc.collect()

    @unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
    def test_hifloat8_encode_bf16(self):
        reason = _skip_large(8)
        if reason:
            self.skipTest(reason)
        from amct_ops.hifloat8_cast import encode_to_hifloat8
        ref = _reference("hifloat8_cast", "encode_to_hifloat8_ref")
        gen = torch.Generator().manual_seed(31)
        pattern = (torch.randn(PATTERN, generator=gen) * torch.exp2(torch.randint(-20, 20, (PATTERN,), generator=gen))
                   ).to(torch.bfloat16)
        x = _repeated(pattern, BIG)
        self.assertGreater(x.numel(), 1 << 31)
        y = encode_to_hifloat8(x)
        self.assertEqual(y.shape, x.shape)
        for s in _windows(BIG, 1 << 16):
            assert_bits_equal(self, y[s], ref(x[s]), f"encode_to_hifloat8 elements [{s.start}, {s.stop})")

    @unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
    def test_hifloat4_fake_quant_bf16(self):
        reason = _skip_large(10)
        if reason:
            self.skipTest(reason)
        from amct_ops.hifloat4_cast import hifloat4_fake_quant
        ref = _reference("hifloat4_cast", "hifloat4_fake_quant_ref")
        gen = torch.Generator().manual_seed(32)
        pattern = (torch.randn(PATTERN, generator=gen) * 3).to(torch.bfloat16)
        pattern[64 * 5: 64 * 6] = float("nan")  # a poisoned block in every repetition
        x = _repeated(pattern, BIG).view(-1, 1 << 14)  # rows of 16384: 131073 rows
        self.assertGreater(x.numel(), 1 << 31)
        y = hifloat4_fake_quant(x)
        self.assertEqual(y.shape, x.shape)
        flat_x, flat_y = x.view(-1), y.view(-1)
        for s in _windows(BIG, 1 << 16):
            assert_bits_equal(self, flat_y[s], ref(flat_x[s]), f"hifloat4_fake_quant elements [{s.start}, {s.stop})")

    @unittest.skipUnless(_has("svd_quant"), "svd_quant not built")
    def test_mxfp4_quantize(self):
        reason = _skip_large(10)
        if reason:
            self.skipTest(reason)
        from amct_ops.svd_quant import mxfp4_quantize
        ref = _reference("svd_quant", "mxfp4_quantize_ref")
        gen = torch.Generator().manual_seed(33)
        k = 1 << 14
        pattern = torch.randn(PATTERN, generator=gen).to(torch.bfloat16)
        w = _repeated(pattern, BIG).view(-1, k)
        self.assertGreater(w.numel(), 1 << 31)
        codes, scales = mxfp4_quantize(w)
        rows = [0, 1, (1 << 31) // k, (1 << 31) // k + 1, w.shape[0] - 1]
        for r in rows:
            want_codes, want_scales = ref(w[r:r + 1])
            assert_bits_equal(self, codes[r:r + 1], want_codes, f"mxfp4_quantize codes row {r}")
            assert_bits_equal(self, scales[r:r + 1], want_scales, f"mxfp4_quantize scales row {r}")

    def require_memory(self, needed_gb):
        reason = _skip_large(needed_gb)
        if reason:
            self.skipTest(reason)

    @unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
    def test_hifloat8_decode_out_fp16(self):
        """2^31 + 2^14 random codes (2 GB) decoded through the .out overload into a preallocated
        fp16 tensor (4.3 GB)."""
        self.require_memory(7)
        ref = _reference("hifloat8_cast", "decode_from_hifloat8_ref")
        gen = torch.Generator().manual_seed(35)
        codes = _repeated(torch.randint(0, 256, (PATTERN,), generator=gen, dtype=torch.int32).to(torch.uint8), BIG)
        self.assertGreater(codes.numel(), 1 << 31)
        out = torch.empty(BIG, dtype=torch.float16)
        self.assertIs(torch.ops.amct.decode_from_hifloat8.out(codes, torch.float16, out=out), out)
        for s in _windows(BIG, 1 << 16):
            assert_bits_equal(self, out[s], ref(codes[s], torch.float16), f"decode.out fp16 [{s.start}, {s.stop})")
        del out, codes

    def _hifloat8_pattern(self, seed, dtype):
        gen = torch.Generator().manual_seed(seed)
        wide = torch.randn(PATTERN, generator=gen) * torch.exp2(torch.randint(-30, 20, (PATTERN,), generator=gen))
        wide[7::4099] = float("nan")
        wide[11::8191] = float("inf")
        return wide.to(dtype)

    @unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
    def test_hifloat8_fake_quant_bf16(self):
        self.require_memory(10)
        ref = _reference("hifloat8_cast", "hifloat8_fake_quant_ref")
        x = _repeated(self._hifloat8_pattern(36, torch.bfloat16), BIG)
        y = torch.ops.amct.hifloat8_fake_quant(x)
        self.assertEqual((y.dtype, y.shape), (x.dtype, x.shape))
        for s in _windows(BIG, 1 << 16):
            assert_bits_equal(self, y[s], ref(x[s]), f"hifloat8_fake_quant bf16 [{s.start}, {s.stop})")
        del x, y

    @unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
    def test_hifloat8_fake_quant_fp32_in_place_out(self):
        """fp32 (8.6 GB) through the .out overload with out = the input itself: one tensor of
        2^31 + 2^14 fp32 elements; the checked windows are copied before the call."""
        self.require_memory(10)
        ref = _reference("hifloat8_cast", "hifloat8_fake_quant_ref")
        x = _repeated(self._hifloat8_pattern(37, torch.float32), BIG)
        windows = _windows(BIG, 1 << 16)
        before = [x[s].clone() for s in windows]
        self.assertIs(torch.ops.amct.hifloat8_fake_quant.out(x, out=x), x)
        for s, xs in zip(windows, before):
            assert_bits_equal(self, x[s], ref(xs), f"hifloat8_fake_quant.out fp32 in place [{s.start}, {s.stop})")
        del x, before

    @unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
    def test_hifloat4_fake_quant_bf16_leading_dim(self):
        """qdim 0 of (8388672, 256): every block strides 256 elements, the rows from 2^23 on
        start past element 2^31; blocks of rows [0, 64), [2^23 - 64, 2^23 + 64) and the last 64."""
        self.require_memory(10)
        ref = _reference("hifloat4_cast", "hifloat4_fake_quant_ref")
        gen = torch.Generator().manual_seed(38)
        pattern = (torch.randn(PATTERN, generator=gen) * 3).to(torch.bfloat16)
        pattern[64 * 5 + 3: 64 * 6: 256] = float("nan")  # poisons blocks of some columns
        x = _repeated(pattern, BIG).view(-1, 256)
        self.assertEqual(x.shape[0] % 64, 0)
        y = torch.ops.amct.hifloat4_fake_quant(x, 0)
        self.assertEqual(y.shape, x.shape)
        mid = (1 << 31) // 256
        for r in (0, mid - 64, x.shape[0] - 64):
            rows = slice(r, r + (128 if r == mid - 64 else 64))
            assert_bits_equal(self, y[rows], ref(x[rows], 0),
                              f"hifloat4_fake_quant qdim 0 rows [{rows.start}, {rows.stop})")
        del x, y

    @unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
    def test_hifloat4_pack_bf16(self):
        self.require_memory(7)
        ref = _reference("hifloat4_cast", "hifloat4_pack_ref")
        gen = torch.Generator().manual_seed(39)
        pattern = (torch.randn(PATTERN, generator=gen) * torch.exp2(torch.randint(-8, 8, (PATTERN,), generator=gen))
                   ).to(torch.bfloat16)
        pattern[64 * 9: 64 * 10] = float("nan")
        k = 1 << 14
        x = _repeated(pattern, BIG).view(-1, k)
        scale, value = torch.ops.amct.hifloat4_pack(x)
        self.assertEqual((tuple(scale.shape), tuple(value.shape)), ((x.shape[0], k // 64, 4), (x.shape[0], k // 2)))
        for r in (0, (1 << 31) // k - 1, (1 << 31) // k, x.shape[0] - 1):
            want_scale, want_value = ref(x[r:r + 1])
            assert_bits_equal(self, scale[r:r + 1], want_scale, f"hifloat4_pack scale row {r}")
            assert_bits_equal(self, value[r:r + 1], want_value, f"hifloat4_pack value row {r}")
        del x, scale, value

    @unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
    def test_hifloat4_unpack_out_bf16(self):
        """Random scale and value bytes of 2^31 + 2^14 elements (1.2 GB) unpacked through the .out
        overload into a preallocated bf16 tensor (4.3 GB)."""
        self.require_memory(7)
        ref = _reference("hifloat4_cast", "hifloat4_unpack_ref")
        rows, k, value, scale = _random_packed(40, 4)
        out = torch.empty(rows, k, dtype=torch.bfloat16)
        self.assertIs(torch.ops.amct.hifloat4_unpack.out(scale, value, torch.bfloat16, out=out), out)
        for r in (0, (1 << 31) // k - 1, (1 << 31) // k, rows - 1):
            assert_bits_equal(self, out[r:r + 1], ref(scale[r:r + 1], value[r:r + 1], torch.bfloat16),
                              f"hifloat4_unpack.out row {r}")
        del out, value, scale

    @unittest.skipUnless(_has("svd_quant"), "svd_quant not built")
    def test_mxfp4_dequantize_bf16(self):
        """Random code and scale bytes (every E8M0 byte, 0xFF = NaN included) of 2^31 + 2^14
        elements dequantized to bf16 (4.3 GB)."""
        self.require_memory(7)
        ref = _reference("svd_quant", "mxfp4_dequantize_ref")
        rows, k, codes, scales = _random_packed(41, 2)
        y = torch.ops.amct.mxfp4_dequantize(codes, scales, None)
        self.assertEqual((y.dtype, tuple(y.shape)), (torch.bfloat16, (rows, k)))
        for r in (0, (1 << 31) // k - 1, (1 << 31) // k, rows - 1):
            assert_bits_equal(self, y[r:r + 1], ref(codes[r:r + 1], scales[r:r + 1], None), f"mxfp4_dequantize row {r}")
        del y, codes, scales

    @unittest.skipUnless(_has("stem_indexer"), "stem_indexer not built")
    def test_stem_indexer_qflat_past_2e31(self):
        """qflat of 32 heads x 36864 query blocks x 2048 = 2^31 + 2^28 bf16 elements (4.8 GB),
        causal against 64 key blocks of 8 kv heads: only the last 64 rows of each head see keys
        (the last 14, vis 51-64 > K + 8 = 50, are Top-K rows), and those of query heads 28-31 (kv
        head 7) start past element 2^31. The visible rows equal the exact oracle's selection for
        the same 64 query rows alone (same p = i + Kb - Qb, vis and P: docs/stem_indexer.md §4, §5); every other row
        is empty."""
        reason = _skip_large(7)
        if reason:
            self.skipTest(reason)
        from amct_ops.stem_indexer import npu_stem_indexer, npu_stem_indexer_metadata
        from stem_oracle import sequential_reference, topk_rows
        nq, nk, qb, kb = 32, 8, 36864, 64
        gen = torch.Generator().manual_seed(34)
        pattern = (torch.rand(PATTERN, generator=gen) * 2 - 1).to(torch.bfloat16)
        qflat = _repeated(pattern, nq * qb * 2048).view(1, nq, qb, 2048)
        self.assertGreater(qflat.numel(), 1 << 31)
        self.assertGreater((28 * qb + qb - kb) * 2048, 1 << 31)  # kv head 7's first visible query row
        kflat = (torch.rand(1, nk, kb, 2048, generator=gen) * 2 - 1).to(torch.bfloat16)
        vbias = torch.rand(1, nk, kb, generator=gen) * 2 - 1
        ql = torch.tensor([qb * 128], dtype=torch.int32)
        kl = torch.tensor([kb * 128], dtype=torch.int32)
        self.assertEqual(topk_rows([qb * 128], [kb * 128], None, True, 1.0), (14, kb))
        idx, lens = npu_stem_indexer(qflat, kflat, vbias, ql, kl, metadata=npu_stem_indexer_metadata(ql, kl, nq, nk))
        self.assertEqual(tuple(idx.shape), (1, nq, qb, kb))
        tail = qflat[:, :, qb - kb:].contiguous()
        small = torch.tensor([kb * 128], dtype=torch.int32)
        want_idx, want_lens = sequential_reference(tail, kflat, vbias, small, kl)
        assert_bits_equal(self, lens[:, :, qb - kb:], want_lens, "sparse_seq_len of the visible rows")
        assert_bits_equal(self, idx[:, :, qb - kb:], want_idx, "sparse_indices of the visible rows")
        self.assertTrue(bool((lens[:, :, :qb - kb] == 0).all()), "rows that see no key block are empty")
        self.assertTrue(bool((idx[:, :, :qb - kb] == -1).all()))
        del qflat, tail, idx, lens


@unittest.skipIf(amct_ops is None, "amct_ops is not built")
class TestNoThirtyTwoBitWrap(unittest.TestCase):
    """Host shape arithmetic and tiling on element counts past 2^32 (no memory needed)."""

    HUGE = [(1 << 32) + 64, (1 << 40) + 64 * 3, (1 << 50)]

    def assert_split(self, units, block_num, total, per_core, last, tile, remainder_on_last=False):
        """The split of `units` over cores covers each exactly once, in 64-bit arithmetic."""
        self.assertEqual(total, units)
        self.assertGreaterEqual(block_num, 1)
        self.assertEqual(per_core * (block_num - 1) + last, units)
        self.assertGreater(tile, 0)
        if remainder_on_last:
            self.assertTrue(per_core <= last < per_core + block_num)
        else:
            self.assertTrue(0 < last <= per_core or block_num == 1)

    @unittest.skipUnless(_has("hifloat8_cast"), "hifloat8_cast not built")
    def test_hifloat8_tiling_covers_every_element(self):
        for mode in range(8):
            for n in self.HUGE:
                with self.subTest(mode=mode, n=n):
                    (block_num, _, total, per_core, last, tile, *_rest) = torch.ops.amct._hifloat8_cast_tiling(mode, n)
                    # hifloat8's last core takes the remainder on top of its share.
                    self.assert_split(n, block_num, total, per_core, last, tile, remainder_on_last=True)

    @unittest.skipUnless(_has("hifloat4_cast"), "hifloat4_cast not built")
    def test_hifloat4_tiling_covers_every_block(self):
        for mode in range(3):
            for dtype in range(3):
                for n in self.HUGE:
                    blocks = n // 64
                    with self.subTest(mode=mode, dtype=dtype, blocks=blocks):
                        t = torch.ops.amct._hifloat4_cast_tiling(mode, dtype, blocks)
                        self.assert_split(blocks, t[0], t[4], t[5], t[6], t[3])

    @unittest.skipUnless(_has("svd_quant"), "svd_quant not built")
    def test_mxfp4_tiling_covers_every_block(self):
        for dtype in range(3):
            for n in self.HUGE:
                blocks = n // 32
                with self.subTest(dtype=dtype, blocks=blocks):
                    t = torch.ops.amct._svd_quant_tiling(dtype, blocks)
                    self.assert_split(blocks, t[0], t[4], t[5], t[6], t[3])

    def test_meta_shapes_past_2e32_svd_stem(self):
        checked = 0
        if _has("svd_quant"):
            w = torch.empty((1 << 20, 1 << 14), dtype=torch.bfloat16, device="meta")
            codes, scales = torch.ops.amct.mxfp4_quantize(w, "round")
            self.assertEqual(tuple(codes.shape), (1 << 20, 1 << 13))
            self.assertEqual(tuple(scales.shape), (1 << 20, 1 << 8, 2))
            self.assertEqual(torch.ops.amct.mxfp4_dequantize(codes, scales, None).shape, w.shape)
            x = torch.empty((1 << 10, 1 << 13, 4096), dtype=torch.bfloat16, device="meta")  # 2^35 elements
            wc = torch.empty((512, 2048), dtype=torch.uint8, device="meta")
            ws = torch.empty((512, 64, 2), dtype=torch.uint8, device="meta")
            down = torch.empty((4096, 32), dtype=torch.bfloat16, device="meta")
            up = torch.empty((32, 512), dtype=torch.bfloat16, device="meta")
            self.assertEqual(tuple(torch.ops.amct.svd_quant(x, wc, ws, down, up).shape), (1 << 10, 1 << 13, 512))
            checked += 1
        if _has("stem_indexer"):
            # B * Nq * maxQb * maxKb = 16 * 64 * 1024 * 8192 = 2^33 output elements.
            b, nq, nk, qb, kb = 16, 64, 8, 1024, 8192
            q = torch.empty((b, nq, qb, 2048), dtype=torch.bfloat16, device="meta")
            k = torch.empty((b, nk, kb, 2048), dtype=torch.bfloat16, device="meta")
            v = torch.empty((b, nk, kb), dtype=torch.float32, device="meta")
            lens = torch.empty((b,), dtype=torch.int32, device="meta")
            md = torch.ops.amct.npu_stem_indexer_metadata(lens, lens, nq, nk)
            idx, seq = torch.ops.amct.npu_stem_indexer(q, k, v, lens, lens, metadata=md)
            self.assertEqual((tuple(idx.shape), tuple(seq.shape)), ((b, nq, qb, kb), (b, nq, qb)))
            self.assertEqual(idx.numel(), 1 << 33)
            checked += 1
        if checked == 0:
            self.skipTest("svd_quant and stem_indexer not built")

    def test_meta_shapes_past_2e32(self):
        checked = 0
        if _has("hifloat8_cast"):
            x = torch.empty((1 << 20, (1 << 14) + 3), dtype=torch.bfloat16, device="meta")
            self.assertEqual(torch.ops.amct.encode_to_hifloat8(x).shape, x.shape)
            c = torch.empty((3, 1 << 31), dtype=torch.uint8, device="meta")
            self.assertEqual(torch.ops.amct.decode_from_hifloat8(c, torch.float32).shape, c.shape)
            checked += 1
        if _has("hifloat4_cast"):
            x = torch.empty((1 << 20, 64 * (1 << 10) * 3), dtype=torch.float16, device="meta")
            self.assertEqual(torch.ops.amct.hifloat4_fake_quant(x, 0).shape, x.shape)
            scale, value = torch.ops.amct.hifloat4_pack(x)
            self.assertEqual(tuple(scale.shape), (1 << 20, 3 * (1 << 10), 4))
            self.assertEqual(tuple(value.shape), (1 << 20, 32 * (1 << 10) * 3))
            back = torch.ops.amct.hifloat4_unpack(scale, value, None)
            self.assertEqual(back.shape, x.shape)
            checked += 1
        self.assertGreater(checked, 0, "no operator built")


if __name__ == "__main__":
    unittest.main()
