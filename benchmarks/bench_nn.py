"""Neural-network benchmarks: the seed's Net (train step, inference), Conv2d, and DataLoader throughput, each
library timed in its own process.

Targets: Net training step (batch 64, 1x28x28, SGD) at most 1.2x PyTorch CPU;
inference at most PyTorch's time; Conv2d forward+backward of 64x3x32x32 with 64 3x3
filters at most PyTorch's time; max_pool2d forward+backward reported against PyTorch;
DataLoader over Digits with 2 workers: images per second.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np

from .common import fmt, per_library, table
from .harness import REPO, Timing, library, measure
from .models import seed_net

HERE = "benchmarks.bench_nn"
BATCH, WORKERS = 64, 2


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def net_step(lib_name: str, train: bool):
    """One step of the seed's Net on a batch of 64 1x28x28 images: SGD training step, or inference."""
    lib = library(lib_name)
    rng = np.random.default_rng(0)
    data = lib.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32))
    target = lib.from_numpy(rng.integers(0, 10, BATCH))
    model = seed_net(lib_name)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        model.train()
        opt.zero_grad()
        loss = lib.nn.functional.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        return loss

    def infer():
        model.eval()
        with lib.no_grad():
            return model(data)

    return step if train else infer


def conv_fwd_bwd(lib_name: str):
    """Conv2d(3, 64, 3, padding=1) forward and backward on 64x3x32x32."""
    lib = library(lib_name)
    lib.manual_seed(0)
    conv = lib.nn.Conv2d(3, 64, 3, padding=1)
    x = np.random.default_rng(0).standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
    inp = lib.from_numpy(x).requires_grad_()

    def run():
        conv.zero_grad()
        inp.grad = None
        conv(inp).sum().backward()
        return inp.grad

    return run


def pool_fwd_bwd(lib_name: str, shape: tuple = (BATCH, 64, 32, 32)):
    """F.max_pool2d(kernel 2) forward and backward on 64x64x32x32 (the Conv2d row's output)."""
    lib = library(lib_name)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    inp = lib.from_numpy(x).requires_grad_()

    def run():
        inp.grad = None
        lib.nn.functional.max_pool2d(inp, 2).sum().backward()
        return inp.grad

    return run


def save_digits(path: str) -> None:
    """Digits' 28x28 training images (uint8) and labels in ``path`` (.npz), for the PyTorch loader's dataset.
    Run in a toolkit-only process of its own (:func:`_digits_file`)."""
    from toolkit.vision.datasets import Digits

    ds = Digits(train=True, size=28)
    np.savez(path, data=ds.data.numpy(), targets=ds.targets.numpy())


def _torch_digits(path: str):
    """The same images as a PyTorch dataset, sampled the way torchvision's MNIST does (a PIL image per item),
    with torchvision's ``ToTensor`` and ``Normalize`` written out (torchvision is not installed here)."""
    import torch
    from PIL import Image

    saved = np.load(path)

    def to_tensor(pic):  # torchvision.transforms.functional.to_tensor, for 'L' images
        img = torch.from_numpy(np.array(pic, np.uint8, copy=True)).view(pic.size[1], pic.size[0], 1)
        return img.permute((2, 0, 1)).contiguous().to(dtype=torch.get_default_dtype()).div(255)

    def normalize(t, mean, std):  # torchvision.transforms.functional.normalize
        t = t.clone()
        mean_t, std_t = torch.as_tensor(mean, dtype=t.dtype), torch.as_tensor(std, dtype=t.dtype)
        if (std_t == 0).any():
            raise ValueError("std evaluates to zero")
        return t.sub_(mean_t.view(-1, 1, 1)).div_(std_t.view(-1, 1, 1))

    class TorchDigits(torch.utils.data.Dataset):
        def __init__(self):
            self.data, self.targets = torch.from_numpy(saved["data"]), torch.from_numpy(saved["targets"])

        def __len__(self):
            return len(self.data)

        def __getitem__(self, i):
            img, target = Image.fromarray(self.data[i].numpy(), mode="L"), int(self.targets[i])
            return normalize(to_tensor(img), (0.1307,), (0.3081,)), target

    return TorchDigits()


