"""DistributedDataParallel on a real 2-process MPI job started by ``python -m toolkit.distributed.run``."""

from __future__ import annotations

import json
import os

import pytest
import torch

from ._launch import needs_mpi, shared_job

pytestmark = needs_mpi


@pytest.fixture(scope="module")
def ddp(tmp_path_factory):
    out = shared_job(tmp_path_factory, "ddp", 2, "worker_ddp.py", "--epochs", "3", launcher=True)
    ranks = []
    for r in range(2):
        with open(os.path.join(out, f"rank{r}.json")) as f:
            ranks.append(json.load(f))
    return ranks


def test_initial_parameters_come_from_rank_0(ddp):
    for r, notes in enumerate(ddp):
        assert notes["argv"] == ["--epochs", "3"], r
        assert notes["init_diff"] == 0.0
        assert notes["state_dict_prefix"]


def test_training_equals_single_process_on_the_combined_batch(ddp):
    for notes in ddp:
        assert notes["n_buckets_default"] == 1  # the seed's Net fits the 1 MiB first bucket
        assert notes["train_diff"] < 1e-5


def test_first_bucket_all_reduce_starts_before_backward_ends(ddp):
    for notes in ddp:
        ev = notes["overlap_events"]
        assert notes["overlap_buckets"] == 6
        launches = [(t, i) for t, kind, i in ev if kind == "launch"]
        grads = [t for t, kind, _ in ev if kind == "grad"]
        end = next(t for t, kind, _ in ev if kind == "backward_end")
        assert [i for _, i in launches] == list(range(6))  # launched in bucket order
        assert launches[0][0] < grads[-1] < end  # bucket 0 was in flight while later gradients were computed
        assert sum(t < grads[-1] for t, _ in launches) >= 5


def test_no_sync_accumulates_locally_then_averages(ddp):
    for notes in ddp:
        assert notes["no_sync_local_diff"] < 1e-6
        assert notes["no_sync_diff"] < 1e-5


def test_find_unused_parameters(ddp):
    for notes in ddp:
        assert notes["unused_c_grad_is_none"]
        assert notes["unused_diff"] < 1e-6


def test_unused_parameters_without_detection_error_on_next_forward(ddp):
    for r, notes in enumerate(ddp):
        msg = notes["unfinished_error"]
        assert msg.startswith("Expected to have finished reduction in the prior iteration before starting a new one")
        assert "find_unused_parameters=True" in msg and f"rank {r}: c.weight, c.bias" in msg


def test_model_mismatch_across_ranks(ddp):
    for notes in ddp:
        assert notes["mismatch_error"] == ("DDP expects same model across all ranks, but Rank 0 has parameter 0 "
                                           "(weight) of shape [2, 3] and toolkit.float32, while rank 1 has [3, 3] "
                                           "and toolkit.float32.")


def test_distributed_sampler_from_the_group_matches_torch(ddp):
    for r, notes in enumerate(ddp):
        s = torch.utils.data.DistributedSampler(range(23), num_replicas=2, rank=r, seed=3)
        s.set_epoch(4)
        assert notes["sampler"] == list(s)
