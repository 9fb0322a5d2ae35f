"""Activation checkpointing against PyTorch: gradients, random state, messages, and memory actually freed."""

from __future__ import annotations

import functools
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import toolkit
import toolkit.utils.checkpoint as kcp
from toolkit.ops import registry

from ..conftest import assert_close

REENTRANT = [True, False]


def _libs():
    return ((toolkit, toolkit.nn, kcp), (torch, torch.nn, tcp))


def _as_torch(message: str) -> str:
    """toolkit's messages name toolkit's modules where PyTorch's name torch's."""
    return message.replace("toolkit.", "torch.")


def _copy_weights(src, dst) -> None:
    """Give the toolkit model ``dst`` the torch model ``src``'s parameters."""
    for p_dst, p_src in zip(dst.parameters(), src.parameters()):
        with toolkit.no_grad():
            p_dst.copy_(toolkit.from_numpy(p_src.detach().numpy().copy()))


def _models(build):
    """The same model in toolkit and torch, with identical weights."""
    torch.manual_seed(0)
    tm = build(torch.nn)
    km = build(toolkit.nn)
    _copy_weights(tm, km)
    return km, tm


def _mlp(nn):
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))


def _dropout_net(nn):
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.5), nn.Linear(16, 16), nn.Dropout(0.3),
                         nn.Sigmoid(), nn.Linear(16, 3))


def _grads(lib, model, x, forward, seed: int = 7):
    model.zero_grad()
    x = lib.tensor(x, requires_grad=True)
    lib.manual_seed(seed)
    out = forward(model, x)
    (out * out).sum().backward()
    return [p.grad.clone() for p in model.parameters()] + [x.grad.clone()], out.detach()


def _check_against_plain_and_torch(build, checkpointed) -> None:
    """Gradients and output of ``checkpointed(model, x, cp)`` equal the plain run's, and torch's on equal weights."""
    km, tm = _models(build)
    results = []
    for (lib, _, cp), model in zip(_libs(), (km, tm)):
        plain, out_plain = _grads(lib, model, X, lambda m, x: m(x))
        ckpt, out_ckpt = _grads(lib, model, X, lambda m, x, cp=cp: checkpointed(m, x, cp))
        for a, b in zip(plain, ckpt):
            assert_close(b, a)
        assert_close(out_ckpt, out_plain)
        results.append(ckpt)
    for a, e in zip(*results):
        assert_close(a, e)


X = np.linspace(-1.0, 1.0, 30, dtype=np.float32).reshape(5, 6)


@pytest.mark.parametrize("build", [_mlp, _dropout_net], ids=["mlp", "dropout"])
@pytest.mark.parametrize("use_reentrant", REENTRANT)
def test_checkpoint_gradients_equal_unchekpointed_and_torch(build, use_reentrant):
    _check_against_plain_and_torch(build, lambda m, x, cp: cp.checkpoint(m, x, use_reentrant=use_reentrant))


@pytest.mark.parametrize("segments", [1, 2, 3])
@pytest.mark.parametrize("use_reentrant", REENTRANT)
def test_checkpoint_sequential_on_nn_sequential(segments, use_reentrant):
    _check_against_plain_and_torch(_dropout_net, lambda m, x, cp: cp.checkpoint_sequential(
        m, segments, x, use_reentrant=use_reentrant))


def test_checkpoint_sequential_accepts_a_list_of_functions():
    def run(lib, cp):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = cp.checkpoint_sequential([lib.sin, lib.exp, lib.tanh, lib.cos], 2, x, use_reentrant=False)
        out.sum().backward()
        return out, x.grad

    (o1, g1), (o2, g2) = run(toolkit, kcp), run(torch, tcp)
    assert_close(o1, o2)
    assert_close(g1, g2)


