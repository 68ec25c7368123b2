"""amct_kernel::ScaleAddExact<6> (common/op_kernel/amct_exact_sum.h), the stem_indexer score
s = f32(f32(dot * 2^-6) + vbias), run in the kernel sim (dav-3510, the stem kernel's NPU arch, and
dav-2201, its default sim build) under every hardware mode on crafted lanes, against an independent brute force: exact rationals
(fractions.Fraction) rounded to fp32 by hand, nearest even, IEEE subnormals. The lanes cover dot
subnormal / tiny normal / normal, vbias subnormal / tiny / normal, cancellation to a subnormal
or to zero, ties of the subnormal rounding of dot * 2^-6, both signs and +-0; a flush-to-zero
model of the plain Muls / Add must differ on many of them (the case would catch a flushing path).
AnyTinyNonzero (the chunk test that picks the exact form) against a direct check of its
definition. Needs g++ only."""
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_harness import CXX, SIM_DIR, run_program  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path(__file__).resolve().parent / "sim" / "test_exact_sum.cpp"
FLAGS = ["-std=c++17", "-DAMCT_KERNEL_SIM", "-I", str(SIM_DIR), "-I", str(ROOT / "common" / "op_kernel"), "-pthread",
         "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror"]
ARCHES = (2201, 3510)  # the stem kernel's sim build is dav-2201 by default, dav-3510 for the 950
MODES = ("default", "flush", "saturation", "strict")
LANES = 256
TINY_BITS = 73 << 23  # 2^-54


# ---- the brute force -------------------------------------------------------------------------

def value(bits):
    """Exact value of an fp32 pattern (finite), as a Fraction; the sign of zero separately."""
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def negative(bits):
    return bits >> 31 == 1


def is_inf(bits):
    return bits & 0x7FFFFFFF == 0x7F800000


def round_f32(q, negative_zero=False):
    """The fp32 pattern of the rational q rounded to nearest even (IEEE, subnormals, overflow to Inf)."""
    if q == 0:
        return 0x80000000 if negative_zero else 0
    sign = 0x80000000 if q < 0 else 0
    m = abs(q)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    while Fraction(2) ** e > m:
        e -= 1
    while Fraction(2) ** (e + 1) <= m:
        e += 1
    quantum = max(e - 23, -149)
    n = round(m / Fraction(2) ** quantum)  # Fraction.__round__: ties to even
    v = n * Fraction(2) ** quantum
    if v >= Fraction(2) ** 128:
        return sign | 0x7F800000
    return sign | struct.unpack("<I", struct.pack("<f", float(v)))[0]


def score(x, y):
    """f32(f32(x * 2^-6) + y) for fp32 patterns x, y (no NaN, not Inf - Inf)."""
    if is_inf(x) or is_inf(y):
        return x if is_inf(x) else y
    a = round_f32(value(x) / 64, negative_zero=negative(x))
    exact = value(a) + value(y)
    return round_f32(exact, negative_zero=negative(a) and negative(y))


def flushed(bits):
    return bits & 0x80000000 if bits & 0x7F800000 == 0 else bits


def flush_model(x, y):
    """The plain Muls / Add on a vector unit that flushes subnormal inputs and results."""
    if is_inf(x) or is_inf(y):
        return x if is_inf(x) else y
    x = flushed(x)
    a = flushed(round_f32(value(x) / 64, negative_zero=negative(x)))
    y = flushed(y)
    return flushed(round_f32(value(a) + value(y), negative_zero=negative(a) and negative(y)))


def tiny(bits):
    return 0 < bits & 0x7FFFFFFF < TINY_BITS


# ---- the lanes -------------------------------------------------------------------------------

def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def crafted_x():
    """dot patterns: zeros, subnormals (ties of the /64 rounding: fraction % 64 == 32), tiny
    normals (exponent fields 1..8, ties of their shifts), around 2^-54, normal and infinite."""
    xs = [0, 1, 2, 31, 32, 33, 63, 64, 65, 96, 97, 160, 0x400000 - 32, 0x7FFFE0, 0x7FFFFF]
    for field in range(1, 9):
        shift = max(7 - field, 0)
        half = (1 << (shift - 1)) if shift else 0
        for frac in (0, 1, half, 3 * half, 0x7FFFFF, 0x7FFFFF - half, 0x200000 | half):
            xs.append(field << 23 | (frac & 0x7FFFFF))
    xs += [TINY_BITS - 1, TINY_BITS, TINY_BITS + 1, f32_bits(2.0 ** -100), f32_bits(2.0 ** -60),
           f32_bits(1.0), f32_bits(3.5), f32_bits(1e30), 0x7F7FFFFF, 0x7F800000]
    return sorted(set(xs)) + [x | 0x80000000 for x in sorted(set(xs))]


