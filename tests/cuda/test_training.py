"""Autograd, optimizers and training on CUDA tensors, step for step equal to the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit import nn
from toolkit.demo import seed_net

from ..conftest import assert_close
from .conftest import SIMULATED
from .helpers import needs_cuda

pytestmark = needs_cuda
F = nn.functional


class SmallConvNet(nn.Module):
    """The seed Net's layer types (conv, Dropout2d, max_pool2d, relu, view, linear, dropout, log_softmax)
    at a size the simulator runs in seconds."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, kernel_size=3)
        self.conv2 = nn.Conv2d(2, 3, kernel_size=2)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(12, 5)
        self.fc2 = nn.Linear(5, 4)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(self.conv2_drop(self.conv2(x)))
        x = x.view(-1, 12)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


# The tolerance rule's accum for one training step (see tests/conftest.py): the forward chain's sums (conv1,
# conv2, fc1, fc2, the log_softmax's), then the longest sum of the backward, conv1's weight gradient over the
# batch and its output positions; the parameters after k steps have summed k updates.
SMALL_STEP = 9 + 8 + 12 + 5 + 4 + 3 * 6 * 6
SEED_STEP = 25 + 250 + 320 + 50 + 10 + 4 * 24 * 24


def _train(model, x, y, device, steps, opt_cls=toolkit.optim.SGD, **opt_kw):
    model = model.to(device)
    opt = opt_cls(model.parameters(), **opt_kw)
    x, y = x.to(device), y.to(device)
    losses = []
    for i in range(steps):
        toolkit.manual_seed(100 + i)  # the same dropout masks on both devices (drawn on the host)
        opt.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model, np.array(losses, np.float32)  # float32 losses, read as Python floats


def _twins(make):
    toolkit.manual_seed(0)
    a = make()
    b = make()
    b.load_state_dict(a.state_dict())
    return a, b


@pytest.mark.parametrize("opt_cls,kw", [(toolkit.optim.SGD, {"lr": 0.1, "momentum": 0.5}),
                                        (toolkit.optim.Adam, {"lr": 0.01})])
def test_small_conv_net_trains_on_cuda_as_on_cpu(opt_cls, kw):
    cpu, gpu = _twins(SmallConvNet)
    x = toolkit.randn(3, 1, 8, 8)
    y = toolkit.tensor([0, 3, 1])
    cpu, l_cpu = _train(cpu, x, y, "cpu", 3, opt_cls, **kw)
    gpu, l_gpu = _train(gpu, x, y, "cuda", 3, opt_cls, **kw)
    assert_close(l_gpu, l_cpu, accum=3 * SMALL_STEP)
    for (name, p), q in zip(cpu.named_parameters(), gpu.parameters()):
        assert q.is_cuda and q.grad.is_cuda, name
        assert_close(q.detach().cpu(), p.detach(), accum=3 * SMALL_STEP, msg=name)
        assert_close(q.grad.cpu(), p.grad, accum=3 * SMALL_STEP, msg=name)


def test_autograd_on_cuda_tensors():
    a = toolkit.randn(3, 4, dtype=toolkit.float64)
    b = toolkit.randn(4, dtype=toolkit.float64)
    ca = a.cuda().requires_grad_()
    cb = b.cuda().requires_grad_()
    out = ((ca * cb).sigmoid().sum(1) ** 2).mean()
    out.backward()
    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    ((ta * tb).sigmoid().sum(1) ** 2).mean().backward()
    assert ca.grad.is_cuda and cb.grad.is_cuda
    assert out.grad_fn is not None
    assert_close(ca.grad.cpu(), ta.grad, accum=4 + 3)  # sums over 4 columns, a mean over 3 rows
    assert_close(cb.grad.cpu(), tb.grad, accum=4 + 3)


def test_gradient_accumulates_on_device():
    w = toolkit.ones(3, device="cuda", requires_grad=True)
    for _ in range(2):
        (w * 2).sum().backward()
    assert w.grad.is_cuda
    np.testing.assert_array_equal(w.grad.cpu().numpy(), [4.0, 4.0, 4.0])


def test_mixed_devices_are_refused():
    with pytest.raises(RuntimeError, match="same device"):
        toolkit.ones(2, device="cuda") + toolkit.ones(2)


@pytest.mark.cuda
@pytest.mark.skipif(SIMULATED, reason="the seed Net at batch 2 takes minutes in the simulator; SmallConvNet stands in")
def test_seed_net_trains_on_cuda_as_on_cpu():
    cpu, gpu = _twins(seed_net)
    x = toolkit.randn(4, 1, 28, 28)
    y = toolkit.tensor([1, 2, 3, 4])
    cpu, l_cpu = _train(cpu, x, y, "cpu", 3, lr=0.01, momentum=0.5)
    gpu, l_gpu = _train(gpu, x, y, "cuda", 3, lr=0.01, momentum=0.5)
    assert_close(l_gpu, l_cpu, accum=3 * SEED_STEP)
