"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazy properties and the
packing of lower-triangular matrices into vectors.

They live apart from the distributions because several families (and the transforms) need the same
conversions, and one definition keeps their numerics identical.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import update_wrapper
from numbers import Number
from typing import Any

import toolkit
from toolkit.tensor import Tensor

__all__ = [
    "broadcast_all",
    "clamp_probs",
    "euler_constant",
    "lazy_property",
    "logits_to_probs",
    "probs_to_logits",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors and Python numbers to one shape.

    Numbers become tensors with the dtype of the first tensor argument (the default dtype when there is
    none), so ``Normal(0., scale64)`` stays in float64.

    >>> loc, scale = broadcast_all(0.0, toolkit.ones(3))
    """
    if not all(isinstance(v, (Tensor, Number)) or hasattr(v, "__torch_function__") for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = {"dtype": toolkit.get_default_dtype()}
        for value in values:
            if isinstance(value, Tensor):
                options = {"dtype": value.dtype, "device": value.device}
                break
        values = tuple(v if isinstance(v, Tensor) else toolkit.tensor(v, **options) for v in values)
    return tuple(toolkit.broadcast_tensors(*values))


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Tensor:
    """``shape`` standard normal draws from the default generator (the stream ``normal_`` uses)."""
    return toolkit.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value`` (the event dimensions of a log density)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: a sigmoid for binary outcomes, a softmax over the last dim otherwise."""
    if is_binary:
        return toolkit.sigmoid(logits)
    return toolkit.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Keep probabilities inside ``[eps, 1 - eps]`` so their logs stay finite."""
    eps = toolkit.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities: log-odds for binary outcomes, log-probabilities otherwise."""
    clamped = clamp_probs(probs)
    if is_binary:
        return toolkit.log(clamped) - toolkit.log1p(-clamped)
    return toolkit.log(clamped)


class lazy_property:  # noqa: N801  (PyTorch's name)
    """A property computed on first access and then stored on the instance.

    Distributions accept either ``probs`` or ``logits`` and derive the other only when asked; the value is
    computed with gradients enabled so that a later backward reaches the given parameter.
    """

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with toolkit.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):  # noqa: N801
    """What a ``lazy_property`` looks like on the class: a property too, so documentation tools list it."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int) -> Tensor:
    arange = toolkit.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries of the lower triangle (up to diagonal ``diag``) of ``mat``, row by row, as a vector."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a square matrix whose lower triangle holds ``vec``."""
    # solve n(n+1)/2 + diag-shift = len(vec) for n
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))) / 2
    if round(n) - n > toolkit.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


def _check_probs_or_logits(probs: Any, logits: Any) -> None:
    """Distributions parametrized by ``probs`` or ``logits`` take exactly one of the two."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _batch_shape_of(broadcast: Tensor, *given: Any) -> Any:
    """The batch shape of parameters ``given`` once broadcast to ``broadcast``: ``()`` when all were plain
    numbers (a distribution of numbers is a scalar one), else the broadcast tensor's shape."""
    if all(isinstance(v, Number) for v in given):
        return toolkit.Size()
    return broadcast.size()


def _count_and_param(total_count: Any, probs: Any, logits: Any) -> tuple[Tensor, Tensor, bool]:
    """``total_count`` broadcast with whichever of ``probs``/``logits`` is given and cast to its dtype (for the
    binomial-type distributions); also whether it was ``probs``."""
    _check_probs_or_logits(probs, logits)
    is_probs = probs is not None
    count, param = broadcast_all(total_count, probs if is_probs else logits)
    return count.type_as(param), param, is_probs


@lazy_property
def binary_logits(self: Any) -> Tensor:
    """Log-odds from ``probs`` (a class attribute ``logits = binary_logits``)."""
    return probs_to_logits(self.probs, is_binary=True)


@lazy_property
def binary_probs(self: Any) -> Tensor:
    """Probabilities from ``logits`` (a class attribute ``probs = binary_probs``)."""
    return logits_to_probs(self.logits, is_binary=True)


binary_logits.wrapped.__name__ = "logits"  # the instance attribute each one caches into
binary_probs.wrapped.__name__ = "probs"