def loader_epoch(lib_name: str, path: str):
    """One epoch of a DataLoader over Digits at 28x28 (ToTensor + Normalize): batch 64, shuffle, 2 workers."""
    lib = library(lib_name)
    if lib_name == "toolkit":
        from toolkit.vision import datasets, transforms

        tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
        ds = datasets.Digits(train=True, size=28, transform=tf)
    else:
        ds = _torch_digits(path)
    loader = lib.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=WORKERS)

    def epoch():
        n = sum(len(batch[1]) for batch in loader)
        if n != len(ds):
            raise RuntimeError(f"an epoch gave {n} images, the dataset has {len(ds)}")

    return epoch


# -- tables ------------------------------------------------------------------------------------------------
# Each row's target is the largest ratio of toolkit's best time to torch's that the eager-speed work aims for
# (None: reported only).
def net_rows() -> list:
    return [("train step, batch 64",
             measure(per_library(f"{HERE}:net_step", 10, ("toolkit", "torch"), True)), 1.2),
            ("inference, batch 64",
             measure(per_library(f"{HERE}:net_step", 20, ("toolkit", "torch"), False)), 1.0)]


def conv_rows() -> list:
    return [("Conv2d 64x3x32x32, 64 filters 3x3, fwd+bwd", measure(per_library(f"{HERE}:conv_fwd_bwd", 5)), 1.0),
            ("max_pool2d 64x64x32x32, kernel 2, fwd+bwd", measure(per_library(f"{HERE}:pool_fwd_bwd", 10)), None)]


def _digits_file(path: str) -> int:
    """Write :func:`save_digits`'s file from a fresh toolkit-only process; the number of images."""
    code = f"from benchmarks.bench_nn import save_digits; save_digits({path!r})"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True)
    return len(np.load(path)["targets"])


def loader_table() -> str:
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-digits-") as tmp:
        path = os.path.join(tmp, "digits.npz")
        n = _digits_file(path)
        times = measure(per_library(f"{HERE}:loader_epoch", 1, ("toolkit", "torch"), path))

    def row(label: str, t: Timing) -> str:
        if not t.samples:
            return f"| {label} | n/a ({t.error}) | n/a |" if t.error else f"| {label} | n/a | n/a |"
        return f"| {label} | {n / t.best:,.0f} / {n / t.median:,.0f} | {fmt(t.best).strip()} |"

    tk, pt = times["toolkit"], times["torch"]
    ratio = f"{pt.best / tk.best:.2f}x" if tk.samples and pt.samples else "n/a"
    return "\n".join([
        "### DataLoader throughput", "",
        f"Digits at 28x28 (ToTensor + Normalize), {n:,} images, batch {BATCH}, shuffle, {WORKERS} worker processes. "
        "Seconds per epoch are timed like the other figures (each library in processes of its own, rounds "
        "interleaved); images per second = images / seconds per epoch. PyTorch's dataset holds the same images "
        "(written out by toolkit's Digits) and samples them the way torchvision's MNIST does, with torchvision's "
        "ToTensor and Normalize written out in torch (torchvision is not installed).", "",
        "| loader | images per second (best / median) | best epoch |", "|---|---|---|",
        row("toolkit", tk), row("torch", pt), "",
        f"toolkit's throughput relative to torch's (best epochs): {ratio}", ""])


def main() -> str:
    return "\n".join([
        table("Seed Net (1x28x28, batch 64, SGD)", net_rows(), "train step at most 1.2x torch, inference at most 1x"),
        table("Conv2d and max_pool2d forward + backward", conv_rows(), "Conv2d at most torch's time"),
        loader_table(),
    ])
