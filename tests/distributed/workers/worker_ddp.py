"""DistributedDataParallel cases on every rank, results to OUT_DIR/rank{r}.json for tests/distributed/test_ddp.py.

Each rank also builds the single-process reference itself (every rank can regenerate the whole batch), so
the comparison needs no extra communication.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

import toolkit
import toolkit.distributed as dist
from toolkit import nn
from toolkit.demo import seed_net
from toolkit.nn.parallel import DistributedDataParallel as DDP
from toolkit.utils.data import DistributedSampler

F = nn.functional


def maxdiff(a, b) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def training(r: int, n: int, notes: dict) -> None:
    """DDP on per-rank shards equals one process on the combined batch (SGD with momentum, 3 steps)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8 * n, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 8 * n)
    toolkit.manual_seed(100 + r)  # each rank starts differently: DDP must broadcast rank 0's parameters
    net = seed_net()
    net.eval()  # no dropout, so the ranks' forward passes are deterministic
    model = DDP(net)
    toolkit.manual_seed(100)
    ref = seed_net()
    ref.eval()
    notes["init_diff"] = maxdiff(ref.parameters(), net.parameters())
    notes["state_dict_prefix"] = all(k.startswith("module.") for k in model.state_dict())
    notes["n_buckets_default"] = len(model._buckets)
    opt = toolkit.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    ropt = toolkit.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    for _ in range(3):
        xs, ys = toolkit.from_numpy(x[r * 8:(r + 1) * 8]), toolkit.from_numpy(y[r * 8:(r + 1) * 8])
        opt.zero_grad()
        F.nll_loss(model(xs), ys).backward()
        opt.step()
        ropt.zero_grad()
        F.nll_loss(ref(toolkit.from_numpy(x)), toolkit.from_numpy(y)).backward()
        ropt.step()
    notes["train_diff"] = maxdiff(ref.parameters(), net.parameters())


def overlap(r: int, notes: dict) -> None:
    """Small buckets on a deep MLP: the first bucket's all-reduce starts while backward is still running."""
    toolkit.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(256, 256), nn.Tanh()]
    model = DDP(nn.Sequential(*layers), bucket_cap_mb=0.25)
    x = toolkit.randn(64, 256) + r
    model(x).sum().backward()
    ev = model._comm_events
    notes["overlap_buckets"] = len(model._buckets)
    notes["overlap_events"] = [(t - ev[0][0], kind, i) for t, kind, i in ev]


def no_sync(r: int, n: int, notes: dict) -> None:
    """Two micro-batches, the first under no_sync: the result averages the ranks' accumulated sums."""
    def data(k, mb):
        g = np.random.default_rng(10 * k + mb)
        return toolkit.from_numpy(g.standard_normal((4, 5)).astype(np.float32))

    toolkit.manual_seed(1)
    base = nn.Linear(5, 3)
    model = DDP(base)
    with model.no_sync():
        model(data(r, 0)).pow(2).sum().backward()
    local = [p.grad.clone() for p in base.parameters()]
    model(data(r, 1)).pow(2).sum().backward()
    toolkit.manual_seed(1)
    ref = nn.Linear(5, 3)
    for k in range(n):
        ref(data(k, 0)).pow(2).sum().backward()
    ref_local = nn.Linear(5, 3)
    ref_local.load_state_dict(ref.state_dict())
    for k in range(n):
        ref(data(k, 1)).pow(2).sum().backward()
    ref_local(data(r, 0)).pow(2).sum().backward()
    notes["no_sync_local_diff"] = maxdiff(local, [p.grad for p in ref_local.parameters()])
    notes["no_sync_diff"] = maxdiff([p.grad for p in base.parameters()], [p.grad / n for p in ref.parameters()])


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.c = nn.Linear(4, 4)

    def forward(self, x, use_b: bool):
        y = self.a(x)
        return self.b(y) if use_b else y


def unused(r: int, n: int, notes: dict) -> None:
    """find_unused_parameters: b is used on rank 0 only, c nowhere."""
    x = toolkit.ones(2, 4) * (r + 1)
    toolkit.manual_seed(2)
    m = Branches()
    model = DDP(m, find_unused_parameters=True)
    for _ in range(2):  # a second iteration shows the state is reset
        for p in m.parameters():
            p.grad = None
        model(x, r == 0).sum().backward()
    toolkit.manual_seed(2)
    ref = Branches()
    for k in range(n):
        ref(toolkit.ones(2, 4) * (k + 1), k == 0).sum().backward()
    notes["unused_c_grad_is_none"] = m.c.weight.grad is None and m.c.bias.grad is None
    got = [m.a.weight.grad, m.a.bias.grad, m.b.weight.grad, m.b.bias.grad]
    want = [ref.a.weight.grad / n, ref.a.bias.grad / n, ref.b.weight.grad / n, ref.b.bias.grad / n]
    notes["unused_diff"] = maxdiff(got, want)

    toolkit.manual_seed(2)
    strict = DDP(Branches())
    strict(x, True).sum().backward()
    try:
        strict(x, True)
        notes["unfinished_error"] = None
    except RuntimeError as e:
        notes["unfinished_error"] = str(e)


def mismatch(r: int, notes: dict) -> None:
    try:
        DDP(nn.Linear(3, 2 + r))
        notes["mismatch_error"] = None
    except RuntimeError as e:
        notes["mismatch_error"] = str(e)


def main(out_dir: str) -> None:
    dist.init_process_group()
    r, n = dist.get_rank(), dist.get_world_size()
    notes: dict = {"argv": sys.argv[2:]}
    training(r, n, notes)
    overlap(r, notes)
    no_sync(r, n, notes)
    unused(r, n, notes)
    mismatch(r, notes)
    sampler = DistributedSampler(range(23), seed=3)
    sampler.set_epoch(4)
    notes["sampler"] = list(sampler)
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{r}.json"), "w") as f:
        json.dump(notes, f)


if __name__ == "__main__":
    main(sys.argv[1])
