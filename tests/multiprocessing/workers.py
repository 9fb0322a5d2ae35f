"""Functions the tests' child processes run (importable by name, as ``spawn`` and ``forkserver`` need)."""

from __future__ import annotations

import os

import toolkit
import toolkit.nn.functional as F


def add_one(t: toolkit.Tensor) -> None:
    t.add_(1)


def scale_from_queue(inbox, outbox) -> None:
    """Takes a tensor, scales it in place, and sends back a view of it and a tensor of its own."""
    x = inbox.get()
    x.mul_(10)
    mine = toolkit.full((2,), 5.0)
    outbox.put((x[1:], mine, x.is_shared()))
    outbox.put(inbox.get())  # wait for the parent's go before exiting (file descriptors travel on request)


def report_parameter(inbox, outbox) -> None:
    p = inbox.get()
    outbox.put((type(p).__name__, p.requires_grad, p.is_shared()))


def synthetic_data(seed: int = 0, n: int = 256) -> tuple[toolkit.Tensor, toolkit.Tensor]:
    """A linearly separable two-class problem in 8 dimensions."""
    g = toolkit.Generator().manual_seed(seed)
    x = toolkit.randn(n, 8, generator=g)
    w = toolkit.randn(8, generator=g)
    return x, (x @ w > 0).long()


class Net(toolkit.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = toolkit.nn.Linear(8, 16)
        self.fc2 = toolkit.nn.Linear(16, 2)

    def forward(self, x: toolkit.Tensor) -> toolkit.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def hogwild_train(rank: int, model: Net, steps: int) -> None:
    """One hogwild worker, as pytorch/examples' mnist_hogwild: its own optimizer over the shared parameters."""
    toolkit.manual_seed(rank)
    x, y = synthetic_data()
    optimizer = toolkit.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    for _ in range(steps):
        batch = toolkit.randint(0, x.shape[0], (32,))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[batch]), y[batch])
        loss.backward()
        optimizer.step()


def fail_on_rank_one(rank: int, message: str) -> None:
    if rank == 1:
        raise ValueError(message)


def exit_with(rank: int, code: int) -> None:
    os._exit(code)


def write_rank(rank: int, out: toolkit.Tensor) -> None:
    out[rank] = rank + 1
