"""Run a program written for PyTorch with toolkit in torch's place, unchanged.

From a shell::

    python -m toolkit.as_torch train.py --epochs 1      # runs train.py as __main__, argv = [train.py, ...]

From a notebook (before its first ``import torch``)::

    import toolkit.as_torch
    toolkit.as_torch.install()
    import torch                      # is toolkit
    import torchvision.transforms     # is toolkit.vision.transforms

An import hook (a ``sys.meta_path`` finder, first in the list, so it wins over an installed PyTorch) answers for
``torch``, ``torch.<sub>``, ``torchvision`` and ``torchvision.<sub>``: each name resolves to the toolkit module of
the same path (``torch.nn.functional`` is ``toolkit.nn.functional``, ``torch.utils.data`` is
``toolkit.utils.data``), with the renames in ``RENAMES`` for the packages toolkit names differently
(``torchvision`` is ``toolkit.vision``). The alias is the toolkit module object itself, so ``torch.nn is
toolkit.nn`` and a class defined by the program against ``torch.nn.Module`` is a toolkit module. A ``torch.<sub>``
that toolkit lacks fails at once with ``ModuleNotFoundError`` naming both modules, rather than falling through
to a real PyTorch that may be installed next to toolkit and mixing the two libraries' tensors.

The program runs through ``runpy`` as ``__main__`` with ``sys.argv`` set to the script and its arguments and the
script's folder first on ``sys.path``, as ``python script.py`` would. Worker processes started by ``fork`` (the
default on Linux, used by ``DataLoader(num_workers=...)``) inherit the hook; a process started by ``spawn``
(``mp.set_start_method('spawn')``, as the Hogwild example does) installs it before it re-imports the script, as its
first step (see ``_InstallInChild``). ``forkserver`` children are not covered.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import multiprocessing.spawn
import os
import runpy
import sys
import types
from collections.abc import Sequence

__all__ = ["RENAMES", "TorchAliasFinder", "install", "main", "run_path", "toolkit_name", "uninstall"]

# Top-level packages a torch program imports, and the toolkit package each one is. Longest prefix wins, so an
# entry for a submodule (``"torch.foo": "toolkit.bar"``) would override its package's rule.
RENAMES: dict[str, str] = {
    "torch": "toolkit",
    "torchvision": "toolkit.vision",
}


def toolkit_name(fullname: str) -> str | None:
    """The toolkit module that stands for the module ``fullname`` a torch program imports, or None when the
    name is not one the hook answers for (``toolkit_name("torch.nn.functional") == "toolkit.nn.functional"``,
    ``toolkit_name("torchvision.datasets") == "toolkit.vision.datasets"``, ``toolkit_name("numpy") is None``)."""
    prefix = fullname
    while True:
        if prefix in RENAMES:
            return RENAMES[prefix] + fullname[len(prefix):]
        if "." not in prefix:
            return None
        prefix = prefix.rpartition(".")[0]


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported toolkit module as the module of another name.

    The import system stamps the spec it was given on the module it loads (``module.__spec__``); the toolkit
    module keeps its own, so its relative imports and pickling still see its real name.
    """

    def __init__(self, module: types.ModuleType):
        self.module = module
        self.own_spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.own_spec


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` finder that resolves ``torch.*`` and ``torchvision.*`` to toolkit's modules."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None):
        target_name = toolkit_name(fullname)
        if target_name is None:
            return None
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as e:
            if e.name != target_name:
                raise  # a module the toolkit module itself imports is missing: that error is the true one
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: toolkit has no such module ({target_name!r} does not exist)",
                name=fullname,
            ) from None
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
        )


_FINDER = TorchAliasFinder()
_preparation_data = multiprocessing.spawn.get_preparation_data


class _InstallInChild:
    """An entry of the data a ``spawn``-ed child process unpickles before it re-imports the parent's ``__main__``
    script; unpickling it calls ``install()`` there, so the script's ``import torch`` is toolkit in the child too."""

    def __reduce__(self):
        return install, ()


def _preparation_data_installing_hook(name: str) -> dict:
    data = _preparation_data(name)
    data["toolkit.as_torch"] = _InstallInChild()
    return data


def install() -> None:
    """Make ``import torch`` (and ``torch.<sub>``, ``torchvision``...) import toolkit from now on, in this process.

    Call it before the program's first ``import torch``. Raises ``RuntimeError`` when PyTorch itself is already
    imported: the program would otherwise hold a mix of both libraries' objects (restart the interpreter or
    notebook kernel, then install first).
    """
    if _FINDER in sys.meta_path:
        return
    real = [name for name in ("torch", "torchvision") if name in sys.modules and toolkit_name(name) is not None
            and sys.modules[name] is not sys.modules.get(toolkit_name(name))]
    if real:
        raise RuntimeError(
            f"toolkit.as_torch.install(): {', '.join(real)} is already imported as the real library; install "
            "the hook before the first `import torch` (restart the interpreter or kernel)"
        )
    sys.meta_path.insert(0, _FINDER)
    multiprocessing.spawn.get_preparation_data = _preparation_data_installing_hook


def uninstall() -> None:
    """Remove the hook and forget the ``torch.*`` aliases it made; toolkit's own modules stay imported."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    multiprocessing.spawn.get_preparation_data = _preparation_data
    for name in [n for n in sys.modules if toolkit_name(n) is not None]:
        if sys.modules[name] is sys.modules.get(toolkit_name(name)):
            del sys.modules[name]


def run_path(script: str, args: Sequence[str] = ()) -> dict:
    """Run the torch program ``script`` with toolkit as torch, as ``python script args...`` would: ``__main__``,
    ``sys.argv == [script, *args]``, the script's folder first on ``sys.path``. Returns its globals."""
    install()
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    return runpy.run_path(script, run_name="__main__")


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m toolkit.as_torch script.py [args...]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m toolkit.as_torch script.py [args...]\n\n"
              "Runs a program written for PyTorch with toolkit in place of torch (and torchvision).")
        raise SystemExit(0 if argv else 2)
    # ``python -m`` put the current folder first on sys.path; ``python script.py`` puts the script's folder there.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    run_path(argv[0], argv[1:])


if __name__ == "__main__":
    # One hook per process: run the imported module's ``main``, so a program that imports toolkit.as_torch itself
    # finds the finder already installed.
    importlib.import_module("toolkit.as_torch").main()
