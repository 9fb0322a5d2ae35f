"""``toolkit.jit.isinstance``: ``isinstance`` that understands ``List[int]``, ``Dict[str, Tensor]``, ``Optional[...]``,
``Tuple[...]`` and unions, as ``torch.jit.isinstance`` checks them eagerly.

Scripted code refines an ``Any`` argument with it; eagerly it looks inside containers (an empty one matches any
element type, with PyTorch's warning)::

    toolkit.jit.isinstance([1, 2], List[int])               # True
    toolkit.jit.isinstance({"a": x}, Dict[str, Tensor])     # True
"""

from __future__ import annotations

import collections.abc
import types
import typing
import warnings
from typing import Any, get_args, get_origin

__all__ = ["isinstance"]

_builtin_isinstance = isinstance
# Container types given bare, without element types: PyTorch refuses them by these names.
_BARE = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",  # noqa: UP006
         typing.Optional: "Optional", typing.Tuple: "Tuple"}  # noqa: UP006


def isinstance(obj: Any, target_type) -> bool:  # noqa: A001  (torch.jit's name)
    """Whether ``obj`` is of ``target_type``: a type, a typing generic, or a tuple of them."""
    if _builtin_isinstance(target_type, collections.abc.Container):
        if not _builtin_isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `toolkit.jit.isinstance` must be a type or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    _refuse_bare(target_type)
    if get_origin(target_type):
        return _matches(obj, target_type)
    return _builtin_isinstance(obj, target_type)


def _refuse_bare(target_type) -> None:
    try:
        name = _BARE.get(target_type)
    except TypeError:  # an unhashable annotation is no bare container
        return
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add contained type, e.g. "
                           f"{name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a contained type, e.g. "
                       f"{name}[int]")


def _warn_if_empty(obj) -> None:
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling toolkit.jit.isinstance in eager mode. For "
                      "example, List[int] would become list and therefore falsely return True for List[float] or "
                      "List[str].", stacklevel=3)


def _element(obj, t) -> bool:
    return _matches(obj, t) if get_origin(t) else _builtin_isinstance(obj, t)


def _matches(obj, target_type) -> bool:
    """``obj`` against a generic (``List[int]``...), looking at every element as PyTorch does."""
    origin, args = get_origin(target_type), get_args(target_type)
    if origin is list:
        _warn_if_empty(obj)
        return _builtin_isinstance(obj, list) and all(_element(e, args[0]) for e in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return _builtin_isinstance(obj, dict) and all(
            _builtin_isinstance(k, args[0]) and _element(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _warn_if_empty(obj)
        return (_builtin_isinstance(obj, tuple) and len(obj) == len(args)
                and all(_element(e, t) for e, t in zip(obj, args)))
    if origin is typing.Union or origin is types.UnionType:
        if obj is None:
            return True
        for t in args:
            if get_origin(t):
                return _matches(obj, t)  # PyTorch decides on the first generic member
            if _builtin_isinstance(obj, t):
                return True
    return False
