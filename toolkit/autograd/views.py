"""A view's history: replaying its view chain to rebuild its ``grad_fn`` from its base's.

``dispatch.running._wrap_one`` records on every view the ``(view op, args)``
pairs that made it from its base. After an in-place op moved the base's
history (onto ``CopySlices``), the view's ``grad_fn`` is rebuilt by replaying
that chain on the base; ``CopySlices`` replays it on the base's gradient.
"""

from __future__ import annotations

from ..dispatch import run as _run
from ..tensor import Tensor
from .grad_mode import LOCAL, _set_grad


def multi_output(op) -> bool:
    """Whether ``op`` returns several tensors (``split``, ``unbind``...)."""
    return op.returns_list or op.n_outputs > 1


def replay_view(t: Tensor, chain: tuple) -> Tensor:
    """Apply a view chain to ``t`` (another tensor of the base's shape), without tracer or profiler events."""
    for op, args in chain:
        t = _run(op, [t, *args])
    return t


def regenerate_view_history(t: Tensor) -> None:
    """Give view ``t`` a fresh ``grad_fn`` derived from its base's current history."""
    chain = t._view_chain
    base = t._base
    prev = LOCAL.grad_enabled
    _set_grad(True)
    try:
        if multi_output(chain[-1][0]):
            if any(multi_output(op) for op, _ in chain[:-1]):
                return
            outs = replay_view(base, chain[:-1]) if len(chain) > 1 else base
            op, args = chain[-1]
            ptr = t._data.__array_interface__["data"][0]
            r = next((o for o in _run(op, [outs, *args]) if o._data.__array_interface__["data"][0] == ptr
                      and o._data.shape == t._data.shape), None)
            if r is None:
                return
        else:
            r = replay_view(base, chain)
    finally:
        _set_grad(prev)
    t.grad_fn = r.grad_fn
    t._output_nr = r._output_nr
    t._requires_grad = r._requires_grad
