"""Chrome traces checked structurally against the Trace Event Format (and torch's own trace validator)."""

from __future__ import annotations

import gzip
import json

import pytest
from torch.profiler._trace_validator import validate_trace

import toolkit
from toolkit.profiler import profile, record_function

_REQUIRED_X = {"ph", "name", "cat", "ts", "dur", "pid", "tid", "args"}


def _check_trace(data: dict) -> list[dict]:
    """Trace Event Format rules a viewer relies on; returns the complete ("X") events."""
    assert isinstance(data, dict) and isinstance(data["traceEvents"], list)
    assert data["displayTimeUnit"] in ("ms", "ns")
    xs = []
    for ev in data["traceEvents"]:
        assert ev["ph"] in ("X", "M", "i", "s", "f")
        assert isinstance(ev["name"], str) and isinstance(ev["pid"], int) and isinstance(ev["tid"], int)
        if ev["ph"] == "M":
            assert ev["name"] in ("process_name", "process_labels", "thread_name") and ev["args"]
            continue
        assert _REQUIRED_X <= set(ev)
        assert isinstance(ev["ts"], (int, float)) and isinstance(ev["dur"], (int, float)) and ev["dur"] >= 0
        assert isinstance(ev["args"], dict)
        xs.append(ev)
    # complete events on one thread nest properly (a child ends before its parent)
    by_tid: dict = {}
    for ev in sorted(xs, key=lambda e: (e["ts"], -e["dur"])):
        stack = by_tid.setdefault(ev["tid"], [])
        while stack and stack[-1] <= ev["ts"]:
            stack.pop()
        end = ev["ts"] + ev["dur"]
        if stack:
            assert end <= stack[-1] + 1e-3
        stack.append(end)
    return xs


def _profiled():
    x = toolkit.ones(8, 8, requires_grad=True)
    odd = 'quote " backslash \\ newline \n tab \t unicode \u00e9 </script>'
    with profile(record_shapes=True, with_flops=True) as p:
        with record_function(odd):
            y = x.mm(x).sum()
        y.backward()
    return p, odd


def test_trace_is_valid_json_with_nested_complete_events(tmp_path):
    p, odd = _profiled()
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    xs = _check_trace(data)
    assert len(xs) == len(p.events())
    names = [e["name"] for e in xs]
    assert odd in names  # escaped by the writer, back intact after parsing
    mm = [e for e in xs if e["name"] == "aten::mm"][0]
    assert mm["cat"] == "cpu_op" and mm["args"]["Input Dims"] == [[8, 8], [8, 8]] and mm["args"]["flops"] == 1024
    bw = [e for e in xs if e["name"] == "MmBackward0"][0]
    assert bw["args"]["Backward"] is True
    assert [e for e in xs if e["name"] == odd][0]["cat"] == "user_annotation"
    ok, violations = validate_trace(str(path))
    assert ok, violations


def test_gzip_when_path_ends_in_gz(tmp_path):
    p, _ = _profiled()
    path = tmp_path / "trace.json.gz"
    p.export_chrome_trace(str(path))
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    data = json.loads(gzip.decompress(raw))
    assert len(_check_trace(data)) == len(p.events())
    assert validate_trace(str(path))[0]


def test_event_cap_keeps_the_first_events(tmp_path):
    a = toolkit.ones(1)
    with profile() as p:
        for _ in range(50):
            a + 1
    path = tmp_path / "capped.json"
    with pytest.warns(UserWarning, match="50 events recorded; writing the first 10"):
        p.export_chrome_trace(str(path), max_events=10)
    data = json.loads(path.read_text())
    xs = _check_trace(data)
    assert len(xs) == 10 and data["truncated"] is True
    assert [e["args"]["External id"] for e in xs] == list(range(1, 11))


def test_tensorboard_trace_handler_writes_one_file_per_cycle(tmp_path):
    from toolkit.profiler import schedule, tensorboard_trace_handler

    a = toolkit.ones(2)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w", use_gzip=True)) as p:
        for _ in range(6):
            a * 2
            p.step()
    files = sorted(f.name for f in tmp_path.iterdir())
    assert len(files) == 2 and all(f.startswith("w.") and f.endswith(".pt.trace.json.gz") for f in files)
    for f in files:
        data = json.loads(gzip.decompress((tmp_path / f).read_bytes()))
        assert "aten::mul" in [e["name"] for e in _check_trace(data)]
