"""The seed's models written against a library chosen at run time, for the per-process benchmarks.

``toolkit.demo`` has the same Net, but importing it imports toolkit, and a PyTorch benchmark process
must not load toolkit beside torch (their thread pools contend), so the benchmarks keep their own.
"""

from __future__ import annotations

from .harness import library


def seed_net(lib_name: str):
    """The seed's ``Net`` built from ``lib_name``'s ``nn``: conv, Dropout2d, max_pool2d, relu, linear, dropout,
    log_softmax, seeded with ``manual_seed(0)``."""
    lib = library(lib_name)
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

    lib.manual_seed(0)
    return Net()
