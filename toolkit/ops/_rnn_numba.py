"""Compiled LSTM and GRU cell steps: one pass over the gates forward, one pass backward.

The gate pre-activations arrive as two (B, G*H) matrices (the input and hidden
products) plus optional (G*H,) biases. Forward reads each row once, applies the
nonlinearities, writes the new state and a workspace of the activated gates
(the LSTM's ``i, f, g, o``; the GRU's ``r, z, n`` with ``hx`` and the hidden
product of the new gate), which is all backward reads: backward needs no
pre-activations, only products of saved values (and, for the LSTM, ``tanh``
of the new cell state). Composed of separate ops the same step writes ten or
more full-size temporaries.

The exponential is ``_softmax_numba``'s polynomial in the argument's own
precision, and sigmoid and tanh are written with it (``tanh`` from
``exp(-2|x|)``, within a few ulps of 1 absolutely), with no division checks
(``error_model="numpy"``): so each row's loops vectorize, where libm's scalar
``exp``/``tanh`` cost ten to a hundred times numpy's SIMD ones. Every constant
is ``one`` in the arrays' dtype, so float32 stays float32.

Imported only when a fused cell first runs, so ``import toolkit`` never loads
numba; the compiled functions are cached on disk. ``nogil`` lets another
thread's work (a data loader) proceed during a step.
"""

from __future__ import annotations

import numba

from ._softmax_numba import _exp

_OPTS = {"cache": True, "nogil": True, "error_model": "numpy"}


@numba.njit(inline="always", error_model="numpy")
def _sigmoid(x, one):
    return one / (one + _exp(-x))


@numba.njit(inline="always", error_model="numpy")
def _tanh(x, one):
    a = abs(x)
    e = _exp(-(a + a))
    t = (one - e) / (one + e)
    return t if x >= 0 else -t


# Each row runs as short loops over few arrays, indexed from 0 (an index with an offset of unknown sign gets a
# negative-index check per element), and the sigmoid/tanh loops alone: so LLVM vectorizes every loop.
@numba.njit(**_OPTS)
def _sigmoid_all(w, one):
    for k in range(w.shape[0]):
        w[k] = _sigmoid(w[k], one)


@numba.njit(**_OPTS)
def _tanh_all(w, one):
    for k in range(w.shape[0]):
        w[k] = _tanh(w[k], one)


@numba.njit(**_OPTS)
def lstm_forward(ig, hg, cx, bi, bh, one, hy, cy, ws):
    """``ig, hg`` (B, 4H), ``cx`` (B, H), biases (4H,) (zeros where the op has none); writes ``hy, cy`` (B, H)
    and the activated gates ``ws`` (B, 4H)."""
    b, h = cx.shape
    for n in range(b):
        w, x, y = ws[n], ig[n], hg[n]
        for k in range(4 * h):
            w[k] = x[k] + y[k] + bi[k] + bh[k]
        _sigmoid_all(w[:2 * h], one)
        _tanh_all(w[2 * h:3 * h], one)
        _sigmoid_all(w[3 * h:], one)
        i, f, g, o = w[:h], w[h:2 * h], w[2 * h:3 * h], w[3 * h:]
        c0, c1, h1 = cx[n], cy[n], hy[n]
        for j in range(h):
            c1[j] = f[j] * c0[j] + i[j] * g[j]
            h1[j] = c1[j]
        _tanh_all(h1, one)
        for j in range(h):
            h1[j] = o[j] * h1[j]


@numba.njit(**_OPTS)
def lstm_backward(ghy, gcy, cx, cy, ws, one, gates, gcx):
    """Gradients of the pre-activation gates ``gates`` (B, 4H) and of ``cx`` (B, H) from those of ``hy`` and
    ``cy`` (zeros where absent)."""
    b, h = cx.shape
    for n in range(b):
        w, out = ws[n], gates[n]
        i, f, g, o = w[:h], w[h:2 * h], w[2 * h:3 * h], w[3 * h:]
        di, df, dg, do = out[:h], out[h:2 * h], out[2 * h:3 * h], out[3 * h:]
        tc = gcx[n]  # tanh(cy) until overwritten by the gradient of cx
        c1, c0, dh, dcy = cy[n], cx[n], ghy[n], gcy[n]
        for j in range(h):
            tc[j] = c1[j]
        _tanh_all(tc, one)
        for j in range(h):
            t = tc[j]
            dc = dh[j] * o[j] * (one - t * t) + dcy[j]
            di[j] = dc * g[j] * i[j] * (one - i[j])
            df[j] = dc * c0[j] * f[j] * (one - f[j])
            dg[j] = dc * i[j] * (one - g[j] * g[j])
            do[j] = dh[j] * t * o[j] * (one - o[j])
            tc[j] = dc * f[j]


@numba.njit(**_OPTS)
def gru_forward(ig, hg, hx, bi, bh, one, hy, ws):
    """``ig, hg`` (B, 3H), ``hx`` (B, H), biases (3H,) (zeros where the op has none); writes ``hy`` (B, H) and
    ``ws`` (B, 5H) = ``r, z, n, hx, hn`` with ``hn`` the hidden product of the new gate (bias included)."""
    b, h = hx.shape
    for n in range(b):
        w, x, y = ws[n], ig[n], hg[n]
        for k in range(2 * h):
            w[k] = x[k] + bi[k] + y[k] + bh[k]
        _sigmoid_all(w[:2 * h], one)
        r, z, nn, prev, hn = w[:h], w[h:2 * h], w[2 * h:3 * h], w[3 * h:4 * h], w[4 * h:]
        xn, yn, bin_, bhn, x0 = x[2 * h:], y[2 * h:], bi[2 * h:], bh[2 * h:], hx[n]
        for j in range(h):
            hn[j] = yn[j] + bhn[j]
            nn[j] = xn[j] + bin_[j] + r[j] * hn[j]
            prev[j] = x0[j]
        _tanh_all(nn, one)
        h1 = hy[n]
        for j in range(h):
            h1[j] = nn[j] + z[j] * (prev[j] - nn[j])


@numba.njit(**_OPTS)
def gru_backward(ghy, ws, one, g_ig, g_hg, ghx):
    """Gradients of the input and hidden gate products (B, 3H) and of ``hx`` (B, H) from ``ghy`` (B, H)."""
    b, h = ghy.shape
    for n in range(b):
        for j in range(h):
            r = ws[n, j]
            z = ws[n, h + j]
            nn = ws[n, 2 * h + j]
            prev = ws[n, 3 * h + j]
            hn = ws[n, 4 * h + j]
            d = ghy[n, j]
            dn = d * (one - z) * (one - nn * nn)
            dz = d * (prev - nn) * z * (one - z)
            dr = dn * hn * r * (one - r)
            g_ig[n, j] = dr
            g_ig[n, h + j] = dz
            g_ig[n, 2 * h + j] = dn
            g_hg[n, j] = dr
            g_hg[n, h + j] = dz
            g_hg[n, 2 * h + j] = dn * r
            ghx[n, j] = d * z
