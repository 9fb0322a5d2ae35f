"""The training benchmarks' setups compute the same thing in toolkit, PyTorch and numpy, run tiny and a few
steps each so that every update is checked; no timing."""

from __future__ import annotations

from benchmarks import bench_train
from tests.conftest import assert_close


def _steps(setup, *args, libs=("toolkit", "torch"), steps: int = 3, accum: int = 1):
    runs = [setup(lib, *args) for lib in libs]
    for _ in range(steps):
        mine, *others = [run() for run in runs]
        for other in others:
            assert_close(mine, other, accum=accum)


def test_mlp_adam_step():
    _steps(bench_train.mlp_adam_step, 4, (6, 8, 8, 3), accum=8)


def test_lstm_step():
    _steps(bench_train.lstm_step, 5, 2, 4, accum=5 * 8)


def test_wide_mlp_matches_torch_and_numpy():
    _steps(bench_train.wide_mlp, 8, 16, libs=("toolkit", "torch", "numpy"), steps=1, accum=16 * 8)


def test_adam_over_many_parameters_matches_torch_and_numpy():
    _steps(bench_train.adam_big, 3, 100, libs=("toolkit", "torch", "numpy"))
