"""TensorBoard logging costs: ``add_scalar`` calls per second beside ``torch.utils.tensorboard``, and the
``make demo`` training loop's step time with and without its per-step logging, in one run.

Targets: at least 50,000 add_scalar calls/s; logging every step costs under 2% of the demo's step time.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time

import torch
from torch.utils.tensorboard import SummaryWriter as TorchSummaryWriter

import toolkit
from toolkit.demo import log_step, seed_net, train_step
from toolkit.utils.tensorboard import SummaryWriter

from .common import compare, fmt

CALLS = 20000
ROUNDS = 4  # passes over the demo's 47 batches, plain and logged steps alternating


def _caller(writer, value):
    """One ``add_scalar`` call per invocation, at increasing steps."""
    steps = itertools.count()
    return lambda: writer.add_scalar("loss", value, next(steps))


def _scalar_rows() -> list:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tk_w, t_w = SummaryWriter(f"{d}/toolkit"), TorchSummaryWriter(f"{d}/torch")
        for case, tk_v, t_v in (("python float", 0.5, 0.5), ("0-d tensor", toolkit.tensor(0.5), torch.tensor(0.5))):
            best = compare({"toolkit": _caller(tk_w, tk_v), "torch": _caller(t_w, t_v)}, CALLS, 5)
            rows.append((case, best))
        tk_w.close()
        t_w.close()
    return rows


def _demo_batches(lib) -> list:
    """The demo's training batches (Digits at 28x28, batch 32), loaded once so loading stays out of the timing."""
    from toolkit.utils.data import DataLoader
    from toolkit.vision import datasets, transforms

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    toolkit.manual_seed(0)
    batches = list(DataLoader(datasets.Digits(train=True, size=28, transform=tf), batch_size=32, shuffle=True))
    if lib is torch:
        batches = [(torch.from_numpy(x.numpy().copy()), torch.from_numpy(y.numpy().copy())) for x, y in batches]
    return batches


def _torch_step(model, optimizer, data, target):
    optimizer.zero_grad()
    output = model(data)
    loss = torch.nn.functional.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    return output, loss.item()


def _torch_log(writer, step, loss, output, target):
    with torch.no_grad():
        correct = (output.argmax(dim=1) == target).sum().item()
    writer.add_scalar("Loss/train", loss, step)
    writer.add_scalar("Accuracy/train", correct / len(target), step)


def _demo_row(lib) -> dict:
    """Per-step times of the demo loop: plain steps and logged steps alternate over the same batches."""
    step_fn, log_fn, writer_cls = ((train_step, log_step, SummaryWriter) if lib is toolkit
                                   else (_torch_step, _torch_log, TorchSummaryWriter))
    batches = _demo_batches(lib)
    lib.manual_seed(0)
    model = seed_net(lib)
    model.train()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    plain, logged, logging = [], [], []
    with tempfile.TemporaryDirectory() as d:
        writer = writer_cls(d)
        step = 0
        for data, target in batches[:5]:  # warm up
            output, loss = step_fn(model, optimizer, data, target)
            log_fn(writer, -1, loss, output, target)
        for _ in range(ROUNDS):
            for data, target in batches:
                t0 = time.perf_counter()
                output, loss = step_fn(model, optimizer, data, target)
                t1 = time.perf_counter()
                if step % 2:
                    log_fn(writer, step, loss, output, target)
                    t2 = time.perf_counter()
                    logged.append(t2 - t0)
                    logging.append(t2 - t1)
                else:
                    plain.append(t1 - t0)
                step += 1
        t0 = time.perf_counter()
        writer.close()
        close = time.perf_counter() - t0
    plain_med = statistics.median(plain)
    mean = statistics.fmean(logging) + close / len(logging)  # every write and flush, spread over the steps
    return {"plain": plain_med, "logged": statistics.median(logged), "median": statistics.median(logging),
            "mean": mean, "share": mean / plain_med}


def main() -> str:
    scalars = _scalar_rows()
    out = ["## TensorBoard (issue 8)", "", "### add_scalar calls per second", "",
           "Target: at least 50,000 calls/s, beside torch.utils.tensorboard's SummaryWriter (best of 5 interleaved "
           f"runs of {CALLS:,} calls each, writer open, its background flushes included).", "",
           "| value | toolkit | torch | toolkit calls/s | torch calls/s | speedup |", "|---|---|---|---|---|---|"]
    for case, t in scalars:
        out.append(f"| {case} | {fmt(t['toolkit']).strip()} | {fmt(t['torch']).strip()} | {1 / t['toolkit']:,.0f} | "
                   f"{1 / t['torch']:,.0f} | {t['torch'] / t['toolkit']:.1f}x |")
    out += ["", "### Logging every step of the `make demo` training loop", "",
            "Target: logging costs under 2% of the step time. The demo's loop (seed Net, Digits 28x28, batch 32, "
            "SGD with momentum) with `log_step` (batch accuracy, then `add_scalar` of the loss and the accuracy) "
            f"on every other step, over {ROUNDS} passes of its 47 batches. Step times are medians; the logging cost "
            "is the time inside `log_step` (median, and mean with the writer's close spread over the logged steps, "
            "which counts every write, flush and scheduler hiccup); the share is that mean over the plain step.",
            "", "| library | step, no logging | step, logged | logging per step (median) | logging per step (mean) "
            "| share of the step |", "|---|---|---|---|---|---|"]
    for lib in (toolkit, torch):
        r = _demo_row(lib)
        name = "toolkit (toolkit.demo)" if lib is toolkit else "torch (same loop, torch.utils.tensorboard)"
        out.append(f"| {name} | {fmt(r['plain']).strip()} | {fmt(r['logged']).strip()} | "
                   f"{fmt(r['median']).strip()} | {fmt(r['mean']).strip()} | {r['share']:.2%} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(main())
