"""Quantiles: quantile and nanquantile, with ``q`` a float or a tensor of them and five interpolations.

As in PyTorch, both are compositions of registered ops (sort, gather, lerp),
so autograd follows the parts: the gradient reaches the one or two sorted
elements each quantile reads, and a tensor ``q`` (through the interpolation
weight). The derivative rule below states the same for the JIT, reading the
same plan of ranks as the forward.

The rank of quantile ``q`` in a slice of ``n`` sorted values is ``q * (n - 1)``;
``nanquantile`` counts only the non-NaN values (NaN sorts last), and
``quantile`` of a slice holding NaN reads its last element, a NaN.

Example::

    >>> toolkit.quantile(toolkit.tensor([1.0, 2.0, 4.0, 8.0]), 0.5)
    tensor(3.)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from .registry import REDUCTION, op

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(self_dtype, numel: int, q_dtype, q_ndim: int, interpolation: str) -> None:
    """PyTorch's quantile checks that need no data (every message says ``quantile()``, nanquantile's too)."""
    if numel == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q_ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self_dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q_dtype is not None and q_dtype is not self_dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")


def _check_q_values(q) -> None:
    if isinstance(q, (int, float)):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    elif q.numel() and bool(((q < 0) | (q > 1)).any()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _output_shape(shape: tuple, q_ndim: int, nq: int, dim, keepdim: bool) -> tuple:
    if dim is not None and shape:
        d = wrap_dim(dim, len(shape), "quantile")
        out = shape[:d] + ((1,) if keepdim else ()) + shape[d + 1:]
    else:
        if dim is not None:
            wrap_dim(dim, 1, "quantile")
        out = (1,) * len(shape) if keepdim else ()
    return ((nq,) if q_ndim else ()) + out


class _Plan(NamedTuple):
    """Where each quantile reads the sorted slices ``(nq, *rest, n)``: positions below and above, the weight."""

    sorted_values: object  # (1, *rest, n): each slice sorted, NaN last
    order: object  # (1, *rest, n): the index in the slice each sorted value came from
    below: object  # (nq, *rest, 1) int64
    above: object  # (nq, *rest, 1) int64
    weight: object  # (nq, *rest, 1), or None where the quantile is the value below itself
    rank_scale: object  # d rank / d q where the rank follows q: (1, *rest, 1)
    fixed: object  # (nq, *rest, 1) bool: ranks set regardless of q (a NaN to read), so q gets no gradient there


def _slices(self, dim):
    """``self`` with the reduced elements along the last dim: flattened for ``dim=None``."""
    if dim is None or self.ndim == 0:
        return self.reshape(-1)
    return self.movedim(wrap_dim(dim, self.ndim, "quantile"), -1)


def _plan(self, q, dim, interpolation: str, ignore_nan: bool) -> _Plan:
    x = _slices(self.detach(), dim)
    sorted_values, order = x.sort(-1)
    sorted_values, order = sorted_values.unsqueeze(0), order.unsqueeze(0)
    qs = q.detach().reshape(-1) if not isinstance(q, (int, float)) else api.full([1], q, dtype=self.dtype)
    qs = qs.reshape([-1] + [1] * x.ndim)
    nan = sorted_values.isnan()
    if ignore_nan:
        scale = nan.logical_not().sum(-1, keepdim=True) - 1  # an all-NaN slice: rank 0, a NaN
        ranks = qs * scale
        fixed = ranks < 0
        ranks = ranks.masked_fill(fixed, 0)
    else:
        last = x.shape[-1] - 1
        scale = api.full([1] * (x.ndim + 1), last, dtype=self.dtype)
        has_nan = nan.any(-1, keepdim=True)  # a slice with NaN: the last element, a NaN
        ranks = (qs * last).expand(list(qs.shape[:1]) + list(has_nan.shape[1:]))
        fixed = has_nan.expand(list(ranks.shape))
        ranks = ranks.masked_fill(fixed, last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(_dt.int64)
    weight = None
    above = below
    if interpolation in ("linear", "midpoint"):
        weight = ranks - below if interpolation == "linear" else api.full_like(ranks, 0.5)
        above = ranks.ceil().to(_dt.int64)
    return _Plan(sorted_values, order, below, above, weight, scale.to(self.dtype), fixed)


def _finish(r, shape: tuple, q, dim, keepdim: bool):
    """From ``(nq, *rest)`` to PyTorch's layout: the q dim first (none for a float ``q``), the reduced dim kept
    as 1 with ``keepdim``."""
    nq = r.shape[0]
    if dim is not None and shape:
        d = wrap_dim(dim, len(shape), "quantile")
        r = r.movedim(-1, d + 1) if keepdim else r.squeeze(-1)
    else:
        r = r.reshape([nq] + [1] * len(shape) if keepdim else [nq])
    return r if not isinstance(q, (int, float)) and q.ndim else r.squeeze(0)


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    q_tensor = not isinstance(q, (int, float))
    _check(self.dtype, self.numel(), q.dtype if q_tensor else None, q.ndim if q_tensor else 0, interpolation)
    _check_q_values(q)
    p = _plan(self, q, dim, interpolation, ignore_nan)
    x = _slices(self, dim).unsqueeze(0)
    nq = p.below.shape[0]
    values = x.gather(-1, p.order).expand([nq] + list(x.shape[1:]))
    low = values.gather(-1, p.below)
    if p.weight is None:
        return _finish(low, tuple(self.shape), q, dim, keepdim)
    weight = p.weight
    if q_tensor and interpolation == "linear":
        # the weight follows q as PyTorch's ``ranks - ranks_below`` does: d weight / d q is the rank's scale
        qs = q.reshape([-1] + [1] * (x.ndim - 1))
        weight = weight + ((qs - qs.detach()) * p.rank_scale).masked_fill(p.fixed, 0)
    return _finish(low.lerp(values.gather(-1, p.above), weight), tuple(self.shape), q, dim, keepdim)


def _quantile_backward(grad, self, q, dim, keepdim, interpolation, ignore_nan):
    """The gradient for ``self`` (at the sorted positions read, back through the sort) and for a tensor ``q``."""
    p = _plan(self, q, dim, interpolation, ignore_nan)
    shape = tuple(self.shape)
    nq = p.below.shape[0]
    g = grad if not isinstance(q, (int, float)) and q.ndim else grad.unsqueeze(0)
    if dim is not None and shape:
        d = wrap_dim(dim, len(shape), "quantile")
        g = g.movedim(d + 1, -1) if keepdim else g.unsqueeze(-1)
    else:
        g = g.reshape([nq] + [1] * (p.below.ndim - 1))
    full = [nq] + list(p.sorted_values.shape[1:])
    at_sorted = api.zeros(full, dtype=g.dtype)
    if p.weight is None:
        at_sorted = at_sorted.scatter_add(-1, p.below, g)
    else:
        at_sorted = at_sorted.scatter_add(-1, p.below, g * (1 - p.weight)).scatter_add(-1, p.above, g * p.weight)
    x_grad = api.zeros(full[1:], dtype=g.dtype).scatter(-1, p.order[0], at_sorted.sum(0))
    if dim is not None and shape:
        x_grad = x_grad.movedim(-1, wrap_dim(dim, len(shape)))
    x_grad = x_grad.reshape(shape)
    if isinstance(q, (int, float)):
        return x_grad
    if interpolation != "linear":
        return x_grad, api.zeros_like(q)
    values = p.sorted_values.expand(full)
    spread = values.gather(-1, p.above) - values.gather(-1, p.below)
    q_grad = (g * spread * p.rank_scale).masked_fill(p.fixed, 0).reshape(nq, -1).sum(1)
    return x_grad, q_grad.reshape(q.shape)


def _meta(self, q, dim, keepdim, interpolation):
    q_tensor = not isinstance(q, (int, float))
    q_ndim = len(q.shape) if q_tensor else 0
    numel = 1
    for s in self.shape:
        numel *= s
    _check(self.dtype, numel, q.dtype if q_tensor else None, q_ndim, interpolation)
    nq = q.shape[0] if q_ndim else 1
    return TensorMeta(_output_shape(tuple(self.shape), q_ndim, nq, dim, keepdim), self.dtype, self.device)


def _samples(with_nans: bool, q_tensor: bool):
    """Distinct values (so the gradient is defined), q away from the ranks' integers, every interpolation."""

    def make(rng):
        def x(*shape):
            a = rng.permutation(int(np.prod(shape))).reshape(shape) / 4.0
            if with_nans:
                a[rng.uniform(0, 1, shape) < 0.25] = np.nan
            return a

        def q(*values, dtype=np.float64):
            return np.array(values, dtype) if q_tensor else values[0]

        yield (x(7), q(0.3, 0.55, 0.8)), {}
        yield (x(3, 5), q(0.8, 0.3)), {"dim": 1}
        yield (x(3, 5), q(0.55), -2), {"keepdim": True}
        yield (x(2, 3, 5), q(0.3, 0.55)), {"keepdim": True}
        yield (x(5, 4).T, q(0.3, 0.8), 0), {}
        for mode in INTERPOLATIONS[1:]:
            yield (x(4, 6), q(0.33, 0.61, 0.79)), {"dim": 1, "interpolation": mode}
        yield (np.array(1.5), q(0.3)), {"dim": 0}
        yield (x(5).astype(np.float32), q(0.3, 0.6, dtype=np.float32)), {}

    return make


def _define(name: str, ignore_nan: bool):
    what = "ignoring NaN (an all-NaN slice gives NaN)" if ignore_nan else "NaN if the slice holds NaN"
    for overload, q_type in (("", "Tensor q"), ("scalar", "float q")):
        def composite(self, q, dim=None, keepdim=False, interpolation="linear"):
            return _quantile(self, q, dim, keepdim, interpolation, ignore_nan)

        composite.__doc__ = (f"The ``q``-th quantiles of ``self`` (flattened, or along ``dim``), {what}; "
                             "``interpolation`` picks between the two nearest values: linear, lower, higher, "
                             "midpoint or nearest.")
        o = op(f"{name}{'.' if overload else ''}{overload}(Tensor self, {q_type}, int? dim=None, "
               'bool keepdim=False, *, str interpolation="linear") -> Tensor', kind=REDUCTION,
               composite=True)(composite)
        o.meta_rule(_meta)
        o.sample_inputs(_samples(ignore_nan, overload == ""))
        o.grad(lambda grad, self, q, dim, keepdim, interpolation: _quantile_backward(
            grad, self, q, dim, keepdim, interpolation, ignore_nan))


_define("quantile", False)
_define("nanquantile", True)
