"""Saved-tensor hooks and the rest of ``autograd.graph``, against PyTorch."""

from __future__ import annotations

import threading

import pytest
import torch

import toolkit

from ..conftest import assert_close


def both(fn):
    return fn(toolkit), fn(torch)


def _raises(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the oracle decides which error
        return type(e).__name__, str(e)
    return None


def test_pack_and_unpack_see_every_saved_tensor():
    def run(lib):
        packed, unpacked = [], []

        def pack(t):
            packed.append(t.detach().clone())
            return ("box", t.detach())

        def unpack(p):
            unpacked.append(p[1].clone())
            return p[1]

        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (a * b).exp()
        y.sum().backward()
        return packed, unpacked, a.grad, b.grad

    (p1, u1, ga1, gb1), (p2, u2, ga2, gb2) = both(run)
    assert len(p1) == len(p2) == 3 and len(u1) == len(u2) == 3

    def values(ts):  # the order of one node's saved tensors is each library's own
        return sorted(tuple(round(float(v), 3) for v in t.tolist()) for t in ts)

    assert values(p1) == values(p2)
    assert values(u1) == values(u2)
    assert_close(ga1, ga2)
    assert_close(gb1, gb2)


def test_unpacked_tensor_keeps_autograd_metadata_and_double_backward():
    def run(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            h = x * 2
            e = h.exp()
            p = h * x
            y = p.sum() + e.sum()
        meta = (p.grad_fn._saved_self.requires_grad, p.grad_fn._saved_self.grad_fn is h.grad_fn,
                p.grad_fn._saved_other.requires_grad, p.grad_fn._saved_other.grad_fn is None,
                e.grad_fn._saved_result.grad_fn is e.grad_fn)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return meta, g, x.grad

    (m1, g1, x1), (m2, g2, x2) = both(run)
    assert m1 == m2
    assert_close(g1, g2)
    assert_close(x1, x2)


def test_pack_runs_without_grad_and_unpack_in_backward_mode():
    def run(lib):
        modes = []
        x = lib.ones(2, requires_grad=True)

        def pack(t):
            modes.append(("pack", lib.is_grad_enabled()))
            return t

        def unpack(t):
            modes.append(("unpack", lib.is_grad_enabled()))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.sin().sum()
        y.backward()
        return modes

    a, e = both(run)
    assert a == e


def test_nested_hooks_innermost_applies():
    def run(lib):
        seen = []
        x = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: ("outer", t), lambda p: p[1]):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: ("inner", t), lambda p: (seen.append(p[0]), p[1])[1]):
                y = x.cos().sum()
            z = x.sin().sum()
        (y + z).backward()
        return seen

    a, e = both(run)
    assert a == e == ["inner"]


def test_custom_function_save_for_backward_goes_through_hooks():
    def run(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                flags.append((x.requires_grad, y.grad_fn is not None))
                return g * y

        flags, count = [], []
        x = lib.tensor([0.1, 0.2], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (count.append(1), t.detach())[1], lambda t: t):
            y = Exp.apply(x)
        y.sum().backward()
        return len(count), flags, x.grad

    (n1, f1, g1), (n2, f2, g2) = both(run)
    assert n1 == n2 == 2 and f1 == f2
    assert_close(g1, g2)


def test_no_version_check_with_hooks():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        xc = x.clone()
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = xc.pow(2)
        xc.add_(1)
        y.sum().backward()
        return x.grad

    a, e = both(run)
    assert_close(a, e)


@pytest.mark.parametrize("case", ["unpack_not_tensor", "pack_inplace", "backward_twice"])
def test_errors_match_torch(case):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        if case == "unpack_not_tensor":
            with lib.autograd.graph.saved_tensors_hooks(lambda t: 1, lambda p: p):
                y = x * x
            y.sum().backward()
        elif case == "pack_inplace":
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(1), lambda t: t):
                (x * 1) * x
        else:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                y = (x * x).sum()
            y.backward()
            y.backward()

    a, e = _raises(run, toolkit), _raises(run, torch)
    assert e is not None and a is not None
    assert a[0] == e[0]
    assert a[1].replace("toolkit", "torch") == e[1]


def test_disable_saved_tensors_hooks():
    def run(lib):
        graph = lib.autograd.graph
        out = []
        for order in ("disable_first", "hooks_first"):
            try:
                if order == "disable_first":
                    with graph.disable_saved_tensors_hooks("no hooks here"):
                        x = lib.ones(1, requires_grad=True)
                        (x * x).sum().backward()  # saving without hooks is fine
                        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                            pass
                else:
                    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                        with graph.disable_saved_tensors_hooks("not while hooked"):
                            pass
            except RuntimeError as e:
                out.append(str(e))
        with graph.save_on_cpu():  # allowed again after the block
            pass
        return out

    a, e = both(run)
    assert a == e == ["no hooks here", "not while hooked"]


def test_save_on_cpu_gives_the_same_gradients():
    def run(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x @ x).tanh().sum()
        y.backward()
        return x.grad

    a, e = both(run)
    assert_close(a, e)


def test_hooks_are_per_thread():
    seen = []
    x = toolkit.ones(2, requires_grad=True)

    def other():
        (x * x).sum()

    with toolkit.autograd.graph.saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert seen == []


def test_increment_version_makes_saved_tensor_stale():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        lib.autograd.graph.increment_version([y])
        y.sum().backward()

    a, e = _raises(run, toolkit), _raises(run, torch)
    assert a[0] == e[0] == "RuntimeError"
    assert "is at version 1; expected version 0 instead" in a[1] and "is at version 1; expected version 0" in e[1]


def test_register_multi_grad_hook_all_and_any():
    def run(lib):
        a = lib.rand(2, 3, requires_grad=True)
        b = lib.rand(2, 3, requires_grad=True)
        c = a * b
        d = a * b
        calls = []
        h = lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: calls.append(
            [g is not None for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward(retain_graph=True)
        firsts = []
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: firsts.append(tuple(g.shape)), mode="any")
        (c * 2).sum().backward(retain_graph=True)
        (d * 3).sum().backward()
        return calls, firsts

    a, e = both(run)
    assert a == e


def test_register_multi_grad_hook_bad_mode():
    def run(lib):
        x = lib.ones(1, requires_grad=True)
        lib.autograd.graph.register_multi_grad_hook((x,), print, mode="some")

    assert _raises(run, toolkit) == _raises(run, torch)


def test_allow_mutation_on_saved_tensors():
    def run(lib):
        with lib.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            a = lib.tensor([[0.5, 1.0, -2.0]], requires_grad=True)
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
            c = a * 3
            d = c.exp()
            c[0, 1:].mul_(2)
            (out + d.sum()).backward()
            grads = a.grad.clone()
        try:
            with lib.autograd.graph.allow_mutation_on_saved_tensors():
                with lib.autograd.graph.allow_mutation_on_saved_tensors():
                    pass
        except RuntimeError as e:
            err = str(e)
        return grads, b.detach(), len(ctx.original), err

    (g1, b1, n1, e1), (g2, b2, n2, e2) = both(run)
    assert_close(g1, g2)
    assert_close(b1, b2)
    assert n1 == n2 == 0 and e1 == e2


def test_without_allow_mutation_the_same_code_raises():
    def run(lib):
        a = lib.tensor([0.5, 1.0], requires_grad=True)
        b = a.clone()
        out = (b**2).sum()
        b.sin_()
        out.backward()

    a, e = _raises(run, toolkit), _raises(run, torch)
    assert a[0] == e[0] == "RuntimeError"
