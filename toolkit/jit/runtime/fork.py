"""``toolkit.jit.fork`` and ``toolkit.jit.wait``: asynchronous tasks, run in parallel in compiled code.

In Python (eager) ``fork`` runs the function at once and returns a completed
``Future``, as PyTorch's does; only compiled code runs forked work in parallel.
A scripted ``fork`` is a ``prim::fork`` node holding the call as its ``Subgraph``;
the interpreter hands that subgraph to a thread pool and ``aten::wait`` takes its
result. Work that releases the GIL (numba kernels compiled ``nogil``, numpy's BLAS)
runs truly in parallel.

Example::

    @toolkit.jit.script
    def ensemble(x):
        futures = [toolkit.jit.fork(model, x) for model in models]
        return toolkit.stack([toolkit.jit.wait(f) for f in futures]).sum(0)
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ... import dispatch
from ..._core.threads import start_interop_pool
from ...autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ...futures import Future
from ..ir import kinds as K
from ..ir.graph import Graph, Node
from ..kinds.builtins import add_handler
from .interpreter import Interpreter

__all__ = ["Future", "fork", "wait"]


def fork(func: Callable, *args, **kwargs) -> Future:
    """Run ``func(*args, **kwargs)`` as a task; returns a ``Future`` of its result.

    Called from Python it runs ``func`` now (an error raises here) and returns a completed
    future; in compiled code (``toolkit.jit.script``) the task runs in parallel on a thread pool.
    """
    if not callable(func):
        raise TypeError(f"fork(): object of type '{type(func).__name__}' is not callable")
    tracer = _forks_tracer()
    if tracer is not None and not kwargs:
        traced = tracer.record_fork(func, args)
        if traced is not None:
            return traced
    fut: Future = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    """The result of a task started with ``fork``, waiting for it to finish (its error raises here)."""
    if not isinstance(future, Future):
        raise TypeError(f"wait(): expected a toolkit.jit.Future, got {type(future).__name__}")
    tracer = _forks_tracer()
    if tracer is not None:
        return tracer.record_wait(future)
    return future.wait()


def _forks_tracer():
    """The trace recording now at the top level (not inside an op it records), which records forks, or None."""
    for o in dispatch.STATE.observers:
        if getattr(o, "records_forks", False) and o._depth == 0:
            return o
    return None


# -- the pool that runs forked graphs ------------------------------------------------------------------
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=start_interop_pool(),
                                           thread_name_prefix="toolkit-jit-fork")
    return _POOL


def submit(work: Callable[[], Any]) -> Future:
    """Run ``work()`` on the pool with the caller's grad mode; a waiter that finds it not yet started runs it itself.

    Running unstarted work in the waiting thread keeps nested forks from deadlocking a busy pool.
    """
    fut: Future = Future()
    claim = threading.Lock()
    grad = is_grad_enabled()

    def run() -> None:
        if not claim.acquire(blocking=False):
            return  # another thread runs it
        try:
            with set_grad_enabled(grad):
                result = work()
        except BaseException as e:  # noqa: BLE001 - raised again by whoever waits
            fut.set_exception(e)
        else:
            fut.set_result(result)

    fut._runner = run
    _pool().submit(run)
    return fut


# -- interpreter handlers ------------------------------------------------------------------------------
_INTERPRETERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # prim::fork node -> its subgraph's


def run_fork_node(n: Node, env: dict) -> None:
    """``prim::fork``: start the node's ``Subgraph`` on the inputs' values; the output is its ``Future``."""
    sub = n.attributes.get("Subgraph")
    if not isinstance(sub, Graph):
        raise RuntimeError("the interpreter cannot run prim::fork: the node has no Subgraph")
    interp = _INTERPRETERS.get(n)
    if interp is None or interp.graph is not sub:
        interp = _INTERPRETERS[n] = Interpreter(sub)
    inputs = [env[v] for v in n.inputs]
    env[n.outputs[0]] = submit(lambda: interp.run(inputs)[0])


def run_wait_node(n: Node, env: dict) -> None:
    """``aten::wait``: the value of a forked task, raising its error with its own type."""
    env[n.outputs[0]] = wait(env[n.inputs[0]])


add_handler(K.FORK, run_fork_node)
add_handler(K.WAIT, run_wait_node)
