"""``toolkit.is_grad_enabled()`` in script code reads grad mode when the graph runs, also after save and load."""

from __future__ import annotations

import pytest

import toolkit


class _GradModeBranch(toolkit.nn.Module):
    def forward(self, x):
        if toolkit.is_grad_enabled():
            return x + 1
        return x - 1


def _check(m):
    x = toolkit.zeros(2)
    for _ in range(3):  # profiling run, then optimized plans: never folded to the compile-time mode
        assert m(x).tolist() == [1.0, 1.0]
        with toolkit.no_grad():
            assert m(x).tolist() == [-1.0, -1.0]


def test_is_grad_enabled_is_read_at_run_time():
    s = toolkit.jit.script(_GradModeBranch())
    assert any(n.kind == "aten::is_grad_enabled" for n in s.graph.all_nodes())
    _check(s)


def test_is_grad_enabled_survives_save_and_load(tmp_path):
    toolkit.jit.save(toolkit.jit.script(_GradModeBranch()), str(tmp_path / "m.pt"))
    _check(toolkit.jit.load(str(tmp_path / "m.pt")))


def test_is_grad_enabled_takes_no_arguments():
    def f(x):
        return x if toolkit.is_grad_enabled(True) else x

    with pytest.raises(Exception, match="is_grad_enabled\\(\\) takes no arguments"):
        toolkit.jit.script(f)
