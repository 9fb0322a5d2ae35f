"""Where an extension's headers and builds live, and the compiler flags every build shares.

The headers are toolkit's (``toolkit/include``, for ``#include <toolkit/extension.h>``), pybind11's and
Python's. They go on the command line with ``-isystem`` so that the compiler's dependency list
(``-MMD``) names only the extension's own headers, which the build cache then watches.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from ...backends.cpu.cache import cache_root

__all__ = ["include_paths", "get_default_build_root", "get_compiler", "common_cflags", "pybind11_include"]

#: ``toolkit/include``: the folder holding ``toolkit/extension.h``.
TOOLKIT_INCLUDE = Path(__file__).resolve().parents[2] / "include"
EXTENSION_HEADER = TOOLKIT_INCLUDE / "toolkit" / "extension.h"


def pybind11_include() -> str:
    """pybind11's header folder; a clear error naming the extra that installs it where it is missing."""
    try:
        import pybind11  # optional: the cpp extra
    except ImportError:
        raise RuntimeError(
            "toolkit's C++ extensions need pybind11, which is not installed. "
            "Install it with `pip install toolkit[cpp]` (or `pip install pybind11`)."
        ) from None
    return pybind11.get_include()


def pybind11_version() -> str:
    import pybind11  # optional: the cpp extra (pybind11_include has said where it is missing)

    return pybind11.__version__


def include_paths(cuda: bool = False, device_type: str = "cpu") -> list[str]:
    """The include folders an extension needs: toolkit's and pybind11's (Python's is added by the build).

    As ``torch.utils.cpp_extension.include_paths``; ``cuda=True`` has no headers to add on a CPU-only build.
    """
    if cuda or device_type not in ("cpu",):
        raise RuntimeError("toolkit builds CPU extensions only: there are no CUDA headers to include")
    return [str(TOOLKIT_INCLUDE), pybind11_include()]


def get_default_build_root() -> str:
    """``$TOOLKIT_EXTENSIONS_DIR``, else ``extensions/py<major><minor>_cpu`` under toolkit's cache folder.

    toolkit's cache folder is ``$TOOLKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolkit``, else
    ``~/.cache/toolkit`` (as for the generated kernels), as torch's is ``~/.cache/torch_extensions``.
    """
    root = os.environ.get("TOOLKIT_EXTENSIONS_DIR")
    if root:
        return os.path.realpath(os.path.expanduser(root))
    tag = f"py{sys.version_info.major}{sys.version_info.minor}_cpu"
    return os.path.realpath(cache_root() / "extensions" / tag)


def get_compiler() -> list[str]:
    """The C++ compiler command: ``$CXX`` (which may carry arguments), else ``c++``, else ``g++``."""
    cxx = os.environ.get("CXX")
    if cxx:
        return shlex.split(cxx)
    for name in ("c++", "g++", "clang++"):
        if shutil.which(name):
            return [name]
    raise RuntimeError("no C++ compiler found: install g++ (or set CXX to the compiler's path)")


def compiler_identity(compiler: list[str]) -> str:
    """The compiler's resolved path, size and modification time: part of the cache key, read without running it."""
    exe = shutil.which(compiler[0]) or compiler[0]
    path = os.path.realpath(exe)
    try:
        st = os.stat(path)
    except OSError:
        return " ".join(compiler)
    return f"{' '.join(compiler)}|{path}|{st.st_size}|{st.st_mtime_ns}"


def common_cflags(name: str) -> list[str]:
    """The flags of every compile: the module's name macros, the include folders, C++17 and PIC.

    ``TORCH_EXTENSION_NAME`` is defined beside ``TOOLKIT_EXTENSION_NAME`` so that sources written for
    PyTorch (``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)``) compile unchanged.
    """
    includes = [str(TOOLKIT_INCLUDE), pybind11_include(), sysconfig.get_paths()["include"]]
    flags = [f"-DTOOLKIT_EXTENSION_NAME={name}", f"-DTORCH_EXTENSION_NAME={name}"]
    for path in dict.fromkeys(includes):
        flags += ["-isystem", path]
    return flags + ["-fPIC", "-std=c++17", "-fvisibility=hidden"]
