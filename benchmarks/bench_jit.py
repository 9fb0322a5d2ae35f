"""JIT benchmarks: the interpreter's cost per node against eager dispatch and PyTorch's traced functions, and trace time,
each library timed in its own process.

Targets: running a traced graph of 100 small elementwise ops no slower than
calling the same ops eagerly (the interpreter adds little over dispatch);
tracing the seed's ``Net`` reported against ``torch.jit.trace``.
"""

from __future__ import annotations

import warnings

import numpy as np

from .common import table
from .harness import Timing, Variant, library, measure
from .models import seed_net

HERE = "benchmarks.bench_jit"
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


# -- setups: each runs in a fresh process with only its own library imported ----------------------------
def chain(lib_name: str, traced: bool, n: int, requires_grad: bool = False):
    """``_chain`` on ``n``-element inputs, eager or traced (``toolkit.jit.trace`` / ``torch.jit.trace``, traced
    on a detached input); with ``requires_grad`` the call's input requires grad (forward only)."""
    lib = library(lib_name)
    warnings.simplefilter("ignore")  # torch.jit.trace's TracerWarnings; nothing else runs in this process
    rng = np.random.default_rng(0)
    x, y = (lib.from_numpy(rng.random(n, dtype=np.float32)) for _ in range(2))
    if requires_grad:
        x.requires_grad_(True)
    if not traced:
        return lambda: _chain(x, y)
    fn = lib.jit.trace(_chain, (x.detach(), y))
    for _ in range(3):  # past the profiling runs (PyTorch's executor optimizes on the 2nd-3rd call)
        fn(x, y)
    return lambda: fn(x, y)


def trace_net(lib_name: str, check: bool):
    """Tracing the seed's Net (eval mode) on a batch of 8, with or without ``check_trace``."""
    lib = library(lib_name)
    warnings.simplefilter("ignore")
    model = seed_net(lib_name).eval()
    x = lib.from_numpy(np.random.default_rng(0).standard_normal((8, 1, 28, 28)).astype(np.float32))
    return lambda: lib.jit.trace(model, x, check_trace=check)


# -- tables ------------------------------------------------------------------------------------------------
def _per_node(times: dict) -> dict:
    return {k: Timing([s / N_OPS for s in t.samples], t.threads, t.error) for k, t in times.items()}


def _chain_variants(n: int, number: int, requires_grad: bool = False) -> list:
    return [Variant(label, f"{HERE}:chain", (lib, traced, n, requires_grad), number)
            for label, lib, traced in (("toolkit traced (interpreter)", "toolkit", True),
                                       ("toolkit eager", "toolkit", False),
                                       ("torch.jit.trace", "torch", True),
                                       ("torch eager", "torch", False))]


def interpreter_overhead() -> list:
    rows = [(f"per node, {N_OPS} elementwise ops on {n} element{'s' if n > 1 else ''}",
             _per_node(measure(_chain_variants(n, 50)))) for n in (1, 1000)]
    rows.append((f"per node, {N_OPS} ops on 16 elements, input requires grad (forward only)",
                 _per_node(measure(_chain_variants(16, 20, requires_grad=True)))))
    return rows


def trace_time() -> list:
    return [(f"trace seed Net, batch 8, check_trace={check}",
             measure([Variant("toolkit.jit.trace", f"{HERE}:trace_net", ("toolkit", check), 3),
                      Variant("torch.jit.trace", f"{HERE}:trace_net", ("torch", check), 3)]))
            for check in (False, True)]


def main() -> str:
    return "\n".join([
        table("JIT interpreter overhead", interpreter_overhead(),
              "toolkit traced no slower than toolkit eager (ratio <= 1.0x)"),
        table("JIT trace time", trace_time(), "reported against torch.jit.trace"),
    ])
