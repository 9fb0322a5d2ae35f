"""Chrome trace export: the Trace Event Format that chrome://tracing and Perfetto open.

The file is the JSON object form (``{"traceEvents": [...], ...}``), as
``torch.profiler`` writes it: ``"M"`` metadata events name the process and
threads, each profiled range is one complete event (``"ph": "X"``) with ``ts``
and ``dur`` in microseconds. ``json`` does the escaping, so any op or range
name is safe. A path ending in ``.gz`` is gzip-compressed. Long runs are cut
at ``max_events`` ranges (the earliest are kept) so viewers can still load them.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import warnings

DEFAULT_MAX_EVENTS = 1_000_000


def _event_json(e, pid: int, idx: int) -> dict:
    args: dict = {"External id": e.id, "Ev Idx": idx}
    if e.sequence_nr >= 0:
        args["Sequence number"] = e.sequence_nr
        args["Fwd thread id"] = 0
    if e.input_shapes:
        args["Input Dims"] = e.input_shapes
        if e.input_types is not None:
            args["Input type"] = e.input_types
    if e.flops:
        args["flops"] = e.flops
    if e.scope == 1:
        args["Backward"] = True
    if e.fused_ops:
        args["Fused ops"] = list(e.fused_ops)
    if e.stack:
        args["Call stack"] = ";".join(e.stack)
    return {"ph": "X", "cat": e.category, "name": e.trace_name, "pid": pid, "tid": e.thread,
            "ts": round(e.time_range.start, 3), "dur": round(e.time_range.elapsed_us(), 3), "args": args}


def chrome_trace(events, max_events: int | None = None) -> dict:
    """The trace as a JSON-ready dict."""
    cap = DEFAULT_MAX_EVENTS if max_events is None else max_events
    pid = os.getpid()
    ranges = [e for e in events if e.trace_name is not None]
    truncated = len(ranges) > cap
    if truncated:
        warnings.warn(f"export_chrome_trace: {len(ranges)} events recorded; writing the first {cap} "
                      "(raise max_events to keep more)", stacklevel=3)
        ranges = ranges[:cap]
    t0 = min((e.time_range.start for e in ranges), default=0.0)
    meta = [
        {"ph": "M", "name": "process_name", "ts": t0, "pid": pid, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "ts": t0, "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
    ]
    for tid in sorted({e.thread for e in ranges}):
        meta.append({"ph": "M", "name": "thread_name", "ts": t0, "pid": pid, "tid": tid,
                     "args": {"name": f"thread {tid} (python)"}})
    body = [_event_json(e, pid, i) for i, e in enumerate(ranges)]
    return {
        "schemaVersion": 1,
        "deviceProperties": [],
        "record_shapes": int(any(e.input_shapes for e in ranges)),
        "with_flops": int(any(e.flops for e in ranges)),
        "host_name": socket.gethostname(),
        "displayTimeUnit": "ms",
        "truncated": truncated,
        "traceEvents": meta + body,
    }


def write_chrome_trace(events, path: str, max_events: int | None = None) -> None:
    data = chrome_trace(events, max_events)
    data["traceName"] = str(path)
    text = json.dumps(data, ensure_ascii=True)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
