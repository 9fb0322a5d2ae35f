"""What the script decorators leave on Python functions and classes, for the compiler to recognize.

``@ignore``, ``@unused``, ``@export`` and ``@script_method`` mark a function with an
attribute; a ``@script_method`` on a ``ScriptModule`` subclass is then held by the
class as a ``ScriptMethod``. The decorators (``api``) set these marks and the
function compiler (``calls``, ``resolve``) reads them, so both import them from here.
"""

from __future__ import annotations

import functools

IGNORE_ATTR = "_toolkit_jit_ignore"
UNUSED_ATTR = "_toolkit_jit_unused"
EXPORT_ATTR = "_toolkit_jit_export"
SCRIPT_METHOD_ATTR = "_toolkit_jit_script_method"


class ScriptMethod:
    """A ``@script_method`` as its ScriptModule subclass holds it: the Python function ``fn`` and its ``name``.

    The compiler reads ``fn`` to compile a call of the method inline. What compiles the
    method for each instance (``api.ScriptMethodDescriptor``, a subclass) needs the
    compiler itself, so it lives above it.
    """

    def __init__(self, fn, name: str):
        self.fn, self.name = fn, name
        functools.update_wrapper(self, fn)
