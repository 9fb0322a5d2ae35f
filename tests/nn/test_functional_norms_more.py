"""Normalization, activation and recurrent functions beyond the basic ones, against PyTorch: ``torch.*`` norms with
aten's signatures, instance/RMS/local response norm, the ``native_*`` ops, SyncBatchNorm's building blocks, prelu,
gumbel_softmax and the RNN cells and layers; outputs, gradients, running statistics and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F

from ..conftest import assert_close


def _grads_match(out_tk, out_th, ins_tk, ins_th, accum: int = 1):
    outs_tk = out_tk if isinstance(out_tk, (tuple, list)) else (out_tk,)
    outs_th = out_th if isinstance(out_th, (tuple, list)) else (out_th,)
    for a, e in zip(outs_tk, outs_th):
        assert_close(a, e.detach(), accum=accum)
    sum(o.sum() * (k + 1) for k, o in enumerate(outs_tk)).backward()
    sum(o.sum() * (k + 1) for k, o in enumerate(outs_th)).backward()
    for a, e in zip(ins_tk, ins_th):
        assert_close(a.grad, e.grad, accum=accum)


def _leaves(*arrays):
    return ([toolkit.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


# ----------------------------------------------------------------------------- instance / rms / local response
@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 2, 4, 3)])
def test_instance_norm_matches_torch_and_updates_running_stats(rng, shape):
    x, w, b = rng.standard_normal(shape), rng.uniform(0.5, 2, shape[1]), rng.standard_normal(shape[1])
    (xt, wt, bt), (xp, wp, bp) = _leaves(x, w, b)
    rm, rv = toolkit.zeros(shape[1], dtype=toolkit.float64), toolkit.ones(shape[1], dtype=toolkit.float64)
    trm, trv = torch.zeros(shape[1], dtype=torch.float64), torch.ones(shape[1], dtype=torch.float64)
    out = F.instance_norm(xt, rm, rv, wt, bt, momentum=0.3)
    expected = TF.instance_norm(xp, trm, trv, wp, bp, momentum=0.3)
    _grads_match(out, expected, [xt, wt, bt], [xp, wp, bp])
    assert_close(rm, trm)
    assert_close(rv, trv)
    assert_close(F.instance_norm(toolkit.tensor(x), rm, rv, use_input_stats=False),
                 TF.instance_norm(torch.tensor(x), trm, trv, use_input_stats=False))
    assert_close(toolkit.instance_norm(toolkit.tensor(x), None, None, None, None, True, 0.1, 1e-5, False),
                 torch.instance_norm(torch.tensor(x), None, None, None, None, True, 0.1, 1e-5, False))


def test_instance_norm_errors_like_torch():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(toolkit.ones(2, 3, 1))
    with pytest.raises(RuntimeError, match="running_mean and running_var"):
        F.instance_norm(toolkit.ones(2, 3, 4), use_input_stats=False)


def test_instance_norm_gradgradcheck(rng):
    x = toolkit.tensor(rng.standard_normal((2, 2, 4)), requires_grad=True)
    w = toolkit.tensor(rng.uniform(0.5, 2, 2), requires_grad=True)
    assert toolkit.autograd.gradgradcheck(lambda a, b: F.instance_norm(a, weight=b), (x, w))


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm_matches_torch(rng, eps):
    x, w = rng.standard_normal((3, 2, 4)), rng.uniform(0.5, 2, (2, 4))
    (xt, wt), (xp, wp) = _leaves(x, w)
    _grads_match(F.rms_norm(xt, [2, 4], wt, eps), TF.rms_norm(xp, [2, 4], wp, eps), [xt, wt], [xp, wp])
    x32 = rng.standard_normal((3, 5)).astype(np.float32)
    assert_close(toolkit.rms_norm(toolkit.tensor(x32), [5]), torch.rms_norm(torch.tensor(x32), [5]))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.rms_norm(toolkit.tensor(x), [3])


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 3), (1, 4, 2, 2, 2)])
def test_local_response_norm_matches_torch(rng, shape):
    (xt,), (xp,) = _leaves(rng.standard_normal(shape))
    _grads_match(F.local_response_norm(xt, 3, 1e-2, 0.7, 2.0), TF.local_response_norm(xp, 3, 1e-2, 0.7, 2.0),
                 [xt], [xp])
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        F.local_response_norm(toolkit.ones(2, 3), 2)


# ----------------------------------------------------------------------------- torch.* signatures, native_*
def test_torch_norm_functions_take_atens_signatures(rng):
    x, w, b = rng.standard_normal((4, 3, 2)), rng.uniform(0.5, 2, 3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    (xt, wt, bt), (xp, wp, bp) = _leaves(x, w, b)
    out = toolkit.batch_norm(xt, wt, bt, toolkit.tensor(rm), toolkit.tensor(rv), False, 0.1, 1e-5, False)
    expected = torch.batch_norm(xp, wp, bp, torch.tensor(rm), torch.tensor(rv), False, 0.1, 1e-5, False)
    _grads_match(out, expected, [xt, wt, bt], [xp, wp, bp])
    assert_close(toolkit.layer_norm(toolkit.tensor(x), [2]), torch.layer_norm(torch.tensor(x), [2]))
    assert_close(toolkit.layer_norm(toolkit.tensor(x), [3, 2], None, None, 1e-3, True),
                 torch.layer_norm(torch.tensor(x), [3, 2], None, None, 1e-3, True))
    assert_close(toolkit.group_norm(toolkit.tensor(x), 3, toolkit.tensor(w), None, 1e-5, True),
                 torch.group_norm(torch.tensor(x), 3, torch.tensor(w), None, 1e-5, True))
    # the functional forms keep their own argument order
    assert_close(F.batch_norm(toolkit.tensor(x), toolkit.tensor(rm), toolkit.tensor(rv)),
                 TF.batch_norm(torch.tensor(x), torch.tensor(rm), torch.tensor(rv)))


def test_native_norms_return_statistics_and_gradients_like_torch(rng):
    x, w, b = rng.standard_normal((4, 6, 3)), rng.uniform(0.5, 2, 6), rng.standard_normal(6)
    (xt, wt, bt), (xp, wp, bp) = _leaves(x, w, b)
    _grads_match(toolkit.native_layer_norm(xt, [6, 3], None, None, 1e-5),
                 torch.native_layer_norm(xp, [6, 3], None, None, 1e-5), [xt], [xp])
    (xt, wt, bt), (xp, wp, bp) = _leaves(x, w, b)
    _grads_match(toolkit.native_group_norm(xt, wt, bt, 4, 6, 3, 3, 1e-5),
                 torch.native_group_norm(xp, wp, bp, 4, 6, 3, 3, 1e-5), [xt, wt, bt], [xp, wp, bp])
    (xt, wt, bt), (xp, wp, bp) = _leaves(x, w, b)
    rm, rv = toolkit.zeros(6, dtype=toolkit.float64), toolkit.ones(6, dtype=toolkit.float64)
    trm, trv = torch.zeros(6, dtype=torch.float64), torch.ones(6, dtype=torch.float64)
    _grads_match(toolkit.native_batch_norm(xt, wt, bt, rm, rv, True, 0.2, 1e-5),
                 torch.native_batch_norm(xp, wp, bp, trm, trv, True, 0.2, 1e-5), [xt, wt, bt], [xp, wp, bp])
    assert_close(rm, trm)
    assert_close(rv, trv)
    out = toolkit.native_batch_norm(toolkit.tensor(x), None, None, rm, rv, False, 0.2, 1e-5)
    expected = torch.native_batch_norm(torch.tensor(x), None, None, trm, trv, False, 0.2, 1e-5)
    assert_close(out, expected)


def test_native_norm_is_refused_for_dense_tensors_as_in_torch():
    for lib in (toolkit, torch):
        with pytest.raises(NotImplementedError, match="native_norm"):
            lib.native_norm(lib.ones(3))


def test_native_dropout_masks_and_scales(rng):
    x = toolkit.tensor(rng.standard_normal((50, 40)), requires_grad=True)
    out, mask = toolkit.native_dropout(x, 0.25, True)
    assert mask.dtype == toolkit.bool
    assert_close(out, toolkit.where(mask, x / 0.75, toolkit.zeros(())).detach())
    out.sum().backward()
    assert_close(x.grad, mask.to(toolkit.float64) / 0.75)
    kept, all_true = toolkit.native_dropout(x, 0.25, False)
    assert bool(all_true.all()) and kept is not x
    assert_close(kept, x.detach())


# ----------------------------------------------------------------------------- SyncBatchNorm parts
def test_batch_norm_update_stats_matches_torch(rng):
    x = rng.standard_normal((4, 3, 5))
    rm, rv = toolkit.zeros(3, dtype=toolkit.float64), toolkit.ones(3, dtype=toolkit.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    assert_close(toolkit.batch_norm_update_stats(toolkit.tensor(x), rm, rv, 0.1),
                 torch.batch_norm_update_stats(torch.tensor(x), trm, trv, 0.1))
    assert_close(rm, trm)
    assert_close(rv, trv)


def test_sync_batch_norm_parts_refuse_cpu_tensors_as_torch_does():
    x, c = toolkit.ones(4, 3, 2), toolkit.ones(3)
    calls = {
        "batch_norm_stats": (x, 1e-5),
        "batch_norm_elemt": (x, c, c, c, c, 1e-5),
        "batch_norm_gather_stats": (x, c[None], c[None], None, None, 0.1, 1e-5, 8),
        "batch_norm_gather_stats_with_counts": (x, c[None], c[None], None, None, 0.1, 1e-5, toolkit.ones(1)),
        "batch_norm_backward_reduce": (x, x, c, c, c, True, True, True),
        "batch_norm_backward_elemt": (x, x, c, c, c, c, c, toolkit.ones(1, dtype=toolkit.int32)),
    }
    for name, args in calls.items():
        with pytest.raises(NotImplementedError, match=name):
            getattr(toolkit, name)(*args)


# ----------------------------------------------------------------------------- activations
def test_prelu_matches_torch(rng):
    x = rng.standard_normal((2, 3, 4))
    for w in (rng.uniform(0.1, 0.5, 3), rng.uniform(0.1, 0.5, 1)):
        (xt, wt), (xp, wp) = _leaves(x, w)
        _grads_match(F.prelu(xt, wt), TF.prelu(xp, wp), [xt, wt], [xp, wp])
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        toolkit.prelu(toolkit.ones(2, 3), toolkit.ones(4))


def test_torch_activation_names_match_torch(rng):
    x = rng.standard_normal((3, 4))
    for name, args in (("selu", ()), ("celu", (0.7,)), ("hardshrink", (0.3,)), ("threshold", (0.1, -2.0))):
        assert_close(getattr(toolkit, name)(toolkit.tensor(x), *args), getattr(torch, name)(torch.tensor(x), *args))
    for name, args in (("selu_", ()), ("celu_", (0.7,)), ("threshold_", (0.1, -2.0)), ("relu_", ())):
        a, e = toolkit.tensor(x), torch.tensor(x)
        assert getattr(toolkit, name)(a, *args) is a
        getattr(torch, name)(e, *args)
        assert_close(a, e)
    assert_close(F.hardshrink(toolkit.tensor(x), 0.2), TF.hardshrink(torch.tensor(x), 0.2))
    assert F.logsigmoid is not None and not hasattr(TF, "log_sigmoid")


def test_bilinear_is_a_torch_function(rng):
    a, b, w, bias = (rng.standard_normal(s) for s in ((3, 2), (3, 4), (5, 2, 4), (5,)))
    assert_close(toolkit.bilinear(*map(toolkit.tensor, (a, b, w, bias))), torch.bilinear(*map(torch.tensor,
                                                                                               (a, b, w, bias))))
    assert_close(F.bilinear(*map(toolkit.tensor, (a, b, w))), TF.bilinear(*map(torch.tensor, (a, b, w))))


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_samples_and_straight_through_gradient(rng, hard):
    logits = toolkit.tensor(rng.standard_normal((64, 5)), requires_grad=True)
    toolkit.manual_seed(3)
    y = F.gumbel_softmax(logits, tau=0.5, hard=hard, dim=1)
    assert_close(y.sum(1), toolkit.ones(64, dtype=toolkit.float64))
    if hard:
        assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    (y * toolkit.arange(5.0, dtype=toolkit.float64)).sum().backward()
    assert logits.grad is not None and np.isfinite(logits.grad.numpy()).all()


# ----------------------------------------------------------------------------- recurrent cells and layers
@pytest.mark.parametrize("name,gates", [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3)])
def test_rnn_cells_match_torch_with_gradients(rng, name, gates):
    x, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 5))
    ws = [rng.uniform(-0.5, 0.5, s) for s in ((gates * 5, 4), (gates * 5, 5), (gates * 5,), (gates * 5,))]
    tk, th = _leaves(x, h, *ws)
    _grads_match(getattr(toolkit, name)(*tk), getattr(torch, name)(*th), tk, th)


def test_lstm_cell_matches_torch_with_gradients(rng):
    x, h, c = rng.standard_normal((3, 4)), rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    ws = [rng.uniform(-0.5, 0.5, s) for s in ((20, 4), (20, 5), (20,), (20,))]
    (xt, ht, ct, *wt), (xp, hp, cp, *wp) = _leaves(x, h, c, *ws)
    _grads_match(toolkit.lstm_cell(xt, [ht, ct], *wt), torch.lstm_cell(xp, [hp, cp], *wp), [xt, ht, ct, *wt],
                 [xp, hp, cp, *wp])
    with pytest.raises(RuntimeError, match="input has inconsistent input_size"):
        toolkit.rnn_tanh_cell(toolkit.ones(3, 2), toolkit.ones(3, 5), toolkit.ones(5, 4), toolkit.ones(5, 5))


def _rnn_params(rng, gates, layers, dirs, biases, i=3, h=4, proj=0):
    ps = []
    out = proj or h
    for layer in range(layers):
        width = i if layer == 0 else out * dirs
        for _ in range(dirs):
            ps += [rng.uniform(-0.5, 0.5, (gates * h, width)), rng.uniform(-0.5, 0.5, (gates * h, out))]
            if biases:
                ps += [rng.uniform(-0.5, 0.5, gates * h), rng.uniform(-0.5, 0.5, gates * h)]
            if proj:
                ps.append(rng.uniform(-0.5, 0.5, (proj, h)))
    return ps


@pytest.mark.parametrize("name,gates", [("rnn_tanh", 1), ("rnn_relu", 1), ("gru", 3), ("lstm", 4)])
@pytest.mark.parametrize("layers,bidirectional,batch_first,biases", [(1, False, False, True), (2, True, True, True),
                                                                     (2, False, False, False)])
def test_rnn_sequences_match_torch_with_gradients(rng, name, gates, layers, bidirectional, batch_first, biases):
    dirs = 2 if bidirectional else 1
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    params = _rnn_params(rng, gates, layers, dirs, biases)
    hs = [rng.standard_normal((layers * dirs, 2, 4)) for _ in range(2 if name == "lstm" else 1)]
    tk, th = _leaves(x, *hs, *params)
    n = len(hs)
    hx_tk = tk[1:1 + n] if name == "lstm" else tk[1]
    hx_th = th[1:1 + n] if name == "lstm" else th[1]
    args = (biases, layers, 0.0, True, bidirectional, batch_first)
    out = getattr(toolkit, name)(tk[0], hx_tk, tk[1 + n:], *args)
    expected = getattr(torch, name)(th[0], hx_th, th[1 + n:], *args)
    _grads_match(out, expected, tk, th, accum=8)


def test_lstm_with_projections_matches_torch(rng):
    x = rng.standard_normal((5, 2, 3))
    params = _rnn_params(rng, 4, 2, 1, True, proj=2)
    h0, c0 = rng.standard_normal((2, 2, 2)), rng.standard_normal((2, 2, 4))
    tk, th = _leaves(x, h0, c0, *params)
    out = toolkit.lstm(tk[0], tk[1:3], tk[3:], True, 2, 0.0, False, False, False)
    expected = torch.lstm(th[0], th[1:3], th[3:], True, 2, 0.0, False, False, False)
    _grads_match(out, expected, tk, th, accum=8)


def test_recurrent_cells_have_second_derivatives(rng):
    x = toolkit.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    h = toolkit.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    w_ih = toolkit.tensor(rng.uniform(-0.5, 0.5, (12, 3)), requires_grad=True)
    w_hh = toolkit.tensor(rng.uniform(-0.5, 0.5, (12, 4)))
    assert toolkit.autograd.gradgradcheck(lambda a, b, w: toolkit.gru_cell(a, b, w, w_hh), (x, h, w_ih))
    c = toolkit.tensor(rng.standard_normal((2, 1)))
    w4 = toolkit.tensor(rng.uniform(-0.5, 0.5, (4, 3)), requires_grad=True)
    w4h = toolkit.tensor(rng.uniform(-0.5, 0.5, (4, 1)))
    assert toolkit.autograd.gradgradcheck(lambda a, w: toolkit.lstm_cell(a, [c, c], w, w4h)[1], (x, w4))
