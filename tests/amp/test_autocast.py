"""Autocast against PyTorch: each op's registry policy, result dtypes, values and gradients inside regions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
from toolkit.dispatch import STATE
from toolkit.ops import registry

from ..conftest import assert_close
from ..ops.test_registry import _call_tk, _th, _tk, _torch_fn

F16 = toolkit.float16
POLICY_OPS = [o for o in registry.all_ops() if o.autocast and "cpu" in o.autocast and o.samples is not None]


def _as(x, dtype, lib):
    """Sample args with floating arrays as ``dtype`` tensors of ``lib`` (toolkit or torch)."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        x = x.astype(dtype)
    if isinstance(x, (list, tuple)):
        return type(x)(_as(e, dtype, lib) for e in x)
    return _tk(x) if lib == "tk" else _th(x)


def _flat(r):
    if isinstance(r, (toolkit.Tensor, torch.Tensor)):
        return [r]
    if isinstance(r, (tuple, list)):
        return [t for e in r for t in _flat(e)]
    return []


@pytest.mark.parametrize("o", POLICY_OPS, ids=lambda o: o.schema.full_name)
def test_registry_policy_matches_torch_autocast(o):
    """Every op with an autocast policy gives torch's result dtypes and values in a float16 CPU region,
    from float32 inputs (``lower``) and float16 inputs (``fp32``)."""
    checked = 0
    for args, kwargs in list(o.samples(np.random.default_rng(0)))[:2]:
        for np_dtype in (np.float32, np.float16):
            try:
                with torch.autocast("cpu", dtype=torch.float16), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    expected = _torch_fn(o)(*_as(args, np_dtype, "th"),
                                            **{k: _as(v, np_dtype, "th") for k, v in kwargs.items()})
            except Exception:  # noqa: BLE001 - torch refuses this dtype for this op: nothing to compare
                continue
            with toolkit.autocast("cpu", dtype=F16), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                actual = _call_tk(o, _as(args, np_dtype, "tk"), {k: _as(v, np_dtype, "tk") for k, v in kwargs.items()})
            for a, e in zip(_flat(actual), _flat(expected)):
                assert str(a.dtype).split(".")[-1] == str(e.dtype).split(".")[-1], (o.name, np_dtype)
                if e.is_floating_point() and o.kind != registry.RANDOM and "lowrank" not in o.name:
                    assert_close(a, e, rtol=2e-2, atol=2e-2)
            checked += 1
    if not checked:
        pytest.skip("torch runs no sample of this op under CPU autocast")


