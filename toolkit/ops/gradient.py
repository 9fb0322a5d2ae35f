"""``torch.gradient``: central differences in the interior, one-sided ones at the edges.

The estimate is numpy.gradient's, computed as PyTorch's ``gradient_helper`` computes it: with a
uniform spacing ``h`` the interior is ``(f[2:] - f[:-2]) / h / 2``; with coordinates (a 1-D tensor per
dim) it is the second-order accurate weighted sum for unequal steps; the edges use first- or
second-order one-sided differences (``edge_order``). All seven of PyTorch's overloads (``spacing`` a
scalar, a list of scalars or a list of coordinate tensors; ``dim`` an int, a list or None) are one
composition of registered ops, so the result differentiates.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from .registry import REDUCTION, op


def _dims(ndim: int, dim) -> list[int]:
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    wrapped = []
    for d in dims:
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got {d})")
        w = d % max(ndim, 1)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return wrapped


def _check(shape, dtype, spacing, dim, edge_order) -> list[int]:
    """PyTorch's ``pre_check_gradient``; returns the dims to differentiate along."""
    ndim = len(shape)
    if dtype == _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    n_spacing = None if spacing is None or not isinstance(spacing, (list, tuple)) else len(spacing)
    if n_spacing is not None and dim is None and n_spacing not in (1, ndim):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or a list of length equal "
                           f"to 'self.dim() = {ndim}', since dim argument was not given, but got a list of length "
                           f"{n_spacing}")
    n_dim = None if dim is None else (1 if isinstance(dim, int) else len(dim))
    if n_spacing is not None and n_dim is not None and n_spacing != n_dim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {n_spacing} "
                           f"and a dim argument of length {n_dim}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(ndim, dim)
    for d in dims:
        if shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    return dims


def _join(center, prepend, append, d):
    if center.numel() == 0:
        return api.cat([prepend, append], d)
    return api.cat([prepend, center, append], d)


def _uniform(f, d: int, h, edge_order: int):
    n = f.shape[d]
    center = (f.narrow(d, 2, n - 2) - f.narrow(d, 0, n - 2)) / h
    first, second, third = f.narrow(d, 0, 1), f.narrow(d, 1, 1), f.narrow(d, min(2, n - 1), 1)
    last, before, before2 = f.narrow(d, n - 1, 1), f.narrow(d, n - 2, 1), f.narrow(d, max(n - 3, 0), 1)
    if edge_order == 1:
        prepend = (second - first) / h
        append = (last - before) / h
    else:
        prepend = (first * -1.5 + second * 2 - third * 0.5) / h
        append = (before2 * 0.5 + before * -2 + last * 1.5) / h
    return _join(center / 2, prepend, append, d)


def _coordinates(f, d: int, x, edge_order: int):
    n = f.shape[d]
    shape = [1] * f.dim()
    shape[d] = -1
    dx = x.diff(1, 0)
    dx1, dx2 = dx.narrow(0, 0, n - 2), dx.narrow(0, 1, n - 2)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * f.narrow(d, 0, n - 2) + b * f.narrow(d, 1, n - 2) + c * f.narrow(d, 2, n - 2)
    if edge_order == 1:
        prepend = (f.narrow(d, 1, 1) - f.narrow(d, 0, 1)) / dx[0]
        append = (f.narrow(d, n - 1, 1) - f.narrow(d, n - 2, 1)) / dx[-1]
    else:
        h0, h1 = dx[0], dx[1]
        prepend = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * f.narrow(d, 0, 1) + (h0 + h1) / (h0 * h1) * f.narrow(d, 1, 1)
                   + (-h0) / (h1 * (h0 + h1)) * f.narrow(d, 2, 1))
        hl, hl2 = dx[-1], dx[-2]
        append = (hl / (hl2 * (hl + hl2)) * f.narrow(d, n - 3, 1) - (hl + hl2) / (hl * hl2) * f.narrow(d, n - 2, 1)
                  + (2 * hl + hl2) / (hl * (hl + hl2)) * f.narrow(d, n - 1, 1))
    return _join(center, prepend, append, d)


