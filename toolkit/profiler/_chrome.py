"""Chrome trace export: the Trace Event Format that chrome://tracing and Perfetto open.

The file is the JSON object form (``{"traceEvents": [...], ...}``), as
``torch.profiler`` writes it: ``"M"`` metadata events name the process and
threads, each profiled range is one complete event (``"ph": "X"``) with ``ts``
and ``dur`` in microseconds. ``json`` does the escaping, so any op or range
name is safe. A path ending in ``.gz`` is gzip-compressed. Long runs are cut
at ``max_events`` ranges (the earliest are kept) so viewers can still load them.

When CUDA was profiled, the device spans get the GPU track Kineto draws: a
process per device (``pid`` = device index, labelled ``GPU <i>``), a thread per
stream (``stream 7``: the number CUPTI gives the default stream, where
toolkit's kernels run), one ``"kernel"`` event per op that ran there, and an
``"ac2g"`` flow (``"s"`` on the op, ``"f"`` on its kernel) linking the two.
"""

from __future__ import annotations

import gzip
import json
import os
import socket
import warnings

from .. import cuda

DEFAULT_MAX_EVENTS = 1_000_000
DEFAULT_STREAM = 7
_GPU_SORT_INDEX = 5_000_000


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


def _device_metadata(devices: list, t0: float) -> list[dict]:
    """Kineto's names for a device's process and its stream's thread."""
    out = []
    for d in devices:
        out += [
            {"ph": "M", "name": "process_name", "ts": t0, "pid": d, "tid": 0, "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "ts": t0, "pid": d, "tid": 0, "args": {"labels": f"GPU {d}"}},
            {"ph": "M", "name": "process_sort_index", "ts": t0, "pid": d, "tid": 0,
             "args": {"sort_index": _GPU_SORT_INDEX + d}},
            {"ph": "M", "name": "thread_name", "ts": t0, "pid": d, "tid": DEFAULT_STREAM,
             "args": {"name": f"stream {DEFAULT_STREAM} "}},
            {"ph": "M", "name": "thread_sort_index", "ts": t0, "pid": d, "tid": DEFAULT_STREAM,
             "args": {"sort_index": DEFAULT_STREAM}},
        ]
    return out


def _device_events(timed: list, pid: int) -> list[dict]:
    """Per device-timed op: its kernel on the GPU track and the flow from the op to it."""
    out = []
    for e in timed:
        d = e.device_index
        ts = round(e.device_start_us, 3)
        dur = round(sum(k.duration for k in e.kernels), 3)
        out.append({"ph": "X", "cat": "kernel", "name": e.kernels[0].name, "pid": d, "tid": DEFAULT_STREAM,
                    "ts": ts, "dur": dur,
                    "args": {"External id": e.id, "device": d, "stream": DEFAULT_STREAM, "correlation": e.id}})
        out.append({"ph": "s", "id": e.id, "pid": pid, "tid": e.thread, "ts": round(e.time_range.start, 3),
                    "cat": "ac2g", "name": "ac2g"})
        out.append({"ph": "f", "id": e.id, "pid": d, "tid": DEFAULT_STREAM, "ts": ts, "cat": "ac2g",
                    "name": "ac2g", "bp": "e"})
    return out


def _device_properties(devices: list) -> list[dict]:
    if not devices:
        return []

    return [{"id": d, "name": cuda.get_device_name(d)} for d in devices]


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
    timed = [e for e in ranges if e.kernels and e.device_start_us is not None]
    devices = []
    if timed:
        devices = sorted({e.device_index for e in timed})
        meta += _device_metadata(devices, t0)
        body += _device_events(timed, pid)
    return {
        "schemaVersion": 1,
        "deviceProperties": _device_properties(devices),
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
