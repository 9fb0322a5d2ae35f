"""The nn benchmarks' setups compute the same thing in toolkit and PyTorch (each run once or twice; no timing)."""

from __future__ import annotations

import pytest

from benchmarks import bench_nn
from tests.conftest import assert_close


@pytest.mark.parametrize("train", [True, False])
def test_seed_net_step(train):
    mine, theirs = bench_nn.net_step("toolkit", train), bench_nn.net_step("torch", train)
    for _ in range(2):  # the second training step runs on the first one's SGD update
        assert_close(mine(), theirs(), accum=320)


def test_conv_input_gradient():
    assert_close(bench_nn.conv_fwd_bwd("toolkit")(), bench_nn.conv_fwd_bwd("torch")(), accum=64 * 9)


def test_max_pool_input_gradient():
    shape = (2, 3, 8, 8)
    assert_close(bench_nn.pool_fwd_bwd("toolkit", shape)(), bench_nn.pool_fwd_bwd("torch", shape)())
