"""Which Python frames are the user's: where a traced node or a warning points, and what names traced values take.

A trace records ops called from deep inside toolkit; the line a node names is the
innermost frame of the program using toolkit, and a value is named after the
variable holding it in the innermost frame of code that PyTorch also runs as
Python (``toolkit.nn`` included). Both the tracer and its call frames ask here.
"""

from __future__ import annotations

import inspect
import os
import sys

# toolkit's own folder, found from the package (not from this file's depth inside it)
TOOLKIT_DIR = os.path.dirname(os.path.abspath(sys.modules[__package__.partition(".")[0]].__file__)) + os.sep

# Programs shipped inside the package are user code: a graph traced by the demo names the demo's lines.
_PROGRAM_FILES = frozenset({os.path.join(TOOLKIT_DIR, "demo.py")})


def is_library_frame(f) -> bool:
    """Whether frame ``f`` runs toolkit's own library code rather than a program using it.

    A module run as ``__main__`` (``python -m toolkit.demo``) and the programs shipped in the
    package count as user code, so their lines, not runpy's, are what graphs and warnings name.
    """
    filename = f.f_code.co_filename
    return (filename.startswith(TOOLKIT_DIR) and filename not in _PROGRAM_FILES
            and f.f_globals.get("__name__") != "__main__")


# toolkit.nn is Python in PyTorch too: its frames are code whose variables name traced values (``%input``).
_CODE_DIRS = (os.path.join(TOOLKIT_DIR, "nn") + os.sep,)


def is_machinery_frame(f) -> bool:
    """Whether frame ``f`` runs toolkit's machinery (ops, dispatch, the Tensor, autograd, the JIT...), the part
    PyTorch runs in C++: the frames a traced value's name is never taken from."""
    return is_library_frame(f) and not f.f_code.co_filename.startswith(_CODE_DIRS)


def caller_frame(skip=is_library_frame):
    """The innermost frame of the running call stack that ``skip`` does not skip, or None."""
    f = sys._getframe(1)
    while f is not None and skip(f):
        f = f.f_back
    return f


def user_frame():
    """(file, line) of the innermost frame outside toolkit's own code: the user's line that made the call."""
    f = caller_frame()
    if f is None:
        return None
    return f.f_code.co_filename, f.f_lineno


def caller_variables() -> dict:
    """The local variables of the innermost frame of code calling into toolkit (``{}`` for none)."""
    f = caller_frame(is_machinery_frame)
    return f.f_locals if f is not None else {}


def variable_name(t, variables: dict) -> str:
    """The name of the first variable in ``variables`` bound to ``t`` itself, ``""`` for none: PyTorch's
    tracer names values this way (``self`` is never a name)."""
    for k, x in variables.items():
        if x is t:
            return "" if k == "self" else k
    return ""


def param_names(fn, n: int) -> list:
    """The names of ``fn``'s first ``n`` positional parameters (None past its signature or when it has none):
    what a trace calls the values passed to a traced function or module call."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    return names + [None] * (n - len(names))


def attribute_value_name(name: str) -> str:
    """The name a value read from the attribute ``name`` takes in the graph (``_0`` for a Sequential's ``0``)."""
    return name if name.isidentifier() else f"_{name}"