def crafted_y():
    ys = [0, 1, 2, 3, 0x7FFFFF, 0x400000, 1 << 23, (1 << 23) | 1, 2 << 23, f32_bits(2.0 ** -120),
          TINY_BITS - 1, TINY_BITS, f32_bits(2.0 ** -60), f32_bits(0.5), f32_bits(100.0), 0x7F800000]
    return ys + [y | 0x80000000 for y in ys]


def random_tiny(rng):
    """A random pattern of small magnitude (exponent field 0..10 or 60..80), random sign."""
    field = rng.choice([0, 0, 0, 1, 1, 2, 3, 5, 7, 9, 10, 60, 70, 72, 73, 74, 80])
    return rng.getrandbits(1) << 31 | field << 23 | rng.getrandbits(23)


def main_lanes():
    """(x rows, y row): y[j] shared by every row, x[r][j]; lanes j where a cancellation is
    planted take x = -64 * y (s = +0) or -64 * (y +- its last bit) (a subnormal s)."""
    rng = random.Random(14)
    xs_c, ys_c = crafted_x(), crafted_y()
    y = [ys_c[j % len(ys_c)] if j < 2 * len(ys_c) else random_tiny(rng) for j in range(LANES)]
    rows = []
    for r in range(48):
        row = []
        for j in range(LANES):
            if r < len(xs_c) and j < len(ys_c):
                x = xs_c[(r + 7 * j) % len(xs_c)]
            else:
                x = random_tiny(rng)
            if is_inf(x) and is_inf(y[j]) and negative(x) != negative(y[j]):
                x = 0  # Inf - Inf is masked by the kernel before this step
            row.append(x)
        rows.append(row)
    for r in range(48, 56):  # cancellations against every y that allows them
        row = []
        for j in range(LANES):
            yb = y[j]
            if is_inf(yb) or yb & 0x7FFFFFFF >= f32_bits(2.0 ** 100):
                row.append(0)
                continue
            target = -value(yb) * 64 + (r - 52) * Fraction(2) ** -143 * (1 if r % 2 else 3)
            row.append(round_f32(target, negative_zero=True))
        rows.append(row)
    return rows, y


# ---- running ---------------------------------------------------------------------------------

class ExactSumTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="amct_exact_sum_"))
        cls.exes = {}
        for arch in ARCHES:
            exe = cls.tmp / f"test_exact_sum_{arch}"
            cmd = [CXX, "-O1", *FLAGS, f"-D__NPU_ARCH__={arch}", str(SOURCE), str(SIM_DIR / "amct_sim_state.cpp"),
                   "-o", str(exe)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
            if proc.returncode != 0:
                raise AssertionError(f"compiling {SOURCE.name} for {arch} failed:\n{proc.stderr[-6000:]}")
            cls.exes[arch] = exe

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_lanes(self, rows, y, mode, arch):
        path = self.tmp / "lanes.txt"
        path.write_text("".join(f"{x:08x} {y[j]:08x}\n" for row in rows for j, x in enumerate(row)))
        proc = run_program(self.exes[arch], path, mode)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:] + proc.stderr[-3000:])
        out, tiny_rows, tiny_all = [], {}, None
        for line in proc.stdout.splitlines():
            f = line.split()
            if f[0] == "OUT":
                out.append(int(f[3], 16))
            elif f[0] == "TINY":
                tiny_rows[int(f[1])] = f[2] == "1"
            elif f[0] == "TINYALL":
                tiny_all = f[1] == "1"
        self.assertEqual(len(out), len(rows) * LANES)
        return out, tiny_rows, tiny_all

    def assertExact(self, rows, y):
        want = [score(x, y[j]) for row in rows for j, x in enumerate(row)]
        for arch in ARCHES:
            for mode in MODES:
                with self.subTest(arch=arch, mode=mode):
                    got, _, _ = self.run_lanes(rows, y, mode, arch)
                    bad = [(f"{rows[i // LANES][i % LANES]:08x}", f"{y[i % LANES]:08x}", f"{g:08x}", f"{w:08x}")
                           for i, (g, w) in enumerate(zip(got, want)) if g != w]
                    self.assertEqual(bad[:10], [], f"{len(bad)} lanes differ under {mode} (x, y, got, want)")

    def test_crafted_lanes_exact_in_every_mode(self):
        rows, y = main_lanes()
        lanes = [(x, y[j]) for row in rows for j, x in enumerate(row)]
        # The case is one a flushing vector unit gets wrong, on many lanes of each kind.
        differ = [(x, yb) for x, yb in lanes if flush_model(x, yb) != score(x, yb)]
        self.assertGreater(len(differ), 2000)
        self.assertGreater(sum(1 for x, _ in differ if x & 0x7F800000 == 0 and x & 0x7FFFFF), 100)  # dot subnormal
        self.assertGreater(sum(1 for _, yb in differ if yb & 0x7F800000 == 0 and yb & 0x7FFFFF), 100)
        self.assertGreater(sum(1 for x, yb in lanes if score(x, yb) & 0x7F800000 == 0 and score(x, yb) & 0x7FFFFF), 500)
        self.assertGreater(sum(1 for x, yb in lanes if score(x, yb) == 0 and x != 0), 50)  # cancellation to +0
        self.assertIn(0x80000000, {score(x, yb) for x, yb in lanes})  # -0 + -0
        self.assertExact(rows, y)

    def test_tiny_chunk_detection(self):
        big = [f32_bits(1.0), 0x80000000 | f32_bits(3.0), 0, 0x80000000, TINY_BITS, 0x7F800000]
        y = [big[j % len(big)] for j in range(LANES)]
        rows = [[big[(j * 5) % len(big)] for j in range(LANES)] for _ in range(6)]
        rows[1][LANES - 1] = TINY_BITS - 1  # just below 2^-54
        rows[2][0] = 0x80000001            # the smallest subnormal, negative
        rows[3][17] = 1 << 23              # 2^-126
        rows[4][100] = 0x80000000 | TINY_BITS
        want = {r: any(tiny(x) for x in row) or any(tiny(v) for v in y) for r, row in enumerate(rows)}
        self.assertEqual(want, {0: False, 1: True, 2: True, 3: True, 4: False, 5: False})
        for arch in ARCHES:
            for mode in MODES:
                with self.subTest(arch=arch, mode=mode):
                    _, tiny_rows, tiny_all = self.run_lanes(rows, y, mode, arch)
                    self.assertEqual(tiny_rows, want)
                    self.assertTrue(tiny_all)
        y[200] = 5  # a subnormal vbias makes every row tiny
        for arch in ARCHES:
            _, tiny_rows, _ = self.run_lanes(rows, y, "flush", arch)
            self.assertEqual(set(tiny_rows.values()), {True})
        self.assertExact(rows, y)

    def test_tiny_detection_folds_every_row(self):
        """AnyTinyNonzero folds 7 rows (odd: the last row goes into the accumulator before each
        halving): a tiny value in any one of them, at any lane, makes the chunk tiny."""
        rows = [[f32_bits(1.0)] * LANES for _ in range(7)]
        y = [f32_bits(-2.0)] * LANES
        for arch in ARCHES:
            _, _, tiny_all = self.run_lanes(rows, y, "flush", arch)
            self.assertFalse(tiny_all)
            for r in range(7):
                marked = [list(row) for row in rows]
                marked[r][(37 * r + 11) % LANES] = 0x80000001 if r % 2 else TINY_BITS - 1
                with self.subTest(arch=arch, row=r):
                    _, tiny_rows, tiny_all = self.run_lanes(marked, y, "flush", arch)
                    self.assertTrue(tiny_all)
                    self.assertEqual([q for q, t in sorted(tiny_rows.items()) if t], [r])

    def test_no_tiny_lane_no_exact_form(self):
        rows = [[0, f32_bits(1.5)] * (LANES // 2)]
        for arch in ARCHES:
            _, tiny_rows, tiny_all = self.run_lanes(rows, [0x80000000, f32_bits(-2.0 ** -54)] * (LANES // 2), "flush",
                                                    arch)
            self.assertEqual((tiny_rows, tiny_all), ({0: False}, False))


if __name__ == "__main__":
    unittest.main()
