"""The compiled one-pass CPU updates of SGD and Adam/AdamW (``_fused_kernels`` through ``_fused_steps``): bit for
bit the tensor-op form's numbers, PyTorch's numbers under every ``foreach``/``fused`` flag, and the tensor-op form
where they do not apply (views, float16, grad mode)."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
import torch

import toolkit
from toolkit.optim import _fused_kernels as K
from toolkit.optim._fused_steps import adam_stepper, sgd_stepper
from toolkit.optim.adam import adam
from toolkit.optim.sgd import sgd

from ..conftest import assert_close

RNG = np.random.default_rng(0)
STEPS = 6
P0 = RNG.standard_normal((5, 7))
GRADS = [RNG.standard_normal((5, 7)) for _ in range(STEPS)]

ADAM_OPTIONS = [dict(amsgrad=a, weight_decay=wd, decoupled_weight_decay=d, maximize=m, beta1=b1)
                for a, wd, d, m, b1 in itertools.product([False, True], [0, 0.1], [False, True], [False, True],
                                                         [0.9, 0.3])
                if wd or not d]
SGD_OPTIONS = [dict(momentum=mo, dampening=da, nesterov=n, weight_decay=wd, maximize=m)
               for mo, da, n, wd, m in itertools.product([0, 0.9], [0, 0.3], [False, True], [0, 0.1], [False, True])
               if not (n and (mo == 0 or da))]


def _adam_run(dtype, options, compiled):
    """``STEPS`` functional Adam steps: compiled under no_grad; tensor ops under grad mode (nothing recorded:
    no tensor requires grad, but the compiled update only runs with grad mode off)."""
    options = dict(options)
    beta1 = options.pop("beta1")
    p = toolkit.tensor(P0, dtype=dtype)
    state = [toolkit.zeros_like(p) for _ in range(3)]
    step = toolkit.tensor(0.0)
    for g in GRADS:
        with toolkit.no_grad() if compiled else toolkit.enable_grad():
            adam([p], [toolkit.tensor(g, dtype=dtype)], [state[0]], [state[1]], [state[2]], [step], beta1=beta1,
                 beta2=0.99, lr=0.01, eps=1e-8, **options)
    return [t.numpy().copy() for t in (p, *state)] + [step.item()]


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64])
@pytest.mark.parametrize("options", ADAM_OPTIONS, ids=str)
def test_adam_compiled_equals_tensor_ops_bit_for_bit(dtype, options):
    for a, b in zip(_adam_run(dtype, options, True), _adam_run(dtype, options, False), strict=True):
        np.testing.assert_array_equal(a, b)


def _sgd_run(dtype, options, compiled):
    p = toolkit.tensor(P0, dtype=dtype)
    bufs = [None]
    for g in GRADS:
        with toolkit.no_grad() if compiled else toolkit.enable_grad():
            sgd([p], [toolkit.tensor(g, dtype=dtype)], bufs, lr=0.05, **options)
    return [p.numpy().copy()] + ([bufs[0].numpy().copy()] if options["momentum"] else [bufs[0]])


@pytest.mark.parametrize("dtype", [toolkit.float32, toolkit.float64])
@pytest.mark.parametrize("options", SGD_OPTIONS, ids=str)
def test_sgd_compiled_equals_tensor_ops_bit_for_bit(dtype, options):
    for a, b in zip(_sgd_run(dtype, options, True), _sgd_run(dtype, options, False), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_compiled_update_takes_plain_cpu_tensors_only():
    with toolkit.no_grad():
        step = adam_stepper(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0, eps=1e-8, maximize=False,
                            decoupled=False)
        counter = toolkit.tensor(0.0)

        def takes(p, g):
            return step(p, g, toolkit.zeros_like(p), toolkit.zeros_like(p), None, counter)

        assert takes(toolkit.ones(3, 4), toolkit.ones(3, 4))
        assert takes(toolkit.ones(6, 4)[1:4], toolkit.ones(3, 4))  # a contiguous view: written through
        assert not takes(toolkit.ones(4, 3).t(), toolkit.ones(3, 4))  # strided: the tensor ops
        assert not takes(toolkit.ones(3, dtype=toolkit.float16), toolkit.ones(3, dtype=toolkit.float16))
        assert not takes(toolkit.ones(3, dtype=toolkit.float64), toolkit.ones(3))  # mixed dtypes
        p = toolkit.ones(3)
        assert not takes(p, p)  # gradient sharing the parameter's memory
        assert counter.item() == 2  # counted only where the compiled update ran
    with toolkit.enable_grad():  # a step that may record autograd history keeps the tensor ops
        assert adam_stepper(amsgrad=False, beta1=0.9, beta2=0.99, lr=0.1, weight_decay=0, eps=1e-8,
                            maximize=False, decoupled=False) is None
        assert sgd_stepper(weight_decay=0, momentum=0, lr=0.1, dampening=0, nesterov=False, maximize=False) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parallel_kernels_equal_serial_ones(dtype):
    n = 2 * K.CHUNK + 77
    arrays = [RNG.standard_normal(n).astype(dtype) for _ in range(4)]
    arrays[3] = np.abs(arrays[3])
    scalars = [dtype(x) for x in (0.1, 0.99, 0.1, -0.9)] + [True] + [dtype(x) for x in (0.99, 0.01, 0.3, 1e-8, -0.01)]
    serial, parallel = ([a.copy() for a in arrays] + [arrays[3] * 2] for _ in range(2))
    K.adam_update(*serial, True, False, True, False, *scalars)
    K.adam_parallel(*parallel, True, False, True, False, *scalars)
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)
    serial, parallel = ([a.copy() for a in arrays[:3]] for _ in range(2))
    sgd_scalars = [dtype(x) for x in (0.1, 0.9, 0.7, -0.05)]
    K.sgd_update(*serial, True, True, True, False, True, *sgd_scalars)
    K.sgd_parallel(*parallel, True, True, True, False, True, *sgd_scalars)
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)


def _params(lib, dtype, strided):
    """A plain parameter, a contiguous view of a larger buffer and (with ``strided``) a transposed one.

    PyTorch's fused CPU kernels pair a transposed parameter's elements with its contiguous gradient's in memory
    order (a PyTorch bug), so the fused cases leave that parameter out.
    """
    dt = getattr(lib, dtype)
    base = lib.tensor(RNG_PARAMS[0], dtype=dt)
    params = [lib.tensor(P0, dtype=dt).requires_grad_(), base[2:5].requires_grad_()]
    return params + [lib.tensor(RNG_PARAMS[1], dtype=dt).t().requires_grad_()] if strided else params


RNG_PARAMS = [RNG.standard_normal((8, 4)), RNG.standard_normal((3, 5))]
FLAG_CASES = [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
              ("SGD", dict(lr=0.05, momentum=0.9, foreach=True)), ("SGD", dict(lr=0.05, momentum=0.9, fused=True)),
              ("SGD", dict(lr=0.05, maximize=True, fused=True)),
              ("Adam", dict(lr=0.05)), ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1, foreach=True)),
              ("Adam", dict(lr=0.05, maximize=True, fused=True)), ("Adam", dict(lr=0.05, foreach=False)),
              ("AdamW", dict(lr=0.05, amsgrad=True, fused=True)), ("AdamW", dict(lr=0.05, foreach=True))]


def _trajectory(lib, name, kwargs, dtype, strided, steps=20):
    params = _params(lib, dtype, strided)
    opt = getattr(lib.optim, name)(params, **kwargs)
    out = []
    for k in range(steps):
        for i, p in enumerate(params):
            g = np.sin(np.arange(p.numel()) * (i + 1) + k).reshape(tuple(p.shape))
            p.grad = lib.tensor(g, dtype=p.dtype)
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out, opt


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(("name", "kwargs"), FLAG_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FLAG_CASES)])
def test_every_flag_follows_torch(name, kwargs, dtype):
    strided = not kwargs.get("fused")
    ours, opt = _trajectory(toolkit, name, kwargs, dtype, strided)
    # float16 takes the tensor ops, PyTorch's single-tensor form: its fused CPU kernels differ from that form
    # in float16 (by 0.1 after one SGD step here), so the oracle is the single-tensor form
    plain = {k: v for k, v in kwargs.items() if k not in ("foreach", "fused")} if dtype == "float16" else kwargs
    ref, topt = _trajectory(torch, name, plain, dtype, strided)
    for step, (a, b) in enumerate(zip(ours, ref, strict=True)):
        for x, y in zip(a, b, strict=True):
            if dtype == "float16":  # each op rounds to float16 here and computes in float32 in PyTorch
                assert_close(x, y, rtol=1e-2, atol=1e-2, msg=f"step {step}")
            else:  # after k steps a parameter has summed k updates
                assert_close(x, y, accum=step + 1, msg=f"step {step}")
    sd, tsd = opt.state_dict(), topt.state_dict()
    flags = ("foreach", "fused") if dtype == "float16" else ()  # the float16 oracle ran without them
    assert ([{k: v for k, v in g.items() if k not in flags} for g in sd["param_groups"]]
            == [{k: v for k, v in g.items() if k not in flags} for g in tsd["param_groups"]])
    for i, state in sd["state"].items():
        assert sorted(state) == sorted(tsd["state"][i])
        for key, value in state.items():
            assert str(value.dtype).split(".")[1] == str(tsd["state"][i][key].dtype).split(".")[1], key
            assert tuple(value.shape) == tuple(tsd["state"][i][key].shape), key


def test_fused_step_counters_are_float32_as_in_torch():
    for lib in (toolkit, torch):
        lib.set_default_dtype(lib.float64)
    try:
        counters = []
        for lib in (toolkit, torch):
            p = lib.zeros(3, requires_grad=True)
            p.grad = lib.ones(3)
            opt = lib.optim.Adam([p], fused=True)
            opt.step()
            plain = lib.optim.Adam([p])
            plain.step()
            counters.append((str(opt.state[p]["step"].dtype).split(".")[1],
                             str(plain.state[p]["step"].dtype).split(".")[1]))
        assert counters[0] == counters[1] == ("float32", "float64")
    finally:
        for lib in (toolkit, torch):
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_zero_denominators_and_nan_gradients_follow_torch(amsgrad):
    results = []
    for lib in (toolkit, torch):
        p = lib.zeros(4, requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1, eps=0.0, amsgrad=amsgrad)
        for g in ([0.0, 1.0, float("nan"), float("inf")], [1.0, 0.0, 1.0, -1.0]):
            p.grad = lib.tensor(g)
            opt.step()
        results.append([p.detach().numpy().copy()] + [v.numpy().copy() for k, v in opt.state[p].items()
                                                       if k != "step"])
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


def test_steps_bump_versions_and_write_in_place():
    p = toolkit.ones(3, requires_grad=True)
    p.grad = toolkit.ones(3)
    data = p.detach().numpy()
    for opt in (toolkit.optim.SGD([p], lr=0.1, momentum=0.9), toolkit.optim.Adam([p], amsgrad=True)):
        before = p._version
        opt.step()
        opt.step()
        assert p._version > before and np.shares_memory(p.detach().numpy(), data)
        for value in opt.state[p].values():
            assert value._version >= 1
    buf = toolkit.optim.SGD([p], lr=0.1, momentum=0.9)
    buf.step()
    momentum = buf.state[p]["momentum_buffer"]
    assert not np.shares_memory(momentum.numpy(), p.grad.numpy())
    np.testing.assert_array_equal(momentum.numpy(), p.grad.numpy())


def test_functional_flag_errors_match_torch():
    for lib in (toolkit, torch):
        p, g, s = lib.zeros(2), lib.ones(2), lib.tensor(0.0)
        args = ([p], [g], [lib.zeros(2)], [lib.zeros(2)], [], [s])
        kw = dict(amsgrad=False, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, maximize=False)
        with pytest.raises(RuntimeError, match="lr as a Tensor is not supported for capturable=False and foreach"):
            importlib.import_module(f"{lib.__name__}.optim.adam").adam(*args, foreach=True, lr=lib.tensor(0.1), **kw)
        with pytest.raises(RuntimeError, match="Adam with fused=True does not support differentiable=True"):
            importlib.import_module(f"{lib.__name__}.optim.adam").adam(*args, fused=True, differentiable=True, lr=0.1, **kw)
