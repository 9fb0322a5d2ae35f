"""The IPython magics of ``toolkit.notebook`` (see the package docstring)."""

from __future__ import annotations

import atexit
import cProfile
import os
import shlex
import urllib.parse

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import IFrame, display

from ..profiler import profile
from ..profiler.python import snakeviz_command, start_snakeviz, summary, write_pstats
from .profile_view import ProfileView

_SERVER = None  # the kernel's one snakeviz server (SnakevizServer), reused by every %%pyprofile


def snakeviz_server():
    """The running snakeviz server of this kernel, or None (none started yet, or it has died)."""
    return _SERVER if _SERVER is not None and _SERVER.process.poll() is None else None


def snakeviz_url(server, path: str) -> str:
    """The page of ``path`` on ``server``: snakeviz serves any .prof file named in its URL."""
    return f"http://{server.host}:{server.port}/snakeviz/{urllib.parse.quote(os.path.abspath(path), safe='')}"


def stop_snakeviz_servers() -> int:
    """Stop the snakeviz server the magics started (if any); returns how many were running."""
    global _SERVER
    server, _SERVER = _SERVER, None
    if server is None:
        return 0
    alive = server.process.poll() is None
    server.stop()
    return int(alive)


atexit.register(stop_snakeviz_servers)


@magics_class
class ToolkitMagics(Magics):
    """``%%profile``, ``%%pyprofile``, ``%lprun``, ``%graph_for`` and ``%snakeviz_stop``."""

    def _run(self, cell: str) -> None:
        """Run cell source in the user namespace, with IPython syntax, and raise what it raises."""
        result = self.shell.run_cell(cell, store_history=False, silent=False)
        result.raise_error()

    @magic_arguments()
    @argument("-s", "--sort", default="cpu_time_total", help="sort key of the table (default: cpu_time_total)")
    @argument("-r", "--row-limit", type=int, default=20, help="rows in the table (default: 20)")
    @argument("--record-shapes", action="store_true", help="record input shapes (and group rows by them)")
    @argument("--memory", action="store_true", help="profile_memory=True: bytes allocated per op")
    @argument("--flops", action="store_true", help="with_flops=True: FLOP estimates of matmul/conv/linear")
    @argument("-t", "--trace", default=None, help="also write a Chrome trace to this path (.gz: compressed)")
    @argument("--no-view", action="store_true", help="print the table only (no ProfileView under it)")
    @cell_magic
    def profile(self, line: str, cell: str) -> None:
        """Profile the cell's ops, print PyTorch's key-averages table and show a ``ProfileView``."""
        opts = parse_argstring(self.profile, line)
        with profile(record_shapes=opts.record_shapes, profile_memory=opts.memory,
                     with_flops=opts.flops) as prof:
            self._run(cell)
        averages = prof.key_averages(group_by_input_shape=opts.record_shapes)
        print(averages.table(sort_by=opts.sort, row_limit=opts.row_limit))
        if opts.trace:
            prof.export_chrome_trace(opts.trace)
            print(f"Chrome trace written to {opts.trace}")
        if not opts.no_view:
            display(ProfileView(prof, row_limit=opts.row_limit))

    @magic_arguments()
    @argument("-o", "--out", default=None, help="where to write the .prof file (default: a temporary file)")
    @argument("-s", "--sort", default="cumulative", help="pstats sort key of the summary (default: cumulative)")
    @argument("-l", "--limit", type=int, default=15, help="functions in the summary (default: 15)")
    @argument("--no-server", action="store_true", help="print the snakeviz command instead of starting it")
    @argument("--height", type=int, default=600, help="height of the embedded snakeviz view")
    @cell_magic
    def pyprofile(self, line: str, cell: str) -> None:
        """cProfile the cell, write the .prof file, and show it in snakeviz (served on 127.0.0.1)."""
        opts = parse_argstring(self.pyprofile, line)
        code = self.shell.transform_cell(cell)
        prof = cProfile.Profile()
        try:
            prof.runctx(code, self.shell.user_ns, self.shell.user_ns)
        finally:
            path = write_pstats(prof, opts.out)
        print(summary(path, opts.sort, opts.limit))
        print(f"profile written to {path}")
        command = shlex.join(snakeviz_command(path))
        if opts.no_server:
            print(f"view it with: {command}")
            return
        global _SERVER
        server = snakeviz_server()
        if server is None:
            if _SERVER is not None:  # it died: forget it, start another
                stop_snakeviz_servers()
            try:
                server = start_snakeviz(path)
            except (OSError, RuntimeError) as e:
                print(f"snakeviz could not start ({e}); view the profile with: {command}")
                return
            _SERVER = server
        url = snakeviz_url(server, path)
        print(f"snakeviz serving at {url}")
        display(IFrame(url, width="100%", height=opts.height))

    @line_magic
    def snakeviz_stop(self, line: str = "") -> None:
        """Stop the snakeviz server ``%%pyprofile`` started."""
        n = stop_snakeviz_servers()
        print(f"stopped {n} snakeviz server{'s' if n != 1 else ''}")

    @line_magic
    def lprun(self, line: str) -> None:
        """``%lprun -f func [-f other] statement``: line_profiler timings of the named functions."""
        from line_profiler import LineProfiler  # optional: line_profiler

        args = shlex.split(line, posix=False)
        funcs, i = [], 0
        while i < len(args) and args[i] == "-f":
            if i + 1 >= len(args):
                raise ValueError("%lprun: -f needs a function name")
            funcs.append(self.shell.ev(args[i + 1]))
            i += 2
        statement = line.split(args[i - 1], 1)[1].strip() if funcs else line.strip()
        if not funcs or not statement:
            raise ValueError("usage: %lprun -f func [-f func2 ...] statement")
        lp = LineProfiler()
        for f in funcs:
            lp.add_function(f)
        try:
            lp.runctx(statement, self.shell.user_ns, self.shell.user_ns)
        finally:
            lp.print_stats(stripzeros=True)

    @line_magic
    def graph_for(self, line: str) -> None:
        """``%graph_for fn arg1, arg2``: draw ``fn.graph_for(arg1, arg2)`` (the graph after fusion).

        The output is a ``GraphView`` drawing; its ``text/plain`` is the graph's text, as ``print`` shows it."""
        parts = line.strip().split(None, 1)
        if not parts:
            raise ValueError("usage: %graph_for fn arg1, arg2, ...")
        fn = self.shell.ev(parts[0])
        args = self.shell.ev(f"({parts[1]},)") if len(parts) > 1 else ()
        if not hasattr(fn, "graph_for"):
            raise TypeError(f"%graph_for: {parts[0]} has no graph_for (use toolkit.jit.trace or toolkit.jit.script)")
        from .graph_view import GraphView  # optional: the graph view needs PIL

        result = fn.graph_for(*args)
        bundle = GraphView(result)._repr_mimebundle_()
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        display({**data, "text/plain": str(result)}, metadata=metadata or None, raw=True)
