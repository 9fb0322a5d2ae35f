"""Every notebook runs top to bottom on a real Jupyter kernel (nbclient), in a scratch directory.

The notebooks assert what they show, so a wrong result fails here as loudly as
an exception. Cells that draw views must produce their HTML.
"""

from __future__ import annotations

import os
import shutil
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
NAMES = sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb"))


def execute(name: str, workdir) -> nbformat.NotebookNode:
    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    shutil.copy(os.path.join(NOTEBOOKS, name), workdir)
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail(f"{name}: {e}")
    return nb


def _html_outputs(cell) -> list[str]:
    return [o.data["text/html"] for o in cell.get("outputs", [])
            if o.output_type in ("display_data", "execute_result") and "text/html" in o.data]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_on_a_kernel(name, tmp_path):
    nb = execute(name, tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code)
    for c in code:
        assert not [o for o in c.outputs if o.output_type == "error"]
    if name.startswith("05_"):
        check_fusion_views(nb)


def check_fusion_views(nb) -> None:
    """The fusion notebook's cells draw graph views with fusion groups and kernel source."""
    html = "".join(h for c in nb.cells if c.cell_type == "code" for h in _html_outputs(c))
    assert html.count('data-kind="prim::FusionGroup"') >= 2  # the side-by-side view and the profiled one
    assert 'class="tk-kernel"' in html and "@numba.njit" in html
    assert "tk-side" in html


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stored_with_its_outputs(name):
    """``make notebooks`` stores every cell's outputs, so a reader sees them (and the views' pictures) unrun."""
    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{name} has cells stored without their outputs: run make notebooks"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    if name.startswith("05_"):  # views keep a picture JupyterLab shows even where it does not trust the notebook
        assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)
