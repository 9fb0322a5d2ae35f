"""Every notebook's code cells run top to bottom (in-process here; the notebook issue adds real kernels)."""

from __future__ import annotations

import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = os.path.join(ROOT, "notebooks")


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb")))
def test_notebook_cells_run(name):
    with open(os.path.join(NOTEBOOKS, name)) as f:
        nb = json.load(f)
    namespace: dict = {"__name__": "__main__"}
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code_cells
    for i, cell in enumerate(code_cells):
        src = "".join(cell["source"])
        exec(compile(src, f"{name}[cell {i}]", "exec"), namespace)
