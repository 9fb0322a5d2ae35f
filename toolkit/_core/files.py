"""Write a file atomically: whoever reads it sees the old contents or the new ones, never a part.

Every file the project writes for others to read (checkpoints, generated kernel modules, saved HTML views,
the visdom page's assets) goes through :func:`write_atomic`. The contents go to a temporary file in the
target's folder, which is flushed, fsynced and renamed over the target (``os.replace`` is atomic within one
file system); a failed write removes its temporary file and leaves the old target as it was.

On Linux the temporary file is first created unnamed (``O_TMPFILE``), so that a writer killed mid-write
(SIGKILL, the OOM killer) leaves nothing behind: the OS frees the file when its last descriptor closes. Only
once it is complete and on disk is it linked under its temporary name (``linkat`` through
``/proc/self/fd``) and renamed over the target, so that name exists for the microseconds between the two
calls. Elsewhere the data is written under the temporary name directly.

Example::

    write_atomic("view.html", page, mode=0o666)                 # text, readable as open() would make it
    write_atomic("model.pt", lambda f: f.write(payload))        # streamed into the open binary file
    write_atomic(kernel_path, source, once=True)                # keeps a file another process placed first
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from typing import IO, Any

__all__ = ["write_atomic"]

#: What ``write_atomic`` writes: bytes, text, or a function that writes into the open file.
Data = bytes | bytearray | memoryview | str | Callable[[IO[Any]], object]

_UMASK_LOCK = threading.Lock()
MAX_NAME_KEPT = 96  # characters of the target's name kept in a temporary name, which must fit NAME_MAX
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def write_atomic(path: str | os.PathLike, data: Data, *, encoding: str | None = None, once: bool = False,
                 mode: int | None = None, makedirs: bool = False, durable: bool = True, temp: str | None = None,
                 unnamed: bool = True) -> bool:
    """Make ``path`` hold ``data``, atomically; return whether this call placed the file.

    Args:
        data: bytes, a ``str`` (written as text in ``encoding``, UTF-8 by default), or a function called with
            the open temporary file (binary, or text when ``encoding`` is given) that writes the contents.
        once: place the file only where ``path`` does not exist yet (a hard link, which fails on an existing
            name), so a cache never clobbers the file another process placed first; returns False then. On a
            file system without hard links the file replaces the target as without ``once``.
        mode: the permission bits of the new file, less the process's umask, as ``open`` would give them;
            None keeps the temporary file's private ``0o600``.
        makedirs: create the target's folder (and its parents) first.
        durable: fsync the file and then its folder, so the new contents survive a crash of the machine;
            False skips both, for files cheap to make again (a cache checked on every read, the hundreds of
            files of an install).
        temp: the temporary path (in the target's folder); by default a fresh name ``.<target>.<random>.tmp``.
        unnamed: try an unnamed temporary file first where the system has them (see the module's docstring).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if makedirs:
        os.makedirs(directory, exist_ok=True)
    if isinstance(data, str) and encoding is None:
        encoding = "utf-8"
    write = data if callable(data) else lambda f: f.write(data)
    tmp = temp or _temp_path(directory, path)
    if not (unnamed and _write_unnamed(directory, tmp, write, encoding, durable)):
        _write_named(tmp, write, encoding, durable)
    try:
        if mode is not None:
            os.chmod(tmp, mode & ~_umask())
        placed = _place(tmp, path, once)
    except BaseException:
        _unlink(tmp)
        raise
    if placed and durable:
        _fsync_directory(directory)
    return placed


def open_mode(path: str | os.PathLike) -> int:
    """The permission bits ``open(path, "wb")`` leaves on ``path``, for ``write_atomic``'s ``mode``: an existing
    file keeps its own (re-saving a private checkpoint must not widen it), a new one gets ``0o666``."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666


def _temp_path(directory: str, path: str) -> str:
    return os.path.join(directory, f".{os.path.basename(path)[:MAX_NAME_KEPT]}.{secrets.token_hex(8)}.tmp")


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's ``/proc/self/status``):
    setting it to 0 and back, the only portable way, opens a moment in which another thread's new files are
    created world-writable."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        umask = os.umask(0)
        os.umask(umask)
    return umask


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _open(fd: int, encoding: str | None) -> IO[Any]:
    return os.fdopen(fd, "w", encoding=encoding) if encoding else os.fdopen(fd, "wb")


def _write_and_sync(fh: IO[Any], write: Callable[[IO[Any]], object], durable: bool) -> None:
    write(fh)
    fh.flush()
    if durable:
        os.fsync(fh.fileno())


def _write_unnamed(directory: str, tmp: str, write: Callable[[IO[Any]], object], encoding: str | None,
                   durable: bool) -> bool:
    """Write into an unnamed file in ``directory`` and link it as ``tmp`` once it is complete; False where the
    system or file system cannot (nothing is left behind then, and the caller writes a named file)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return False
    try:
        fd = os.open(directory, flag | os.O_WRONLY | _CLOEXEC, 0o600)
    except OSError:
        return False
    with _open(fd, encoding) as fh:
        proc = f"/proc/self/fd/{fd}"
        if not os.path.exists(proc):
            return False
        _write_and_sync(fh, write, durable)
        try:
            dfd = os.open(directory, os.O_RDONLY | _CLOEXEC)
        except OSError:
            return False
        try:  # a dir fd makes os.link call linkat(..., AT_SYMLINK_FOLLOW), which names the unnamed inode
            os.link(proc, os.path.basename(tmp), dst_dir_fd=dfd, follow_symlinks=True)
        except OSError:
            return False
        finally:
            os.close(dfd)
    return True


def _write_named(tmp: str, write: Callable[[IO[Any]], object], encoding: str | None, durable: bool) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with _open(fd, encoding) as fh:
            _write_and_sync(fh, write, durable)
    except BaseException:
        _unlink(tmp)
        raise


def _place(tmp: str, path: str, once: bool) -> bool:
    """Put the finished ``tmp`` at ``path``; with ``once`` only where ``path`` does not exist (False then)."""
    if once:
        try:
            os.link(tmp, path)
        except FileExistsError:
            _unlink(tmp)
            return False
        except OSError:  # no hard links on this file system: replace instead
            pass
        else:
            _unlink(tmp)
            return True
    os.replace(tmp, path)
    return True


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
