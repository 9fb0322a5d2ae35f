"""Script mode: Python functions and modules compiled from their source into the JIT's IR.

Loops and branches stay in the graph (``prim::Loop``, ``prim::If``), so models
with data-dependent control flow run as one graph through the same executor,
passes and fusion as traced code. ``fallback=True`` runs what cannot be compiled
as Python nodes instead of failing.
"""

from ...kinds import builtins as _builtins
from ...serialization.builtin_schema import check_builtin_schemas
from .api import (
                  CompiledMethod,
                  RecursiveScriptModule,
                  ScriptModule,
                  export,
                  ignore,
                  script,
                  script_method,
                  unused,
)
from .compiled import CompiledFunction
from .errors import FrontendError, ScriptFallbackWarning

check_builtin_schemas()
_builtins.register()

__all__ = ["CompiledFunction", "CompiledMethod", "FrontendError", "RecursiveScriptModule", "ScriptFallbackWarning",
           "ScriptModule", "export", "ignore", "script", "script_method", "unused"]
