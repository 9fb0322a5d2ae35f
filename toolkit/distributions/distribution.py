"""The ``Distribution`` base class: shapes, argument and sample validation, and the interface every
distribution fills in (sample/rsample, log_prob, cdf/icdf, entropy, moments, enumerate_support, expand).

A distribution has a ``batch_shape`` (independent, differently parametrized copies) and an ``event_shape``
(the shape of one draw); ``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``.
Validation is on by default (as in PyTorch, while Python runs without ``-O``): parameters are checked against
``arg_constraints`` at construction and values against ``support`` in ``log_prob``.

>>> d = Normal(toolkit.zeros(3), 1.0)   # batch_shape (3,), event_shape ()
>>> d.sample((2,)).shape
toolkit.Size([2, 3])
"""

from __future__ import annotations

import warnings
from typing import Any

import toolkit
from toolkit._core.shape import Size
from toolkit.distributions import constraints
from toolkit.distributions.utils import lazy_property
from toolkit.tensor import Tensor

__all__ = ["Distribution"]


def _all_true(valid: Any) -> bool:
    """Whether a constraint check passed everywhere (a bool or a bool tensor)."""
    return bool(valid.all()) if isinstance(valid, Tensor) else bool(valid)


class Distribution:
    """Base class of probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for distributions built without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = Size(), event_shape: Any = Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                    "or initialize the distribution with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # decided by other parameters, checked through them
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # the parameter given in its other form (probs vs logits)
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution whose batch is broadcast to ``batch_shape`` (parameters are expanded views)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single sample, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint each parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint describing where the distribution has mass."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Draw ``sample_shape`` batches of samples; no gradient flows to the parameters."""
        with toolkit.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """Reparametrized samples: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (the old spelling of ``sample((n,))``)."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy)``."""
        return toolkit.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        """``sample_shape + batch_shape + event_shape``: the shape ``sample(sample_shape)`` returns."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` has a compatible shape and lies in the support (``log_prob`` calls it)."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}."
            )
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                "the distribution with `validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        """A blank instance for ``expand``; refuses subclasses whose own ``__init__`` the base cannot mimic."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls: type, batch_shape: Any, _instance: Any, names: tuple[str, ...],
                       copy: tuple[str, ...] = ()) -> Any:
        """The common body of ``expand``: a new instance of ``cls`` whose tensor parameters ``names`` (those
        present: ``probs`` or ``logits``) are views broadcast to ``batch_shape`` (each keeping its own
        trailing event dims), with the attributes in ``copy`` carried over unchanged."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        n_batch = len(self._batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                setattr(new, name, value.expand(tuple(batch_shape) + tuple(value.shape[n_batch:])))
        for name in copy:
            setattr(new, name, getattr(self, name))
        if "_param" in self.__dict__:  # the parameter as given (probs or logits), now expanded
            new._param = new.probs if self.__dict__.get("probs") is self._param else new.logits
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}" for p in names
        )
        return self.__class__.__name__ + "(" + args + ")"
