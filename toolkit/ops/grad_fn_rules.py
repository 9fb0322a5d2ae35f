"""Rules for ``OpDef.grad_fn`` where PyTorch's name for an op's node depends on the call.

PyTorch names a node after the derivative formula that ran, so one function can
record different nodes: ``pow`` with a Python number for an exponent runs
``pow.Tensor_Scalar`` (``PowBackward0``), with two tensors ``pow.Tensor_Tensor``
(``PowBackward1``); ``reshape`` records ``ViewBackward0`` where its result is a
view and ``UnsafeViewBackward0`` where it had to copy. A rule is
``fn(bound, outputs) -> name``: the call's arguments in schema order and its
results, as the autograd recorder holds them (tensors, numbers, lists).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable


def _is_number(v) -> bool:
    return isinstance(v, numbers.Number)


def by_scalar_operand(tensors: str, number_other: str, number_self: str | None = None) -> Callable:
    """The name of a binary op's formula by which operand is a Python number (PyTorch's Scalar overloads):
    ``number_other`` for ``op(tensor, 2)``, ``number_self`` for ``op(2, tensor)``, ``tensors`` for two tensors."""

    def rule(bound, outputs) -> str:
        if _is_number(bound[1]):
            return number_other
        if number_self is not None and _is_number(bound[0]):
            return number_self
        return tensors

    return rule


def view_or_copy(view: str = "ViewBackward0", copy: str = "UnsafeViewBackward0") -> Callable:
    """``view`` where the result is a view of the input, else ``copy`` (``reshape`` of a transposed tensor
    copies, and PyTorch records ``_unsafe_view`` of the copy)."""

    def rule(bound, outputs) -> str:
        return view if outputs[0]._base is not None else copy

    return rule


def by_input_dim(names: dict, default: str, arg: int = 0) -> Callable:
    """The name by the number of dims of tensor argument ``arg``: ``names[dim]``, else ``default``."""

    def rule(bound, outputs) -> str:
        return names.get(bound[arg].dim(), default)

    return rule


REDUCED = {1: "MeanBackward0", 2: "SumBackward0"}  # PyTorch's Reduction::Mean and Reduction::Sum


def by_reduction(unreduced: str | Callable, arg: int) -> Callable:
    """A loss PyTorch writes as elementwise ops then a reduction: ``MeanBackward0`` or ``SumBackward0`` by the
    ``reduction`` argument (index ``arg``), else the last elementwise op (``unreduced``: a name or a rule)."""

    def rule(bound, outputs) -> str:
        reduced = REDUCED.get(bound[arg])
        if reduced is not None:
            return reduced
        return unreduced if isinstance(unreduced, str) else unreduced(bound, outputs)

    return rule


def by_number_at(arg: int, number: str, tensor: str) -> Callable:
    """``number`` where argument ``arg`` is a Python number (PyTorch's Scalar overload), else ``tensor``."""

    def rule(bound, outputs) -> str:
        return number if _is_number(bound[arg]) else tensor

    return rule


def by_dim_given(all_dims: str, some_dims: str, arg: int = 1) -> Callable:
    """A reduction over every element (``x.sum()``: ``all_dims``) or over the dims in argument ``arg``."""

    def rule(bound, outputs) -> str:
        return all_dims if bound[arg] is None else some_dims

    return rule


def chunk_node(split: str, with_sizes: str) -> Callable:
    """``chunk(self, chunks, dim)``: PyTorch splits by one size, or by a list of sizes where the dim is empty."""

    def rule(bound, outputs) -> str:
        self, chunks, dim = bound[:3]
        return with_sizes if self.dim() and self.shape[dim] == 0 else split

    return rule


def adaptive_avg_node(k: int) -> Callable:
    """``adaptive_avg_pool{k}d``: PyTorch takes the mean over the spatial dims for an output of size 1 (global
    pooling), else runs its pooling formula."""

    def rule(bound, outputs) -> str:
        return "MeanBackward1" if set(bound[1]) == {1} else f"AdaptiveAvgPool{k}DBackward0"

    return rule
