"""Grad modes: context managers, decorators, nesting, thread-locality, inference mode."""

from __future__ import annotations

import threading

import pytest
import torch

import toolkit
from toolkit.dispatch import STATE


def test_no_grad_and_enable_grad_nest():
    x = toolkit.ones(3, requires_grad=True)
    with toolkit.no_grad():
        assert not toolkit.is_grad_enabled()
        y = x * 2
        with toolkit.enable_grad():
            assert toolkit.is_grad_enabled()
            z = x * 2
        w = x * 2
    assert toolkit.is_grad_enabled()
    assert (y.requires_grad, z.requires_grad, w.requires_grad) == (False, True, False)
    assert y.grad_fn is None and z.grad_fn is not None


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_decorators_with_and_without_parentheses(lib):
    x = lib.ones(3, requires_grad=True)

    @lib.no_grad()
    def a():
        return x * 2

    @lib.no_grad
    def b():
        return x * 2

    @lib.enable_grad()
    def c():
        return x * 2

    @lib.set_grad_enabled(False)
    def d():
        return x * 2

    @lib.inference_mode()
    def e():
        return x * 2

    @lib.inference_mode
    def f():
        return x * 2

    assert lib.is_grad_enabled()
    with lib.no_grad():
        rc = c()
    res = [a().requires_grad, b().requires_grad, rc.requires_grad, d().requires_grad, e().requires_grad,
           f().requires_grad, e().is_inference()]
    assert res == [False, False, True, False, False, False, True]
    assert lib.is_grad_enabled()


def test_decorated_generator_keeps_mode_inside_only():
    x = toolkit.ones(2, requires_grad=True)

    @toolkit.no_grad()
    def gen():
        for _ in range(2):
            yield (x * 2).requires_grad, toolkit.is_grad_enabled()

    out = []
    for item in gen():
        out.append((item, toolkit.is_grad_enabled()))
    assert out == [((False, False), True), ((False, False), True)]


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_set_grad_enabled_function_and_context(lib):
    lib.set_grad_enabled(False)
    try:
        assert not lib.is_grad_enabled()
    finally:
        lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
        with lib.set_grad_enabled(True):
            assert lib.is_grad_enabled()
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()


def test_modes_restored_after_exception():
    with pytest.raises(ValueError):
        with toolkit.no_grad():
            raise ValueError
    assert toolkit.is_grad_enabled()
    with pytest.raises(ValueError):
        with toolkit.inference_mode():
            raise ValueError
    assert toolkit.is_grad_enabled() and not toolkit.is_inference_mode_enabled()


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_grad_mode_is_thread_local(lib):
    x = lib.ones(3, requires_grad=True)
    seen = []

    def worker():
        seen.append((lib.is_grad_enabled(), (x * 2).requires_grad))
        with lib.no_grad():
            seen.append((lib.is_grad_enabled(), (x * 2).requires_grad))

    with lib.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        assert (x * 2).requires_grad is False
    assert seen == [(True, True), (False, False)]
    # And the other way round: a worker's no_grad does not affect this thread.
    started, release = threading.Event(), threading.Event()

    def blocker():
        with lib.no_grad():
            started.set()
            release.wait(5)

    t = threading.Thread(target=blocker)
    t.start()
    started.wait(5)
    try:
        assert lib.is_grad_enabled() and (x * 2).requires_grad
    finally:
        release.set()
        t.join()


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_no_grad_skips_the_requires_grad_refusal_while_another_thread_lives(lib):
    """Loss weights requiring grad are refused in grad mode only: this thread's mode decides, not other threads'."""
    x, t, w = lib.randn(3, 4), lib.tensor([0, 1, 2]), lib.ones(4, requires_grad=True)
    started, release = threading.Event(), threading.Event()
    other = threading.Thread(target=lambda: (started.set(), release.wait(5)))
    other.start()
    started.wait(5)
    try:
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            lib.nn.functional.cross_entropy(x, t, weight=w)
        with lib.no_grad():
            lib.nn.functional.cross_entropy(x, t, weight=w)
    finally:
        release.set()
        other.join()


def test_no_grad_in_single_thread_clears_the_dispatch_flag():
    with toolkit.no_grad():
        if threading.active_count() == 1:
            assert STATE.grad_enabled is False
    assert STATE.grad_enabled is True


@pytest.mark.parametrize("lib", [toolkit, torch])
def test_inference_mode_tensors(lib):
    x = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() and not lib.is_grad_enabled()
        it = lib.ones(3) * 2
        y = x * 2
        it.add_(1)  # allowed inside
        with lib.inference_mode(False):
            assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
            normal = x * 2
    assert it.is_inference() and y.is_inference() and not y.requires_grad
    assert normal.requires_grad and not normal.is_inference()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        it.add_(1)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (x * it).sum().backward()


def test_inference_mode_in_one_thread_does_not_mark_others():
    started, release = threading.Event(), threading.Event()

    def blocker():
        with toolkit.inference_mode():
            started.set()
            release.wait(5)

    t = threading.Thread(target=blocker)
    t.start()
    started.wait(5)
    try:
        assert STATE.inference_mode
        y = toolkit.ones(2) * 2
        assert not y.is_inference()
    finally:
        release.set()
        t.join()
    assert not STATE.inference_mode
