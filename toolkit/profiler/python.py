"""Python-level profiling: cProfile into pstats files, and snakeviz to look at them.

    result, path = toolkit.profiler.python.cprofile(train_step, batch, path="step.prof")
    with toolkit.profiler.python.start_snakeviz(path) as server:
        print(server.url)            # open in a browser; the server stops on exit

``snakeviz_command(path)`` gives the command line when no server should be started here.
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable


def write_pstats(profiler: cProfile.Profile, path: str | None = None) -> str:
    """Dump a finished ``cProfile.Profile`` to ``path`` (a new temporary ``.prof`` file when None)."""
    if path is None:
        fd, path = tempfile.mkstemp(suffix=".prof", prefix="toolkit-")
        os.close(fd)
    profiler.create_stats()
    profiler.dump_stats(path)
    return path


def cprofile(fn: Callable, *args, path: str | None = None, **kwargs):
    """Run ``fn(*args, **kwargs)`` under cProfile; returns ``(result, path of the .prof file)``."""
    prof = cProfile.Profile()
    try:
        result = prof.runcall(fn, *args, **kwargs)
    finally:
        path = write_pstats(prof, path)
    return result, path


def summary(path: str, sort: str = "cumulative", limit: int = 20) -> str:
    """The pstats text summary of a .prof file (top ``limit`` functions by ``sort``)."""
    out = io.StringIO()
    pstats.Stats(path, stream=out).strip_dirs().sort_stats(sort).print_stats(limit)
    return out.getvalue()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def snakeviz_command(path: str, host: str = "127.0.0.1", port: int | None = None) -> list[str]:
    """The command that serves ``path`` with snakeviz (server mode: no browser is opened)."""
    cmd = [sys.executable, "-m", "snakeviz", "-s", "-H", host]
    if port is not None:
        cmd += ["-p", str(port)]
    return cmd + [os.path.abspath(path)]


class SnakevizServer:
    """A snakeviz process serving one .prof file on loopback; ``stop()`` (or leaving ``with``) ends it."""

    def __init__(self, path: str, host: str = "127.0.0.1", port: int | None = None, timeout: float = 30.0):
        self.path = os.path.abspath(path)
        self.host = host
        self.port = port or free_port(host)
        self.command = snakeviz_command(self.path, host, self.port)
        self.url = f"http://{host}:{self.port}/snakeviz/{urllib.parse.quote(self.path, safe='')}"
        self._log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=self._log,
                                        stdin=subprocess.DEVNULL)
        try:
            self._wait(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log.seek(0)
                err = self._log.read().decode(errors="replace")
                raise RuntimeError(f"snakeviz exited with code {self.process.returncode}: {err.strip()}")
            try:
                with urllib.request.urlopen(self.url, timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        raise RuntimeError(f"snakeviz did not answer on {self.url} within {timeout:.0f} s")

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

    def __enter__(self) -> SnakevizServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_snakeviz(path: str, host: str = "127.0.0.1", port: int | None = None,
                   timeout: float = 30.0) -> SnakevizServer:
    """Serve ``path`` with snakeviz on ``host`` (a free port by default) and wait until it answers."""
    return SnakevizServer(path, host, port, timeout)
