"""``jacrev``, ``jacfwd`` and ``hessian``, as ``torch.func``: whole Jacobians over pytrees.

One backward pass per output element builds every Jacobian here; ``jacfwd`` gives the same numbers as
forward mode (which toolkit does not have) from those rows. ``chunk_size`` is accepted and checked: rows
are computed one at a time anyway.

    >>> jacrev(torch.sin)(torch.zeros(3))
    tensor([[1., 0., 0.],
            [0., 1., 0.],
            [0., 0., 1.]])
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from ..ops import api
from ..tensor import Tensor
from . import _nesting as nest
from .transforms import _check_outputs
from .tree import tree_flatten, tree_unflatten

__all__ = ["jacrev", "jacfwd", "hessian"]


def _jacobian_of(out: Tensor, leaves: list, keep: bool) -> list[Tensor]:
    """``d out / d leaf`` for each leaf, shaped ``out.shape + leaf.shape``: one backward per element."""
    flat = out.reshape(-1)
    rows = [nest.grads_or_zeros([flat[j]], leaves, create_graph=keep, retain_graph=True) for j in range(out.numel())]
    jac = []
    for k, leaf in enumerate(leaves):
        if rows:
            jac.append(api.stack([r[k] for r in rows]).reshape((*out.shape, *leaf.shape)))
        else:
            jac.append(api.zeros((*out.shape, *leaf.shape), dtype=leaf.dtype, device=leaf.device))
    return jac


def _jacobian_transform(func: Callable, argnums, has_aux: bool, api_name: str) -> Callable:
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = nest.check_argnums(argnums, len(args))
        flat, spec = tree_flatten(nest.slice_argnums(args, nums))
        with nest.transform_level(flat) as keep:
            leaves = [nest.make_differentiable(t) for t in flat]
            new_args = nest.replace_argnums(args, tree_unflatten(leaves, spec), nums)
            out, aux = nest.split_aux(func(*new_args, **kwargs), has_aux, api_name)
            flat_out, out_spec = tree_flatten(out)
            _check_outputs(flat_out, api_name)
            jacs = [tree_unflatten(_jacobian_of(o, leaves, keep), spec) for o in flat_out]
        result = nest.undo(tree_unflatten(jacs, out_spec), keep)
        return (result, nest.undo(aux, keep)) if has_aux else result

    return wrapper


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]`` by reverse mode.

    For each output leaf, the structure of the differentiated arguments, each entry of shape
    ``output.shape + input.shape``; ``(jacobian, aux)`` with ``has_aux``.
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian_transform(func, argnums, has_aux, "vjp(f, *primals)")


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` with respect to ``args[argnums]``, as ``torch.func.jacfwd`` returns it.

    The numbers are forward mode's; they are computed by rows, as ``jacrev`` does.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")
    return _jacobian_transform(func, argnums, has_aux, "jvp(f, primals, tangents)")


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of a scalar ``func``: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)
