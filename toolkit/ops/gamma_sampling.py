"""The gamma family's samplers and their reparametrized gradients: ``_standard_gamma``, ``_sample_dirichlet``,
``_standard_gamma_grad``, ``_dirichlet_grad``.

Gamma, Chi2, Beta, Dirichlet, StudentT and the distributions built on them draw here. The samplers
reproduce ATen's CPU streams (the output's C order, one rejection loop per element), so after
``toolkit.manual_seed(s)`` they give ``torch._standard_gamma``'s and ``torch._sample_dirichlet``'s numbers
for seed ``s``. Their gradients are implicit (``dx/dalpha`` with the CDF held fixed) and use ATen's
approximations, so they agree with PyTorch's to rounding::

    a = toolkit.tensor([0.5, 2.0], requires_grad=True)
    toolkit._standard_gamma(a).sum().backward()   # a.grad = _standard_gamma_grad(a, x)
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none, fmt_shape
from . import _distributions as D
from . import api
from ._generator import get_generator
from .random_inplace import not_implemented
from .registry import NN, RANDOM, op

_SAMPLED = (np.float32, np.float64)


def _check_sampled(kernel: str, dtype: np.dtype) -> None:
    if np.dtype(dtype) not in _SAMPLED:
        raise not_implemented(kernel, dtype)


# Differentiable through its implicit gradient, recorded by autograd; marked not differentiable so that numerical
# gradient checks (which would compare different draws) skip it.
@op("_standard_gamma(Tensor self, Generator? generator=None) -> Tensor", kind=RANDOM, method=False, out=False,
    differentiable=False)
def _standard_gamma(self, generator=None):
    """Standard gamma draws ``Gamma(self, 1)`` elementwise, never below the dtype's smallest normal number
    (an alpha of 0, a negative one or NaN gives that minimum, as in PyTorch)."""
    _check_sampled("gamma_cpu", self.dtype)
    draws = D.standard_gamma(get_generator(generator), self.reshape(-1), single=self.dtype == np.float32)
    draws = draws.astype(self.dtype).reshape(self.shape)
    tiny = np.finfo(self.dtype).tiny
    return np.where(draws > tiny, draws, tiny)  # NaN too: ATen keeps the maximum with tiny first


@_standard_gamma.grad
def _(grad, self, result):
    return (grad * api._standard_gamma_grad(self, result),)


@_standard_gamma.meta_rule
def _(self, generator=None):
    _check_sampled("gamma_cpu", _np_dtype(self))
    return TensorMeta(self.shape, self.dtype, self.device)


@op("_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor", kind=RANDOM, method=False, out=False,
    differentiable=False)
def _sample_dirichlet(self, generator=None):
    """Dirichlet draws over the last dim of ``self`` (the concentrations): gamma draws in double, normalized,
    kept inside ``[tiny, 1)``. Not differentiable itself; ``distributions.Dirichlet`` attaches the implicit
    gradient with ``_dirichlet_grad``."""
    _check_sampled("dirichlet", self.dtype)
    return D.dirichlet(get_generator(generator), np.ascontiguousarray(self).reshape(self.shape or (1,))).reshape(
        self.shape)


@_sample_dirichlet.grad
def _(grad, self):
    raise RuntimeError("derivative for aten::_sample_dirichlet is not implemented")


@_sample_dirichlet.meta_rule
def _(self, generator=None):
    _check_sampled("dirichlet", _np_dtype(self))
    return TensorMeta(self.shape, self.dtype, self.device)


def _np_dtype(t) -> np.dtype:
    return t.dtype.np if isinstance(t.dtype, _dt.dtype) else np.dtype(t.dtype)


def _same_dtypes(*tensors) -> np.dtype:
    """PyTorch's check that every input has the first one's dtype (these kernels do not promote)."""
    first = _np_dtype(tensors[0])
    for t in tensors[1:]:
        if _np_dtype(t) != first:
            raise RuntimeError(f"Found dtype {_dt.title(_np_dtype(t))} but expected {_dt.title(first)}")
    return first


def _broadcast(name: str, *tensors) -> tuple:
    shapes = [tuple(t.shape) for t in tensors]
    acc: tuple | None = ()
    for s in shapes:
        acc = broadcast_shapes_or_none(acc, s)
        if acc is None:
            raise RuntimeError(f"{name}: shapes {' and '.join(fmt_shape(s) for s in shapes)} cannot be broadcast")
    return acc


def _grad_meta(name: str, kernel: str):
    def meta(*tensors):
        dtype = _same_dtypes(*tensors)
        _check_sampled(kernel, dtype)
        return TensorMeta(_broadcast(name, *tensors), tensors[0].dtype, tensors[0].device)

    return meta


# The two gradient ops are pointwise over broadcast inputs but take the backward helpers' kind (NN): their
# series and branches have no scalar formula for the fusion code generator.
def _flat(a: np.ndarray, shape: tuple, dtype=np.float64) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(a, shape), dtype=dtype).reshape(-1)


@op("_standard_gamma_grad(Tensor self, Tensor output) -> Tensor", kind=NN, method=False, out=False,
    differentiable=False)
def _standard_gamma_grad(self, output):
    """``dx/dalpha`` of standard gamma draws ``output`` of concentrations ``self``, with the CDF held fixed:
    ATen's approximation (a Taylor series for small x, a saddle-point expansion for alpha above 8, a rational
    fit between), computed in double."""
    dtype = _same_dtypes(self, output)
    _check_sampled("_standard_gamma_grad_cpu", dtype)
    shape = _broadcast("_standard_gamma_grad", self, output)
    out = np.empty(int(np.prod(shape)), np.float64)
    if out.size:
        D._gamma_kernels().standard_gamma_grad_fill(_flat(self, shape), _flat(output, shape), out)
    return out.astype(dtype).reshape(shape)


@_standard_gamma_grad.grad
def _(grad, self):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")


_standard_gamma_grad.meta_rule(_grad_meta("_standard_gamma_grad", "_standard_gamma_grad_cpu"))


@op("_dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor", kind=NN, method=False, out=False,
    differentiable=False)
def _dirichlet_grad(x, alpha, total):
    """For ``x ~ Beta(alpha, total - alpha)``: ``dx/dalpha`` with the CDF and ``total - alpha`` held fixed,
    divided by ``1 - x`` (the Dirichlet's backward multiplies it back): ATen's approximation (Taylor series
    near 0 and 1, a saddle-point expansion for large parameters, a rational correction between), in double."""
    dtype = _same_dtypes(x, alpha, total)
    _check_sampled("_dirichlet_grad_cpu", dtype)
    shape = _broadcast("_dirichlet_grad", x, alpha, total)
    out = np.empty(int(np.prod(shape)), np.float64)
    if out.size:
        t = dtype.type
        D._gamma_kernels().dirichlet_grad_fill(t, _flat(x, shape, t), _flat(alpha, shape, t), _flat(total, shape, t),
                                               out)
    return out.astype(dtype).reshape(shape)


@_dirichlet_grad.grad
def _(grad, x):
    raise RuntimeError("derivative for aten::_dirichlet_grad is not implemented")


_dirichlet_grad.meta_rule(_grad_meta("_dirichlet_grad", "_dirichlet_grad_cpu"))


# ---------------------------------------------------------------------------------------------
# Samples for the registry-generated tests (values are compared with PyTorch under equal seeds in
# tests/ops/test_gamma_sampling.py).
# ---------------------------------------------------------------------------------------------
@_standard_gamma.sample_inputs
def _(rng):
    yield (rng.random((3, 4)) * 3 + 0.1,), {}
    yield (rng.random((4, 3)).T.astype(np.float32) + 0.5,), {}
    yield (np.zeros((0, 2)),), {}


@_sample_dirichlet.sample_inputs
def _(rng):
    yield (rng.random((3, 4)) * 3 + 0.1,), {}
    yield (rng.random(5).astype(np.float32) + 0.5,), {}


@_standard_gamma_grad.sample_inputs
def _(rng):
    yield (rng.random((3, 4)) * 10 + 0.1, rng.random((3, 4)) * 12 + 0.01), {}
    yield (rng.random(4).astype(np.float32) + 0.5, rng.random((2, 4)).astype(np.float32)), {}


@_dirichlet_grad.sample_inputs
def _(rng):
    alpha = rng.random((3, 4)) * 8 + 0.1
    yield (rng.random((3, 4)) * 0.98 + 0.01, alpha, alpha + rng.random((3, 4)) * 8 + 0.1), {}
