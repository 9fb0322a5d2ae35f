"""Distributed autograd and DistributedOptimizer on real worker processes: gradients cross RPCs back to the
workers values came from, sum in each worker's context (never in ``.grad``), and the seed's model-parallel DMP
trains to the same parameters as the same networks trained in one process. The profiler records RPCs."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit.distributed.rpc as rpc

from ._jobs import run_job

pytestmark = pytest.mark.skipif(not rpc.is_available(), reason="pyzmq is not installed (pip install 'pyzmq>=25')")


@pytest.mark.timeout(150)
def test_gradients_cross_rpcs_and_contexts_are_released(tmp_path):
    out = run_job("dist_autograd_chain", 3, tmp_path)[0]
    np.testing.assert_allclose(out["x_grad"], out["x_grad_expected"], rtol=1e-6)
    np.testing.assert_allclose(out["w_grad"], out["w_grad_expected"], rtol=1e-6)
    assert out["x_dot_grad_unset"] and out["w_dot_grad_unset"]
    assert out["reached"] == [True, True] and out["released"] == [False, False, False]
    assert out["received_grad_fn"] == "RecvRpcBackward" and out["outside_grad_fn"] is None
    assert out["unknown"].startswith("RuntimeError: Could not find autograd context with id: ")
    assert out["not_requiring"] == ("RuntimeError: element 0 of tensors does not require grad and does not have a "
                                    "grad_fn")


@pytest.mark.timeout(150)
def test_model_parallel_training_matches_one_process(tmp_path):
    out = run_job("dist_autograd_dmp", 3, tmp_path)[0]
    np.testing.assert_allclose(out["losses"], out["local_losses"], rtol=1e-5)
    assert out["losses"][-1] < out["losses"][0]
    for remote, local in zip(out["remote_state"], out["local_state"]):
        assert remote.keys() == local.keys()
        for k in remote:
            np.testing.assert_allclose(remote[k], local[k], rtol=1e-5, atol=1e-6)


@pytest.mark.timeout(150)
def test_profiler_records_rpcs(tmp_path):
    out = run_job("profiled", 3, tmp_path)[0]
    module = "tests.distributed.rpc._dist_autograd_jobs"
    assert out["names"] == sorted(["rpc_sync#aten::add(worker0 -> worker1)",
                                   f"rpc_async#{module}.times_two(worker0 -> worker2)",
                                   f"rpc_remote#{module}.square(worker0 -> worker1)"])
    assert out["positive"]
