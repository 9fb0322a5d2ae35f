"""``checkpoint(debug=True)``: log the ops of the forward and of the recomputation, shown when they disagree.

Each op call is logged with its argument shapes and the user's source line
(the innermost frame outside toolkit), by a dispatcher observer active only
inside the two contexts ``checkpoint`` runs under.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable

from ..dispatch import STATE
from ..tensor import Tensor

_TOOLKIT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_checkpoint_error_template = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `toolkit.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


def _describe(v) -> str:
    if isinstance(v, Tensor):
        return f"{v.dtype}{list(v.shape)}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_describe(e) for e in v) + "]"
    return repr(v)


class _OpLog:
    """An observer (while entered; re-enterable) that logs each op call and where in the user's code it came from."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.tbs: list[list] = []

    def on_call(self, op, bound: list, run: Callable):
        self.logs.append(f"aten::{op.name}({', '.join(_describe(v) for v in bound)})")
        self.tbs.append([f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_TOOLKIT_DIR)])
        return run()

    def __enter__(self) -> _OpLog:
        self.logs, self.tbs = [], []
        STATE.observers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        STATE.observers.remove(self)

    def traces(self, label: str) -> str:
        out = ""
        for i, (log, tb) in enumerate(zip(self.logs, self.tbs)):
            out += f"{log}   ({i + 1} of {len(self.logs)} in {label})\n\n"
            for frame in tb:
                out += f"{frame.filename}:{frame.lineno}:{frame.name}\n"
            out += "\n\n"
        return out


def debug_context_and_callback() -> tuple[Callable, Callable]:
    """``(context_fn, unpack_error_cb)``: log both runs; on a CheckpointError, raise one carrying the logs."""
    forward, recompute = _OpLog(), _OpLog()

    def unpack_error_cb(e: Exception):
        raise type(e)(
            _checkpoint_error_template.format(
                forward_traces=forward.traces("original"),
                recompute_traces=recompute.traces("recompute"),
                forward_ops="\n".join(forward.logs),
                recompute_ops="\n".join(recompute.logs),
            )
        ) from e

    def context_fn() -> tuple:
        return forward, recompute

    return context_fn, unpack_error_cb
