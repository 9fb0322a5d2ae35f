"""TensorBoard logging costs: ``add_scalar`` calls per second beside ``torch.utils.tensorboard``, and the
``make demo`` training loop's step time with and without its per-step logging, each library in processes
of its own.

Targets: at least 50,000 add_scalar calls/s; logging every step costs under 2% of the demo's step time.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

from .common import cell, fmt
from .harness import REPEAT, ROUNDS, Variant, library, measure, run_json
from .models import seed_net

CALLS = 20000
#: passes over the demo's 47 batches in each process, plain and logged steps alternating: 4 by default,
#: fewer when the harness's repeats are lowered (TOOLKIT_BENCH_REPEAT) for a quick run
PASSES = max(1, min(4, REPEAT - 1))
HERE = "benchmarks.bench_tensorboard"
LIBS = ("toolkit", "torch")


# -- setups and in-process measurements: each runs in a fresh process with only its own library imported -------
def _writer_class(lib_name: str):
    return library(f"{lib_name}.utils.tensorboard").SummaryWriter


def add_scalar(lib_name: str, value: str):
    """One ``add_scalar`` call per invocation, at increasing steps, of a python float or a 0-d tensor, on a writer
    open in a temporary directory (closed and removed when the process exits)."""
    lib = library(lib_name)
    d = tempfile.mkdtemp(prefix="bench_tensorboard_")
    writer = _writer_class(lib_name)(d)

    def cleanup():
        writer.close()
        shutil.rmtree(d, ignore_errors=True)

    atexit.register(cleanup)
    v = 0.5 if value == "float" else lib.tensor(0.5)
    steps = itertools.count()
    return lambda: writer.add_scalar("loss", v, next(steps))


def save_demo_batches(path: str) -> dict:
    """The demo's training batches (Digits at 28x28, batch 32, shuffled with seed 0) from toolkit's loader, saved
    as numpy arrays so that a PyTorch process gets the same data without importing toolkit."""
    toolkit = library("toolkit")
    from toolkit.utils.data import DataLoader
    from toolkit.vision import datasets, transforms

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    toolkit.manual_seed(0)
    batches = list(DataLoader(datasets.Digits(train=True, size=28, transform=tf), batch_size=32, shuffle=True))
    arrays = {}
    for i, (x, y) in enumerate(batches):
        arrays[f"x{i}"], arrays[f"y{i}"] = x.numpy(), y.numpy()
    np.savez(path, **arrays)
    return {"batches": len(batches)}


def _loop_functions(lib_name: str):
    """The demo's step and logging functions and writer class: ``toolkit.demo``'s own, or the same code on torch."""
    if lib_name == "toolkit":
        demo = library("toolkit.demo")
        return demo.train_step, demo.log_step, _writer_class(lib_name)
    torch = library("torch")

    def train_step(model, optimizer, data, target):
        optimizer.zero_grad()
        output = model(data)
        loss = torch.nn.functional.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        return output, loss.item()

    def log_step(writer, step, loss, output, target):
        with torch.no_grad():
            correct = (output.argmax(dim=1) == target).sum().item()
        writer.add_scalar("Loss/train", loss, step)
        writer.add_scalar("Accuracy/train", correct / len(target), step)

    return train_step, log_step, _writer_class(lib_name)


def demo_loop(lib_name: str, batches_path: str, passes: int) -> dict:
    """The demo's loop over the saved batches in this one process: plain and logged steps alternate, so that both
    see the same process and the same phase of the machine. Seconds of each plain step, each logged step, the
    logging inside it, and the writer's close."""
    lib = library(lib_name)
    step_fn, log_fn, writer_class = _loop_functions(lib_name)
    with np.load(batches_path) as f:
        batches = [(lib.from_numpy(f[f"x{i}"]), lib.from_numpy(f[f"y{i}"])) for i in range(len(f.files) // 2)]
    model = seed_net(lib_name)
    model.train()
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    plain, logged, logging = [], [], []
    with tempfile.TemporaryDirectory() as d:
        writer = writer_class(d)
        for data, target in batches[:5]:  # warm up
            output, loss = step_fn(model, optimizer, data, target)
            log_fn(writer, -1, loss, output, target)
        step = 0
        for _ in range(passes):
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
    return {"plain": plain, "logged": logged, "logging": logging, "close": close}


# -- tables ------------------------------------------------------------------------------------------------------
def scalar_rows() -> list:
    """add_scalar of a float and of a 0-d tensor, per library: four variants, each its own process."""
    t = measure([Variant(f"{lib} {value}", f"{HERE}:add_scalar", (lib, value), CALLS)
                 for value in ("float", "tensor") for lib in LIBS])
    return [(case, {lib: t[f"{lib} {value}"] for lib in LIBS})
            for case, value in (("python float", "float"), ("0-d tensor", "tensor"))]


def scalar_table(rows: list) -> str:
    out = ["### add_scalar calls per second", "",
           "Target: at least 50,000 calls/s, beside torch.utils.tensorboard's SummaryWriter. Each library in fresh "
           f"processes of its own, rounds interleaved, samples of {CALLS:,} calls each with the writer open (its "
           "background flushes included); calls/s and the speedup from the best figures.", "",
           "| value | toolkit (best / median) | torch (best / median) | toolkit calls/s | torch calls/s | speedup |",
           "|---|---|---|---|---|---|"]
    for case, t in rows:
        tk, tt = t["toolkit"], t["torch"]
        rate = {k: f"{1 / v.best:,.0f}" if v.samples else "n/a" for k, v in t.items()}
        speedup = f"{tt.best / tk.best:.1f}x" if tk.samples and tt.samples else "n/a"
        out.append(f"| {case} | {cell(tk)} | {cell(tt)} | {rate['toolkit']} | {rate['torch']} | {speedup} |")
    return "\n".join(out) + "\n"


def demo_rows() -> dict:
    """Per library: the demo loop's step and logging times pooled over ``ROUNDS`` processes (libraries
    interleaved), on the same batches, saved once by a toolkit process."""
    out = {lib: {"plain": [], "logged": [], "logging": [], "close": 0.0, "error": ""} for lib in LIBS}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "batches.npz")
        saved = run_json(f"{HERE}:save_demo_batches", path)
        if "error" in saved:
            for r in out.values():
                r["error"] = saved["error"]
            return out
        for _ in range(ROUNDS):
            for lib in LIBS:
                res = run_json(f"{HERE}:demo_loop", lib, path, PASSES)
                if "error" in res:
                    out[lib]["error"] = res["error"]
                    continue
                for key in ("plain", "logged", "logging"):
                    out[lib][key] += res[key]
                out[lib]["close"] += res["close"]
    return out


def demo_table(rows: dict) -> str:
    out = ["### Logging every step of the `make demo` training loop", "",
           "Target: logging costs under 2% of the step time. The demo's loop (seed Net, Digits 28x28, batch 32, "
           "SGD with momentum) with `log_step` (batch accuracy, then `add_scalar` of the loss and the accuracy) "
           f"on every other step, over {PASSES} passes of its 47 batches in each of {ROUNDS} fresh processes per "
           "library (libraries interleaved; plain and logged steps alternate inside each process). Step times are "
           "medians; the logging cost is the time inside `log_step` (median, and mean with the writer's close "
           "spread over the logged steps, which counts every write, flush and scheduler hiccup); the share is that "
           "mean over the plain step.", "",
           "| library | step, no logging | step, logged | logging per step (median) | logging per step (mean) "
           "| share of the step |", "|---|---|---|---|---|---|"]
    names = {"toolkit": "toolkit (toolkit.demo)", "torch": "torch (same loop, torch.utils.tensorboard)"}
    for lib, r in rows.items():
        if not r["plain"] or not r["logging"]:
            out.append(f"| {names[lib]} | n/a ({r['error']}) | n/a | n/a | n/a | n/a |")
            continue
        plain = statistics.median(r["plain"])
        mean = (sum(r["logging"]) + r["close"]) / len(r["logging"])  # every write and flush, spread over the steps
        out.append(f"| {names[lib]} | {fmt(plain).strip()} | {fmt(statistics.median(r['logged'])).strip()} | "
                   f"{fmt(statistics.median(r['logging'])).strip()} | {fmt(mean).strip()} | {mean / plain:.2%} |")
    return "\n".join(out) + "\n"


def main() -> str:
    return "\n".join(["## TensorBoard", "", scalar_table(scalar_rows()), demo_table(demo_rows())])


if __name__ == "__main__":
    print(main())
