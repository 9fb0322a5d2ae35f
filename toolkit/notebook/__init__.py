"""``%load_ext toolkit.notebook``: IPython magics for profiling and the JIT.

- ``%%profile``: the cell under the op profiler; prints the key-averages table.
- ``%%pyprofile``: the cell under cProfile; writes a .prof file and embeds snakeviz.
- ``%lprun -f func statement``: line-by-line timings of ``func`` (line_profiler).
- ``%graph_for fn args``: the optimized graph a scripted or traced ``fn`` runs for ``args``.

Views (no IPython needed to build them; each draws itself in a notebook cell):

- ``GraphView(fn.graph_for(x))``: the IR as a layered DAG; fusion groups and blocks expand.
- ``ProfileView(prof)``: sortable op table, per-op bars, timeline.
- ``TrainingMonitor(total=n)``: live metric plots and a progress bar, at a bounded redraw rate.
- ``AutogradView(loss, params=dict(model.named_parameters()))``: the ``grad_fn`` graph, drawn by Graphviz.
- ``OnnxView(onnx_model, ir=traced)`` (or ``toolkit.onnx.show(path, ir)``): an exported ONNX graph beside the
  toolkit IR it came from.

Imported only on demand, so ``import toolkit`` never needs IPython.
"""

from __future__ import annotations

import importlib

_VIEWS = {"GraphView": "graph_view", "ProfileView": "profile_view", "TrainingMonitor": "monitor",
          "AutogradView": "autograd_view", "OnnxView": "onnx_view"}


def __getattr__(name: str):
    if name in _VIEWS:
        return getattr(importlib.import_module(f".{_VIEWS[name]}", __name__), name)
    raise AttributeError(f"module 'toolkit.notebook' has no attribute '{name}'")


def load_ipython_extension(ipython) -> None:
    """Register the magics (``%load_ext toolkit.notebook``)."""
    from .magics import ToolkitMagics  # optional: IPython (the magics)

    ipython.register_magics(ToolkitMagics)


def unload_ipython_extension(ipython) -> None:
    from .magics import stop_snakeviz_servers  # optional: IPython (the magics)

    stop_snakeviz_servers()
