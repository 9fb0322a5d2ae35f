"""``python -m toolkit.utils.bottleneck``: both summaries printed, a .prof file written."""

from __future__ import annotations

import pstats
import subprocess
import sys

SCRIPT = """
import sys
import toolkit
x = toolkit.ones(16, 16, requires_grad=True)
for _ in range(int(sys.argv[1])):
    x.mm(x).relu().sum().backward()
print("script args", sys.argv[1:])
"""


def test_bottleneck_runs_the_script_under_both_profilers(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    prof = tmp_path / "out.prof"
    r = subprocess.run([sys.executable, "-m", "toolkit.utils.bottleneck", "--prof-out", str(prof), str(script),
                        "3", "--flag"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count("script args ['3', '--flag']") == 2
    assert "cProfile output" in out and "function calls" in out
    assert "toolkit profiler output" in out and "Self CPU %" in out
    assert "aten::mm" in out and "autograd::engine::evaluate_function: MmBackward0" in out
    assert f"-m snakeviz -s -H 127.0.0.1 {prof}" in out
    assert any(func[2] == "<module>" and func[0].endswith("train.py") for func in pstats.Stats(str(prof)).stats)


def test_bottleneck_reports_a_failing_script(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("raise ValueError('boom')\n")
    r = subprocess.run([sys.executable, "-m", "toolkit.utils.bottleneck", str(script)], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.returncode != 0 and "ValueError: boom" in r.stderr
