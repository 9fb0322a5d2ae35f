"""The on-disk home of generated kernels: one source file per kernel, named by the hash of its source.

numba can only cache functions whose source is a real file, so generated
kernels are written as modules under ``$TOOLKIT_CACHE_DIR/kernels`` (default
``~/.cache/toolkit/kernels``) and imported from there; numba's ``cache=True``
then keeps their machine code in ``kernels/__pycache__`` across processes.
A file is written once, atomically, and never rewritten while its content is
right, so numba's cache (keyed on the file's timestamp) stays valid.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

from ..._core.files import write_atomic

_lock = threading.RLock()


def cache_root() -> Path:
    """``$TOOLKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolkit``, else ``~/.cache/toolkit``."""
    root = os.environ.get("TOOLKIT_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolkit"


def kernel_dir() -> Path:
    """Where generated kernel modules live (created on demand; a temp dir if the cache is read-only)."""
    d = cache_root() / "kernels"
    try:
        d.mkdir(parents=True, exist_ok=True)
        if os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    d = Path(tempfile.gettempdir()) / f"toolkit-{os.getuid() if hasattr(os, 'getuid') else 'user'}" / "kernels"
    d.mkdir(parents=True, exist_ok=True)
    return d


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:32]


def write_once(path: Path, text: str) -> bool:
    """Make ``path`` hold ``text``, atomically (never a torn file); return whether this call wrote it.

    An existing file with the same text is left untouched (returns False), so numba's cache of it stays
    valid; a different one is replaced atomically. When another process places the file first, its file
    is kept if it holds the same text. No fsync: the text is compared on every load, so a file that a
    machine crash lost or truncated is simply written again.
    """
    if _holds(path, text):
        return False
    if not write_atomic(path, text, once=True, durable=False) and not _holds(path, text):
        write_atomic(path, text, durable=False)
    return True


def _holds(path: Path, text: str) -> bool:
    try:
        return path.read_text(encoding="utf-8") == text
    except (FileNotFoundError, UnicodeDecodeError):
        return False


def load_source(source: str, prefix: str = "kernel") -> ModuleType:
    """Import generated ``source`` as a module backed by ``<kernel_dir>/<prefix>_<sha>.py`` (once per process)."""
    sha = source_hash(source)
    name = f"toolkit_generated_{prefix}_{sha}"
    with _lock:
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        path = kernel_dir() / f"{prefix}_{sha}.py"
        write_once(path, source)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod
