"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize`` and ``functionalize``, as ``torch.func``.

Built on reverse-mode autograd (see ``_nesting``): they compose with each other and with ``vmap``
(``vmap(grad(f))`` gives per-sample gradients, ``grad(grad(f))`` second derivatives). There is no
forward-mode AD: ``jvp`` and ``linearize`` differentiate the linear map ``u -> J^T u`` along the tangents
(the double-backward trick), which gives the same numbers as forward mode at the cost of two backward passes.

    >>> grad(lambda x: x.sin().sum())(torch.zeros(3))
    tensor([1., 1., 1.])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..ops import api
from ..tensor import Tensor
from ._nesting import (
    check_argnums,
    depth,
    grads_or_zeros,
    make_differentiable,
    replace_argnums,
    slice_argnums,
    split_aux,
    transform_level,
    undo,
)
from .tree import tree_flatten, tree_unflatten, treespec_pprint

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "functionalize"]

JVP_STR = "jvp(f, primals, tangents)"


def _differentiable_args(args: tuple, argnums):
    """``(new args, flat differentiable leaves, their spec, original leaves)`` for the chosen arguments."""
    argnums = check_argnums(argnums, len(args))
    flat, spec = tree_flatten(slice_argnums(args, argnums))
    leaves = [make_differentiable(t) for t in flat]
    return replace_argnums(args, tree_unflatten(leaves, spec), argnums), leaves, spec, flat


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``(gradient, value)`` of a scalar ``func`` with respect to ``args[argnums]`` (pytrees allowed).

    With ``has_aux``, ``func`` returns ``(value, aux)`` and the result is ``(gradient, (value, aux))``.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        name = "grad_and_value(f)(*args)"
        with transform_level(tree_flatten(slice_argnums(args, check_argnums(argnums, len(args))))[0]) as keep:
            new_args, leaves, spec, _ = _differentiable_args(args, argnums)
            output, aux = split_aux(func(*new_args, **kwargs), has_aux, name)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"{name}: Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"{name}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            grads = grads_or_zeros([output], leaves, create_graph=keep)
        grad_input = undo(tree_unflatten(grads, spec), keep)
        output = undo(output, keep)
        if has_aux:
            return grad_input, (output, undo(aux, keep))
        return grad_input, output

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of a scalar ``func`` with respect to ``args[argnums]``; ``(gradient, aux)`` with ``has_aux``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _check_outputs(flat_out: list, api_name: str) -> None:
    if (len(flat_out) == 1 and flat_out[0] is None) or not flat_out:
        raise RuntimeError(f"{api_name}: Expected f to be a function that has non-empty output (got output = "
                           f"{flat_out})")
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api_name}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(o)}")


def vjp(func: Callable, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives the cotangents' pullback to each primal.

    ``vjp_fn`` may be called many times; with ``has_aux`` the result is ``(output, vjp_fn, aux)``.
    """
    with transform_level(tree_flatten(primals)[0]) as keep:
        flat, spec = tree_flatten(primals)
        leaves = [make_differentiable(t) for t in flat]
        out, aux = split_aux(func(*tree_unflatten(leaves, spec)), has_aux, "vjp(f, *primals)")
        flat_out, out_spec = tree_flatten(out)
        _check_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not o.is_floating_point():
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {o.dtype}")

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {treespec_pprint(ct_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        if create_graph is None:
            create_graph = keep or depth() > 0 or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        grads = grads_or_zeros(flat_out, leaves, flat_ct, create_graph=create_graph, retain_graph=retain_graph)
        return tree_unflatten(grads, spec)

    if has_aux:
        return undo(out, keep), vjp_fn, undo(aux, keep)
    return undo(out, keep), vjp_fn


class _LinearMap:
    """``t -> J t`` at a point, from one recorded graph: ``g(u) = J^T u`` is linear in ``u``; its vjp along
    ``t`` is ``J t``."""

    def __init__(self, flat_out: list, leaves: list):
        self.flat_out = flat_out
        self.leaves = leaves
        self.u = [api.zeros_like(o, requires_grad=True) if o.is_floating_point() else None for o in flat_out]
        diff = [(o, u) for o, u in zip(flat_out, self.u) if u is not None]
        self.g = grads_or_zeros([o for o, _ in diff], leaves, [u for _, u in diff], create_graph=True)

    def __call__(self, flat_tangents: list, *, create_graph: bool, strict: bool = False) -> list:
        us = [u for u in self.u if u is not None]
        res = iter(grads_or_zeros(self.g, us, flat_tangents, create_graph=create_graph, retain_graph=True)
                   if us else [])
        out = []
        for o, u in zip(self.flat_out, self.u):
            t = next(res) if u is not None else api.zeros_like(o)
            if strict and (u is None or not o.requires_grad):
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                                   "inputs. This is not allowed with strict=True.")
            out.append(t)
        return out


def _check_tangents(flat_primals: list, flat_tangents: list) -> None:
    for p, t in zip(flat_primals, flat_tangents):
        if t.shape != p.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while "
                               f"the given forward gradient is of size {list(t.shape)}.")


def _check_list_of_tensors(flat: list, argname: str) -> None:
    if not flat:
        raise RuntimeError(f"{JVP_STR}: Expected {argname} to contain at least one Tensor.")
    for x in flat:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"{JVP_STR}: Expected {argname} to only contain Tensors, got {type(x)}")


def jvp(func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)``: the Jacobian-vector product, by the double-backward trick.

    ``tangents`` has the structure of ``primals``; with ``has_aux`` the result is ``(output, jvp_out, aux)``.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{JVP_STR}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{JVP_STR}: Expected primals and tangents to have the same python structure. For "
                           "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with "
                           f"structure {p_spec} and tangents with structure {t_spec}")
    _check_list_of_tensors(flat_p, "primals")
    _check_list_of_tensors(flat_t, "tangents")
    _check_tangents(flat_p, flat_t)
    with transform_level(flat_p + flat_t) as keep:
        leaves = [make_differentiable(t) for t in flat_p]
        out, aux = split_aux(func(*tree_unflatten(leaves, p_spec)), has_aux, JVP_STR)
        flat_out, out_spec = tree_flatten(out)
        _check_outputs(flat_out, JVP_STR)
        t_out = _LinearMap(flat_out, leaves)(flat_t, create_graph=keep, strict=strict)
    result = undo(tree_unflatten(flat_out, out_spec), keep), undo(tree_unflatten(t_out, out_spec), keep)
    return (*result, undo(aux, keep)) if has_aux else result


def linearize(func: Callable, *primals) -> tuple[Any, Callable]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is ``J tangents`` at ``primals``, from one graph."""
    flat_p, p_spec = tree_flatten(primals)
    with transform_level(flat_p) as keep:
        leaves = [make_differentiable(t) for t in flat_p]
        out = func(*tree_unflatten(leaves, p_spec))
        flat_out, out_spec = tree_flatten(out)
        linear = _LinearMap(flat_out, leaves)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}")
        for idx, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what in ("shape", "device", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(f"tangent:{idx} with {what} {getattr(t, what)} in flattened pytree doesn't "
                                       f"match the {what} {getattr(p, what)} of the corresponding primal.")
        create = keep or depth() > 0 or any(t.requires_grad for t in flat_t)
        return tree_unflatten(linear(flat_t, create_graph=create), out_spec)

    return undo(out, keep), jvp_fn


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """``func`` itself, as a function: the same results, mutations of its inputs included.

    PyTorch's ``functionalize`` rewrites mutations into out-of-place ops for graph capture, then copies the
    results back into mutated inputs; run eagerly that is what ``func`` already does.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped
