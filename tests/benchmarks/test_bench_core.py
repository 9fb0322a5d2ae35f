"""The core benchmarks' setups compute the same thing in toolkit, PyTorch and numpy (each run once; no timing)."""

from __future__ import annotations

import pytest

from benchmarks import bench_core
from tests.conftest import assert_close


def test_add_one_element():
    assert_close(bench_core.add_one("toolkit")(), bench_core.add_one("torch")())
    assert_close(bench_core.add_one("toolkit")(), bench_core.add_one("numpy")())


@pytest.mark.parametrize(("op", "accum"), [("log_softmax", 1000), ("sum", 10_000_000), ("add", 1),
                                           ("matmul", 1024)])
def test_big_op_matches_torch_and_numpy(op, accum):
    mine = bench_core.big_op("toolkit", op)()
    assert_close(mine, bench_core.big_op("torch", op)(), accum=accum)
    assert_close(mine, bench_core.big_op("numpy", op)(), accum=accum)


def test_two_layer_loops_end_with_the_same_weights():
    manual = bench_core.tensor_manual("toolkit")()
    # 500 steps of float32 updates, each summing 1000 products: the rounding differences add up
    assert_close(manual, bench_core.tensor_manual("torch")(), accum=500 * 1000)
    assert_close(manual, bench_core.numpy_manual("float32")(), accum=500 * 1000)
    assert_close(bench_core.tensor_autograd("toolkit")(), bench_core.tensor_autograd("torch")(), accum=500 * 1000)
