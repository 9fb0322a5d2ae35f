"""``toolkit.profiler``: schedule, tables, grouping, stacks and fused-kernel events, in torch.profiler's shapes."""

from __future__ import annotations

import warnings

import pytest
import torch

import toolkit
from toolkit.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def test_schedule_matches_torch():
    for kw in (dict(wait=1, warmup=1, active=2), dict(wait=2, warmup=1, active=3, repeat=2),
               dict(wait=1, warmup=2, active=1, repeat=1, skip_first=3),
               dict(wait=3, warmup=1, active=2, skip_first=2, skip_first_wait=1)):
        ours, theirs = schedule(**kw), torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)], kw
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.warns(UserWarning, match="won't be using warmup"):
        schedule(wait=1, warmup=0, active=1)


def test_schedule_records_active_steps_and_calls_on_trace_ready():
    cycles = []

    def ready(p):
        steps = [e.name for e in p.events() if e.name.startswith("ProfilerStep#")]
        adds = sum(e.name == "aten::add" for e in p.events())
        cycles.append((p.step_num, steps, adds))

    a = toolkit.ones(2)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=ready) as p:
        for _ in range(10):
            a + 1
            p.step()
    assert cycles == [(4, ["ProfilerStep#2", "ProfilerStep#3"], 2), (8, ["ProfilerStep#6", "ProfilerStep#7"], 2)]
    assert p.current_action is ProfilerAction.NONE


def test_no_schedule_records_everything_once():
    calls = []
    with profile(on_trace_ready=calls.append) as p:
        toolkit.ones(3).exp()
    assert calls == [p]
    assert [e.name for e in p.events()] == ["aten::ones", "aten::exp"]


def test_table_columns_sort_and_row_limit():
    a = toolkit.ones(50, 50)
    with profile(record_shapes=True) as p:
        for _ in range(4):
            a.mm(a)
        a.exp()
        a.exp()
        toolkit.ones(2).exp()
    text = p.key_averages().table(sort_by="count", row_limit=2)
    lines = text.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    rows = lines[3:-2]
    assert [r.split()[0] for r in rows] == ["aten::mm", "aten::exp"]
    assert [r.split()[-1] for r in rows] == ["4", "3"]
    assert lines[-1].startswith("Self CPU time total: ")
    by_shape = p.key_averages(group_by_input_shape=True)
    exp_rows = {str(e.input_shapes): e.count for e in by_shape if e.key == "aten::exp"}
    assert exp_rows == {"[[50, 50]]": 2, "[[2]]": 1}
    assert "Input Shapes" in by_shape.table() and "[[50, 50], [50, 50]]" in by_shape.table()
    sorted_total = p.key_averages().table(sort_by="cpu_time_total")
    names = [r.split()[0] for r in sorted_total.splitlines()[3:-2]]
    totals = {e.key: e.cpu_time_total for e in p.key_averages()}
    assert [totals[n] for n in names] == sorted(totals.values(), reverse=True)


def test_table_format_matches_torch_layout():
    """Same header line, column widths and footer as torch's table for the same events."""
    a, ta = toolkit.ones(4, 4), torch.ones(4, 4)
    with profile() as p:
        a.exp()
    with torch.profiler.profile() as tp:
        ta.exp()
    ours = p.key_averages().table().splitlines()
    theirs = [line for line in tp.key_averages().table().splitlines() if line]
    assert ours[0:2] == [theirs[0].replace("-" * 55, "-" * len(ours[0].split()[0]), 1), ours[1]]
    assert ours[1].split() == theirs[1].split()
    assert [len(c) for c in ours[0].split()[1:]] == [len(c) for c in theirs[0].split()[1:]]


def test_stacks_and_export_stacks(tmp_path):
    def inner(t):
        return t.exp()

    def outer(t):
        return inner(t) * 2

    a = toolkit.ones(100, 100)
    with profile(with_stack=True) as p:
        outer(a)
    exp = [e for e in p.events() if e.name == "aten::exp"][0]
    assert "inner" in exp.stack[0] and "outer" in exp.stack[1] and __file__ in exp.stack[0]
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines
    for line in lines:
        frames, value = line.rsplit(" ", 1)
        assert int(value) > 0 and " " not in frames
    exp_line = [ln for ln in lines if "inner" in ln][0]
    frames = exp_line.rsplit(" ", 1)[0].split(";")
    assert frames[-1].endswith("inner") and frames[-2].endswith("outer")  # outermost first, as flamegraph.pl reads
    grouped = p.key_averages(group_by_stack_n=1)
    assert any(e.key == "aten::exp" and "inner" in e.stack[0] for e in grouped)
    assert "Source Location" in grouped.table()
    with pytest.raises(ValueError, match="metric should be one of"):
        p.export_stacks(str(path), "cpu_time")


def test_fused_group_is_one_event_listing_its_ops():
    def f(x, y):
        return (x * y).sigmoid() + x

    x, y = toolkit.randn(256), toolkit.randn(256)
    traced = toolkit.jit.trace(f, (x, y))
    traced.graph_for(x, y)  # warm up: profile, fuse, compile
    traced(x, y)
    with profile() as p:
        out = traced(x, y)
    events = p.events()
    fused = [e for e in events if "FusionGroup" in e.name]
    assert len(fused) == 1
    assert fused[0].name == "prim::FusionGroup_0: mul+sigmoid+add"
    assert fused[0].fused_ops == ("aten::mul", "aten::sigmoid", "aten::add")
    assert not [e for e in events if e.name in ("aten::mul", "aten::sigmoid")]  # ran in the kernel, not op by op
    assert torch.allclose(torch.from_numpy(out.numpy()), torch.from_numpy(f(x, y).numpy()), atol=1e-6)


def test_record_function_from_toolkit_profiler_and_warning_free_exit():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with profile() as p, record_function("block"):
            toolkit.ones(1)
    block = p.events()[0]
    assert block.name == "block" and [c.name for c in block.cpu_children] == ["aten::ones"]
