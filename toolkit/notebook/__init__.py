"""``%load_ext toolkit.notebook``: IPython magics for profiling and the JIT.

- ``%%profile``: the cell under the op profiler; prints the key-averages table.
- ``%%pyprofile``: the cell under cProfile; writes a .prof file and embeds snakeviz.
- ``%lprun -f func statement``: line-by-line timings of ``func`` (line_profiler).
- ``%graph_for fn args``: the optimized graph a scripted or traced ``fn`` runs for ``args``.

Imported only on demand, so ``import toolkit`` never needs IPython.
"""

from __future__ import annotations


def load_ipython_extension(ipython) -> None:
    """Register the magics (``%load_ext toolkit.notebook``)."""
    from .magics import ToolkitMagics

    ipython.register_magics(ToolkitMagics)


def unload_ipython_extension(ipython) -> None:
    from .magics import stop_snakeviz_servers

    stop_snakeviz_servers()
