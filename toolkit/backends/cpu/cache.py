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
    """Make ``path`` hold ``text``: write a temp file, then link it into place (atomic; never a torn file).

    An existing file with the same text is left untouched (returns False); a
    different one is replaced atomically.
    """
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            os.link(tmp, path)  # fails if another process got there first: keep its (identical) file
        except FileExistsError:
            if path.read_text(encoding="utf-8") != text:
                os.replace(tmp, path)
        except OSError:  # no hard links here
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return True


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
