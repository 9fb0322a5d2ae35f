"""``make demo``: a tour of tensors and autograd, then the seed's ``Net`` trained on real digits, its loss and
accuracy logged to TensorBoard (``runs/``) at every step.

Run with ``python -m toolkit.demo`` (``--tour`` for the tensor and autograd tour only).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import toolkit


def _section(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def tensors() -> None:
    _section("Tensors")
    toolkit.manual_seed(0)
    x = toolkit.rand(5, 3)
    print("x = toolkit.rand(5, 3)\n", x)
    print("x.size() ->", x.size(), "  x.dtype ->", x.dtype)
    print("x[:, 1] ->", x[:, 1])
    print("x.t().is_contiguous() ->", x.t().is_contiguous(), " (a view sharing storage)")
    y = toolkit.rand(5, 3)
    print("x + y ->\n", x + y)
    a = toolkit.ones(5)
    b = a.numpy()
    a.add_(1)
    print("numpy bridge, zero copies: a.add_(1) shows in b ->", b)
    print("type promotion: int tensor * 2.5 ->", toolkit.arange(3) * 2.5)


def autograd_rnn_step() -> None:
    _section("Autograd: the RNN step")
    toolkit.manual_seed(0)
    w_h = toolkit.randn(20, 20, requires_grad=True)
    w_x = toolkit.randn(20, 10, requires_grad=True)
    x = toolkit.randn(1, 10)
    prev_h = toolkit.randn(1, 20)
    next_h = (toolkit.mm(w_x, x.t()) + toolkit.mm(w_h, prev_h.t())).tanh()
    next_h.backward(toolkit.ones(20, 1))
    print("next_h.grad_fn ->", next_h.grad_fn, " next_functions ->", next_h.grad_fn.next_functions)
    print("w_h.grad.sum() ->", w_h.grad.sum(), " w_x.grad.sum() ->", w_x.grad.sum())
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(0)
    tw_h = torch.randn(20, 20, requires_grad=True)
    tw_x = torch.randn(20, 10, requires_grad=True)
    tx, tprev = torch.randn(1, 10), torch.randn(1, 20)
    (torch.mm(tw_x, tx.t()) + torch.mm(tw_h, tprev.t())).tanh().backward(torch.ones(20, 1))
    diff = np.abs(w_h.grad.numpy() - tw_h.grad.numpy()).max()
    print(f"same seed in PyTorch: max |w_h.grad difference| = {diff:.2e}")


def higher_order() -> None:
    _section("Higher-order gradients")
    x = toolkit.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = (x.tanh() * x).sum()
    (g,) = toolkit.autograd.grad(y, x, create_graph=True)
    (gg,) = toolkit.autograd.grad(g.sum(), x)
    print("d/dx sum(x tanh x) ->", g)
    print("d2/dx2 ->", gg)


def two_layer_net(steps: int = 500) -> None:
    _section("The seed's two-layer network with autograd")
    from tqdm import tqdm

    toolkit.manual_seed(0)
    N, D_in, H, D_out = 64, 1000, 100, 10
    x, y = toolkit.randn(N, D_in), toolkit.randn(N, D_out)
    w1 = toolkit.randn(D_in, H, requires_grad=True)
    w2 = toolkit.randn(H, D_out, requires_grad=True)
    learning_rate = 1e-6
    start = time.perf_counter()
    bar = tqdm(range(steps), desc="training", unit="step")
    for t in bar:
        loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
        loss.backward()
        with toolkit.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
        if t % 25 == 0:
            bar.set_postfix(loss=f"{loss.item():.1f}")
    bar.close()
    print(f"final loss {loss.item():.4f} after {steps} steps in {time.perf_counter() - start:.2f} s")


def seed_net(lib=toolkit):
    """The seed's ``Net`` built from ``lib`` (``toolkit``, or ``torch`` to compare): conv, Dropout2d,
    max_pool2d, relu, linear, dropout, log_softmax."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    return Net()


def _accuracy(model, loader) -> float:
    model.eval()
    correct = total = 0
    with toolkit.no_grad():
        for data, target in loader:
            pred = model(data).argmax(dim=1)
            correct += int((pred == target).sum().item())
            total += len(target)
    return correct / total


