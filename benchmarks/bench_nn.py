"""Neural-network benchmarks: the seed's Net (train step, inference), Conv2d, and DataLoader throughput.

Targets: Net training step (batch 64, 1x28x28, SGD) at most 1.5x PyTorch CPU;
inference at most 1.5x; Conv2d forward+backward of 64x3x32x32 with 64 3x3
filters at most 2x; DataLoader over Digits with 2 workers: images per second.
"""

from __future__ import annotations

import numpy as np
import torch

import toolkit
from toolkit.demo import seed_net

from .common import compare, table


def _net(lib):
    lib.manual_seed(0)
    return seed_net(lib)


def net_rows() -> list:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    setups = {}
    for lib in (toolkit, torch):
        model = _net(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        data, target = lib.from_numpy(x), lib.from_numpy(y)

        def step(model=model, opt=opt, data=data, target=target, lib=lib):
            model.train()
            opt.zero_grad()
            loss = lib.nn.functional.nll_loss(model(data), target)
            loss.backward()
            opt.step()

        def infer(model=model, data=data, lib=lib):
            model.eval()
            with lib.no_grad():
                model(data)

        setups[lib.__name__] = (step, infer)
    train = compare({k: v[0] for k, v in setups.items()}, 10, 5)
    infer = compare({k: v[1] for k, v in setups.items()}, 20, 5)
    return [("train step, batch 64", train), ("inference, batch 64", infer)]


def conv_rows() -> list:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3, 32, 32)).astype(np.float32)
    fns = {}
    for lib in (toolkit, torch):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(3, 64, 3, padding=1)
        inp = lib.from_numpy(x.copy()).requires_grad_()

        def run(conv=conv, inp=inp):
            conv.zero_grad()
            inp.grad = None
            conv(inp).sum().backward()

        fns[lib.__name__] = run
    return [("Conv2d 64x3x32x32, 64 filters 3x3, fwd+bwd", compare(fns, 5, 5))]


def loader_rows() -> list:
    import time

    from toolkit.utils.data import DataLoader as TkLoader
    from toolkit.vision import datasets, transforms

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    ds = datasets.Digits(train=True, size=28, transform=tf)

    class TorchDigits(torch.utils.data.Dataset):
        """The same images and labels, as torch tensors, for PyTorch's DataLoader."""

        def __len__(self):
            return len(ds)

        def __getitem__(self, i):
            img, label = ds[i]
            return torch.from_numpy(img.numpy()), label

    rates = {}
    for name, loader in (("toolkit", TkLoader(ds, batch_size=64, shuffle=True, num_workers=2)),
                         ("torch", torch.utils.data.DataLoader(TorchDigits(), batch_size=64, shuffle=True,
                                                               num_workers=2))):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            n = sum(len(batch[1]) for batch in loader)
            best = min(best, (time.perf_counter() - t0) / n)
        rates[name] = 1.0 / best
    return ("### DataLoader throughput\n\nDigits at 28x28 (ToTensor + Normalize), batch 64, shuffle, 2 worker "
            "processes, best of 3 epochs.\n\n| loader | images per second |\n|---|---|\n"
            + "".join(f"| {k} | {v:,.0f} |\n" for k, v in rates.items()))


def main() -> str:
    return "\n".join([
        table("Seed Net (1x28x28, batch 64, SGD)", net_rows(), "toolkit at most 1.5x torch"),
        table("Conv2d forward + backward", conv_rows(), "toolkit at most 2x torch"),
        loader_rows(),
    ])
