"""toolkit.nn.utils against torch.nn.utils: gradient clipping and parameter/vector conversion."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close, to_torch
from toolkit import nn


def _params(scale: float = 1.0):
    toolkit.manual_seed(0)
    ps = [nn.Parameter(toolkit.randn(4, 3)), nn.Parameter(toolkit.randn(5)), nn.Parameter(toolkit.randn(2, 2))]
    tps = [torch.nn.Parameter(to_torch(p)) for p in ps]
    for p, tp in zip(ps[:2], tps[:2]):  # the last one has no grad
        p.grad = toolkit.randn(*p.shape) * scale
        tp.grad = to_torch(p.grad)
    return ps, tps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    ps, tps = _params()
    total = nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type=norm_type)
    n = 4 * 3 + 5  # the total norm sums over both grads; clipping scales them by a factor computed from it
    assert_close(total, ttotal, accum=n)
    for p, tp in zip(ps, tps):
        assert (p.grad is None) == (tp.grad is None)
        if p.grad is not None:
            assert_close(p.grad, tp.grad, accum=n)


def test_clip_grad_norm_single_tensor_foreach_and_empty():
    ps, tps = _params()
    assert_close(nn.utils.clip_grad_norm_(ps[0], 0.1, foreach=True), torch.nn.utils.clip_grad_norm_(tps[0], 0.1))
    assert_close(ps[0].grad, tps[0].grad, accum=4 * 3)
    assert nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient clipping will occur."):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)
    assert_close(nn.utils.get_total_norm([p.grad for p in ps[:2]]),
                 torch.nn.utils.get_total_norm([p.grad for p in tps[:2]]))


def test_clip_grad_norm_nonfinite():
    ps, tps = _params()
    ps[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    tps[0].grad[0, 0] = float("inf")
    assert_close(nn.utils.clip_grad_norm_(ps, 1.0), torch.nn.utils.clip_grad_norm_(tps, 1.0))
    assert_close(ps[0].grad, tps[0].grad)


def test_clip_grad_value_matches_torch():
    ps, tps = _params(scale=3.0)
    assert nn.utils.clip_grad_value_(ps, 0.7) is None
    torch.nn.utils.clip_grad_value_(tps, 0.7)
    for p, tp in zip(ps[:2], tps[:2]):
        assert_close(p.grad, tp.grad)
    assert float(ps[0].grad.abs().max()) <= 0.7


def test_parameters_vector_roundtrip():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    tm.load_state_dict({k: to_torch(v) for k, v in m.state_dict().items()})
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert_close(vec, torch.nn.utils.parameters_to_vector(tm.parameters()))
    assert vec.requires_grad and vec.shape == (11,)
    new = toolkit.arange(11.0)
    nn.utils.vector_to_parameters(new, m.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(11.0), tm.parameters())
    for p, tp in zip(m.parameters(), tm.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
        assert isinstance(p, nn.Parameter)
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], m.parameters())
