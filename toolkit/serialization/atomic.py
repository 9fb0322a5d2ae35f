"""Replace a checkpoint atomically, and leave no temporary file behind when the writer is killed.

The writing itself is :func:`toolkit._core.files.write_atomic`: a temporary file in the target's directory,
fsynced and renamed over the target, so a crash at any moment leaves either the old file or the new one, never
a mix; on Linux that file is unnamed (``O_TMPFILE``) until it is complete, so the OS frees it when the writer
dies (SIGKILL, power loss of the process, the OOM killer). Where an unnamed file is not available (other
systems, file systems without it) the data is written under a temporary name directly, and this module names
it so that a later save can tell whose it is:

- The temporary name is ``.<target>.toolkit-save-<host>-<pid>-<start>-<random>.tmp``, with a hash of the host
  name, the writer's process id and its start time. Every save first removes the temporary files of earlier
  saves to the same path whose writer is gone: same host, and no live process with that id and start time (a
  process id reused since, as by PID 1 of a restarted container, does not keep an orphan alive; a concurrent
  live writer, in this process or another, keeps its file).

Example::

    write_atomically("model.pt", lambda f: f.write(payload))
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
import zlib
from collections.abc import Callable
from typing import IO

from .._core.files import MAX_NAME_KEPT, open_mode, write_atomic

_TAG = ".toolkit-save-"
_SUFFIX = ".tmp"
#: Whether to try an unnamed (O_TMPFILE) file first; tests turn it off to exercise the named path.
_UNNAMED = True


@functools.cache
def _host() -> str:
    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def _proc_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot) and whether it still runs, from /proc;
    None where /proc cannot tell, ``""`` for a zombie (it has stopped writing for good)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the command name in (...) may hold spaces
    if len(fields) < 20:
        return None
    return "" if fields[0] in (b"Z", b"X") else fields[19].decode()


def _prefix(path: str) -> str:
    return "." + os.path.basename(path)[:MAX_NAME_KEPT] + _TAG


def temp_path(path: str) -> str:
    """A fresh temporary name beside ``path`` that names this host, process and process start time."""
    pid = os.getpid()
    start = _proc_start(pid) or "0"
    name = f"{_prefix(path)}{_host()}-{pid}-{start}-{secrets.token_hex(4)}{_SUFFIX}"
    return os.path.join(os.path.dirname(os.path.abspath(path)), name)


def _writer_alive(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        pass
    now = _proc_start(pid)
    if now is None or start == "0":
        return True  # cannot tell a reused id from the writer itself: keep the file
    return now == start


def remove_orphans(path: str) -> list[str]:
    """Delete the temporary files of earlier saves to ``path`` whose writing process has died; return their
    paths. Files of other hosts, of live writers, and any other file are left alone."""
    if os.name != "posix":  # os.kill(pid, 0) is the liveness probe only on POSIX
        return []
    directory = os.path.dirname(os.path.abspath(path))
    prefix, host = _prefix(path), _host()
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(_SUFFIX)):
            continue
        parts = name[len(prefix):-len(_SUFFIX)].split("-")
        if len(parts) != 4 or parts[0] != host or not parts[1].isdigit() or not parts[2].isdigit():
            continue
        pid = int(parts[1])
        if pid <= 0 or _writer_alive(pid, parts[2]):
            continue
        full = os.path.join(directory, name)
        try:
            os.unlink(full)
        except OSError:
            continue
        removed.append(full)
    return removed


def write_atomically(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Replace ``path`` with what ``write(file)`` writes, atomically; a failed or killed write leaves the old
    file and, after the next call for the same path at the latest, no temporary file."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    remove_orphans(path)
    write_atomic(path, write, temp=temp_path(path), unnamed=_UNNAMED,
                 mode=open_mode(path))  # as open() leaves it
