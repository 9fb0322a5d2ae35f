"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode``.

Each is a context manager and a decorator, as in PyTorch; they flip the one
flag the dispatcher checks before recording.
"""

from __future__ import annotations

import functools

from ..dispatch import STATE


def is_grad_enabled() -> bool:
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference_mode


class _DecoratorContextManager:
    """Usable as ``with no_grad():`` and as ``@no_grad()`` (or bare ``@no_grad``)."""

    def __call__(self, fn):
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: expected a function to decorate, got {type(fn).__name__}")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()

    def __new__(cls, orig_func=None, *args, **kwargs):
        if cls in (no_grad, enable_grad) and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)


class no_grad(_DecoratorContextManager):
    """Disable gradient recording inside the block."""

    def __init__(self, orig_func=None):
        self.prev = True

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = False

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording inside the block (e.g. inside a ``no_grad`` region)."""

    def __init__(self, orig_func=None):
        self.prev = False

    def __enter__(self):
        self.prev = STATE.grad_enabled
        STATE.grad_enabled = True

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: takes effect immediately as a function, and is restored on leaving a ``with`` block."""

    def __init__(self, mode: bool):
        self.prev = STATE.grad_enabled
        self.mode = bool(mode)
        STATE.grad_enabled = self.mode

    def __enter__(self):
        STATE.grad_enabled = self.mode

    def __exit__(self, *exc):
        STATE.grad_enabled = self.prev
        return False

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad`` but also marks results as inference tensors, which autograd later refuses to save."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)
        self.prev = (True, False)

    def __new__(cls, mode=True):
        if callable(mode):
            return cls(True)(mode)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = (STATE.grad_enabled, STATE.inference_mode)
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference_mode = True

    def __exit__(self, *exc):
        STATE.grad_enabled, STATE.inference_mode = self.prev
        return False

    def clone(self):
        return inference_mode(self.mode)