def test_keyword_arguments_only_without_reentrant():
    def f(x, *, scale):
        return (x * scale).sin()

    for lib, _, cp in _libs():
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(ValueError) as info:
            cp.checkpoint(f, x, use_reentrant=True, scale=2.0)
        assert str(info.value) == "Unexpected keyword arguments: scale"
        cp.checkpoint(f, x, use_reentrant=False, scale=2.0).sum().backward()
        assert_close(x.grad, lib.tensor([1.0, 2.0]).mul(2).cos().mul(2))


def _messages(fn):
    out = []
    for lib, nn, cp in _libs():
        try:
            fn(lib, nn, cp)
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the oracle decides which error
            out.append((type(e).__name__, _as_torch(str(e)).split("\n")[0]))
    return out


@pytest.mark.parametrize("case", ["context_fn_reentrant", "debug_reentrant", "determinism", "seq_kwargs",
                                  "no_output_requires_grad", "debug_and_context_fn"])
def test_error_messages_match_torch(case):
    def run(lib, nn, cp):
        x = lib.ones(2, requires_grad=True)
        if case == "context_fn_reentrant":
            cp.checkpoint(lib.sin, x, use_reentrant=True, context_fn=lambda: (None, None))
        elif case == "debug_reentrant":
            cp.checkpoint(lib.sin, x, use_reentrant=True, debug=True)
        elif case == "determinism":
            cp.checkpoint(lib.sin, x, use_reentrant=False, determinism_check="strict")
        elif case == "seq_kwargs":
            cp.checkpoint_sequential([lib.sin], 1, x, use_reentrant=False, foo=1)
        elif case == "no_output_requires_grad":
            y = cp.checkpoint(lambda t: (t.detach() * 2, t * 3), x, use_reentrant=True)
            (y[1]).sum().backward()
            y = cp.checkpoint(lambda t: (t.detach() * 2,), x, use_reentrant=True)
        else:
            cp.checkpoint(lib.sin, x, use_reentrant=False, debug=True, context_fn=lambda: (None, None))

    a, e = _messages(run)
    assert a == e


def test_use_reentrant_not_given_warns_and_defaults_to_reentrant():
    for lib, _nn, cp in _libs():
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly") as rec:
            y = cp.checkpoint(lib.sin, x)
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
        text = _as_torch(str(rec[0].message))
        with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
            cp.checkpoint_sequential([lib.sin], 1, x)
    assert text.startswith("torch.utils.checkpoint: the use_reentrant")
    assert "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception" in text


def test_reentrant_warns_when_no_input_requires_grad():
    for lib, _nn, cp in _libs():
        w = lib.ones(2, requires_grad=True)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. Gradients will be None"):
            cp.checkpoint(functools.partial(lib.mul, w), lib.ones(2), use_reentrant=True)


def _forward_with_probe(lib, refs):
    def fn(x):
        h = x.exp()
        refs.append(weakref.ref(h))
        return (h.sin() * h).sum()

    return fn


@pytest.mark.parametrize("mode", ["plain", "reentrant", "non_reentrant"])
def test_intermediate_activations_are_freed(mode):
    """The intermediate ``h`` stays alive without checkpointing (saved by sin and mul) and dies with it."""
    alive = []
    for lib, _, cp in _libs():
        refs = []
        fn = _forward_with_probe(lib, refs)
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        if mode == "plain":
            y = fn(x)
        else:
            y = cp.checkpoint(fn, x, use_reentrant=(mode == "reentrant"))
        gc.collect()
        alive.append(refs[0]() is not None)
        y.backward()
        expect = (x.detach().exp().sin() * x.detach().exp() + x.detach().exp().cos() * x.detach().exp() ** 2)
        assert_close(x.grad, expect)
    assert alive[0] == alive[1] == (mode == "plain")


def _count_and_detach(packed: list, t):
    packed.append(1)
    return t.detach()


