"""Where the model calls a node, for export errors: the file:line in the model's code.

The tracer stamps each node with the innermost frame outside toolkit's own code. For a model built from
toolkit's modules alone (``nn.Sequential(..., nn.Unflatten(...))``) that frame is the ``trace`` or ``export``
call, not the model: the op was called in toolkit's module. Such a node is placed by its scope instead (the
module path the tracer records, ``__module.body.1``): the line of that module's ``forward`` that calls the op.
"""

from __future__ import annotations

import inspect
import os

_UNKNOWN = "<unknown source>"


def describe(node, root) -> str:
    """``file:line`` of the model's call of ``node``, with the module path when the node has one; ``root`` is the
    exported module (None for a function)."""
    where = node.source_location if getattr(node, "source", None) else None
    path = module_path(getattr(node, "scope", "") or "")
    chain = _chain(root, path) if root is not None and path is not None else []
    if not chain:
        return where or _UNKNOWN
    inner = chain[-1]
    label = f" (module '{path}': {type(inner).__name__})" if path else ""
    if where is not None and (any(_inside(node.source, type(m)) for m in chain)
                              or not type(inner).__module__.startswith("toolkit.")):
        return where + label
    # the op ran in toolkit's own module: the frame the tracer saw is the call that traced the model
    return _forward_line(type(inner), node.kind) + label


def module_path(scope: str) -> str | None:
    """``__module.body.1`` (or a ``/``-joined chain ending in it) -> ``body.1``; the root module is ``""``; None
    when the node has no module scope (a traced function)."""
    if not scope:
        return None
    last = scope.split("/")[-1]
    if not last.startswith("__module"):
        return None
    return last.removeprefix("__module").lstrip(".")


def _chain(root, path: str) -> list:
    """The modules from ``root`` down to ``path`` ([] when the path does not name one)."""
    chain = [root]
    for name in path.split(".") if path else ():
        sub = getattr(chain[-1], "_modules", {}).get(name)
        if sub is None:
            return []
        chain.append(sub)
    return chain


def _forward_lines(cls):
    try:
        fn = inspect.unwrap(cls.forward)
        lines, start = inspect.getsourcelines(fn)
        return inspect.getsourcefile(fn), lines, start
    except (OSError, TypeError, AttributeError):
        return None


def _inside(source, cls) -> bool:
    """Whether the (file, line) ``source`` lies in the ``forward`` of ``cls``."""
    found = _forward_lines(cls)
    if found is None or source is None:
        return False
    file, lines, start = found
    return (file is not None and os.path.abspath(file) == os.path.abspath(source[0])
            and start <= source[1] < start + len(lines))


def _forward_line(cls, kind: str) -> str:
    """``file:line`` of the line of ``cls.forward`` that calls the op ``kind`` (by name), else of its ``def``."""
    found = _forward_lines(cls)
    if found is None:
        return f"{cls.__qualname__}.forward"
    file, lines, start = found
    name = kind.split("::")[-1].strip("_") + "("
    for i, line in enumerate(lines):
        if name in line and not line.lstrip().startswith(("def ", "#")):
            return f"{file}:{start + i}"
    return f"{file}:{start}"
