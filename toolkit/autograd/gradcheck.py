"""Numerical gradient checks: ``gradcheck`` and ``gradgradcheck``, shaped like PyTorch's.

They compare the vector-Jacobian products autograd computes with central
finite differences, one input element at a time (slow mode), or along one
random direction (``fast_mode=True``). Inputs that require grad should be
float64 (or complex128): finite differences in float32 are too coarse.

Complex inputs and outputs are checked as PyTorch checks them, as pairs of real
numbers: each complex input element is perturbed along its real and its
imaginary part, each complex output contributes its real and imaginary parts,
and autograd's gradient ``dL/dx + i dL/dy`` gives the two rows of an element.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from ..tensor import Tensor, wrap
from . import grad as autograd_grad


class GradcheckError(RuntimeError):
    """Raised when an analytical gradient differs from the numerical one."""


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _flat_outputs(out) -> list:
    outs = []
    for o in _as_tuple(out):
        if isinstance(o, Tensor):
            outs.append(o)
        elif isinstance(o, (tuple, list)):
            outs.extend(_flat_outputs(o))
    return outs


def _diff_outputs(out) -> list:
    return [o for o in _flat_outputs(out) if o.is_floating_point() or o.is_complex()]


def _realified(a: np.ndarray) -> np.ndarray:
    """``a`` as float64 numbers, a complex element as its (real, imaginary) pair, flattened."""
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).astype(np.float64).ravel()
    return a.astype(np.float64, copy=False).ravel()


def _real_size(t: Tensor) -> int:
    return t.numel() * (2 if t._data.dtype.kind == "c" else 1)


def _mat(a: np.ndarray) -> Tensor:
    return wrap(np.asarray(a, dtype=np.float64), None)


def _fail(raise_exception: bool, msg: str) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _check_inputs(inputs: tuple) -> list:
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t._requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have "
            "requires_grad=True."
        )
    for i in diff:
        t = inputs[i]
        if t.dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. This check "
                "will likely fail if all the inputs are not of double precision floating point or complex. ",
                UserWarning,
                stacklevel=3,
            )
        if 0 in t._data.strides and t._data.size > 1:
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                ".contiguous on the input before passing it to gradcheck."
            )
    return diff


def _outputs_flat64(fn, inputs) -> np.ndarray:
    outs = _diff_outputs(fn(*inputs))
    if not outs:
        return np.zeros(0)
    return np.concatenate([_realified(o._values()) for o in outs])


def _numerical_jacobians(fn, inputs, diff: list, eps: float) -> list:
    """Per differentiable input, a (input numel, total output numel) matrix of central differences."""
    jacs = []
    for i in diff:
        a = inputs[i]._data
        steps = (eps, 1j * eps) if a.dtype.kind == "c" else (eps,)
        n = a.size * len(steps)
        rows = None
        for k in range(n):
            idx = np.unravel_index(k // len(steps), a.shape)
            step = steps[k % len(steps)]
            orig = a[idx].item()
            a[idx] = orig - step
            minus = _outputs_flat64(fn, inputs)
            a[idx] = orig + step
            plus = _outputs_flat64(fn, inputs)
            a[idx] = orig
            if rows is None:
                rows = np.empty((n, plus.size))
            rows[k] = (plus - minus) / (2 * eps)
        jacs.append(rows if rows is not None else np.zeros((0, _outputs_flat64(fn, inputs).size)))
    return jacs


def _vjp(outs: list, inputs: list, cotangents: list) -> list:
    live = [(o, g) for o, g in zip(outs, cotangents) if o._requires_grad]
    if not live:
        return [None] * len(inputs)
    return list(autograd_grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                              allow_unused=True))


def _analytical_jacobians(outs: list, diff_inputs: list, raise_exception: bool) -> list | None:
    """Per differentiable input, the (input numel, total output numel) matrix, one vjp per output element."""
    sizes = [_real_size(o) for o in outs]
    total = sum(sizes)
    jacs = [np.zeros((_real_size(t), total)) for t in diff_inputs]
    col = 0
    zeros = [np.zeros(o._data.shape, dtype=o._data.dtype) for o in outs]
    for oi in range(len(outs)):
        parts = (1, 1j) if outs[oi]._data.dtype.kind == "c" else (1,)
        for k in range(sizes[oi]):
            cot = []
            for oj, z in enumerate(zeros):
                if oj == oi:
                    c = z.copy()
                    c.reshape(-1)[k // len(parts)] = parts[k % len(parts)]
                    cot.append(wrap(c, None))
                else:
                    cot.append(wrap(z, None))
            for j, g in enumerate(_vjp(outs, diff_inputs, cot)):
                if g is None:
                    continue
                t = diff_inputs[j]
                if g.shape != t.shape:
                    _fail(raise_exception, "Gradient has shape mismatch")
                    return None
                if g.dtype is not t.dtype:
                    _fail(raise_exception, "Gradient has dtype mismatch")
                    return None
                jacs[j][:, col] = _realified(g._values())
            col += 1
    return jacs


def _split_cols(jac: np.ndarray, sizes: list) -> list:
    out, start = [], 0
    for s in sizes:
        out.append(jac[:, start:start + s])
        start += s
    return out


def _check_undefined_grad(outs: list, diff_inputs: list, raise_exception: bool) -> bool:
    """Backward must accept an undefined (None) output gradient and give None or zeros."""
    for o in outs:
        if not o._requires_grad or o.grad_fn is None:
            continue
        handle = o.grad_fn.register_prehook(lambda gos: tuple(None for _ in gos))
        try:
            gs = autograd_grad([o], diff_inputs, [wrap(np.zeros(o._data.shape, o._data.dtype), None)],
                               retain_graph=True, allow_unused=True)
        except (RuntimeError, TypeError) as e:
            return _fail(raise_exception, "Expected backward function to handle undefined output grads. Please "
                         f"look at 'Notes about undefined output gradients' in 'tools/autograd/derivatives.yaml': {e}")
        finally:
            handle.remove()
        if any(g is not None and np.any(g._data != 0) for g in gs):
            return _fail(raise_exception, "Expected all input grads to be undefined or zero when all output grads "
                         "are undefined or zero.")
    return True


def gradcheck(
    func: Callable,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check autograd's gradients of ``func`` at ``inputs`` against finite differences.

    Returns True, or raises ``GradcheckError`` (``raise_exception=False``: returns
    False) with the numerical and analytical Jacobians of the first mismatch.
    Example: ``gradcheck(toolkit.tanh, (x.double().requires_grad_(),))``.
    """
    inputs = _as_tuple(inputs)
    diff = _check_inputs(inputs)
    if not check_backward_ad:
        return True
    outs_all = _flat_outputs(func(*inputs))
    outs = [o for o in outs_all if o.is_floating_point() or o.is_complex()]
    diff_inputs = [inputs[i] for i in diff]
    if not outs:
        return True
    if fast_mode:
        ok = _fast_check(func, inputs, diff, outs, eps, atol, rtol, raise_exception)
    else:
        ok = _slow_check(func, inputs, diff, outs, eps, atol, rtol, nondet_tol, raise_exception)
    if not ok:
        return False
    if check_undefined_grad:
        return _check_undefined_grad(outs, diff_inputs, raise_exception)
    return True


