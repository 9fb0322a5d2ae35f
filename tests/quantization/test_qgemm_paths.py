"""The int8 product's two paths, the int8 dot-product instruction (``_qgemm_vnni``) and the portable loop, on the
same inputs: equal integer for integer (and float for float after requantization), on shapes that are not
multiples of the blocks, K not a multiple of 4, zero points zero and not, per-tensor and per-channel weights."""

import os
import subprocess
import sys

import numpy as np
import pytest

from toolkit.ops import _qgemm_numba as G
from toolkit.ops import _qgemm_vnni as V

needs_fast = pytest.mark.skipif(not G.FAST, reason="the CPU (or numba's target) has no AVX-512 VNNI, AVX-VNNI or AVX2")

# (M, N, K): one of everything, tails of every block (MR rows, NR columns, 4 k, KC words of K, RB rows), empty K
SHAPES = [(1, 1, 1), (7, 17, 5), (13, 70, 33), (6, 64, 4), (5, 3, 0), (97, 130, 259), (2, 300, 1030)]


def _operands(m, n, k, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (m, k), dtype=np.uint8), rng.integers(-128, 128, (n, k), dtype=np.int8)


def _zero_points(n, per_channel, nonzero, seed):
    if not nonzero:
        return np.zeros(n, np.int32) if per_channel else 0
    return np.random.default_rng(seed).integers(-128, 128, n).astype(np.int32) if per_channel else 5


def _reference(x, x_zp, w, w_zp):
    zp = np.broadcast_to(np.asarray(w_zp, np.int64), (w.shape[0],))
    return ((x.astype(np.int64) - x_zp) @ (w.astype(np.int64) - zp[:, None]).T).astype(np.int32)


def _cases(per_channel, nonzero):
    """(x, x_zp, w, w_zp) for each of ``SHAPES``."""
    for seed, (m, n, k) in enumerate(SHAPES):
        x, w = _operands(m, n, k, seed)
        yield x, (131 if nonzero else 0), w, _zero_points(n, per_channel, nonzero, seed)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("nonzero", [False, True])
def test_portable_path_equals_int64_reference(per_channel, nonzero):
    for x, x_zp, w, w_zp in _cases(per_channel, nonzero):
        k, n = x.shape[1], w.shape[0]
        packed = G.pack_weight(w, fast=False)
        assert packed.wv is None and packed.k == k and packed.n == n
        np.testing.assert_array_equal(G.gemm_u8s8(x, x_zp, packed, w_zp), _reference(x, x_zp, w, w_zp))


@needs_fast
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("nonzero", [False, True])
def test_fast_path_equals_portable_path(per_channel, nonzero):
    for x, x_zp, w, w_zp in _cases(per_channel, nonzero):
        (m, k), n = x.shape, w.shape[0]
        fast, portable = G.pack_weight(w, fast=True), G.pack_weight(w, fast=False)
        assert fast.wt is None and fast.wv is not None and fast.k == k and fast.n == n
        acc = G.gemm_u8s8(x, x_zp, fast, w_zp)
        assert acc.dtype == np.int32 and acc.shape == (m, n)
        np.testing.assert_array_equal(acc, G.gemm_u8s8(x, x_zp, portable, w_zp))
        np.testing.assert_array_equal(acc, _reference(x, x_zp, w, w_zp))


@needs_fast
@pytest.mark.parametrize("per_channel", [False, True])
def test_fast_path_requantize_and_dequantize_equal_portable(per_channel):
    for seed, (x, _, w, w_zp) in enumerate(_cases(per_channel, True)):
        n = w.shape[0]
        rng = np.random.default_rng(seed + 100)
        offset = rng.standard_normal(n).astype(np.float32) * 50
        mult = (rng.random(n).astype(np.float32) + 0.1) * np.float32(1e-3)
        packs = G.pack_weight(w, fast=True), G.pack_weight(w, fast=False)
        q = [G.gemm_u8s8_requantize(x, 77, p, w_zp, offset, mult, 128, 0, 255) for p in packs]
        np.testing.assert_array_equal(q[0], q[1])
        relu = [G.gemm_u8s8_requantize(x, 77, p, w_zp, offset, mult, 128, 128, 255) for p in packs]
        np.testing.assert_array_equal(relu[0], relu[1])
        f = [G.gemm_u8s8_dequantize(x, 77, p, w_zp, mult, offset) for p in packs]
        assert f[0].dtype == np.float32
        np.testing.assert_array_equal(f[0], f[1])


