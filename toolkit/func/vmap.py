"""``vmap``, as ``torch.func.vmap``: ``func`` mapped over a dimension of its inputs.

This is not a batching interpreter: the wrapped function runs ``func`` once per batch element, on the inputs
sliced at their ``in_dims``, and stacks the results at ``out_dims``. The results are the same as PyTorch's
(its batching rules compute exactly this), including inside and around the other transforms
(``vmap(grad(f))`` gives per-sample gradients), and Python control flow on values works, which PyTorch's
vmap refuses; the cost is one call of ``func`` per element. ``chunk_size`` is accepted and checked.

Inputs and outputs are pytrees (tuples, lists, dicts of tensors); ``in_dims``/``out_dims`` give one dim, or
None, per leaf, or for a whole subtree. ``randomness`` is PyTorch's: ``"error"`` refuses random ops inside
``func``, ``"different"`` draws independently per element, ``"same"`` replays one draw for every element.
A tensor returned at ``out_dims=None`` must be the same for every element (PyTorch requires it not to
depend on the batch).

    >>> vmap(torch.dot)(torch.ones(5, 3), torch.ones(5, 3))
    tensor([3., 3., 3., 3., 3.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._core.state import STATE
from ..ops import api
from ..ops.registry import RANDOM
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor
from .tree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _get_name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


class _RandomnessError:
    """A dispatch observer that refuses random ops (those of kind random, or taking a Generator)."""

    def on_call(self, op, bound, run):
        args = op.schema.args
        if op.kind == RANDOM or any(a.type.startswith("Generator") for a in args):
            train = [b for a, b in zip(args, bound) if a.name == "train"]
            if not (train and train[0] is False):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either "
                                   "use the 'same' or 'different' randomness flags on vmap or perform the "
                                   "randomness operation out of vmap")
        return run()


def _dims_per_leaf(dims, spec, where: str, side: str, what: str) -> list:
    """``in_dims``/``out_dims`` broadcast to one entry per leaf of ``spec``, with PyTorch's structure error."""
    flat = broadcast_prefix(dims, spec)
    if flat is None:
        raise ValueError(f"{where}: {side}_dims is not compatible with the structure of `{what}`. {side}_dims has "
                         f"structure {tree_flatten(dims)[1]} but {what} has structure {spec}.")
    return flat


def _flat_in_dims(func, in_dims, args: tuple) -> tuple[list, Any, list, int]:
    """``(flat args, their spec, one in_dim per leaf, batch size)``, with PyTorch's errors."""
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_dims = _dims_per_leaf(in_dims, args_spec, f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)", "in", "inputs")
    dims = []
    for arg, d in zip(flat_args, flat_dims):
        head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for"
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"{head} an input but in_dim must be either an integer dimension or None.")
        if d is not None and not isinstance(arg, Tensor):
            raise ValueError(f"{head} an input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                             "arguments, please use None as the respective in_dim")
        if d is not None and not -arg.dim() <= d < max(arg.dim(), 0):
            raise ValueError(f"{head} some input, but that input is a Tensor of dimensionality {arg.dim()} so "
                             f"expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}.")
        dims.append(None if d is None else d % arg.dim())
    sizes = [arg.size(d) for arg, d in zip(flat_args, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return flat_args, args_spec, dims, sizes[0]


def _unbatched(name: str, leaves: list):
    """The one value returned for every element where ``out_dims`` is None."""
    first = leaves[0]
    for other in leaves[1:]:
        same = other is first or (isinstance(first, Tensor) and isinstance(other, Tensor)
                                  and first.shape == other.shape and bool(api.equal(first, other)))
        if not same and (isinstance(first, Tensor) or isinstance(other, Tensor)):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
    return first


def _stack_outputs(func, outs: list, out_dims):
    name = _get_name(func)
    spec = tree_flatten(outs[0])[1]
    per_elem = [tree_flatten(o)[0] for o in outs]
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list))):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                         "collection of ints representing where in the outputs the vmapped dimension should appear.")
    flat_dims = _dims_per_leaf(out_dims, spec, f"vmap({name}, ..., out_dims={out_dims})(<inputs>)", "out", "outputs")
    result = []
    for i, d in enumerate(flat_dims):
        leaves = [p[i] for p in per_elem]
        if d is None:
            result.append(_unbatched(name, leaves))
            continue
        if not isinstance(leaves[0], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaves[0])}. "
                             "Did you mean to set out_dims= to None for output?")
        result.append(api.stack(leaves, dim=d))
    return tree_unflatten(result, spec)


def vmap(func: Callable, in_dims: int | tuple = 0, out_dims: int | tuple = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """``func`` mapped over dim ``in_dims`` of its inputs, the results stacked at ``out_dims``.

    ``in_dims`` has one entry per positional argument (int, None for an argument shared by all elements, or
    a nested structure for a pytree argument); keyword arguments are never mapped.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat_args, spec, dims, n = _flat_in_dims(func, in_dims, args)
        if n == 0:
            raise RuntimeError(f"vmap({_get_name(func)}): the mapped dimension has size 0, and toolkit's vmap runs "
                               "func once per element, so it cannot learn the shape of the results")
        state = get_rng_state() if randomness == "same" else None
        guard = _RandomnessError() if randomness == "error" else None
        if guard is not None:
            STATE.observers.append(guard)
        try:
            outs = []
            for b in range(n):
                if state is not None:
                    set_rng_state(state)
                sliced = [a if d is None else a.select(d, b) for a, d in zip(flat_args, dims)]
                outs.append(func(*tree_unflatten(sliced, spec), **kwargs))
        finally:
            if guard is not None:
                STATE.observers.remove(guard)
        return _stack_outputs(func, outs, out_dims)

    return wrapped
