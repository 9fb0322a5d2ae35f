"""Type hints script code reads and eager Python ignores: ``Attribute``, ``annotate`` and ``Final``.

In eager Python each is inert, as in PyTorch: ``annotate(T, v)`` returns ``v``; ``Attribute(value, type)`` is a
named tuple that a plain ``nn.Module`` stores as it is (a ``toolkit.jit.ScriptModule`` unwraps it when assigned,
and scripting unwraps it on the scripted module's state); ``Final`` is ``typing.Final``. While compiling,
``annotate(T, v)`` gives ``v`` the type ``T`` (the type an empty ``[]``/``{}`` or a ``None`` cannot show), and
an ``Attribute`` declares its module attribute's type.
"""

from __future__ import annotations

import ast
import collections
import typing
from typing import Final

from ...ir import types as T
from ...ir.graph import Value
from . import sugar as S
from .typing_rules import from_annotation

__all__ = ["Attribute", "Final", "annotate", "AnnotateCall", "is_final"]

Attribute = collections.namedtuple("Attribute", ["value", "type"])
Attribute.__module__ = __name__
Attribute.__doc__ = """A module attribute's value with its script type: ``self.names = Attribute([], List[str])``.

Script code cannot tell an empty container's element type, nor that an attribute holding a ``T`` may also hold
``None``; ``Attribute`` says so. In eager Python it is a plain ``(value, type)`` named tuple; a
``toolkit.jit.ScriptModule`` subclass stores ``value`` and remembers ``type`` when it is assigned in ``__init__``.
Annotating the attribute in the class body (``names: List[str]``) is the preferred spelling.
"""


def annotate(the_type, the_value):
    """Give ``the_value`` the type ``the_type`` in script code (``annotate(List[int], [])``); returns ``the_value``."""
    return the_value


def is_final(ann) -> bool:
    """Whether a class-body annotation is ``Final`` or ``Final[T]`` (the attribute is a constant of its module)."""
    if ann is Final:
        return True
    if isinstance(ann, str):
        return ann == "Final" or ann.startswith(("Final[", "typing.Final", "torch.jit.Final", "toolkit.jit.Final"))
    return getattr(ann, "__origin__", None) is Final


def eval_annotation(c, node):
    """The Python object an annotation in compiled source spells (``List[int]``), evaluated where the function
    was written: its globals and closure, with ``typing``'s names available."""
    src = ast.unparse(node)
    ns = dict(typing.__dict__)
    ns.update(c.globals)
    ns.update(c.closure)
    try:
        return eval(src, ns)  # noqa: S307  (an annotation in the user's own source)
    except Exception:
        raise c.error(f"cannot evaluate the annotation '{src}'", node) from None


class AnnotateCall(S.Sugared):
    """``toolkit.jit.annotate`` in script code: compiles its value with the annotated type as the expected one."""

    kind = "builtin"
    compiles_own_arguments = True

    def describe(self) -> str:
        return "toolkit.jit.annotate"

    def call_ast(self, c, e: ast.Call):
        if len(e.args) != 2 or e.keywords:
            raise c.error("toolkit.jit.annotate(the_type, the_value) takes exactly two positional arguments", e)
        typ = from_annotation(eval_annotation(c, e.args[0]), c.globals)
        if typ is None:
            raise c.error(f"unsupported type annotation '{ast.unparse(e.args[0])}' in toolkit.jit.annotate",
                          e.args[0])
        return annotated_value(c, typ, c.expr(e.args[1], expected=typ), e.args[1], e, ast.unparse(e.args[0]))


def annotated_value(c, typ: T.JitType, value, value_node, node, spelled: str | None = None) -> Value:
    """``value`` seen as ``typ`` (written ``spelled``): a ``None`` takes the type; otherwise its own type must be a
    subtype of ``typ``."""
    v = c.as_value(value, value_node)
    if isinstance(v.type, T.NoneType) and isinstance(typ, T.OptionalType):
        return c.const(None, node, typ)
    if isinstance(v.type, T.ListType) and isinstance(typ, T.ListType) and not v.type.is_subtype_of(typ):
        raise c.error(f"List type annotation `{spelled or typ}` did not match the types of the given list elements, which "
                      f"were unified to {v.type.elem}", value_node)
    if not v.type.is_subtype_of(typ):
        raise c.error(f"expected an expression of type {typ} but found {v.type}", node)
    return v
