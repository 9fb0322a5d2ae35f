"""toolkit.jit: a typed graph IR, tracing at the dispatcher, and an interpreter that runs traced graphs.

Example::

    >>> def foo(x, y):
    ...     return 2 * x + y
    >>> traced = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
    >>> print(traced.graph)      # the recorded graph
    >>> traced(a, b)             # runs the graph, with autograd
"""

from __future__ import annotations

from .frontend._tracing import trace, trace_module
from .frontend.modes import is_scripting, is_tracing
from .frontend.trace import TracerWarning, TracingCheckError
from .ir import types
from .ir.graph import Block, Graph, Node, Use, Value
from .ir.verify import VerificationError, verify
from .passes import Pass, PassManager, register_pass, run_passes
from .runtime.executor import GraphFor, ProfilingExecutor, fusion_enabled, set_fusion_enabled
from .runtime.interpreter import Interpreter
from .script_module import ScriptFunction

__all__ = [
    "Attribute", "Final", "annotate",
    "Future", "fork", "freeze", "optimize_for_inference", "wait",
    "Block", "Graph", "GraphFor", "Interpreter", "Node", "ProfilingExecutor", "ScriptFunction", "ScriptModule",
    "TracerWarning", "TracingCheckError", "Use", "Value", "VerificationError", "export", "fusion_enabled", "ignore",
    "is_scripting", "is_tracing", "load", "save", "script", "script_method", "set_fusion_enabled", "trace", "trace_module", "types", "unused",
    "verify",
]
from ._compilation_unit import CompilationUnit  # noqa: E402
from ._isinstance import isinstance  # noqa: E402, A004  (torch.jit.isinstance: generics-aware)
from ._torchscript_api import (  # noqa: E402
    Error,
    enable_onednn_fusion,
    export_opnames,
    interface,
    onednn_fusion_enabled,
    script_if_tracing,
    set_fusion_strategy,
    strict_fusion,
)

# Script mode's ScriptModule (a subclass of the traced one) is the public name; archives load with save/load.
from .freeze import freeze, optimize_for_inference  # noqa: E402
from .frontend.script import ScriptModule, export, ignore, script, script_method, unused  # noqa: E402
from .frontend.script.annotations import Attribute, Final, annotate  # noqa: E402
from .runtime.fork import Future, fork, wait  # noqa: E402
from .serialization.archive import load, save  # noqa: E402

__all__ += ["CompilationUnit", "Error", "enable_onednn_fusion", "export_opnames", "interface", "isinstance",
            "onednn_fusion_enabled", "script_if_tracing", "set_fusion_strategy", "strict_fusion"]
