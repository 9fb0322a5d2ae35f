"""The profile report sorts time into the layers it names and lists each op the profiler saw (no timing)."""

from __future__ import annotations

import os

import toolkit
from benchmarks import profile_steps


def test_files_fall_into_their_layers():
    assert profile_steps.layer("/x/toolkit/autograd/engine.py") == "engine (backward pass)"
    assert profile_steps.layer("/x/toolkit/autograd/recording.py") == "autograd recording"
    assert profile_steps.layer("/x/toolkit/dispatch/running.py") == "dispatch and Tensor call path"
    assert profile_steps.layer("/x/toolkit/optim/adam.py") == "optimizer loop"
    assert profile_steps.layer("~") == profile_steps.layer("/x/toolkit/ops/linalg.py") == profile_steps.KERNELS
    assert profile_steps.layer("/x/toolkit/_core/blas_threads.py") == profile_steps.KERNELS  # BLAS products
    assert profile_steps.layer("/x/toolkit/_core/shape.py") == "dispatch and Tensor call path"
    assert profile_steps.layer("/x/elsewhere.py") == "other Python"


def _kernel_call_line() -> int:
    path = os.path.join(os.path.dirname(toolkit.__file__), "dispatch", "running.py")
    with open(path) as f:
        return next(i for i, text in enumerate(f, 1) if profile_steps.KERNEL_CALL.search(text))


def test_sampled_stacks_count_a_dispatcher_kernel_call_as_kernel_time(tmp_path):
    loop = "main (benchmarks/profile_steps.py:1);_loop.<locals>.loop (benchmarks/profile_steps.py:2)"
    raw = tmp_path / "raw.txt"
    raw.write_text(f"{loop};run (toolkit/dispatch/running.py:{_kernel_call_line()}) 3\n"
                   f"{loop};_make_node (toolkit/autograd/recording.py:5) 1\n"
                   f"_loop (benchmarks/profile_steps.py:3);{loop};run (toolkit/autograd/engine.py:1) 9\n"
                   "import (toolkit/__init__.py:1) 7\n")
    text = profile_steps.sampled_table(str(raw))
    assert "| op kernels (Python wrappers + numpy/numba/BLAS) | 75.0% |" in text
    assert "| autograd recording | 25.0% |" in text and "engine" not in text


def test_op_table_lists_the_ops_of_a_step():
    text = profile_steps.op_table("add")
    assert "| `aten::add` | 1 |" in text and "outside any op" in text
