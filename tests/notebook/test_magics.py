"""The IPython extension on a real kernel: a notebook using every magic, executed headless by nbclient."""

from __future__ import annotations

import os
import sys
import urllib.request

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    "%load_ext toolkit.notebook\nimport toolkit",
    "%%profile --sort self_cpu_time_total --row-limit 5 --record-shapes --trace {trace}\n"
    "a = toolkit.ones(8, 8, requires_grad=True)\n(a.mm(a).sigmoid() * 2).sum().backward()",
    "%%pyprofile --out {prof} --limit 5\ndef work(n):\n    return sum(i * i for i in range(n))\nwork(20000)",
    "from toolkit.notebook.magics import _SERVERS\nurl = _SERVERS[-1].url\nproc = _SERVERS[-1].process\n"
    "import urllib.request\nprint('status', urllib.request.urlopen(url).status)",
    "%%pyprofile --out {prof} --no-server\nwork(10)",
    "def poly(x):\n    y = x * x\n    z = y + 1\n    return z.sum()\n"
    "%lprun -f poly poly(toolkit.ones(100))",
    "def f(x, y):\n    return (x * y).sigmoid() + x\nx, y = toolkit.randn(64), toolkit.randn(64)\n"
    "tf = toolkit.jit.trace(f, (x, y))\n%graph_for tf x, y",
    "%snakeviz_stop\nprint('alive', proc.poll() is None)",
]


def _text(cell) -> str:
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("display_data", "execute_result"):
            out.append(o.data.get("text/html", "") + o.data.get("text/plain", ""))
        elif o.output_type == "error":
            out.append("\n".join(o.traceback))
    return "".join(out)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb")
    trace, prof = str(tmp / "cell.json"), str(tmp / "cell.prof")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.format(trace=trace, prof=prof)) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env_path = os.path.dirname(sys.executable)  # the kernel runs on this venv's interpreter
    os.environ["PATH"] = env_path + os.pathsep + os.environ.get("PATH", "")
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp)}})
    client.execute()
    return nb, trace, prof


def test_every_cell_ran_without_error(executed):
    nb, _, _ = executed
    for cell in nb.cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], _text(cell)


def test_profile_cell_prints_the_table_and_writes_the_trace(executed):
    nb, trace, _ = executed
    text = _text(nb.cells[1])
    header = [line for line in text.splitlines() if "Self CPU %" in line][0]
    for col in ("Name", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls", "Input Shapes"):
        assert col in header
    assert "aten::mm" in text and "[[8, 8], [8, 8]]" in text
    assert "Self CPU time total:" in text
    rows = [line for line in text.splitlines() if line.strip().startswith(("aten::", "autograd::", "Sigmoid",
                                                                           "Mm", "Sum", "Mul", "torch::"))]
    assert len(rows) == 5  # --row-limit 5
    assert os.path.getsize(trace) > 0


def test_pyprofile_writes_stats_and_embeds_snakeviz(executed):
    nb, _, prof = executed
    text = _text(nb.cells[2])
    assert "function calls" in text and "work" in text
    assert f"profile written to {prof}" in text
    assert "<iframe" in text and "http://127.0.0.1:" in text and "/snakeviz/" in text
    assert "status 200" in _text(nb.cells[3])
    no_server = _text(nb.cells[4])
    assert "view it with:" in no_server and "-m snakeviz" in no_server


def test_lprun_shows_line_timings(executed):
    nb, _, _ = executed
    text = _text(nb.cells[5])
    assert "Line #" in text and "% Time" in text
    assert "y = x * x" in text and "z = y + 1" in text


def test_graph_for_prints_the_fused_graph(executed):
    nb, _, _ = executed
    text = _text(nb.cells[6])
    assert "prim::FusionGroup_0" in text and "aten::sigmoid" in text


def test_snakeviz_stopped(executed):
    nb, _, _ = executed
    text = _text(nb.cells[7])
    assert "stopped 1 snakeviz server" in text and "alive False" in text


def test_snakeviz_page_is_gone_after_stop(executed):
    nb, _, _ = executed
    url = _text(nb.cells[2]).split("snakeviz serving at ", 1)[1].split()[0]
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


def test_profile_cell_shows_a_profile_view(executed):
    nb, _, _ = executed
    views = [o for o in nb.cells[1].outputs if o.output_type == "display_data" and "text/html" in o.data]
    assert len(views) == 1
    html = views[0].data["text/html"]
    assert '<table class="tk-table">' in html and "aten::mm" in html
    assert 'class="tk-event tk-backward"' in html  # the backward pass is on the timeline
    assert views[0].data["text/plain"].startswith("<ProfileView ")
