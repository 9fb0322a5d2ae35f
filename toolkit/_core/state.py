"""The switches every op call reads: grad modes, observers, and the hooks of the layers above.

Grad modes are thread-local, as in PyTorch: a ``no_grad`` block in one thread
does not stop another thread from recording. This module is their one owner.
The truth lives in a ``threading.local`` (``LOCAL``). The dispatcher's hot path
reads only the plain flags on ``STATE``, a cheap, conservative summary over all
threads kept by the setters below: ``STATE.grad_enabled`` is False only while
the one running thread has grad disabled, and ``STATE.inference_mode`` is True
while any thread is in inference mode. The recorder and the inference marker
then consult ``LOCAL``, so an op pays for the thread-local lookup only when it
is about to record, never on the plain path. (Making ``STATE`` itself a
``threading.local`` costs about 100 ns on every op.) ``threading.Thread.start``
is wrapped to raise the summary flag, since a new thread starts with grad
enabled; threads started with the low-level ``_thread.start_new_thread`` while
the only other thread is in ``no_grad`` do not record until some thread changes
grad mode.

``STATE`` also holds what the layers above plug into the dispatcher and the
Tensor, which sit below them and import none of them: the observers (tracer,
profiler), autograd's recorder and in-place check, and autograd's entry points
for the Tensor's own methods (``backward``, hooks), installed when
``toolkit.autograd`` is imported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple


class TensorAutograd(NamedTuple):
    """What ``Tensor.backward`` and the Tensor's hook methods call in ``toolkit.autograd``."""

    backward: Callable  # backward(tensor, gradient, retain_graph, create_graph, inputs=...)
    register_hook: Callable  # register_hook(tensor, hook) -> handle
    retain_grad: Callable  # retain_grad(tensor)
    register_post_accumulate_grad_hook: Callable  # (tensor, hook) -> handle


class _State:
    """Global switches read on every call; the setters below and autograd's import fill them."""

    __slots__ = ("grad_enabled", "inference_mode", "observers", "record", "check_inplace", "autograd")

    def __init__(self):
        self.grad_enabled = True
        self.inference_mode = False
        self.observers: list = []  # tracer, profiler: objects with on_call(op, bound, run)
        self.record = None  # autograd's recorder: record(op, bound, outputs, saved_self)
        self.check_inplace = None  # autograd's refusal of in-place ops it cannot record: check_inplace(op, t)
        self.autograd: TensorAutograd | None = None  # the Tensor methods' way into autograd


STATE = _State()


class _Local(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference_mode = False


LOCAL = _Local()
_inference_threads: set = set()
_lock = threading.Lock()

_thread_start = threading.Thread.start


def _start_thread(self, *args, **kwargs):
    # A new thread starts with grad enabled: the summary flag must let its ops reach the recorder.
    STATE.grad_enabled = True
    return _thread_start(self, *args, **kwargs)


_start_thread.__doc__ = _thread_start.__doc__
threading.Thread.start = _start_thread


def set_grad(mode: bool) -> None:
    """This thread's grad mode, and the summary flag over all threads."""
    LOCAL.grad_enabled = mode
    STATE.grad_enabled = mode or threading.active_count() > 1


def set_inference(mode: bool) -> None:
    """This thread's inference mode, and the summary flag (any thread in inference mode)."""
    LOCAL.inference_mode = mode
    ident = threading.get_ident()
    with _lock:
        if mode:
            _inference_threads.add(ident)
        else:
            _inference_threads.discard(ident)
        STATE.inference_mode = bool(_inference_threads)


def is_tracing() -> bool:
    """True while ``toolkit.jit.trace`` records the calling code (an observer that records a graph is on).

    ``toolkit.jit.is_tracing`` is this function, which script mode folds to False; modules that PyTorch's tracer
    records as one node ask it below the JIT (``nn.LSTM`` traced records one ``aten::lstm``)."""
    return any(getattr(o, "records_graph", False) for o in STATE.observers)