@needs_fast
def test_fast_path_reads_misaligned_strided_and_large_inputs():
    x, w = _operands(40, 33, 64, 7)
    fast, portable = G.pack_weight(w, fast=True), G.pack_weight(w, fast=False)
    misaligned = np.empty(x.size + 1, np.uint8)[1:].reshape(x.shape)
    misaligned[...] = x
    strided = np.asfortranarray(x)
    for xi in (misaligned, strided, x[::2]):
        np.testing.assert_array_equal(G.gemm_u8s8(xi, 3, fast, 2), G.gemm_u8s8(xi, 3, portable, 2))
    x, w = _operands(300, 520, 700, 8)  # enough work to split the rows over the cores where they are free
    np.testing.assert_array_equal(G.gemm_u8s8(x, 9, G.pack_weight(w, fast=True), 0),
                                  G.gemm_u8s8(x, 9, G.pack_weight(w, fast=False), 0))


def test_default_packing_follows_the_cpu():
    w = _operands(1, 3, 8, 0)[1]
    assert (G.pack_weight(w).wv is not None) == G.FAST
    if not G.FAST:
        with pytest.raises(RuntimeError, match="no dot-product instructions"):
            G.pack_weight(w, fast=True)


def test_instructions_from_features():
    assert V._kind({"avx2", "avx512f", "avx512bw", "avx512vnni", "avx512vl"}) == "avx512vnni"
    assert V._kind({"avx2", "avxvnni"}) == "avxvnni"
    assert V._kind({"avx2", "avx512f", "avx512vnni", "avx512vl"}) == "avxvnni"
    assert V._kind({"avx2", "fma", "avx512f", "avx512bw"}) == "avx2"
    assert V._kind({"sse4.2"}) is None
    assert V._kind(set()) is None


_SUBPROCESS = """
import numpy as np
from toolkit.ops import _qgemm_numba as G, _qgemm_vnni as V
assert V.KIND == {kind!r}, V.KIND
for seed, (m, n, k) in enumerate([(7, 17, 5), (97, 40, 259), (3, 20, 2)]):
    r = np.random.default_rng(seed)
    x = r.integers(0, 256, (m, k), dtype=np.uint8)
    w = r.integers(-128, 128, (n, k), dtype=np.int8)
    zp = r.integers(-9, 9, n).astype(np.int32)
    packs = G.pack_weight(w, fast=True), G.pack_weight(w, fast=False)
    a, b = (G.gemm_u8s8(x, 7, p, zp) for p in packs)
    assert np.array_equal(a, b)
    off, mult = r.standard_normal(n).astype(np.float32), np.full(n, 1e-3, np.float32)
    a, b = (G.gemm_u8s8_requantize(x, 7, p, zp, off, mult, 100, 0, 255) for p in packs)
    assert np.array_equal(a, b)
"""


@pytest.mark.parametrize("kind,dropped", [("avxvnni", ("+avx512",)), ("avx2", ("+avx512", "+avxvnni"))])
def test_narrower_instructions_equal_portable_path(kind, dropped):
    """The 256-bit VNNI and the AVX2 blocks, as on CPUs without AVX-512 (or VNNI): numba told to compile for the
    host's features less those, in a process of its own."""
    if "NUMBA_CPU_FEATURES" in os.environ or V._kind(V._target_features()) is None:
        pytest.skip("numba's target is configured, or the CPU has no AVX2")
    from llvmlite import binding

    features = [f for f in binding.get_host_cpu_features().flatten().split(",") if not f.startswith(dropped)]
    if V._kind({f[1:] for f in features if f.startswith("+")}) != kind:
        pytest.skip(f"the CPU has no {kind}")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "NUMBA_CPU_FEATURES": ",".join(features)}
    subprocess.run([sys.executable, "-c", _SUBPROCESS.format(kind=kind)], env=env, cwd=root, check=True,
                   timeout=600)
