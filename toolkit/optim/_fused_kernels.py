"""Compiled one-pass updates for SGD and Adam/AdamW on CPU arrays: each reads a parameter's gradient and
state once and writes the parameter and its state in place, where the tensor-op form makes a temporary per
operation and one Python call per operation and parameter.

Each element goes through PyTorch's single-tensor formulas in their order, every operation rounded to the
array's dtype (the scalars arrive already cast to it), so the result is the one the tensor-op form gives,
bit for bit: numba does not contract ``a * b + c`` into a fused multiply-add unless asked to.

Imported only when an optimizer first steps, so ``import toolkit`` never loads numba; the compiled functions
are cached on disk. Arrays are flat and contiguous. Each update is one loop over all elements; the parallel
form runs that loop over chunks on numba's threads and is used from ``PARALLEL_MIN`` elements up. Three
things keep the loop vectorized (SIMD), which measured over ten times faster than without: the body is written
inside the loop (a per-element helper, even inlined, was not vectorized), the index counts from 0 (a variable
start makes numba handle negative indices), and ``error_model="numpy"`` (Python's model checks every
division for zero; numpy's also gives IEEE inf/NaN on a zero denominator, as PyTorch does).
"""

from __future__ import annotations

import numba
import numpy as np

# Below this many elements a parameter is updated on one thread. The vectorized update streams memory, which
# one core nearly saturates: on a loaded two-core machine the parallel form lost to the serial one at every
# size measured (4k to 16M elements; numba's workers wait for cores), so only larger tensors are split, and
# only while other processes leave the cores free (``toolkit._core.load``).
PARALLEL_MIN = 1 << 24


# Elements per task of the parallel forms: large enough that a task's call costs nothing beside its loop.
CHUNK = 1 << 16


@numba.njit(cache=True, error_model="numpy")
def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, decay, decoupled, wd, keep, w, w_minus_1, small_w, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size):
    """One Adam step over flat arrays (``max_exp_avg_sq`` is read only with ``amsgrad``); the scalars are the
    formula's numbers in the arrays' dtype."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        p = param[i]
        if decay:
            if decoupled:
                p = p * keep  # param.mul_(1 - lr * weight_decay)
            else:
                g = g + p * wd  # grad.add(param, alpha=weight_decay)
        m = exp_avg[i]
        d = g - m  # exp_avg.lerp_(grad, 1 - beta1), in lerp's two-sided form
        m = m + d * w if small_w else d * w_minus_1 + g
        v = exp_avg_sq[i] * beta2 + one_minus_beta2 * g * g  # .mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if amsgrad:
            mx = max_exp_avg_sq[i]
            if not (mx >= v or mx != mx):  # torch.maximum: NaN wins
                mx = v
            max_exp_avg_sq[i] = mx
            denom = np.sqrt(mx) / bc2_sqrt + eps
        else:
            denom = np.sqrt(v) / bc2_sqrt + eps
        param[i] = p + neg_step_size * m / denom  # param.addcdiv_(exp_avg, denom, value=-step_size)
        exp_avg[i] = m
        exp_avg_sq[i] = v


@numba.njit(cache=True, parallel=True, error_model="numpy")
def adam_parallel(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, decay, decoupled, wd, keep,
                  w, w_minus_1, small_w, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size):
    """``adam_update`` in chunks split over numba's threads."""
    for c in numba.prange((param.size + CHUNK - 1) // CHUNK):
        s = slice(c * CHUNK, min((c + 1) * CHUNK, param.size))
        adam_update(param[s], grad[s], exp_avg[s], exp_avg_sq[s], max_exp_avg_sq[s], amsgrad, maximize, decay,
                    decoupled, wd, keep, w, w_minus_1, small_w, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step_size)


@numba.njit(cache=True, error_model="numpy")
def sgd_update(param, grad, buf, maximize, decay, use_momentum, first, nesterov, wd, momentum, damp, neg_lr):
    """One SGD step over flat arrays; ``first`` starts the momentum buffer at the gradient (``buf`` is read and
    written only with ``use_momentum``)."""
    for i in range(param.size):
        g = -grad[i] if maximize else grad[i]
        p = param[i]
        if decay:
            g = g + p * wd  # grad.add(param, alpha=weight_decay)
        if use_momentum:
            b = g if first else buf[i] * momentum + g * damp  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            buf[i] = b
            g = g + b * momentum if nesterov else b
        param[i] = p + g * neg_lr  # param.add_(grad, alpha=-lr)


@numba.njit(cache=True, parallel=True, error_model="numpy")
def sgd_parallel(param, grad, buf, maximize, decay, use_momentum, first, nesterov, wd, momentum, damp, neg_lr):
    """``sgd_update`` in chunks split over numba's threads."""
    for c in numba.prange((param.size + CHUNK - 1) // CHUNK):
        s = slice(c * CHUNK, min((c + 1) * CHUNK, param.size))
        sgd_update(param[s], grad[s], buf[s], maximize, decay, use_momentum, first, nesterov, wd, momentum, damp,
                   neg_lr)
