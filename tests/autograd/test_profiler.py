"""``toolkit.autograd.profiler``: events, nesting, timings, backward tagging, against torch's names."""

from __future__ import annotations

import pytest
import torch

import toolkit
import toolkit.autograd.profiler as profiler
from toolkit import dispatch


def _program(lib, ap):
    x = lib.ones(4, 3, requires_grad=True)
    w = lib.ones(3, 2, requires_grad=True)
    with ap.profile(record_shapes=True) as prof:
        with ap.record_function("forward"):
            y = (x.mm(w).sigmoid() * 2).sum()
        y.backward()
    return prof


def _top_names(prof) -> list[str]:
    return [e.name for e in prof.function_events if e.cpu_parent is None]


def test_forward_ops_are_events_inside_the_range():
    prof = _program(toolkit, profiler)
    fwd = [e for e in prof.function_events if e.name == "forward"][0]
    assert [c.name for c in fwd.cpu_children] == ["aten::mm", "aten::sigmoid", "aten::mul", "aten::sum"]
    assert fwd.is_user_annotation and fwd.cpu_parent is None
    mm = fwd.cpu_children[0]
    assert mm.input_shapes == [[4, 3], [3, 2]] and mm.cpu_parent is fwd


def test_backward_nodes_are_tagged_like_torch():
    prof = _program(toolkit, profiler)
    tprof = _program(torch, torch.autograd.profiler)
    ours = [n for n in _top_names(prof) if n.startswith("autograd::")]
    theirs = [n for n in _top_names(tprof) if n.startswith("autograd::")]
    assert ours == theirs  # same nodes, same order, same names (AccumulateGrad included)
    mul_bw = [e for e in prof.function_events if e.name == "MulBackward0"][0]
    assert mul_bw.scope == 1 and mul_bw.cpu_parent.name == "autograd::engine::evaluate_function: MulBackward0"
    assert [c.name for c in mul_bw.cpu_children] == ["aten::mul"]
    assert all(e.scope == 0 for e in prof.function_events if e.name.startswith("aten::"))


def test_timings_nest_and_add_up():
    prof = _program(toolkit, profiler)
    events = prof.function_events
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= e.time_range.end
        assert e.self_cpu_time_total + sum(c.cpu_time_total for c in e.cpu_children) == pytest.approx(
            e.cpu_time_total)
    total = sum(e.cpu_time_total for e in events if e.cpu_parent is None)
    assert prof.self_cpu_time_total == pytest.approx(total)
    assert prof.total_average().self_cpu_time_total == pytest.approx(total)
    assert prof.total_average().key == "Total" and prof.total_average().count == len(events)


def test_event_counts_of_a_known_program():
    a = toolkit.ones(3)
    with profiler.profile() as prof:
        for _ in range(5):
            a = a + 1
        a.mul(2).exp()
    avg = {e.key: e.count for e in prof.key_averages()}
    assert avg == {"aten::add": 5, "aten::mul": 1, "aten::exp": 1}


def test_record_function_decorator_and_nesting():
    @profiler.record_function("outer")
    def f(t):
        with profiler.record_function("inner"):
            return t * 2

    t = toolkit.ones(2)
    f(t)  # no profiler: nothing recorded, nothing fails
    with profiler.profile() as prof:
        f(t)
    outer, inner, mul = prof.function_events
    assert (outer.name, inner.name, mul.name) == ("outer", "inner", "aten::mul")
    assert inner.cpu_parent is outer and mul.cpu_parent is inner


def test_observer_removed_after_exit_and_disabled_profile():
    with profiler.profile() as prof:
        assert len(dispatch.STATE.observers) == 1
    assert dispatch.STATE.observers == []
    with profiler.profile(enabled=False) as off:
        toolkit.ones(2) + 1
    assert dispatch.STATE.observers == [] and off.enabled is False
    with pytest.raises(RuntimeError, match="not reentrant"):
        with prof:
            pass


def test_unfinished_profile_refuses_results():
    p = profiler.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        p.key_averages()


def test_flops_match_torch():
    import torch.nn.functional as TF

    import toolkit.nn.functional as F

    def run(lib, ap, fn):
        x, w, b = lib.ones(2, 3, 8, 8), lib.ones(4, 3, 3, 3), lib.ones(4)
        with ap.profile(with_flops=True) as prof:
            fn.conv2d(x, w, b, padding=1)
            lib.mm(lib.ones(3, 4), lib.ones(4, 5))
            lib.bmm(lib.ones(2, 3, 4), lib.ones(2, 4, 5))
            lib.ones(3) + lib.ones(3)
        return {e.name: e.flops for e in prof.function_events if e.flops}

    ours = run(toolkit, profiler, F)
    theirs = run(torch, torch.autograd.profiler, TF)
    assert ours == theirs


def test_profile_memory_counts_new_outputs_only():
    a = toolkit.ones(10, 10)
    with profiler.profile(profile_memory=True) as prof:
        b = a * 2  # 400 bytes
        b.view(100)  # a view: nothing new
        b.add_(1)  # in place: nothing new
    mem = {e.name: e.cpu_memory_usage for e in prof.function_events}
    assert mem == {"aten::mul": 400, "aten::view": 0, "aten::add_": 0}
    assert "CPU Mem" in prof.table() and "400 B" in prof.table()


def test_str_is_the_event_table():
    with profiler.profile() as prof:
        toolkit.ones(2).exp()
    assert str(prof) == prof.function_events.table()
    assert "aten::exp" in str(prof)
