"""Replace a file atomically, and leave no temporary file behind when the writer is killed.

The new contents go to a temporary file in the target's directory, which is fsynced and renamed over the target:
a crash at any moment leaves either the old file or the new one, never a mix. Two things keep a killed writer
(SIGKILL, power loss of the process, the OOM killer) from leaving its temporary file behind:

- On Linux the file is first created unnamed (``O_TMPFILE``): the OS frees it when the writer dies. Only once
  it is complete and on disk is it linked under a temporary name (``linkat`` through ``/proc/self/fd``) and
  renamed over the target, so a name exists for the microseconds between those two calls.
- The temporary name says whose it is: ``.<target>.toolkit-save-<host>-<pid>-<start>-<random>.tmp``, with a
  hash of the host name, the writer's process id and its start time. Every save first removes the temporary
  files of earlier saves to the same path whose writer is gone: same host, and no live process with that id
  and start time (a process id reused since, as by PID 1 of a restarted container, does not keep an orphan
  alive; a concurrent live writer, in this process or another, keeps its file). Where ``O_TMPFILE`` is not
  available (other systems, file systems without it) the data is written under that name directly.

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

_TAG = ".toolkit-save-"
_SUFFIX = ".tmp"
_MAX_BASE = 96  # characters of the target's name kept in the temporary name, which must fit NAME_MAX
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
    return "." + os.path.basename(path)[:_MAX_BASE] + _TAG


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


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_and_sync(fh: IO[bytes], write: Callable[[IO[bytes]], None]) -> None:
    write(fh)
    fh.flush()
    os.fsync(fh.fileno())


def _write_unnamed(directory: str, tmp: str, write: Callable[[IO[bytes]], None]) -> bool:
    """Write into an unnamed file in ``directory`` and link it as ``tmp`` once it is on disk; False where the
    system or file system cannot (nothing is left behind then, and the caller writes a named file)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not (_UNNAMED and flag):
        return False
    try:
        fd = os.open(directory, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return False
    with os.fdopen(fd, "wb") as fh:
        proc = f"/proc/self/fd/{fd}"
        if not os.path.exists(proc):
            return False
        _write_and_sync(fh, write)
        try:
            dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return False
        try:  # a dir fd makes os.link call linkat(..., AT_SYMLINK_FOLLOW), which names the unnamed inode
            os.link(proc, os.path.basename(tmp), dst_dir_fd=dfd, follow_symlinks=True)
        except OSError:
            return False
        finally:
            os.close(dfd)
    return True


def _write_named(tmp: str, write: Callable[[IO[bytes]], None]) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_and_sync(fh, write)
    except BaseException:
        _unlink(tmp)
        raise


def _fsync_directory(directory: str) -> None:
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_atomically(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Replace ``path`` with what ``write(file)`` writes, atomically; a failed or killed write leaves the old
    file and, after the next call for the same path at the latest, no temporary file."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    remove_orphans(path)
    tmp = temp_path(path)
    if not _write_unnamed(directory, tmp, write):
        _write_named(tmp, write)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_directory(directory)
