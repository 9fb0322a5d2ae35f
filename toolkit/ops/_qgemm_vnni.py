"""The int8 product on the CPU's dot-product instructions: AVX-512 VNNI or AVX-VNNI ``vpdpbusd``, where each
int32 lane of the accumulator gains the dot product of four uint8 activations with four int8 weights, exactly (no
intermediate saturation, unlike AVX2's ``vpmaddubsw``); on AVX2 alone ``vpmaddwd`` on the same values widened to
int16, two products a lane (exact too), then ``vpaddd``. Either way the sums equal the portable loop's bit for bit.

LLVM never forms these from a scalar loop, so the inner block is written in LLVM IR (a numba ``intrinsic``):
``MR`` rows of activations times ``NV`` vectors of ``LANES`` output columns, ``MR * NV`` accumulators held in
registers over a range of K. The weight is packed once for it (:func:`pack`): K padded to a multiple of ``STEP``
(4 k a word for VNNI, 2 for AVX2) and N to a multiple of ``NR = NV * LANES``, as int32 words of ``STEP``
consecutive k, one panel of ``NR`` columns after another, so a panel's K range is one contiguous stream::

    wv[p, kw, j] = w[p * NR + j, STEP * kw : STEP * (kw + 1)]     # (panels, K / STEP, NR), int8 or int16 lanes

The activations are read as words of ``STEP`` consecutive k too (padded with zeros, widened to uint16 on AVX2)
and broadcast to every lane. :func:`product` runs K in blocks of ``KC`` words so a panel's block stays in the
first-level cache while every row block of the call passes over it.

Only compiled where :data:`KIND` is not None: numba's target CPU (the host's, unless configured) has the
instructions.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import binding, ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic


def _target_features() -> set[str]:
    """The CPU features numba compiles for: its configured ones, the host's when none are configured, none when
    it targets a named CPU without saying which features (then the instruction may be absent)."""
    config = numba.config
    if config.CPU_FEATURES:
        return {f[1:] for f in config.CPU_FEATURES.split(",") if f.startswith("+")}
    if config.CPU_NAME not in (None, "", "host"):
        return set()
    try:
        return {f[1:] for f in binding.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    except RuntimeError:  # the host's features are unknown
        return set()


def _kind(features: set[str]) -> str | None:
    """The best instructions the features allow: ``"avx512vnni"`` (512 bits), ``"avxvnni"`` (256 bits: AVX-VNNI,
    or AVX-512 VNNI with VL), ``"avx2"`` (``vpmaddwd``) or None."""
    if {"avx512vnni", "avx512f", "avx512bw"} <= features:
        return "avx512vnni"
    if "avxvnni" in features or {"avx512vnni", "avx512vl"} <= features:
        return "avxvnni"
    return "avx2" if "avx2" in features else None


KIND = _kind(_target_features())
LANES = 16 if KIND == "avx512vnni" else 8  # int32 lanes per vector
STEP = 2 if KIND == "avx2" else 4  # k per int32 word
# Accumulators: MR * NV vectors, plus NV weight vectors, one broadcast (and one product on AVX2), within the 32
# (AVX-512) or 16 vector registers.
MR = 4 if KIND == "avx2" else 6
NV = 4 if KIND == "avx512vnni" else 2
NR = NV * LANES  # output columns per panel
KC = 64  # int32 words of K per block: a 512-bit panel's block is 16 KiB
RB = 16 * MR  # rows per call of :func:`product`: its int32 result (RB, N) stays in the second-level cache


def pack(w: np.ndarray) -> np.ndarray:
    """Pack int8 ``w`` (N, K) as ``wv`` (panels, ceil(K / STEP), NR) int32, zero padded (see the module's text)."""
    n, k = w.shape
    kw, panels = -(-k // STEP), -(-n // NR)
    padded = np.zeros((panels * NR, kw * STEP), np.int8 if STEP == 4 else np.int16)
    padded[:n, :k] = w
    words = padded.reshape(panels, NR, kw, STEP).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(words).view(np.int32).reshape(panels, kw, NR)


def words(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint8 activations ``x`` (M, K) as int32 words of ``STEP`` k (M, ceil(K / STEP)), zero padded, and as
    uint8 (for the rows' sums)."""
    m, k = x.shape
    if STEP == 2:
        wide = np.zeros((m, -(-k // 2) * 2), np.uint16)
        wide[:, :k] = x
        return wide.view(np.int32), x
    if k % 4 or not x.flags.c_contiguous or x.ctypes.data % 4:
        padded = np.zeros((m, -(-k // 4) * 4), np.uint8)
        padded[:, :k] = x
        x = padded
    return x.view(np.int32), x


def _dot(builder, vty):
    """``dot(acc, x, w)``: ``acc`` plus each lane's dot product of the ``STEP`` values packed in ``x`` and ``w``."""
    if KIND != "avx2":
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty, vty, vty]),
                                            f"llvm.x86.avx512.vpdpbusd.{LANES * 32}")
        return lambda acc, x, w: builder.call(fn, [acc, x, w])
    hty = ir.VectorType(ir.IntType(16), 2 * LANES)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [hty, hty]), "llvm.x86.avx2.pmadd.wd")
    return lambda acc, x, w: builder.add(acc, builder.call(fn, [builder.bitcast(x, hty), builder.bitcast(w, hty)]))


def _block_intrinsic(mr: int):
    """The LLVM IR block for ``mr`` rows: ``c[i0 + r, p * NR + v * LANES ...] += sum over words kw in [k0, k1)
    of dot(x[i0 + r, kw] broadcast, wv[p, kw, v * LANES ...])``, ``dot`` the instruction of :data:`KIND`. It reads
    the arrays' data and shapes only: ``x`` and ``c`` must be int32 with contiguous rows, ``wv`` as packed."""

    @intrinsic
    def block(typingctx, x, i0, wv, p, k0, k1, c):
        if not all(isinstance(a, types.Array) and a.dtype == types.int32 for a in (x, wv, c)):
            return None
        sig = types.void(x, i0, wv, p, k0, k1, c)

        def codegen(context, builder, signature, args):
            i64, i32 = ir.IntType(64), ir.IntType(32)
            vty = ir.VectorType(i32, LANES)
            xt, it, wt, pt, k0t, k1t, ct = signature.args
            xa = context.make_array(xt)(context, builder, args[0])
            wa = context.make_array(wt)(context, builder, args[2])
            ca = context.make_array(ct)(context, builder, args[6])
            i0v, pv, k0v, k1v = (context.cast(builder, args[j], t, types.intp)
                                 for j, t in ((1, it), (3, pt), (4, k0t), (5, k1t)))
            kw = cgutils.unpack_tuple(builder, xa.shape)[1]
            nr = cgutils.unpack_tuple(builder, wa.shape)[2]
            ldc = cgutils.unpack_tuple(builder, ca.shape)[1]
            dot = _dot(builder, vty)
            xrow = [builder.gep(xa.data, [builder.mul(builder.add(i0v, ir.Constant(i64, r)), kw)])
                    for r in range(mr)]
            wpanel = builder.gep(wa.data, [builder.mul(builder.mul(pv, kw), nr)])
            crow = [[builder.bitcast(builder.gep(ca.data, [builder.add(
                builder.mul(builder.add(i0v, ir.Constant(i64, r)), ldc),
                builder.add(builder.mul(pv, nr), ir.Constant(i64, v * LANES)))]), vty.as_pointer())
                for v in range(NV)] for r in range(mr)]
            init = [[builder.load(crow[r][v], align=4) for v in range(NV)] for r in range(mr)]
            entry = builder.block
            loop = builder.append_basic_block("vnni.loop")
            done = builder.append_basic_block("vnni.done")
            builder.cbranch(builder.icmp_signed("<", k0v, k1v), loop, done)
            builder.position_at_end(loop)
            kk = builder.phi(i64)
            kk.add_incoming(k0v, entry)
            acc = [[builder.phi(vty) for _ in range(NV)] for _ in range(mr)]
            for r in range(mr):
                for v in range(NV):
                    acc[r][v].add_incoming(init[r][v], entry)
            wk = builder.gep(wpanel, [builder.mul(kk, nr)])
            wvec = [builder.load(builder.bitcast(builder.gep(wk, [ir.Constant(i64, v * LANES)]), vty.as_pointer()),
                                 align=4) for v in range(NV)]
            zeros = ir.Constant(ir.VectorType(i32, LANES), [0] * LANES)
            new = []
            for r in range(mr):
                xv = builder.load(builder.gep(xrow[r], [kk]), align=4)
                bx = builder.shuffle_vector(builder.insert_element(ir.Constant(vty, ir.Undefined), xv,
                                                                   ir.Constant(i32, 0)),
                                            ir.Constant(vty, ir.Undefined), zeros)
                new.append([dot(acc[r][v], bx, wvec[v]) for v in range(NV)])
            nxt = builder.add(kk, ir.Constant(i64, 1))
            tail = builder.block
            kk.add_incoming(nxt, tail)
            for r in range(mr):
                for v in range(NV):
                    acc[r][v].add_incoming(new[r][v], tail)
            builder.cbranch(builder.icmp_signed("<", nxt, k1v), loop, done)
            builder.position_at_end(done)
            out = [[builder.phi(vty) for _ in range(NV)] for _ in range(mr)]
            for r in range(mr):
                for v in range(NV):
                    out[r][v].add_incoming(init[r][v], entry)
                    out[r][v].add_incoming(new[r][v], tail)
                    builder.store(out[r][v], crow[r][v], align=4)
            return context.get_dummy_value()

        return sig, codegen

    return block


_B1, _B2, _B3, _B4, _B5, _B6 = (_block_intrinsic(mr) for mr in range(1, 7))  # MR <= 6


@numba.njit(cache=True, nogil=True)
def _rows_block(x, i0, mr, wv, p, k0, k1, c):  # pragma: no cover - compiled
    if mr == 6:
        _B6(x, i0, wv, p, k0, k1, c)
    elif mr == 5:
        _B5(x, i0, wv, p, k0, k1, c)
    elif mr == 4:
        _B4(x, i0, wv, p, k0, k1, c)
    elif mr == 3:
        _B3(x, i0, wv, p, k0, k1, c)
    elif mr == 2:
        _B2(x, i0, wv, p, k0, k1, c)
    else:
        _B1(x, i0, wv, p, k0, k1, c)


@numba.njit(cache=True, nogil=True)
def product(x, wv, c):  # pragma: no cover - compiled
    """The raw int32 product ``sum_k x[m, k] * w[n, k]`` of activation words ``x`` (M, K / STEP) and packed ``wv``
    into the first M rows of ``c`` (rows >= M, panels * NR), C-contiguous: K blocks outermost, then panels,
    then blocks of ``MR`` rows."""
    rows, kw = x.shape
    panels = wv.shape[0]
    c[:rows] = 0
    for k0 in range(0, kw, KC):
        k1 = min(k0 + KC, kw)
        for p in range(panels):
            i0 = 0
            while i0 < rows:
                mr = min(MR, rows - i0)
                _rows_block(x, i0, mr, wv, p, k0, k1, c)
                i0 += mr
