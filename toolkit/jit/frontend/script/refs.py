"""Python objects that script graph nodes hold as attributes: a module, an exception class, a callable.

Each prints briefly (its type, class or function name) so a graph prints readably. The
function compiler, the script API and the archive format all make or read them.
"""

from __future__ import annotations


class ModuleRef:
    """A module held by a graph constant; prints as its type, not its whole repr."""

    __slots__ = ("module",)

    def __init__(self, module):
        self.module = module

    def __str__(self) -> str:
        return f"<{type(self.module).__name__}>"


class ExceptionRef:
    """The exception class a ``prim::RaiseException`` raises; prints as its name."""

    __slots__ = ("cls",)

    def __init__(self, cls):
        self.cls = cls

    def __str__(self) -> str:
        return self.cls.__name__


class PyCallable:
    """What a ``prim::PythonOp`` calls; prints as the function's name and line."""

    __slots__ = ("fn", "label", "kwnames")

    def __init__(self, fn, label: str, kwnames=()):
        self.fn, self.label, self.kwnames = fn, label, tuple(kwnames)

    def __call__(self, *args):
        k = len(args) - len(self.kwnames)
        return self.fn(*args[:k], **dict(zip(self.kwnames, args[k:])))

    def __str__(self) -> str:
        return self.label
