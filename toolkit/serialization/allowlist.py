"""The globals ``toolkit.load(..., weights_only=True)`` lets a checkpoint name, and the user's additions.

By default a file may name only what tensors and state dicts are made of (:data:`~.torch_names.TORCH_GLOBALS`
and a few builtins, each checked where it could allocate without bound). A user who trusts a class adds it, as
with ``torch.serialization``::

    toolkit.serialization.add_safe_globals([MyConfig])           # from now on
    with toolkit.serialization.safe_globals([MyConfig]):         # for one load
        toolkit.load("ckpt.pt")

An entry is an object (its name is ``module.qualname``) or ``(object, "module.name")`` for an object saved
under another name. Globals of the modules in :data:`BLOCKED_MODULES` are refused even when added.
"""

from __future__ import annotations

import _codecs
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .format import _Corrupt
from .torch_names import TORCH_GLOBALS

#: Modules whose globals a weights-only load never allows, whatever the user added.
BLOCKED_MODULES = ("sys", "os", "posix", "nt", "subprocess")

_ENCODINGS = ("latin1", "latin-1", "utf-8", "utf8", "ascii")
_user_globals: list[Any] = []


def _encode(obj: Any, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """``_codecs.encode`` as protocol-2 pickles use it for ``bytes``: text codecs only."""
    if not isinstance(obj, str) or encoding not in _ENCODINGS or errors != "strict":
        raise _Corrupt(f"_codecs.encode is called with {type(obj).__name__} and {encoding!r:.40}; checkpoints use it "
                       "only to encode str as latin1")
    return _codecs.encode(obj, encoding)


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` of bytes or text only: ``bytearray(n)`` would allocate n bytes the file never paid for."""
    if args and not isinstance(args[0], (bytes, bytearray, str)):
        raise _Corrupt(f"bytearray is called with {type(args[0]).__name__}; checkpoints make bytearrays from bytes")
    return bytearray(*args)


#: What a weights-only load allows by default, by the name the file gives it.
DEFAULT_GLOBALS: dict[str, Any] = {
    **TORCH_GLOBALS,
    "_codecs.encode": _encode,
    "builtins.bytearray": _bytearray,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "builtins.slice": slice,
    "builtins.range": range,
}


def _name_of(entry: Any) -> tuple[str, Any]:
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                             f"length: {len(entry)}")
        if type(entry[1]) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                            f"{type(entry[1])}")
        return entry[1], entry[0]
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    """Allow these globals in weights-only loads from now on (``torch.serialization.add_safe_globals``).

    Example::

        toolkit.serialization.add_safe_globals([MyConfig, (np.dtype, "numpy.dtype")])
    """
    for entry in safe_globals:
        _name_of(entry)  # refuse a malformed entry now, not at the next load
        if entry not in _user_globals:
            _user_globals.append(entry)


def get_safe_globals() -> list[Callable | tuple[Callable, str]]:
    """The globals the user has allowed, as given to :func:`add_safe_globals`."""
    return list(_user_globals)


def clear_safe_globals() -> None:
    """Forget every global the user allowed."""
    _user_globals.clear()


def _remove_safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> None:
    for entry in safe_globals:
        if entry in _user_globals:
            _user_globals.remove(entry)


@contextmanager
def safe_globals(safe_globals: list[Callable | tuple[Callable, str]]) -> Iterator[None]:
    """Allow these globals in weights-only loads inside the ``with`` block only.

    Example::

        with toolkit.serialization.safe_globals([MyConfig]):
            ckpt = toolkit.load("ckpt.pt")
    """
    added = [g for g in safe_globals if g not in _user_globals]
    add_safe_globals(added)
    try:
        yield
    finally:
        _remove_safe_globals(added)


def user_globals() -> dict[str, Any]:
    """The user's additions by name, read at each load so additions made since take effect."""
    return dict(_name_of(entry) for entry in _user_globals)


def blocked_module(module: str) -> str | None:
    """The blocked module ``module`` is or lies in, or None."""
    for b in BLOCKED_MODULES:
        if module == b or module.startswith(b + "."):
            return b
    return None


def unsupported_global_message(full_name: str) -> str:
    """PyTorch's words for a global a weights-only load refuses, with toolkit's names."""
    if full_name.startswith("builtins."):
        full_name = full_name[len("builtins."):]
    return (f"Unsupported global: GLOBAL {full_name} was not an allowed global by default. Please use "
            f"`toolkit.serialization.add_safe_globals([{full_name}])` or the "
            f"`toolkit.serialization.safe_globals([{full_name}])` context manager to allowlist this global if you "
            "trust this class/function.")
