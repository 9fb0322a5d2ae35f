"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode``.

Each is a context manager and a decorator, as in PyTorch, and like PyTorch's
they are thread-local. The state they switch lives in ``toolkit._core.state``
(its one owner, read by the dispatcher below autograd); see there for how the
thread-local truth and the dispatcher's cross-thread summary relate.
"""

from __future__ import annotations

import functools
import inspect

from .._core.state import LOCAL
from .._core.state import set_grad as _set_grad
from .._core.state import set_inference as _set_inference


def is_grad_enabled() -> bool:
    """Whether operations in this thread are recorded for autograd."""
    return LOCAL.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside ``inference_mode``."""
    return LOCAL.inference_mode


class _DecoratorContextManager:
    """Usable as ``with no_grad():`` and as ``@no_grad()`` (or bare ``@no_grad``), generators included."""

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: expected a function to decorate, got {type(fn).__name__}")
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        # The mode holds while the generator body runs, not while the caller runs between yields.
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    request = gen.send(None)
                while True:
                    try:
                        response = yield request
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001 - forwarded into the generator
                        with self.clone():
                            request = gen.throw(e)
                    else:
                        with self.clone():
                            request = gen.send(response)
            except StopIteration as e:
                return e.value

        return wrapper

    def clone(self):
        return type(self)()


def _decorate(cls, fn):
    """Bare ``@no_grad`` (no parentheses): decorate with a default instance."""
    inst = object.__new__(cls)
    inst.__init__()
    return inst(fn)


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block (in this thread).

    Example::

        with toolkit.no_grad():
            y = x * 2          # y.requires_grad is False
    """

    def __new__(cls, orig_func=None):
        if callable(orig_func):
            return _decorate(cls, orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = True

    def __enter__(self) -> None:
        self.prev = LOCAL.grad_enabled
        _set_grad(False)

    def __exit__(self, *exc) -> bool:
        _set_grad(self.prev)
        return False


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block (e.g. inside a ``no_grad`` region)."""

    def __new__(cls, orig_func=None):
        if callable(orig_func):
            return _decorate(cls, orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self) -> None:
        self.prev = LOCAL.grad_enabled
        _set_grad(True)

    def __exit__(self, *exc) -> bool:
        _set_grad(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: takes effect immediately as a function, and is restored on leaving a ``with`` block."""

    def __init__(self, mode: bool):
        self.prev = LOCAL.grad_enabled
        self.mode = bool(mode)
        _set_grad(self.mode)

    def __call__(self, fn):
        # ``@set_grad_enabled(False)``: the constructor already switched the mode; undo that for the decorator.
        _set_grad(self.prev)
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set_grad(self.mode)

    def __exit__(self, *exc) -> bool:
        _set_grad(self.prev)
        return False

    def clone(self):
        prev = LOCAL.grad_enabled
        c = set_grad_enabled(self.mode)
        c.prev = prev
        return c


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and results are inference tensors, which autograd later refuses to use.

    ``inference_mode(False)`` inside it switches back to normal tensors.
    """

    def __new__(cls, mode=True):
        if callable(mode):
            return _decorate(cls, mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self.prev = (True, False)

    def __enter__(self) -> None:
        self.prev = (LOCAL.grad_enabled, LOCAL.inference_mode)
        _set_inference(self.mode)
        _set_grad(not self.mode)

    def __exit__(self, *exc) -> bool:
        grad, inf = self.prev
        _set_inference(inf)
        _set_grad(grad)
        return False

    def clone(self):
        return inference_mode(self.mode)


__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]
