"""JIT benchmarks: the interpreter's cost per node against eager dispatch and PyTorch's traced functions, and trace time.

Targets: running a traced graph of 100 small elementwise ops no slower than
calling the same ops eagerly (the interpreter adds little over dispatch);
tracing the seed's ``Net`` reported against ``torch.jit.trace``.
"""

from __future__ import annotations

import warnings

import torch

import toolkit
from toolkit.demo import seed_net

from .common import compare, table

N_OPS = 100


def _chain(x, y):
    """100 small elementwise ops: a repeating mul, add, tanh."""
    for i in range(N_OPS):
        k = i % 3
        if k == 0:
            x = x * y
        elif k == 1:
            x = x + y
        else:
            x = x.tanh()
    return x


def _per_node(times: dict) -> dict:
    return {k: v / N_OPS for k, v in times.items()}


def interpreter_overhead() -> list:
    rows = []
    for n in (1, 1000):
        x, y = toolkit.rand(n), toolkit.rand(n)
        tx, ty = torch.from_numpy(x.numpy().copy()), torch.from_numpy(y.numpy().copy())
        traced = toolkit.jit.trace(_chain, (x, y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ttraced = torch.jit.trace(_chain, (tx, ty))
        t = compare({
            "toolkit traced (interpreter)": lambda: traced(x, y),  # noqa: B023
            "toolkit eager": lambda: _chain(x, y),  # noqa: B023
            "torch.jit.trace": lambda: ttraced(tx, ty),  # noqa: B023
            "torch eager": lambda: _chain(tx, ty),  # noqa: B023
        }, 50, 5)
        rows.append((f"per node, {N_OPS} elementwise ops on {n} element{'s' if n > 1 else ''}", _per_node(t)))
    xg = toolkit.rand(16, requires_grad=True)
    yg = toolkit.rand(16)
    traced = toolkit.jit.trace(_chain, (xg.detach(), yg))
    txg = torch.rand(16, requires_grad=True)
    tyg = torch.rand(16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ttraced = torch.jit.trace(_chain, (txg.detach(), tyg))
    t = compare({
        "toolkit traced (interpreter)": lambda: traced(xg, yg),
        "toolkit eager": lambda: _chain(xg, yg),
        "torch.jit.trace": lambda: ttraced(txg, tyg),
        "torch eager": lambda: _chain(txg, tyg),
    }, 20, 5)
    rows.append((f"per node, {N_OPS} ops on 16 elements, input requires grad (forward only)", _per_node(t)))
    return rows


def _net(lib):
    return seed_net(lib).eval()


def trace_time() -> list:
    m, tm = _net(toolkit), _net(torch)
    x, tx = toolkit.randn(8, 1, 28, 28), torch.randn(8, 1, 28, 28)
    rows = []
    for check in (False, True):
        def ours(check=check):
            return toolkit.jit.trace(m, x, check_trace=check)

        def theirs(check=check):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return torch.jit.trace(tm, tx, check_trace=check)

        rows.append((f"trace seed Net, batch 8, check_trace={check}",
                     compare({"toolkit.jit.trace": ours, "torch.jit.trace": theirs}, 3, 5)))
    return rows


def main() -> str:
    return "\n".join([
        table("JIT interpreter overhead", interpreter_overhead(),
              "toolkit traced no slower than toolkit eager (ratio <= 1.0x)"),
        table("JIT trace time", trace_time(), "reported against torch.jit.trace"),
    ])
