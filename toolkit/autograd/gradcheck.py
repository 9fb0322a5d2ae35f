"""Numerical gradient checks: ``gradcheck`` and ``gradgradcheck`` (float64 finite differences).

They compare the analytical vector-Jacobian products that autograd computes
with central differences, one input element at a time, as PyTorch's do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..tensor import Tensor


class GradcheckError(RuntimeError):
    """Raised when an analytical gradient differs from the numerical one."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_outputs(out) -> list:
    outs = []
    for o in _as_tuple(out):
        if isinstance(o, Tensor) and o.is_floating_point():
            outs.append(o)
        elif isinstance(o, (tuple, list)):
            outs.extend(_diff_outputs(o))
    return outs


def _numerical_jacobian(fn, inputs, eps):
    """d(outputs)/d(inputs) by central differences; rows per input element, columns per output element."""
    base = [o._data.copy() for o in _diff_outputs(fn(*inputs))]
    jac = []
    for t in inputs:
        if not (isinstance(t, Tensor) and t.requires_grad):
            jac.append(None)
            continue
        flat = t._data.reshape(-1) if t._data.flags.c_contiguous else None
        if flat is None:
            raise ValueError("gradcheck: inputs must be contiguous")
        rows = np.zeros((t.numel(), sum(b.size for b in base)))
        for k in range(t.numel()):
            orig = flat[k]
            flat[k] = orig + eps
            plus = [o._data.astype(np.float64).ravel() for o in _diff_outputs(fn(*inputs))]
            flat[k] = orig - eps
            minus = [o._data.astype(np.float64).ravel() for o in _diff_outputs(fn(*inputs))]
            flat[k] = orig
            rows[k] = np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)]) if plus else []
        jac.append(rows)
    return jac


def _analytical_jacobian(fn, inputs):
    from . import grad as autograd_grad
    from ..factories import zeros_like

    outs = _diff_outputs(fn(*inputs))
    diff_inputs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    sizes = [o.numel() for o in outs]
    total = sum(sizes)
    jac = [np.zeros((t.numel(), total)) for t in diff_inputs]
    col = 0
    for oi, o in enumerate(outs):
        for k in range(o.numel()):
            grads_out = []
            for oj, o2 in enumerate(outs):
                g = zeros_like(o2)
                if oj == oi:
                    g._data.reshape(-1)[k] = 1
                grads_out.append(g)
            live = [(o2, g) for o2, g in zip(outs, grads_out) if o2.requires_grad]
            if not live:
                col += 1
                continue
            gs = autograd_grad([x for x, _ in live], diff_inputs, [g for _, g in live], retain_graph=True,
                               allow_unused=True)
            for j, g in enumerate(gs):
                if g is not None:
                    jac[j][:, col] = g._data.astype(np.float64).ravel()
            col += 1
    return jac


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
    check_batched_grad: bool = False,
    fast_mode: bool = False,
) -> bool:
    """Check autograd's gradients of ``func`` at ``inputs`` against finite differences.

    Inputs that require grad should be float64, as finite differences in
    float32 are too coarse.
    """
    inputs = _as_tuple(inputs)
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad and t.dtype.name != "float64":
            import warnings

            warnings.warn(
                f"Input #{inputs.index(t)} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point.",
                stacklevel=2,
            )
    numerical = [j for j in _numerical_jacobian(func, inputs, eps) if j is not None]
    analytical = _analytical_jacobian(func, inputs)
    for i, (a, n) in enumerate(zip(analytical, numerical)):
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\nnumerical:{n}\nanalytical:{a}\n"
            )
    return True


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
    check_batched_grad: bool = False,
    fast_mode: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of the function ``inputs -> grad(func(inputs), inputs)``."""
    from . import grad as autograd_grad
    from ..factories import tensor as make_tensor

    inputs = _as_tuple(inputs)
    outs = _diff_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [make_tensor(rng.standard_normal(o.shape), dtype=o.dtype, requires_grad=True) for o in outs]
    grad_outputs = list(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        o = _diff_outputs(func(*ins))
        pairs = [(x, g) for x, g in zip(o, gos) if x.requires_grad]
        gs = autograd_grad([x for x, _ in pairs], [ins[i] for i in diff_idx], [g for _, g in pairs],
                           create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