def test_graph_holds_only_the_checkpoint_inputs():
    """Counted by an enclosing pack hook: the graph of a non-reentrant checkpoint saves just its input."""
    counts = []
    for lib, nn, cp in _libs():
        packed = []
        x = lib.randn(4, 6, requires_grad=True)
        model = _mlp(nn)
        with lib.autograd.graph.saved_tensors_hooks(functools.partial(_count_and_detach, packed), lambda t: t):
            plain = len(packed)
            model(x)
            plain = len(packed) - plain
            before = len(packed)
            y = cp.checkpoint(model, x, use_reentrant=False)
            ckpt = len(packed) - before
        y.sum().backward()
        counts.append((plain, ckpt))
    assert counts[0][1] == counts[1][1] == 1
    assert counts[0][0] > 1 and counts[1][0] > 1


def test_non_reentrant_works_with_autograd_grad_and_retain_graph():
    def run(lib, cp):
        x = lib.tensor([0.3, -0.7, 1.1], requires_grad=True)
        y = cp.checkpoint(lambda t: (t.sin() * t.exp()).sum(), x, use_reentrant=False)
        (g1,) = lib.autograd.grad(y, x, retain_graph=True)
        (g2,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g2.sum(), x)
        return g1, g2, gg

    for a, e in zip(run(toolkit, kcp), run(torch, tcp)):
        assert_close(a, e)


def test_nested_non_reentrant_checkpoints():
    def run(lib, cp):
        x = lib.tensor([0.3, -0.7, 1.1], requires_grad=True)

        def inner(t):
            return t.tanh() * t

        def outer(t):
            return cp.checkpoint(inner, t.exp(), use_reentrant=False).sin()

        cp.checkpoint(outer, x, use_reentrant=False).sum().backward()
        return x.grad

    assert_close(run(toolkit, kcp), run(torch, tcp))


def test_recomputation_mismatch_raises_checkpoint_error():
    def run(lib, cp, debug=False):
        calls = []

        def fn(t):
            calls.append(1)
            return t.exp().sin() if len(calls) == 1 else t.exp()

        x = lib.ones(2, requires_grad=True)
        y = cp.checkpoint(fn, x, use_reentrant=False, debug=debug)
        with pytest.raises(cp.CheckpointError) as info:
            y.sum().backward()
        return str(info.value)

    a, e = _as_torch(run(toolkit, kcp)), run(torch, tcp)
    assert a.split("\n")[:3] == e.split("\n")[:3]
    assert issubclass(kcp.CheckpointError, RuntimeError)
    logged = run(toolkit, kcp, debug=True)
    assert "Operations executed during the original forward:" in logged and "aten::exp" in logged
    with kcp.set_checkpoint_debug_enabled(True):
        assert "ERROR: Detected non-determinism" in run(toolkit, kcp)


def test_recomputed_metadata_mismatch():
    def run(lib, cp):
        calls = []

        def fn(t):
            calls.append(1)
            return (t if len(calls) == 1 else t.double()).exp()

        x = lib.ones(2, requires_grad=True)
        y = cp.checkpoint(fn, x, use_reentrant=False)
        with pytest.raises(cp.CheckpointError) as info:
            y.sum().backward()
        return _as_torch(str(info.value)).split("\n")[:3]

    a, e = run(toolkit, kcp), run(torch, tcp)
    assert a[:2] == e[:2]
    assert "'dtype': toolkit.float32" in a[2] or "float32" in a[2]


def test_determinism_check_none_skips_the_check():
    calls = []

    def fn(t):
        calls.append(1)
        return (t if len(calls) == 1 else t.double()).exp()

    x = toolkit.ones(2, requires_grad=True)
    kcp.checkpoint(fn, x, use_reentrant=False, determinism_check="none").sum().backward()
    assert_close(x.grad, toolkit.ones(2).exp())


def test_preserve_rng_state_false_draws_new_masks():
    km, _ = _models(_dropout_net)
    plain, _ = _grads(toolkit, km, X, lambda m, x: m(x))
    off, _ = _grads(toolkit, km, X, lambda m, x: kcp.checkpoint(m, x, use_reentrant=False, preserve_rng_state=False))
    assert any(not np.allclose(a.numpy(), b.numpy()) for a, b in zip(plain, off))


