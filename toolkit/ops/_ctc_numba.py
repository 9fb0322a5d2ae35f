"""Compiled CTC recursions: the forward variables ``log_alpha`` and, in backward, ``log_beta`` with the gradient.

Both follow ATen's CPU kernels (``LossCTC.cpp``) step for step, in log space,
over the extended target ``l'`` (blanks between and around the labels): entry
``s`` of ``l'`` is the blank for even ``s`` and label ``s // 2`` for odd ``s``.
Targets come as one flat array with a start offset and a stride per sample, so
padded (N, S) and concatenated (sum(target_lengths),) targets share one kernel.

Imported only when CTC first runs, so ``import toolkit`` never loads numba; the
compiled functions are cached on disk.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True)
def _prime(targets, offset, stride, s, blank):
    if s % 2 == 0:
        return blank
    return targets[offset + stride * (s // 2)]


@numba.njit(cache=True)
def _logsumexp3(a, b, c):
    m = max(a, max(b, c))
    if m == -np.inf:
        m = 0.0
    return math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m)) + m


@numba.njit(cache=True)
def ctc_alpha(lp, targets, offsets, stride, input_lengths, target_lengths, blank, max_target):
    """``lp`` (T, N, C) float64; returns (neg_log_likelihood (N,), log_alpha (N, T, 2 * max_target + 1))."""
    t_max, n, _ = lp.shape
    ninf = -np.inf
    la = np.full((n, t_max, 2 * max_target + 1), ninf)
    nll = np.empty(n)
    for b in range(n):
        il = input_lengths[b]
        tl = target_lengths[b]
        off = offsets[b]
        if il == 0:
            nll[b] = 0.0 if tl == 0 else np.inf
            continue
        la[b, 0, 0] = lp[0, b, blank]
        if tl > 0:
            la[b, 0, 1] = lp[0, b, _prime(targets, off, stride, 1, blank)]
        for t in range(1, il):
            for s in range(2 * tl + 1):
                cur = _prime(targets, off, stride, s, blank)
                la1 = la[b, t - 1, s]
                la2 = la[b, t - 1, s - 1] if s > 0 else ninf
                la3 = ninf
                if s > 1 and _prime(targets, off, stride, s - 2, blank) != cur:
                    la3 = la[b, t - 1, s - 2]
                la[b, t, s] = _logsumexp3(la1, la2, la3) + lp[t, b, cur]
        if tl == 0:
            nll[b] = -la[b, il - 1, 0]
        else:
            l1 = la[b, il - 1, 2 * tl]
            l2 = la[b, il - 1, 2 * tl - 1]
            m = max(l1, l2)
            if m == ninf:
                m = 0.0
            nll[b] = -(math.log(math.exp(l1 - m) + math.exp(l2 - m)) + m)
    return nll, la


@numba.njit(cache=True)
def ctc_grad(grad_out, lp, targets, offsets, stride, input_lengths, target_lengths, nll, la, blank,
             zero_infinity):
    """The gradient for ``log_probs`` (T, N, C), as ATen computes it: ``exp(lp) - exp(log(alpha beta) + nll - lp)``
    per class (the gradient through a log_softmax that produced ``lp``), times the incoming ``grad_out[b]``."""
    t_max, n, c_n = lp.shape
    ninf = -np.inf
    grad = np.full(lp.shape, ninf)
    lb = np.full(la.shape, ninf)
    for b in range(n):
        il = input_lengths[b]
        tl = target_lengths[b]
        off = offsets[b]
        if zero_infinity and nll[b] == np.inf:
            for t in range(t_max):
                for c in range(c_n):
                    grad[t, b, c] = 0.0
            continue
        if il > 0:
            lb[b, il - 1, 2 * tl] = lp[il - 1, b, blank]
            grad[il - 1, b, blank] = la[b, il - 1, 2 * tl] + lb[b, il - 1, 2 * tl]
            if tl > 0:
                cur = _prime(targets, off, stride, 2 * tl - 1, blank)
                lb[b, il - 1, 2 * tl - 1] = lp[il - 1, b, cur]
                grad[il - 1, b, cur] = la[b, il - 1, 2 * tl - 1] + lb[b, il - 1, 2 * tl - 1]
        for t in range(il - 2, -1, -1):
            for s in range(2 * tl, -1, -1):
                cur = _prime(targets, off, stride, s, blank)
                lb1 = lb[b, t + 1, s]
                lb2 = lb[b, t + 1, s + 1] if s < 2 * tl else ninf
                lb3 = ninf
                if s < 2 * tl - 1 and _prime(targets, off, stride, s + 2, blank) != cur:
                    lb3 = lb[b, t + 1, s + 2]
                lb[b, t, s] = _logsumexp3(lb1, lb2, lb3) + lp[t, b, cur]
                lab = la[b, t, s] + lb[b, t, s]
                lcab = grad[t, b, cur]
                if lcab == ninf:
                    grad[t, b, cur] = lab
                else:
                    m = max(lcab, lab)
                    grad[t, b, cur] = math.log(math.exp(lcab - m) + math.exp(lab - m)) + m
        gr = grad_out[b]
        for t in range(t_max):
            for c in range(c_n):
                if t < il:
                    res = grad[t, b, c]
                    v = lp[t, b, c]
                    grad[t, b, c] = (math.exp(v) - math.exp(res + nll[b] - v)) * gr
                else:
                    grad[t, b, c] = 0.0
    return grad
