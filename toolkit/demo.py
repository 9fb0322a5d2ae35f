"""``make demo``: a tour of tensors and autograd, then the whole story on the seed's ``Net``.

Train it on real digits (loss and accuracy logged to TensorBoard, ``runs/``, at every step), trace it and print
its ``graph_for``, profile one training step, log the traced graph to TensorBoard, save and reload the
TorchScript archive, and say where to look. Run with ``python -m toolkit.demo`` (``--tour`` for the tour only,
``--no-tour`` for the story only, ``--epochs N``).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

import toolkit
from toolkit.utils.data import DataLoader
from toolkit.vision import datasets, transforms


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
        import torch  # optional: torch, only to compare against
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
    from tqdm import tqdm  # optional: tqdm

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
        from toolkit.utils.tensorboard import SummaryWriter  # optional: tensorboard
    except ImportError as e:
        print(f"TensorBoard logging off ({e}); `pip install tensorboard` turns it on")
        return None
    return SummaryWriter(log_dir)


@dataclass
class Trained:
    """What training leaves for the rest of the story: the model, its optimizer, the test data, the open writer."""

    model: object
    optimizer: object
    test_loader: object
    writer: object
    steps: int
    start: float


def train(epochs: int = 12, log_dir: str | None = None) -> Trained:
    """Train the seed's Net on the Digits images at 28x28, logging every step's loss and accuracy to
    TensorBoard (``log_dir``, by default ``runs/<date>_<host>``); the writer is left open for the graph."""
    from tqdm import tqdm  # optional: tqdm

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
    return Trained(model, optimizer, test_loader, writer, step, start)


def _tensorboard_command() -> str:
    tensorboard = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    if not os.path.exists(tensorboard):
        return "tensorboard"
    return tensorboard if os.path.relpath(tensorboard).startswith("..") else os.path.relpath(tensorboard)


def close_writer(run: Trained, what: str = "loss and accuracy") -> None:
    """Close the run's writer and say what it logged and how to look at it."""
    if run.writer is None:
        return
    run.writer.close()
    log_dir = run.writer.get_logdir()
    print(f"TensorBoard: {what} of all {run.steps} steps logged to {log_dir}; view them with\n"
          f"  {_tensorboard_command()} --logdir {os.path.dirname(log_dir) or '.'}")


def checkpoint_round_trip(run: Trained, path: str | None = None) -> float:
    """``toolkit.save`` the state dicts, load them into a fresh Net; returns its test accuracy."""
    path = path or os.path.join(tempfile.mkdtemp(), "net.tk")
    toolkit.save({"model": run.model.state_dict(), "optimizer": run.optimizer.state_dict()}, path)
    fresh = seed_net()
    fresh.load_state_dict(toolkit.load(path)["model"])
    reloaded = _accuracy(fresh, run.test_loader)
    print(f"checkpoint {path}: reloaded model's test accuracy {reloaded:.2%} "
          f"(trained in {time.perf_counter() - run.start:.1f} s)")
    return reloaded


def train_net(epochs: int = 12, checkpoint: str | None = None, log_dir: str | None = None) -> float:
    """Train, log to TensorBoard and check a checkpoint round trip; returns the reloaded model's accuracy."""
    run = train(epochs, log_dir)
    close_writer(run)
    return checkpoint_round_trip(run, checkpoint)


def trace_net(run: Trained, example):
    """Trace the trained Net (in eval mode) on a test batch and print the graph that runs for it."""
    _section("Tracing the trained Net")
    model = run.model.eval()
    traced = toolkit.jit.trace(model, (example,))
    with toolkit.no_grad():
        optimized = traced.graph_for(example)
        same = toolkit.allclose(traced(example), model(example), atol=1e-6)
    print(f"traced = toolkit.jit.trace(model, (x,)) with x of shape {tuple(example.shape)}; "
          f"traced(x) matches model(x): {same}")
    groups = sum(n.kind == "prim::FusionGroup" for n in optimized.graph.all_nodes())
    print("traced.graph_for(x), the graph that runs after specialization and the optimization passes "
          f"({groups} fusion groups):")
    print(optimized)
    if not same:
        raise RuntimeError("toolkit.demo: the traced Net's outputs differ from the eager Net's")
    return traced


def profile_step(run: Trained):
    """Profile one training step (forward, loss, backward, SGD) on a copy of the model; print the op table."""
    _section("Profiling one training step")
    model = copy.deepcopy(run.model).train()
    optimizer = toolkit.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data, target = next(iter(run.test_loader))
    train_step(model, optimizer, data[:32], target[:32])  # warm-up: first-call work stays out of the table
    with toolkit.profiler.profile(record_shapes=True) as prof:
        with toolkit.profiler.record_function("train_step"):
            train_step(model, optimizer, data[:32], target[:32])
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))
    return prof


def archive_round_trip(run: Trained, traced, example, directory: str) -> str:
    """``toolkit.jit.save`` the traced Net, ``toolkit.jit.load`` it back, and check it gives the same outputs."""
    _section("Saving and reloading the TorchScript archive")
    path = os.path.join(directory, "net_traced.pt")
    toolkit.jit.save(traced, path)
    loaded = toolkit.jit.load(path)
    with toolkit.no_grad():
        diff = (loaded(example) - traced(example)).abs().max().item()
    accuracy = _accuracy(loaded, run.test_loader)
    print(f"toolkit.jit.save(traced, {path!r}) ({os.path.getsize(path)} bytes), then toolkit.jit.load: "
          f"max |output difference| = {diff:.2e}, test accuracy {accuracy:.2%}")
    if diff > 1e-6:
        raise RuntimeError(f"toolkit.demo: the reloaded archive {path} gives different outputs (max |diff| {diff})")
    print(loaded.code)
    return path


def story(epochs: int = 12, log_dir: str | None = None) -> None:
    """Train, trace, print graph_for, profile a step, log the graph to TensorBoard, save and reload the
    archive, and say where to look."""
    run = train(epochs, log_dir)
    example = next(iter(run.test_loader))[0][:64]
    what = "loss and accuracy"
    if run.writer is not None:
        run.writer.add_graph(run.model.eval(), (example,))
        what += " (and the traced Net's graph, in the Graphs tab)"
    close_writer(run, what)
    checkpoint_round_trip(run)
    traced = trace_net(run, example)
    profile_step(run)
    archive = archive_round_trip(run, traced, example,
                                 run.writer.get_logdir() if run.writer is not None else tempfile.mkdtemp())
    _section("Where to look")
    if run.writer is not None:
        print(f"  {_tensorboard_command()} --logdir {os.path.dirname(run.writer.get_logdir()) or '.'}"
              "    scalars of every step and the Net's graph (Graphs tab)")
    print(f"  toolkit.jit.load({archive!r})    the trained Net as a TorchScript archive")
    print("  make lab    JupyterLab on notebooks/: tensors, autograd, training, tracing, fusion with GraphView, "
          "profiling, TensorBoard")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m toolkit.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tour", action="store_true", help="the tensor and autograd tour only")
    parser.add_argument("--no-tour", action="store_true", help="skip the tour; train, trace, profile, save")
    parser.add_argument("--epochs", type=int, default=12, help="training epochs (default 12)")
    parser.add_argument("--log-dir", default=None, help="TensorBoard run directory (default runs/<date>_<host>)")
    args = parser.parse_args(argv)
    if not args.no_tour:
        tensors()
        autograd_rnn_step()
        higher_order()
        two_layer_net()
    if not args.tour:
        story(args.epochs, args.log_dir)


if __name__ == "__main__":
    main()