def _pair(*shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return toolkit.tensor(x), torch.tensor(x)


def test_mm_is_float16_and_softmax_and_losses_follow_torch():
    (a, ta), (b, tb) = _pair(4, 5), _pair(5, 3, seed=1)
    with toolkit.autocast("cpu", dtype=F16):
        y = toolkit.mm(a, b)
        s = y.softmax(-1)  # not in PyTorch's CPU list: keeps its input's float16
        loss = toolkit.nn.functional.mse_loss(y, toolkit.zeros(4, 3))
    with torch.autocast("cpu", dtype=torch.float16):
        ty = torch.mm(ta, tb)
        ts = ty.softmax(-1)
        tloss = torch.nn.functional.mse_loss(ty, torch.zeros(4, 3))
    assert y.dtype is F16 and s.dtype is F16 and loss.dtype is toolkit.float32
    assert_close(y, ty)
    assert_close(s, ts)
    assert_close(loss, tloss)
    assert toolkit.mm(a, b).dtype is toolkit.float32  # off again after the region


def test_promote_cat_and_float64_left_alone():
    x, tx = _pair(2, 3)
    with toolkit.autocast("cpu", dtype=F16):
        c = toolkit.cat([x.half(), x])
        d = toolkit.mm(x.double(), x.double().t())
    with torch.autocast("cpu", dtype=torch.float16):
        tc = torch.cat([tx.half(), tx])
    assert c.dtype is toolkit.float32 and tc.dtype is torch.float32
    assert d.dtype is toolkit.float64


def test_linear_model_outputs_and_gradients_match_torch():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    m = toolkit.nn.Sequential(toolkit.nn.Linear(6, 8), toolkit.nn.ReLU(), toolkit.nn.Linear(8, 2))
    m.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x, tx = _pair(5, 6)
    t, tt = _pair(5, 2, seed=3)
    with toolkit.autocast("cpu", dtype=F16):
        out = m(x)
        loss = toolkit.nn.functional.mse_loss(out, t)
    with torch.autocast("cpu", dtype=torch.float16):
        tout = tm(tx)
        tloss = torch.nn.functional.mse_loss(tout, tt)
    assert out.dtype is F16 and loss.dtype is toolkit.float32
    # PyTorch's float16 addmm accumulates in float32 and rounds once; toolkit rounds the product and the bias
    # add separately: agreement to float16's precision
    assert_close(out, tout, rtol=2e-3, atol=2e-3)
    assert_close(loss, tloss, rtol=2e-3, atol=1e-4)
    loss.backward()
    tloss.backward()
    for p, tp in zip(m.parameters(), tm.parameters()):
        assert p.grad.dtype is toolkit.float32
        assert_close(p.grad, tp.grad, rtol=1e-2, atol=1e-3)


def test_weight_cache_casts_a_leaf_once_per_region():
    w = toolkit.randn(3, 3, requires_grad=True)
    x = toolkit.randn(3, 3)
    with toolkit.autocast("cpu", dtype=F16):
        a = toolkit.mm(x, w)
        b = toolkit.mm(x, w)
        assert a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
    with toolkit.autocast("cpu", dtype=F16, cache_enabled=False):
        a = toolkit.mm(x, w)
        b = toolkit.mm(x, w)
        assert a.grad_fn.next_functions[1][0] is not b.grad_fn.next_functions[1][0]


def test_cpu_without_dtype_raises_unless_disabled():
    with pytest.raises(RuntimeError, match="no bfloat16 dtype.*dtype=toolkit.float16"):
        toolkit.autocast("cpu")
    with toolkit.autocast("cpu", enabled=False):
        assert toolkit.mm(toolkit.ones(2, 2), toolkit.ones(2, 2)).dtype is toolkit.float32
    assert toolkit.get_autocast_dtype("cpu") is None


def test_state_functions_and_nesting_follow_torch():
    assert not toolkit.is_autocast_enabled("cpu") and not toolkit.is_autocast_enabled()
    assert toolkit.get_autocast_dtype("cuda") is F16
    with toolkit.autocast("cpu", dtype=F16):
        assert toolkit.is_autocast_enabled("cpu") and STATE.observers
        with toolkit.autocast("cpu", enabled=False):
            assert not toolkit.is_autocast_enabled("cpu")
            assert toolkit.mm(toolkit.ones(2, 2), toolkit.ones(2, 2)).dtype is toolkit.float32
        assert toolkit.is_autocast_enabled("cpu")
    assert not STATE.observers
    assert toolkit.autocast_increment_nesting() == torch.autocast_increment_nesting() == 1
    assert toolkit.autocast_decrement_nesting() == torch.autocast_decrement_nesting() == 0
    assert toolkit.is_autocast_cache_enabled()
    assert toolkit.is_autocast_available("cpu") and toolkit.amp.is_autocast_available("cuda")
    with pytest.warns(DeprecationWarning, match=r"torch.get_autocast_cpu_dtype\(\) is deprecated"):
        toolkit.get_autocast_cpu_dtype()
    with pytest.warns(DeprecationWarning, match="is_autocast_enabled\\('cpu'\\)"):
        assert toolkit.is_autocast_cpu_enabled() is False


def test_errors_and_unsupported_dtypes_as_torch():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        toolkit.autocast(1)
    with pytest.warns(UserWarning, match="target dtype is not supported. Disabling autocast"):
        a = toolkit.autocast("cpu", dtype=toolkit.float32)
    assert a._enabled is False
    with pytest.raises(TypeError, match="requires a callable"):
        toolkit.autocast("cpu", dtype=F16)(3)


def test_legacy_spellings_warn_as_torch():
    with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.autocast\(args...\)` is deprecated"):
        ctx = toolkit.cpu.amp.autocast(dtype=F16)
    with ctx:
        assert toolkit.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast"):
        toolkit.cuda.amp.autocast(enabled=False)
    import toolkit.cuda.amp as cuda_amp  # the module import works too

    assert cuda_amp.GradScaler is toolkit.cuda.amp.GradScaler


def test_decorator_and_custom_fwd():
    @toolkit.autocast("cpu", dtype=F16)
    def f(a, b):
        return a @ b

    assert f(toolkit.ones(2, 2), toolkit.ones(2, 2)).dtype is F16

    class Mul(toolkit.autograd.Function):
        @staticmethod
        @toolkit.amp.custom_fwd(device_type="cpu", cast_inputs=toolkit.float32)
        def forward(ctx, x):
            ctx.dtype_seen = x.dtype
            return toolkit.mm(x, x)

        @staticmethod
        @toolkit.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g

    x = toolkit.ones(2, 2, dtype=F16)
    with toolkit.autocast("cpu", dtype=F16):
        y = Mul.apply(x)
    assert y.dtype is toolkit.float32


def test_trace_records_the_casts():
    def f(a, b):
        with toolkit.autocast("cpu", dtype=F16):
            return toolkit.mm(a, b)

    g = toolkit.jit.trace(f, (toolkit.randn(2, 2), toolkit.randn(2, 2))).graph
    kinds = [n.kind for n in g.nodes()]
    assert kinds.count("aten::_to_copy") == 2 and "aten::mm" in kinds
    assert "Half" in str(g)


def test_autocast_is_per_thread():
    import threading

    seen = []
    with toolkit.autocast("cpu", dtype=F16):
        t = threading.Thread(target=lambda: seen.append(toolkit.mm(toolkit.ones(2, 2), toolkit.ones(2, 2)).dtype))
        t.start()
        t.join()
    assert seen == [toolkit.float32]
