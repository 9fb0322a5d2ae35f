"""Run every notebook in notebooks/ on a Jupyter kernel and store its outputs in the file (``make notebooks``).

The notebooks are kept with their outputs so that a reader sees the results and drawings before running
anything: each view carries a static picture (``image/png``), which JupyterLab shows even for a notebook it does
not trust, and ``make lab`` signs these notebooks trusted so their interactive views run as well. Each notebook
runs in a scratch directory (the files it writes, such as datasets and TensorBoard runs, stay out of the repo),
and execution timestamps are dropped so that a rerun changes only what the code shows.
"""

from __future__ import annotations

import os
import sys
import tempfile

import nbformat
from nbclient import NotebookClient

HERE = os.path.dirname(os.path.abspath(__file__))


def store(name: str) -> None:
    path = os.path.join(HERE, name)
    nb = nbformat.read(path, as_version=4)
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    with tempfile.TemporaryDirectory(prefix="toolkit-notebook-") as work:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": work}}).execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    nbformat.write(nb, path)
    print(f"{name}: {sum(len(c.get('outputs', [])) for c in nb.cells if c.cell_type == 'code')} outputs stored")


def main(names: list[str]) -> None:
    for name in names or sorted(f for f in os.listdir(HERE) if f.endswith(".ipynb")):
        store(name)


if __name__ == "__main__":
    main(sys.argv[1:])
