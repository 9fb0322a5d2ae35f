"""The ahead-of-time route: ``CppExtension`` and ``BuildExtension`` for a ``setup.py``, as torch's.

Example (``python setup.py build_ext --inplace`` or ``pip install .``)::

    from setuptools import setup
    from toolkit.utils.cpp_extension import BuildExtension, CppExtension

    setup(name="lltm_cpp", ext_modules=[CppExtension("lltm_cpp", ["lltm.cpp"])],
          cmdclass={"build_ext": BuildExtension})
"""

from __future__ import annotations

from typing import Any

import setuptools
from setuptools.command.build_ext import build_ext

from .flags import include_paths

__all__ = ["CppExtension", "BuildExtension"]


def CppExtension(name: str, sources: list[str], *args: Any, **kwargs: Any) -> setuptools.Extension:
    """A ``setuptools.Extension`` for C++ with toolkit's and pybind11's headers on its include path."""
    kwargs["include_dirs"] = list(kwargs.get("include_dirs") or []) + include_paths()
    kwargs["language"] = "c++"
    return setuptools.Extension(name, sources, *args, **kwargs)


class BuildExtension(build_ext):
    """``build_ext`` that compiles C++ extensions with toolkit's flags.

    Each extension gets ``-DTOOLKIT_EXTENSION_NAME=<its last name part>`` (and ``TORCH_EXTENSION_NAME``),
    ``-std=c++17`` and hidden symbol visibility; ``extra_compile_args`` may be a list or torch's dict form
    (``{"cxx": [...], "nvcc": [...]}``, of which the ``cxx`` flags are used). ``use_ninja`` is accepted and
    ignored: setuptools' own compiler call builds each source. ``no_python_abi_suffix=True`` names the
    library ``<name>.so`` instead of ``<name>.cpython-311-....so``.
    """

    @classmethod
    def with_options(cls, **options: Any) -> type[BuildExtension]:
        """The class with ``options`` passed to every instance, for ``cmdclass``."""

        class cls_with_options(cls):  # noqa: N801 - torch's name for it
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.update(options)
                super().__init__(*args, **kwargs)

        return cls_with_options

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", False)
        super().__init__(*args, **kwargs)

    def build_extensions(self) -> None:
        for ext in self.extensions:
            args = ext.extra_compile_args
            if isinstance(args, dict):
                args = args.get("cxx", [])
            name = ext.name.split(".")[-1]
            ext.extra_compile_args = list(args or []) + [
                f"-DTOOLKIT_EXTENSION_NAME={name}", f"-DTORCH_EXTENSION_NAME={name}",
                "-std=c++17", "-fvisibility=hidden",
            ]
        super().build_extensions()

    def get_ext_filename(self, ext_name: str) -> str:
        filename = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            parts = filename.split(".")
            filename = ".".join(parts[:-2] + parts[-1:]) if len(parts) > 2 else filename
        return filename
