"""The IPython extension on a real kernel: a notebook using every magic, executed headless by nbclient."""

from __future__ import annotations

import os
import signal
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
    "from toolkit.notebook import magics\nserver = magics.snakeviz_server()\nproc = server.process\n"
    "import urllib.request\nprint('status', urllib.request.urlopen(server.url).status, f'snakeviz-pid={{proc.pid}}')",
    "%%pyprofile --out {prof} --no-server\nwork(10)",
    "def poly(x):\n    y = x * x\n    z = y + 1\n    return z.sum()\n"
    "%lprun -f poly poly(toolkit.ones(100))",
    "def f(x, y):\n    return (x * y).sigmoid() + x\nx, y = toolkit.randn(64), toolkit.randn(64)\n"
    "tf = toolkit.jit.trace(f, (x, y))\n%graph_for tf x, y",
    "%%pyprofile --out {prof2} --limit 3\nwork(30000)",
    "second = magics.snakeviz_server()\nprint('same', second is server, 'pid', second.process.pid == proc.pid)\n"
    "url2 = magics.snakeviz_url(second, {prof2!r})\nprint('status2', urllib.request.urlopen(url2).status)",
    "proc.kill(); proc.wait()\nprint('dead', magics.snakeviz_server() is None)",
    "%%pyprofile --out {prof2} --limit 3\nwork(100)",
    "third = magics.snakeviz_server()\nprint('restarted', third is not None and third.process.pid != proc.pid)\n"
    "proc3 = third.process\nprint(f'snakeviz-pid={{proc3.pid}}')",
    "%snakeviz_stop\nprint('alive', proc3.poll() is None, magics.snakeviz_server())",
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


def _stop_leftover_snakeviz(nb) -> None:
    """End any snakeviz server a failed run left behind (the pids the cells printed), and nothing else."""
    for cell in nb.cells:
        for o in cell.outputs:
            if o.output_type != "stream":
                continue
            for word in o.text.split():
                if word.startswith("snakeviz-pid="):
                    pid = int(word.split("=", 1)[1])
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as f:
                            if b"snakeviz" in f.read():
                                os.kill(pid, signal.SIGTERM)
                    except (OSError, ProcessLookupError):
                        pass


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nb")
    trace, prof, prof2 = str(tmp / "cell.json"), str(tmp / "cell.prof"), str(tmp / "second.prof")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.format(trace=trace, prof=prof, prof2=prof2)) for c in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env_path = os.path.dirname(sys.executable)  # the kernel runs on this venv's interpreter
    os.environ["PATH"] = env_path + os.pathsep + os.environ.get("PATH", "")
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp)}})
    try:
        client.execute()
    finally:
        _stop_leftover_snakeviz(nb)
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


def test_graph_for_draws_the_graph_view_and_keeps_its_text(executed):
    nb, _, _ = executed
    cell = nb.cells[6]
    assert not [o for o in cell.outputs if o.output_type == "stream"]  # drawn, not printed
    (view,) = [o for o in cell.outputs if o.output_type == "display_data"]
    assert "tk-root" in view.data["text/html"]  # the GraphView drawing
    text = view.data["text/plain"]
    assert text.startswith("graph(") and "prim::FusionGroup_0" in text and "aten::sigmoid" in text


def test_one_snakeviz_server_serves_every_pyprofile_cell(executed):
    nb, _, _ = executed
    assert "same True pid True" in _text(nb.cells[8]) and "status2 200" in _text(nb.cells[8])
    first, second = (_text(nb.cells[i]).split("snakeviz serving at ", 1)[1].split()[0] for i in (2, 7))
    assert first.rsplit("/snakeviz/", 1)[0] == second.rsplit("/snakeviz/", 1)[0]  # same host and port
    assert first.endswith("cell.prof") and second.endswith("second.prof")


def test_a_dead_snakeviz_server_is_replaced(executed):
    nb, _, _ = executed
    assert "dead True" in _text(nb.cells[9])
    assert "snakeviz serving at" in _text(nb.cells[10]) and "restarted True" in _text(nb.cells[11])


def test_snakeviz_stopped(executed):
    nb, _, _ = executed
    text = _text(nb.cells[12])
    assert "stopped 1 snakeviz server" in text and "alive False None" in text


def test_snakeviz_page_is_gone_after_stop(executed):
    nb, _, _ = executed
    url = _text(nb.cells[10]).split("snakeviz serving at ", 1)[1].split()[0]
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=2)


def test_profile_cell_shows_a_profile_view(executed):
    nb, _, _ = executed
    views = [o for o in nb.cells[1].outputs if o.output_type == "display_data" and "text/html" in o.data]
    assert len(views) == 1
    html = views[0].data["text/html"]
    assert '<table class="tk-table tk-ops"' in html and "aten::mm" in html
    assert "backward" in html and "tk-timeline-data" in html  # the backward pass is on the timeline
    assert views[0].data["text/plain"].startswith("<ProfileView ")
    assert "image/svg+xml" in views[0].data


def test_profile_view_honours_row_limit(executed):
    nb, _, _ = executed
    (view,) = [o for o in nb.cells[1].outputs if o.output_type == "display_data"]
    body = view.data["text/html"].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr>") == 5  # --row-limit 5, as the printed table
    assert "5 of " in view.data["text/html"] and "(row_limit=5)" in view.data["text/html"]
