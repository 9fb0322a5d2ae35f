"""What every differentiating transform shares: its nesting depth, fresh differentiable inputs, argnums.

The transforms run on reverse-mode autograd (``toolkit.autograd.grad``). A transform inside another one
(``grad(grad(f))``, ``jacrev(jacrev(f))``) differentiates with ``create_graph=True`` so the outer one can
differentiate its result again; the outermost one keeps a graph only when the caller's own tensors require
grad, and otherwise returns plain tensors, as ``torch.func`` does. Inputs are never marked in place: a tensor
that does not require grad is replaced by a detached copy that does, one that does (an outer transform's, or
the caller's) by a view, which keeps it connected to the graph outside.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..autograd import grad as autograd_grad
from ..autograd import is_grad_enabled
from ..autograd.grad_mode import enable_grad
from ..ops import api
from ..tensor import Tensor
from .tree import tree_map

_LOCAL = threading.local()


def depth() -> int:
    """How many differentiating transforms are running in this thread."""
    return getattr(_LOCAL, "depth", 0)


@contextmanager
def transform_level(primals) -> Iterator[bool]:
    """Enter one transform; yields whether its results must keep their graph (``create_graph``)."""
    outer_grad = is_grad_enabled()
    keep = depth() > 0 or (outer_grad and any(isinstance(p, Tensor) and p.requires_grad for p in primals))
    _LOCAL.depth = depth() + 1
    try:
        with enable_grad():
            yield keep
    finally:
        _LOCAL.depth -= 1


def make_differentiable(t) -> Tensor:
    """A tensor equal to ``t`` that requires grad, without touching ``t`` itself."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    return t.view_as(t) if t.requires_grad else t.detach().requires_grad_()


def undo(tree, keep: bool):
    """``tree``'s tensors detached unless the results keep their graph."""
    return tree if keep else tree_map(lambda x: x.detach() if isinstance(x, Tensor) else x, tree)


def grads_or_zeros(outputs, inputs, grad_outputs=None, *, create_graph: bool, retain_graph: bool | None = None) -> list:
    """``d outputs / d inputs`` (weighted by ``grad_outputs``), zeros where nothing connects them."""
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
    if pairs:
        res = autograd_grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], allow_unused=True,
                            create_graph=create_graph, retain_graph=retain_graph)
    else:
        res = [None] * len(inputs)
    return [api.zeros_like(x) if g is None else g for g, x in zip(res, inputs)]


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def check_argnums(argnums, num_args: int) -> int | tuple[int, ...]:
    """``argnums`` validated against the number of positional arguments, negatives wrapped."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def slice_argnums(args: tuple, argnums):
    """The differentiated arguments: one argument for an int ``argnums``, a tuple for a tuple."""
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def replace_argnums(args: tuple, new, argnums) -> tuple:
    """``args`` with the differentiated ones replaced by ``new`` (shaped as ``slice_argnums`` returns)."""
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def split_aux(output, has_aux: bool, api_name: str):
    """``(output, aux)`` of a function declared ``has_aux``, with PyTorch's error when it is not a pair."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api_name}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return output
