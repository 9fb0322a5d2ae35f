"""The profiler's CUDA side: device times from CUDA events, PyTorch's CUDA columns, the trace's GPU track.

Under the simulator device timings are host-clock spans, so these tests check
structure and consistency (times >= 0, self <= total, parents summing their
children), never magnitudes.
"""

from __future__ import annotations

import json
import re
import warnings

import pytest
from torch.profiler._trace_validator import validate_trace

import toolkit
from toolkit.profiler import ProfilerActivity, profile, record_function
from toolkit.profiler._cuda import CudaRecorder
from toolkit.profiler._recorder import Recorder

from .helpers import needs_cuda

pytestmark = [needs_cuda, pytest.mark.cuda]

BOTH = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
TORCH_CUDA_HEADERS = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "Self CUDA",
                      "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"]


def _work():
    x = toolkit.ones(4, 4, device="cuda")
    w = toolkit.ones(4, 4, device="cuda", requires_grad=True)
    host = toolkit.ones(3)
    return x, w, host


def _profiled():
    x, w, host = _work()
    with profile(activities=BOTH) as p:
        with record_function("forward"):
            y = (x.mm(w).exp() * 2).sum()
        y.backward()
        host.exp()
    return p


def _headers(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_ops_on_cuda_get_device_times_and_host_ops_none():
    p = _profiled()
    events = p.events()
    by_name = {}
    for e in events:
        by_name.setdefault(e.name, []).append(e)
    mm = by_name["aten::mm"][0]
    assert mm.use_device == "cuda" and mm.is_legacy and mm.device_type is toolkit.profiler.DeviceType.CPU
    assert [k.name for k in mm.kernels] == ["aten::mm"] and mm.kernels[0].device == 0
    host_exp = [e for e in by_name["aten::exp"] if not e.kernels]
    assert len(host_exp) == 1 and host_exp[0].device_time_total == 0 and not host_exp[0].is_legacy
    for e in events:
        assert e.device_time_total >= 0
        assert 0 <= e.self_device_time_total <= e.device_time_total + 1e-9
        if e.kernels:  # a measured span covers the device time of the ops it called
            assert e.device_time_total >= sum(c.device_time_total for c in e.cpu_children) - 1e-9
    fwd = by_name["forward"][0]
    assert fwd.self_device_time_total == 0
    assert fwd.device_time_total == pytest.approx(sum(c.device_time_total for c in fwd.cpu_children))
    assert [c.name for c in fwd.cpu_children] == ["aten::mm", "aten::exp", "aten::mul", "aten::sum"]
    backward = [e for e in events if e.name == "MmBackward0"][0]
    assert backward.device_time_total > 0 and backward.self_device_time_total == 0
    with pytest.warns(FutureWarning, match="`cuda_time_total` is deprecated"):
        assert mm.cuda_time_total == mm.device_time_total
    with pytest.warns(FutureWarning, match="`self_cuda_time_total` is deprecated"):
        assert mm.self_cuda_time_total == mm.self_device_time_total


def test_key_averages_table_has_torch_cuda_columns_and_sorts():
    p = _profiled()
    avgs = p.key_averages()
    mm = [a for a in avgs if a.key == "aten::mm"][0]
    assert mm.count == 2 and mm.device_time_total > 0 and mm.self_device_time_total <= mm.device_time_total
    assert mm.device_time == pytest.approx(mm.device_time_total / 2)
    total = sum(e.self_device_time_total for e in p.events())
    assert sum(a.self_device_time_total for a in avgs) == pytest.approx(total)
    for sort_by in ("cuda_time_total", "self_cuda_time_total"):
        text = avgs.table(sort_by=sort_by)
        lines = text.splitlines()
        widths = [len(c) for c in lines[0].split()]
        assert _headers(lines[1]) == TORCH_CUDA_HEADERS
        assert lines[-2].startswith("Self CPU time total: ") and lines[-1].startswith("Self CUDA time total: ")
        attr = sort_by.replace("cuda", "device")
        ordered = sorted(avgs, key=lambda a: getattr(a, attr), reverse=True)
        names = [a.key if len(a.key) < widths[0] - 3 else a.key[:widths[0] - 3] + "..." for a in ordered]
        assert [r[:widths[0]].strip() for r in lines[3:-3]] == names
        values = [getattr(a, attr) for a in ordered]
        assert values == sorted(values, reverse=True) and values[0] > 0
    assert "Self CUDA" in p.events().table()


def test_cpu_only_profile_pays_nothing_for_cuda():
    x, w, _ = _work()
    with profile(activities=[ProfilerActivity.CPU]) as p:
        x.mm(w)
    assert type(p.profiler._recorder) is Recorder
    [mm] = p.events()
    assert mm.kernels == [] and mm.use_device is None and mm.device_time_total == 0
    assert "CUDA" not in p.key_averages().table()
    with profile(activities=BOTH) as p2:
        x.mm(w)
    assert type(p2.profiler._recorder) is CudaRecorder


def test_device_times_are_read_once_after_one_synchronize(monkeypatch):
    """No per-op synchronize or elapsed_time read: the profile waits for the device once, at the end."""
    x, w, _ = _work()
    calls = []
    sync, elapsed = toolkit.cuda.synchronize, toolkit.cuda.Event.elapsed_time
    monkeypatch.setattr(toolkit.cuda, "synchronize", lambda *a: (calls.append("sync"), sync(*a))[1])
    monkeypatch.setattr(toolkit.cuda.Event, "elapsed_time",
                        lambda self, end: (calls.append("elapsed"), elapsed(self, end))[1])
    with profile(activities=BOTH) as p:
        calls.append("enter")
        for _ in range(3):
            x = x * 2
        calls.append("exit")
    assert calls[calls.index("enter"):calls.index("exit") + 1] == ["enter", "exit"]
    after = calls[calls.index("exit") + 1:]
    assert after[0] == "sync" and after.count("sync") == 1 and after.count("elapsed") == 6
    assert len([e for e in p.events() if e.kernels]) == 3


def test_autograd_profiler_use_cuda_and_use_device():
    x, w, _ = _work()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with toolkit.autograd.profiler.profile(use_device="cuda") as p:
            x.mm(w)
    assert p.use_device == "cuda" and p.events()[0].device_time_total >= 0 and p.events()[0].is_legacy
    with pytest.warns(FutureWarning, match="use_device = 'cuda'"):
        with toolkit.autograd.profiler.profile(use_cuda=True) as p2:
            x.mm(w)
    assert p2.use_device == "cuda" and p2.events()[0].kernels
    assert "Self CUDA %" in p2.key_averages().table(sort_by="self_cuda_time_total")


def test_fused_cuda_group_gets_device_time():
    def f(a, b):
        return (a * b).sigmoid() + a

    previous = toolkit.jit.set_fusion_enabled(True)
    try:
        a, b = toolkit.randn(64).cuda(), toolkit.randn(64).cuda()
        traced = toolkit.jit.trace(f, (a, b))
        traced.graph_for(a, b)
        traced(a, b)
        with profile(activities=BOTH) as p:
            traced(a, b)
    finally:
        toolkit.jit.set_fusion_enabled(previous)
    [fused] = [e for e in p.events() if "FusionGroup" in e.name]
    assert fused.kernels and fused.kernels[0].name == fused.name and fused.is_legacy
    assert 0 <= fused.self_device_time_total <= fused.device_time_total


def test_chrome_trace_gpu_track_and_flows(tmp_path):
    p = _profiled()
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = data["traceEvents"]
    ops = {e["args"]["External id"]: e for e in evs if e["ph"] == "X" and e["cat"] == "cpu_op"}
    kernels = [e for e in evs if e["ph"] == "X" and e["cat"] == "kernel"]
    timed = [e for e in p.events() if e.kernels]
    assert len(kernels) == len(timed) > 0
    gpu_meta = {(e["name"], e["tid"]): e["args"] for e in evs if e["ph"] == "M" and e["pid"] == 0}
    assert gpu_meta[("process_labels", 0)] == {"labels": "GPU 0"}
    assert gpu_meta[("process_name", 0)] == {"name": "python"}
    assert gpu_meta[("thread_name", 7)] == {"name": "stream 7 "}
    assert ("process_sort_index", 0) in gpu_meta
    starts = {e["id"]: e for e in evs if e["ph"] == "s"}
    ends = {e["id"]: e for e in evs if e["ph"] == "f"}
    assert set(starts) == set(ends) == {k["args"]["External id"] for k in kernels}
    for k in kernels:
        op = ops[k["args"]["External id"]]
        s, f = starts[op["args"]["External id"]], ends[op["args"]["External id"]]
        assert k["pid"] == 0 and k["tid"] == 7 and k["dur"] >= 0 and k["name"] == op["name"]
        assert k["args"]["stream"] == 7 and k["args"]["device"] == 0
        assert s["cat"] == f["cat"] == "ac2g" and f["bp"] == "e"
        assert (s["pid"], s["tid"], s["ts"]) == (op["pid"], op["tid"], op["ts"])
        assert (f["pid"], f["tid"], f["ts"]) == (k["pid"], k["tid"], k["ts"])
        assert k["ts"] >= op["ts"]  # the kernel starts after the op that queued it
    assert data["deviceProperties"][0]["id"] == 0
    ok, violations = validate_trace(str(path))
    assert ok, violations


def test_profile_memory_counts_cuda_outputs_as_device_memory():
    x, w, host = _work()
    with profile(activities=BOTH, profile_memory=True) as p, record_function("block"):
        x.mm(w)
        host.exp()
    block, mm, exp = p.events()
    assert (mm.device_memory_usage, mm.cpu_memory_usage) == (64, 0)
    assert (exp.device_memory_usage, exp.cpu_memory_usage) == (0, 12)
    assert (block.device_memory_usage, block.self_device_memory_usage) == (64, 0)
    header = _headers(p.key_averages().table().splitlines()[1])
    assert header[header.index("Self CPU Mem") + 1:header.index("# of Calls")] == ["CUDA Mem", "Self CUDA Mem"]
