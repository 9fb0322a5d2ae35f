"""In-place ops under autograd: version checks, leaf errors, views and CopySlices, against PyTorch."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close


def both(fn):
    return fn(toolkit), fn(torch)


def check(fn):
    a, e = both(fn)
    a = a if isinstance(a, tuple) else (a,)
    e = e if isinstance(e, tuple) else (e,)
    for u, v in zip(a, e):
        assert_close(u, v)


def errors(fn):
    """Run with both libraries; return both error messages (toolkit's with 'toolkit.' -> 'torch.')."""
    msgs = []
    for lib in (toolkit, torch):
        with pytest.raises(RuntimeError) as info:
            fn(lib)
        msgs.append(str(info.value).replace("toolkit.", "torch."))
    return msgs


def test_modifying_saved_input_raises_torch_message():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x.exp()
        b = a * a
        a.add_(1)
        b.sum().backward()

    ours, theirs = errors(run)
    assert ours == theirs
    assert "[torch.FloatTensor [3]], which is output 0 of Add, is at version 1; expected version 0" in ours


def test_modifying_saved_output_raises_torch_message():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x.exp()
        b.add_(1)
        b.sum().backward()

    ours, theirs = errors(run)
    assert ours == theirs


def test_modifying_saved_non_grad_leaf_raises_torch_message():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.ones(3)
        y = x * w
        w.add_(1)
        y.sum().backward()

    ours, theirs = errors(run)
    assert ours == theirs
    assert "[torch.FloatTensor [3]] is at version 1; expected version 0 instead." in ours


def test_modifying_unneeded_tensor_is_fine():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([2.0, 2.0, 2.0])
        y = x + w
        w.add_(1)
        z = (x * 2) + 1
        with lib.no_grad():
            x.add_(1)
        (y.sum() + z.sum()).backward()
        return x.grad, x

    check(run)


def test_inplace_on_leaf_requiring_grad_raises():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.mul_(2)

    ours, theirs = errors(run)
    assert ours == theirs == "a leaf Variable that requires grad is being used in an in-place operation."
    ours, theirs = errors(lambda lib: lib.tensor([1.0, 2.0], requires_grad=True)[0:1].mul_(2))
    assert ours == theirs
    ours, theirs = errors(lambda lib: lib.tensor([[1.0, 2.0]], requires_grad=True).t().view(-1).add_(1))
    assert ours == theirs


def test_inplace_on_leaf_allowed_under_no_grad():
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    with toolkit.no_grad():
        x.mul_(2)
    assert x.grad_fn is None and x._version == 1
    assert_close(x.detach(), np.array([2.0, 4.0], dtype=np.float32))


def test_inplace_chain_on_non_leaf():
    def run(lib):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 2
        y.mul_(x)
        y.add_(x, alpha=3)
        y.exp_()
        y.sum().backward()
        return x.grad, y, type(y.grad_fn).__name__ == "ExpBackward0"

    (g, y, n), (tg, ty, tn) = both(run)
    assert_close(g, tg)
    assert_close(y, ty)
    assert n == tn


def test_inplace_after_inplace_that_saved_its_result_raises():
    def run(lib):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x * 2
        y.exp_()
        y.add_(x, alpha=3)
        y.sum().backward()

    ours, theirs = errors(run)
    assert ours == theirs


def test_inplace_makes_non_grad_tensor_require_grad():
    def run(lib):
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        z = lib.zeros(3)
        z.add_(w)
        (z * z).sum().backward()
        return w.grad, z.requires_grad, z.is_leaf

    (g, r, leaf), (tg, tr, tleaf) = both(run)
    assert_close(g, tg)
    assert (r, leaf) == (tr, tleaf) == (True, False)


def test_inplace_on_view_of_non_grad_base_gives_base_history():
    def run(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.zeros(3)
        z[1:].add_(w)
        (z * z).sum().backward()
        return w.grad, z, type(z.grad_fn).__name__.split("::")[-1], z.grad_fn.next_functions[0]

    (g, z, name, edge), (tg, tz, tname, tedge) = both(run)
    assert_close(g, tg)
    assert_close(z, tz)
    assert name == tname == "CopySlices"
    assert edge == tedge == (None, 0)


@pytest.mark.parametrize("case", range(7))
def test_copy_slices_matches_torch(case):
    data = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 4

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        y = x * 2
        if case == 0:
            y[0:2].mul_(3)
        elif case == 1:
            y.view(-1)[0] = 5
        elif case == 2:
            y.t()[1].mul_(y[0, 0].detach() + 1)
        elif case == 3:
            v = y[1:]
            w = v[:, 1:3]
            w.exp_()
        elif case == 4:
            y[:, 2].copy_(x[:, 0] * x[:, 1])
        elif case == 5:
            y[1].mul_(2)
            y[1, 1:].mul_(x[0, 1:])
        else:
            y.transpose(0, 1)[2:].add_(lib.ones(2, 3), alpha=2)
        (y * y).sum().backward()
        return x.grad, y

    check(run)


def test_view_gets_fresh_history_after_base_changes():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        v = y[0:2]
        vv = v[1:]
        y.mul_(3)
        (v.sum() + (vv * vv).sum()).backward()
        return x.grad, v, vv

    check(run)


def test_inplace_on_view_then_use_view_and_base():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x * 3
        v = y[1:3]
        v.mul_(x[0:2])
        (v.sum() * 2 + (y * x).sum()).backward()
        return x.grad, y

    check(run)


def test_inplace_on_view_of_saved_output_raises():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = x.exp()
        y[1:3].mul_(2)
        y.sum().backward()

    ours, theirs = errors(run)
    assert ours == theirs


def test_multi_output_view_inplace_raises():
    def run(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        a, b = (x * 2).unbind(0)
        a.add_(1)

    ours, theirs = errors(run)
    assert ours == theirs


def test_view_created_in_no_grad_then_inplace_raises():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        with lib.no_grad():
            v = y[0:1]
        v.mul_(2)

    ours, theirs = errors(run)
    assert ours == theirs


def test_detach_shares_version_counter_and_is_not_a_view():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        d = y.detach()
        d.zero_() if hasattr(d, "zero_") else d.mul_(0)
        return d._version, y._version, d._base is None, d.requires_grad

    a, e = both(run)
    assert a == e
    x = toolkit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.detach()[0:2].mul_(2)  # allowed: detach() cuts the view relation to x
    assert x._version == 1
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[0:1].detach_()


def test_grad_of_inplace_with_create_graph():
    def run(lib):
        x = lib.tensor([0.5, 1.5, -1.0], requires_grad=True)
        y = x * x
        y[0:2].mul_(x[1:])
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad((g * g).sum(), x)
        return g, g2

    check(run)


def test_retain_grad_follows_inplace():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        y.mul_(3)
        y.sum().backward()
        return y.grad, x.grad

    check(run)


def test_only_tensors_a_needed_gradient_reads_are_saved():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([2.0, 3.0, 4.0])
        a = x + 0
        b = a * w  # MulBackward0 keeps w (for a's gradient), not a (w needs none)
        m = lib.mm(a.view(1, 3), w.view(3, 1))
        a.mul_(2)
        (b.sum() + m.sum()).backward()
        return x.grad

    check(run)
    ours, theirs = errors(lambda lib: _needs_both(lib))
    assert ours == theirs


def _needs_both(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    a = x + 0
    b = a * w
    a.mul_(2)
    b.sum().backward()


def test_view_created_in_no_grad_is_marked_while_another_thread_is_alive():
    """Grad mode is per thread: a live thread elsewhere (a kernel's worker pool) must not make a view taken under
    ``no_grad`` look like one taken with grad enabled."""
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    try:
        test_view_created_in_no_grad_then_inplace_raises()
    finally:
        stop.set()
        worker.join()
