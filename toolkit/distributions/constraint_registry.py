"""``biject_to`` and ``transform_to``: from a constraint to a transform that reaches it from the reals.

Optimizers work on unconstrained tensors; a parameter that must be positive, on a simplex or a correlation
Cholesky factor is stored unconstrained and mapped with ``transform_to(constraint)``. ``biject_to`` promises
more: a bijection, so densities can be carried across it (HMC, variational inference), which is why the
simplex uses stick breaking there and a softmax under ``transform_to``. Both dispatch on the constraint's
class, and users may register their own constraint classes.

Example::

    >>> unconstrained = toolkit.zeros(3, requires_grad=True)
    >>> scale = transform_to(constraints.positive)(unconstrained)
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from toolkit.distributions import constraints
from toolkit.distributions import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint classes to factories ``constraint -> Transform``."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Register ``factory`` for a Constraint subclass (or the class of a constraint instance); without
        ``factory``, a decorator.

        Example::

            @transform_to.register(my_constraint_class)
            def my_factory(constraint):
                return MyTransform(constraint.param)
        """
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> T.Transform:
        """The transform registered for ``constraint``'s class, built for this constraint."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint: constraints.Constraint) -> T.Transform:
    return T.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> T.Transform:
    return T.IndependentTransform(biject_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> T.Transform:
    return T.IndependentTransform(transform_to(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> T.Transform:
    # Covers positive and nonnegative too: they are instances of these classes.
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> T.Transform:
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> T.Transform:
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return T.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: constraints.Constraint) -> T.Transform:
    return T.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: constraints.Constraint) -> T.Transform:
    return T.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: constraints.Constraint) -> T.Transform:
    return T.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: constraints.Constraint) -> T.Transform:
    return T.PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: constraints.Constraint) -> T.Transform:
    return T.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint: Any) -> T.Transform:
    return T.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint: Any) -> T.Transform:
    return T.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint: Any) -> T.Transform:
    return T.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint: Any) -> T.Transform:
    return T.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