def train_step(model, optimizer, data, target) -> tuple:
    """One step of the demo's training loop; returns the batch's output and the loss as a float."""
    optimizer.zero_grad()
    output = model(data)
    loss = toolkit.nn.functional.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    return output, loss.item()


def log_step(writer, step: int, loss: float, output, target) -> None:
    """The demo's per-step TensorBoard logging: the training loss and the batch's accuracy."""
    with toolkit.no_grad():
        correct = (output.argmax(dim=1) == target).sum().item()
    writer.add_scalar("Loss/train", loss, step)
    writer.add_scalar("Accuracy/train", correct / len(target), step)


def open_writer(log_dir: str | None = None):
    """A ``SummaryWriter`` (``runs/<date>_<host>`` by default), or None where TensorBoard is not installed."""
    try:
        from toolkit.utils.tensorboard import SummaryWriter
    except ImportError as e:
        print(f"TensorBoard logging off ({e}); `pip install tensorboard` turns it on")
        return None
    return SummaryWriter(log_dir)


def train_net(epochs: int = 12, checkpoint: str | None = None, log_dir: str | None = None) -> float:
    """Train the seed's Net on the Digits images at 28x28, logging every step's loss and accuracy to
    TensorBoard (``log_dir``, by default ``runs/<date>_<host>``), and check a checkpoint round trip."""
    import tempfile

    from tqdm import tqdm

    from toolkit.utils.data import DataLoader
    from toolkit.vision import datasets, transforms

    _section("The seed's Net on handwritten digits (28x28)")
    toolkit.manual_seed(0)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = datasets.Digits(train=True, size=28, transform=tf)
    test_set = datasets.Digits(train=False, size=28, transform=tf)
    train_loader = DataLoader(train_set, batch_size=32, shuffle=True, num_workers=2, persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=256)
    print(f"{len(train_set)} training and {len(test_set)} test images, DataLoader with 2 worker processes")
    model = seed_net()
    print(model)
    optimizer = toolkit.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = toolkit.optim.lr_scheduler.StepLR(optimizer, step_size=8, gamma=0.2)
    writer = open_writer(log_dir)
    step = 0
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        bar = tqdm(train_loader, desc=f"epoch {epoch}", unit="batch", leave=False)
        for data, target in bar:
            output, loss = train_step(model, optimizer, data, target)
            bar.set_postfix(loss=f"{loss:.3f}")
            if writer is not None:
                log_step(writer, step, loss, output, target)
            step += 1
        bar.close()
        scheduler.step()
        acc = _accuracy(model, test_loader)
        if writer is not None:
            writer.add_scalar("Accuracy/test", acc, step)
        print(f"epoch {epoch}: test accuracy {acc:.2%} ({time.perf_counter() - start:.1f} s)")
    if writer is not None:
        writer.close()
        tensorboard = os.path.join(os.path.dirname(sys.executable), "tensorboard")
        if not os.path.exists(tensorboard):
            tensorboard = "tensorboard"
        elif not os.path.relpath(tensorboard).startswith(".."):
            tensorboard = os.path.relpath(tensorboard)
        print(f"TensorBoard: loss and accuracy of all {step} steps logged to {writer.get_logdir()}; view them with\n"
              f"  {tensorboard} --logdir {os.path.dirname(writer.get_logdir()) or '.'}")
    path = checkpoint or os.path.join(tempfile.mkdtemp(), "net.tk")
    toolkit.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epochs}, path)
    fresh = seed_net()
    state = toolkit.load(path)
    fresh.load_state_dict(state["model"])
    reloaded = _accuracy(fresh, test_loader)
    print(f"checkpoint {path}: reloaded model's test accuracy {reloaded:.2%} "
          f"(trained in {time.perf_counter() - start:.1f} s)")
    return reloaded


def main() -> None:
    tensors()
    autograd_rnn_step()
    higher_order()
    two_layer_net()
    if "--tour" not in sys.argv:
        train_net()


if __name__ == "__main__":
    main()