def _slow_check(func, inputs, diff, outs, eps, atol, rtol, nondet_tol, raise_exception) -> bool:
    diff_inputs = [inputs[i] for i in diff]
    sizes = [_real_size(o) for o in outs]
    numerical = _numerical_jacobians(func, inputs, diff, eps)
    analytical = _analytical_jacobians(outs, diff_inputs, raise_exception)
    if analytical is None:
        return False
    for j, (a_full, n_full) in enumerate(zip(analytical, numerical)):
        for oi, (a, n) in enumerate(zip(_split_cols(a_full, sizes), _split_cols(n_full, sizes))):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(raise_exception, f"Jacobian mismatch for output {oi} with respect to input {diff[j]},\n"
                             f"numerical:{_mat(n)}\nanalytical:{_mat(a)}\n")
    again = _analytical_jacobians(outs, diff_inputs, raise_exception)
    if again is None:
        return False
    for a1, a2 in zip(analytical, again):
        if a1.size and np.max(np.abs(a1 - a2)) > nondet_tol:
            return _fail(raise_exception, "Backward is not reentrant, i.e., running backward with same input and "
                         "grad_output multiple times gives different values, although analytical gradient matches "
                         f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
    return True


def _fast_check(func, inputs, diff, outs, eps, atol, rtol, raise_exception) -> bool:
    """One random direction ``u`` per input and cotangent ``v``: compare ``v . J u`` numerically and analytically."""
    rng = np.random.default_rng(0)
    diff_inputs = [inputs[i] for i in diff]
    vs = [_random_like(rng, o._data) for o in outs]
    v_flat = np.concatenate([_realified(v) for v in vs])
    cots = [wrap(v.astype(o._data.dtype), None) for v, o in zip(vs, outs)]
    grads = _vjp(outs, diff_inputs, cots)
    for j, i in enumerate(diff):
        a = inputs[i]._data
        u = _random_like(rng, a)
        orig = a.copy()
        a[...] = orig - eps * u
        minus = _outputs_flat64(func, inputs)
        a[...] = orig + eps * u
        plus = _outputs_flat64(func, inputs)
        a[...] = orig
        num = float(((plus - minus) / (2 * eps)) @ v_flat)
        g = grads[j]
        ana = 0.0 if g is None else float(_realified(g._values()) @ _realified(u))
        if not np.isclose(ana, num, rtol=rtol, atol=atol):
            msg = (f"Jacobian mismatch for output 0 with respect to input {i},\nnumerical:{num}\nanalytical:{ana}\n\n"
                   "The above quantities relating the numerical and analytical jacobians are computed \nin fast mode. "
                   "Below, we recompute numerical and analytical jacobians in slow mode:\n\n")
            n = _numerical_jacobians(func, inputs, [i], eps)[0]
            an = _analytical_jacobians(outs, [inputs[i]], False)
            msg += f"Numerical:\n {_mat(n)}\nAnalytical:\n{_mat(an[0]) if an else None}\n"
            return _fail(raise_exception, msg)
    return True


def _random_like(rng, a: np.ndarray) -> np.ndarray:
    """A random direction shaped like ``a``: complex where ``a`` is (both parts random)."""
    u = rng.uniform(-1, 1, a.shape)
    return u + 1j * rng.uniform(-1, 1, a.shape) if a.dtype.kind == "c" else u


def gradgradcheck(
    func: Callable,
    inputs,
    grad_outputs: Sequence | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, grad_outputs) -> grad(func(inputs), inputs, grad_outputs)``."""
    inputs = _as_tuple(inputs)
    diff = _check_inputs(inputs)
    if not check_rev_over_rev:
        return True
    outs = _diff_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outs:
            g = rng.standard_normal(o._data.shape).astype(o._data.dtype)
            if gen_non_contig_grad_outputs and g.ndim:
                g = np.repeat(g[..., None], 2, axis=-1)[..., 0]
            grad_outputs.append(wrap(g, None).requires_grad_())
    grad_outputs = tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        o = _diff_outputs(func(*ins))
        pairs = [(x, g) for x, g in zip(o, gos) if x._requires_grad]
        if not pairs:
            return ()
        gs = autograd_grad([x for x, _ in pairs], [ins[i] for i in diff], [g for _, g in pairs],
                           create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, fast_mode=fast_mode)