def _gradient(self, spacing, dim, edge_order):
    dims = _check(tuple(self.shape), self.dtype, spacing, dim, edge_order)
    if spacing is None:
        spacing = 1.0
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    elif len(spacing) == 1 and len(dims) != 1:
        spacing = list(spacing) * len(dims)
    out = []
    for d, h in zip(dims, spacing):
        if hasattr(h, "shape") and len(h.shape) > 0:
            out.append(_coordinates(self, d, h, edge_order))
        else:
            out.append(_uniform(self, d, h, edge_order))
    return tuple(out)


_OPTS = "int edge_order=1) -> Tensor[]"


@op(f"gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, {_OPTS}", kind=REDUCTION,
    method=False, composite=True)
def gradient_scalarint(self, spacing=None, dim=None, edge_order=1):
    """Estimates of ``self``'s derivative along each dim (all dims, or ``dim``), one tensor per dim.

    >>> toolkit.gradient(toolkit.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    return _gradient(self, spacing, dim, edge_order)


@op(f"gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, {_OPTS}", kind=REDUCTION, method=False,
    composite=True)
def gradient_scalararray(self, spacing, dim, edge_order=1):
    """``gradient`` with one spacing for every dim in ``dim``."""
    return _gradient(self, spacing, dim, edge_order)


@op(f"gradient.array(Tensor self, *, int[] dim, {_OPTS}", kind=REDUCTION, method=False, composite=True)
def gradient_array(self, dim, edge_order=1):
    """``gradient`` along the dims in ``dim`` with unit spacing."""
    return _gradient(self, None, dim, edge_order)


@op(f"gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, {_OPTS}", kind=REDUCTION,
    method=False, composite=True)
def gradient_scalarrayint(self, spacing, dim=None, edge_order=1):
    """``gradient`` with a spacing per dim."""
    return _gradient(self, list(spacing), dim, edge_order)


@op(f"gradient.scalarrayarray(Tensor self, *, Scalar[] spacing, int[] dim, {_OPTS}", kind=REDUCTION,
    method=False, composite=True)
def gradient_scalarrayarray(self, spacing, dim, edge_order=1):
    """``gradient`` with a spacing per dim in ``dim``."""
    return _gradient(self, list(spacing), dim, edge_order)


@op(f"gradient.tensorarrayint(Tensor self, *, Tensor[] spacing, int? dim=None, {_OPTS}", kind=REDUCTION,
    method=False, composite=True)
def gradient_tensorarrayint(self, spacing, dim=None, edge_order=1):
    """``gradient`` with coordinates (a 1-D tensor per dim) for unequal steps."""
    return _gradient(self, list(spacing), dim, edge_order)


@op(f"gradient.tensorarray(Tensor self, *, Tensor[] spacing, int[] dim, {_OPTS}", kind=REDUCTION,
    method=False, composite=True)
def gradient_tensorarray(self, spacing, dim, edge_order=1):
    """``gradient`` with coordinates for the dims in ``dim``."""
    return _gradient(self, list(spacing), dim, edge_order)


def _weights(n: int, h, edge_order: int) -> np.ndarray:
    """The (n, n) matrix W with ``gradient(f) = W f`` along one dim (spacing ``h``: a number or coordinates)."""
    w = np.zeros((n, n))
    if np.ndim(h) == 0:
        h = float(h)
        for i in range(1, n - 1):
            w[i, i - 1], w[i, i + 1] = -0.5 / h, 0.5 / h
        if edge_order == 1:
            w[0, :2] = (-1 / h, 1 / h)
            w[-1, -2:] = (-1 / h, 1 / h)
        else:
            w[0, :3] = (-1.5 / h, 2 / h, -0.5 / h)
            w[-1, -3:] = (0.5 / h, -2 / h, 1.5 / h)
        return w
    dx = np.diff(np.asarray(h, dtype=np.float64))
    for i in range(1, n - 1):
        d1, d2 = dx[i - 1], dx[i]
        w[i, i - 1:i + 2] = (-d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2)))
    if edge_order == 1:
        w[0, :2] = (-1 / dx[0], 1 / dx[0])
        w[-1, -2:] = (-1 / dx[-1], 1 / dx[-1])
    else:
        h0, h1 = dx[0], dx[1]
        w[0, :3] = (-(2 * h0 + h1) / (h0 * (h0 + h1)), (h0 + h1) / (h0 * h1), -h0 / (h1 * (h0 + h1)))
        hl, hl2 = dx[-1], dx[-2]
        w[-1, -3:] = (hl / (hl2 * (hl + hl2)), -(hl + hl2) / (hl * hl2), (2 * hl + hl2) / (hl * (hl + hl2)))
    return w


def _gradient_vjp(grad, self, spacing, dim, edge_order):
    """``self``'s gradient: ``gradient`` is linear, ``W f`` along each dim, so its vjp is ``W^T g`` summed
    over the outputs. Coordinate spacings get no gradient here."""
    dims = _dims(len(self.shape), dim)
    if spacing is None:
        spacing = 1.0
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    elif len(spacing) == 1 and len(dims) != 1:
        spacing = list(spacing) * len(dims)
    total = None
    for g, d, h in zip(grad, dims, spacing):
        if g is None:
            continue
        h = h.detach().numpy() if hasattr(h, "shape") and len(h.shape) > 0 else (
            h.item() if hasattr(h, "item") else h)
        w = g.new_tensor(_weights(self.shape[d], h, edge_order), dtype=g.dtype)
        part = g.movedim(d, -1).matmul(w).movedim(-1, d)
        total = part if total is None else total + part
    return api.zeros_like(self) if total is None else total


@gradient_scalarint.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, spacing, dim, edge_order)


@gradient_scalararray.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, spacing, dim, edge_order)


@gradient_array.grad
def _(grad, self, dim, edge_order):
    return _gradient_vjp(grad, self, None, dim, edge_order)


@gradient_scalarrayint.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, list(spacing), dim, edge_order)


@gradient_scalarrayarray.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, list(spacing), dim, edge_order)


@gradient_tensorarrayint.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, list(spacing), dim, edge_order), None


@gradient_tensorarray.grad
def _(grad, self, spacing, dim, edge_order):
    return _gradient_vjp(grad, self, list(spacing), dim, edge_order), None


def _meta(self, spacing=None, dim=None, edge_order=1):
    dims = _check(tuple(self.shape), self.dtype, spacing, dim, edge_order)
    dtype = self.dtype if self.dtype.is_floating_point else _dt.get_default_dtype()
    return [TensorMeta(tuple(self.shape), dtype, self.device) for _ in dims]


for _o in (gradient_scalarint, gradient_scalarrayint, gradient_tensorarrayint):
    _o.meta_rule(_meta)
gradient_scalararray.meta_rule(_meta)
gradient_scalarrayarray.meta_rule(_meta)
gradient_tensorarray.meta_rule(_meta)
gradient_array.meta_rule(lambda self, dim, edge_order=1: _meta(self, None, dim, edge_order))


@gradient_scalarint.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((5, 4)),), {}
    yield (r((5, 4)),), {"spacing": 2.0, "dim": 1, "edge_order": 2}
    yield (r(6),), {"edge_order": 2}


@gradient_scalarrayint.sample_inputs
def _(rng):
    yield (rng.standard_normal((4, 3)),), {"spacing": [0.5, 2.0]}


@gradient_scalarrayarray.sample_inputs
def _(rng):
    yield (rng.standard_normal((4, 3, 3)),), {"spacing": [0.5, 2.0], "dim": [0, 2], "edge_order": 2}


def _no_generated_samples(rng):
    """Coordinate spacings are keyword-only tensors, which the generated tests do not convert; they are
    compared with PyTorch in tests/ops/test_gradient.py instead."""
    return iter(())


gradient_tensorarrayint.sample_inputs(_no_generated_samples)
gradient_tensorarray.sample_inputs(_no_generated_samples)


@gradient_array.sample_inputs
def _(rng):
    yield (rng.standard_normal((4, 3)),), {"dim": [1]}


@gradient_scalararray.sample_inputs
def _(rng):
    yield (rng.standard_normal((4, 3)),), {"spacing": 0.5, "dim": [0, 1]}
