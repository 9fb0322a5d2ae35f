"""The layers (ARCHITECTURE.md) hold: ``lint-imports`` checks pyproject.toml's contract on the code as it is.

A new import from a lower layer into a higher one (``toolkit.ops`` importing
``toolkit.dispatch``, say), at module level or inside a function, fails here.
"""

from __future__ import annotations

import ast
import io
import os
import shutil
import subprocess
import sys
import tokenize

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _lint_imports() -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(exe):
        pytest.skip("lint-imports is not installed (the dev extra installs import-linter)")
    return exe


def test_layers_import_only_downward():
    run = subprocess.run([_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "Contracts: 2 kept, 0 broken." in run.stdout


def test_an_upward_import_is_caught(tmp_path):
    # The contract must be able to fail: lint a copy of the package with one upward import added.
    copy = tmp_path / "repo"
    shutil.copytree(os.path.join(ROOT, "toolkit"), copy / "toolkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), copy / "pyproject.toml")
    runtime = copy / "toolkit" / "ops" / "runtime.py"
    runtime.write_text(runtime.read_text() + "\nfrom .. import dispatch  # upward\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = subprocess.run([_lint_imports(), "--no-cache"], cwd=copy, capture_output=True, text=True, env=env)
    assert run.returncode != 0
    assert "toolkit.ops is not allowed to import toolkit.dispatch" in run.stdout


def _commented_lines(source: str) -> set[int]:
    return {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT}


def test_imports_inside_functions_say_why():
    # An import inside a function is kept only for an optional dependency or a part of toolkit that
    # `import toolkit` must not load; its line says which. A load-time import cycle is no reason: the
    # modules are arranged so that imports go one way. Every other import belongs at the top of its module.
    silent = []
    for folder, _, files in os.walk(os.path.join(ROOT, "toolkit")):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                source = f.read()
            commented = _commented_lines(source)
            lines = source.splitlines()
            for func in ast.walk(ast.parse(source, rel)):
                if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(func):
                    if not isinstance(node, (ast.Import, ast.ImportFrom)):
                        continue
                    span = range(node.lineno, node.end_lineno + 1)
                    text = "\n".join(lines[i - 1] for i in span)
                    if not commented.intersection(span) or "# cycle" in text:
                        silent.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not silent, "imports inside functions without a reason on their line:\n" + "\n".join(sorted(set(silent)))
