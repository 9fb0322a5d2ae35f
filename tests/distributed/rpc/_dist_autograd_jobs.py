"""Distributed autograd scenarios, driven by rank 0 (``_worker``), and the functions and modules they run remotely.

``dmp`` is the seed slides' model-parallel example: two sub-networks owned by worker1 and worker2, trained
from worker0 with ``dist_autograd`` and ``DistributedOptimizer``; rank 0 also trains the same two networks in
one process, so the test can compare the parameters after five steps.
"""

from __future__ import annotations

import numpy as np

import toolkit
import toolkit.distributed.autograd as dist_autograd
import toolkit.distributed.rpc as rpc
from toolkit import nn
from toolkit.distributed.autograd import contexts
from toolkit.distributed.optim import DistributedOptimizer

_HELD: dict = {}


def times_two(x):
    return x * 2


def square(x):
    return x * x


def scale_by_held(x):
    """``x`` times a parameter this worker holds (made on first use)."""
    w = _HELD.setdefault("w", nn.Parameter(toolkit.full((3,), 3.0)))
    return x * w


def held_grad(context_id: int):
    """The gradient this worker's parameter got in the context, and whether ``.grad`` stayed unset."""
    w = _HELD["w"]
    return dist_autograd.get_gradients(context_id).get(w), w.grad is None


def grad_fn_name(x) -> str | None:
    return None if x.grad_fn is None else type(x.grad_fn).__name__


def has_context(context_id: int) -> bool:
    try:
        contexts.get(context_id)
    except RuntimeError:
        return False
    return True


def chain() -> dict:
    out: dict = {}
    x = toolkit.tensor([1.0, -2.0, 0.5], requires_grad=True)
    with dist_autograd.context() as context_id:
        y = rpc.rpc_sync("worker1", times_two, args=(x,))
        z = rpc.rpc_sync("worker2", square, args=(y,))
        u = rpc.rpc_sync("worker1", scale_by_held, args=(z,))
        loss = (u.sum() + (x * x).sum())  # x also used here: both paths' gradients add up
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)
        out["x_grad"] = grads[x].tolist()
        out["x_grad_expected"] = (3 * 8 * x.detach() + 2 * x.detach()).tolist()
        out["x_dot_grad_unset"] = x.grad is None
        w_grad, unset = rpc.rpc_sync("worker1", held_grad, args=(context_id,))
        out["w_grad"], out["w_dot_grad_unset"] = w_grad.tolist(), unset
        out["w_grad_expected"] = ((2 * x.detach()) ** 2).tolist()
        out["reached"] = [rpc.rpc_sync(w, has_context, args=(context_id,)) for w in ("worker1", "worker2")]
        out["received_grad_fn"] = rpc.rpc_sync("worker1", grad_fn_name, args=(x,))
    out["outside_grad_fn"] = rpc.rpc_sync("worker1", grad_fn_name, args=(x,))
    out["released"] = [rpc.rpc_sync(w, has_context, args=(context_id,)) for w in ("worker0", "worker1", "worker2")]
    out["unknown"] = _error(lambda: dist_autograd.backward(context_id, [loss]))
    with dist_autograd.context() as context_id:
        out["not_requiring"] = _error(lambda: dist_autograd.backward(context_id, [toolkit.ones(())]))
    return out


def _error(fn) -> str | None:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test reads the message
        return f"{type(e).__name__}: {e}"
    return None


class Net1(nn.Module):
    def __init__(self, seed: int):
        super().__init__()
        toolkit.manual_seed(seed)
        self.fc = nn.Linear(4, 8)

    def forward(self, x):
        return toolkit.relu(self.fc(x))

    def parameter_rrefs(self) -> list:
        return [rpc.RRef(p) for p in self.parameters()]

    def state(self) -> dict:
        return {k: v.tolist() for k, v in self.state_dict().items()}


class Net2(Net1):
    def __init__(self, seed: int):
        nn.Module.__init__(self)
        toolkit.manual_seed(seed)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


class DMP(nn.Module):
    """The slides' DMP: each sub-network lives on its own worker, held by an RRef."""

    def __init__(self, dev1: str, dev2: str):
        super().__init__()
        self.net1 = rpc.remote(dev1, Net1, args=(1,))
        self.net2 = rpc.remote(dev2, Net2, args=(2,))

    def forward(self, inputs):
        outputs1 = self.net1.rpc_sync().forward(inputs)
        return self.net2.rpc_sync().forward(outputs1)

    def parameter_rrefs(self) -> list:
        return self.net1.rpc_sync().parameter_rrefs() + self.net2.rpc_sync().parameter_rrefs()


def profiled() -> dict:
    """RPCs under the profiler: each call is an event from its send until its reply."""
    from toolkit.autograd import profiler

    with profiler.profile() as prof:
        rpc.rpc_sync("worker1", toolkit.add, args=(toolkit.ones(2), 1))
        rpc.rpc_async("worker2", times_two, args=(toolkit.ones(2),)).wait()
        rpc.remote("worker1", square, args=(toolkit.ones(2),)).to_here()
    return {"names": sorted({e.name for e in prof.function_events if "#" in e.name}),
            "positive": all(e.cpu_time_total > 0 for e in prof.function_events if "#" in e.name)}


STEPS = 5


def _data():
    rng = np.random.default_rng(0)
    return (toolkit.from_numpy(rng.standard_normal((16, 4)).astype(np.float32)),
            toolkit.from_numpy(rng.integers(0, 3, 16)))


def dmp() -> dict:
    inputs, labels = _data()
    model = DMP("worker1", "worker2")
    optimizer = DistributedOptimizer(toolkit.optim.SGD, model.parameter_rrefs(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(STEPS):
        with dist_autograd.context() as context_id:
            loss = nn.functional.cross_entropy(model(inputs), labels)
            dist_autograd.backward(context_id, [loss])
            optimizer.step(context_id)
            losses.append(loss.item())
    local1, local2 = Net1(1), Net2(2)
    local_opt = toolkit.optim.SGD(list(local1.parameters()) + list(local2.parameters()), lr=0.1, momentum=0.9)
    local_losses = []
    for _ in range(STEPS):
        local_opt.zero_grad()
        loss = nn.functional.cross_entropy(local2(local1(inputs)), labels)
        loss.backward()
        local_opt.step()
        local_losses.append(loss.item())
    return {"losses": losses, "local_losses": local_losses,
            "remote_state": [model.net1.rpc_sync().state(), model.net2.rpc_sync().state()],
            "local_state": [local1.state(), local2.state()]}
