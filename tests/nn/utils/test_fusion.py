"""nn.utils.fusion against torch: conv / linear followed by an eval-mode batch norm, folded into one layer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

from .helpers import inputs, raises_like, twins


def _bn_stats(rng, tbn, kbn):
    n = tbn.num_features
    stats = {"running_mean": rng.standard_normal(n), "running_var": rng.random(n) + 0.5,
             "weight": rng.standard_normal(n), "bias": rng.standard_normal(n)}
    for name, value in stats.items():
        with torch.no_grad():
            getattr(tbn, name).copy_(torch.tensor(value.astype(np.float32)))
        with toolkit.no_grad():
            getattr(kbn, name).copy_(toolkit.tensor(value.astype(np.float32)))


@pytest.mark.parametrize("conv,bn,shape,transpose", [
    ("Conv2d(3, 4, 3)", "BatchNorm2d(4)", (2, 3, 6, 6), False),
    ("Conv1d(3, 4, 3, bias=False)", "BatchNorm1d(4)", (2, 3, 7), False),
    ("ConvTranspose2d(3, 4, 3)", "BatchNorm2d(4)", (2, 3, 4, 4), True),
])
def test_fuse_conv_bn_eval_matches_torch(rng, conv, bn, shape, transpose):
    tc, kc = twins(lambda: eval(f"torch.nn.{conv}").eval(), lambda: eval(f"nn.{conv}").eval())
    tb, kb = eval(f"torch.nn.{bn}").eval(), eval(f"nn.{bn}").eval()
    _bn_stats(rng, tb, kb)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    kf = nn.utils.fuse_conv_bn_eval(kc, kb, transpose=transpose)
    assert kf is not kc and isinstance(kf.weight, nn.Parameter) and isinstance(kf.bias, nn.Parameter)
    assert_close(kf.weight, tf.weight)
    assert_close(kf.bias, tf.bias)
    tx, kx = inputs(rng, shape)
    assert_close(kf(kx), tf(tx), accum=36)
    assert_close(kf(kx), kb(kc(kx)), accum=36)


def test_fuse_linear_bn_eval_matches_torch(rng):
    tl, kl = twins(lambda: torch.nn.Linear(5, 4).eval(), lambda: nn.Linear(5, 4).eval())
    tb, kb = torch.nn.BatchNorm1d(4).eval(), nn.BatchNorm1d(4).eval()
    _bn_stats(rng, tb, kb)
    tf, kf = torch.nn.utils.fuse_linear_bn_eval(tl, tb), nn.utils.fuse_linear_bn_eval(kl, kb)
    tx, kx = inputs(rng, (3, 5))
    assert_close(kf(kx), tf(tx), accum=5)
    w, b = nn.utils.fuse_linear_bn_weights(kl.weight, None, kb.running_mean, kb.running_var, kb.eps, kb.weight,
                                           kb.bias)
    tw, tbias = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tb.running_mean, tb.running_var, tb.eps,
                                                      tb.weight, tb.bias)
    assert_close(w, tw)
    assert_close(b, tbias)
    assert b.requires_grad == tbias.requires_grad


def test_fusion_errors_match_torch():
    raises_like(lambda: nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)),
                lambda: torch.nn.utils.fuse_conv_bn_eval(torch.nn.Conv2d(1, 2, 1), torch.nn.BatchNorm2d(2)))
    raises_like(lambda: nn.utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval()),
                lambda: torch.nn.utils.fuse_linear_bn_eval(torch.nn.Linear(2, 3).eval(), torch.nn.BatchNorm1d(2).eval()))
