"""Checks shared by the LLTM extensions' tests: a model calling a library op, saved here, loaded in a fresh process
with and without the extension that registers the op."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from types import ModuleType

import toolkit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LOAD = r"""
import sys
sys.path[:0] = [{root!r}]
import toolkit
{register}
from tests.conftest import assert_close
inputs, expected = toolkit.load({data!r})
try:
    model = toolkit.jit.load({path!r})
except RuntimeError as e:
    print("LOAD ERROR:", e)
    raise SystemExit(3)
for got, want in zip(model(*inputs), expected):
    assert_close(got, want)
print("ok")
"""


def load_example(relpath: str, module_name: str) -> ModuleType:
    """An example file (``extensions/lltm.py``) run as a module of its own name: a fresh copy per test module."""
    spec = importlib.util.spec_from_file_location(module_name, os.path.join(ROOT, relpath))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def save_model(scripted, inputs: tuple, folder) -> tuple[str, str]:
    """The archive of ``scripted`` and a file with its inputs and eager outputs, in ``folder``."""
    path, data = os.path.join(folder, "model.pt"), os.path.join(folder, "data.pt")
    toolkit.jit.save(scripted, path)
    with toolkit.no_grad():
        expected = [t.detach() for t in scripted(*inputs)]
    toolkit.save((list(inputs), expected), data)
    return path, data


def load_in_fresh_process(path: str, data: str, register: str, env: dict | None = None):
    """Load the archive in a new interpreter after running ``register`` there; its completed process."""
    code = LOAD.format(root=ROOT, register=register, data=data, path=path)
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def assert_unregistered_load_fails(proc, qualname: str) -> None:
    assert proc.returncode == 3, proc.stderr[-3000:]
    message = proc.stdout
    assert f"the archive calls {qualname}, an op that is not registered in this process" in message, message
    assert "custom_op" in message and "import the module that defines it" in message, message
