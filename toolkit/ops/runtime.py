"""How ops reach the dispatcher, which sits above them: the one place the dispatcher plugs in.

Ops are defined below the dispatcher and never import it, yet composites and
derivative rules call other ops (``api.mul(g, x)``), ``OpDef`` objects are
callable, and a generator hands out its state as a Tensor. All of those go
through ``DISPATCHER``, which ``toolkit.dispatch`` installs when it is imported
(``toolkit``'s import does that before anything can run an op), as PyTorch's
kernels reach its dispatcher through a table filled at load time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Dispatcher(NamedTuple):
    """The dispatcher's entry points that the layers below it call."""

    bind: Callable[..., list]  # bind(op, args, kwargs) -> bound arguments
    execute: Callable[..., Any]  # execute(op, bound) -> result
    call_op: Callable[..., Any]  # call_op(op, args, kwargs): bind and execute one overload
    call_overloads: Callable[..., Any]  # call_overloads(ops, args, kwargs): the first overload that fits
    wrap: Callable[..., Any]  # wrap(ndarray) -> Tensor


class _Unplugged:
    def __getattr__(self, name: str):
        raise RuntimeError(f"ops cannot run before toolkit.dispatch is imported (asked for {name!r}); "
                           "import toolkit first")


DISPATCHER: Dispatcher | _Unplugged = _Unplugged()


def install(dispatcher: Dispatcher) -> None:
    """Called once by ``toolkit.dispatch`` at import."""
    global DISPATCHER
    DISPATCHER = dispatcher