def test_selective_checkpoint_keeps_chosen_ops():
    mm = registry.get("mm")
    seen = []

    def policy(ctx, op, *args, **kwargs):
        seen.append(op.name)
        return kcp.CheckpointPolicy.MUST_SAVE if op is mm else kcp.CheckpointPolicy.PREFER_RECOMPUTE

    def run(lib, cp, context_fn):
        x = lib.tensor(X[:3, :3], requires_grad=True)
        y = lib.tensor(X[2:5, 3:6], requires_grad=True)

        def fn(a, b):
            return lib.sigmoid(lib.mm(lib.mm(a, b), b)) * b

        out = cp.checkpoint(fn, x, y, use_reentrant=False, context_fn=context_fn)
        out.sum().backward()
        return x.grad, y.grad

    expected = run(torch, tcp, functools.partial(tcp.create_selective_checkpoint_contexts,
                                                 [torch.ops.aten.mm.default]))
    for ctx in (functools.partial(kcp.create_selective_checkpoint_contexts, policy),
                functools.partial(kcp.create_selective_checkpoint_contexts, [mm])):
        for a, e in zip(run(toolkit, kcp, ctx), expected):
            assert_close(a, e)
    assert seen.count("mm") == 2
    with pytest.raises(TypeError, match="policy_fn_or_list must be either a function or a list of ops."):
        kcp.create_selective_checkpoint_contexts(3)
    with pytest.raises(ValueError, match="Expected op in `op_list` to be an OpOverload"):
        kcp.create_selective_checkpoint_contexts(["mm"])


def test_selective_checkpoint_backward_twice_raises():
    ctx = functools.partial(kcp.create_selective_checkpoint_contexts, [registry.get("mm")])
    x = toolkit.ones(2, 2, requires_grad=True)
    y = kcp.checkpoint(lambda t: toolkit.mm(t, t).sin().sum(), x, use_reentrant=False, context_fn=ctx)
    y.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="Trying to backward an extra time"):
        y.backward()


def test_device_state_helpers_and_default_device_type():
    for lib, _, cp in _libs():
        assert cp.get_device_states(lib.ones(1), (lib.ones(2), 3)) == ([], [])
        cp.set_device_states([], [])
        ctx = cp.noop_context_fn()
        assert len(ctx) == 2
        with ctx[0], ctx[1]:
            pass
    assert kcp.DefaultDeviceType.get_device_type() in ("cpu", "cuda")
    prev = kcp.DefaultDeviceType._default_device_type
    kcp.DefaultDeviceType.set_device_type("cpu")
    assert kcp.DefaultDeviceType.get_device_type() == "cpu"
    kcp.DefaultDeviceType._default_device_type = prev


def test_checkpoint_under_no_grad_returns_plain_output():
    for lib, _, cp in _libs():
        x = lib.ones(2, requires_grad=True)
        with lib.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = cp.checkpoint(lib.sin, x, use_reentrant=False)
        assert y.grad_fn is None and not y.requires_grad


def test_without_early_stop_extra_saves_raise():
    def run(lib, cp):
        calls = []

        def fn(t):
            calls.append(1)
            return t.exp() if len(calls) == 1 else t.exp().sin()

        x = lib.ones(2, requires_grad=True)
        with cp.set_checkpoint_early_stop(False):
            y = cp.checkpoint(fn, x, use_reentrant=False)
        with pytest.raises(cp.CheckpointError) as info:
            y.sum().backward()
        return _as_torch(str(info.value)).split("\n")[0]

    assert run(toolkit, kcp) == run(torch, tcp)


def test_inputs_modified_in_place_after_checkpoint_raise():
    def run(lib, cp):
        x = lib.ones(2, requires_grad=True)
        h = x * 1
        y = cp.checkpoint(lib.sin, h, use_reentrant=False)
        h.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return "modified by an inplace operation" in str(info.value)

    assert run(toolkit, kcp) and run(torch, tcp)
