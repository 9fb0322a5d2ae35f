"""``toolkit.utils.cpp_extension``: C++ extensions, as ``torch.utils.cpp_extension``.

Two routes build the same thing, a pybind11 module whose functions take and return toolkit tensors
through ``#include <toolkit/extension.h>`` (``toolkit/include/``; see the header for its ``toolkit::Tensor``):

- just in time: :func:`load` (source files) and :func:`load_inline` (source strings, with ``functions=``
  generating the bindings) compile with the system's C++ compiler in one plain call (no ninja) and cache
  the library by a hash of the sources, flags, compiler and versions (:mod:`.jit`);
- ahead of time: :func:`CppExtension` and :class:`BuildExtension` in a ``setup.py`` (:mod:`.setup_tools`).

pybind11 comes with the ``cpp`` extra (``pip install toolkit[cpp]``). Builds are CPU-only: CUDA sources and
``with_cuda=True`` are refused with an error.

Example::

    from toolkit.utils.cpp_extension import load_inline
    ext = load_inline("scale", "toolkit::Tensor scale(toolkit::Tensor x, double a) { ... }", functions=["scale"])
    y = ext.scale(toolkit.ones(3), 2.0)
"""

import shutil

from .flags import get_compiler, get_default_build_root, include_paths
from .jit import load, load_inline
from .setup_tools import BuildExtension, CppExtension

__all__ = ["load", "load_inline", "CppExtension", "BuildExtension", "include_paths", "get_default_build_root",
           "get_compiler", "verify_ninja_availability", "is_ninja_available"]


def is_ninja_available() -> bool:
    """Whether ninja is on PATH. toolkit's builds do not use it (one compiler call builds an extension)."""
    return shutil.which("ninja") is not None


def verify_ninja_availability() -> None:
    """Raise RuntimeError where ninja is missing, as torch's (for code that checks before building)."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions")
