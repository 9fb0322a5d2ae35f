"""The profiler's text table, column for column as PyTorch prints it, and the time and memory formats of its cells.

The events' ``*_str`` properties use the same formats, so the events import this module.
"""

from __future__ import annotations

import math

from ._device_type import DeviceType

_WIDTH = 12
_SPACING = 2
_FLOP_UNITS = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]


def format_time(time_us: float) -> str:
    """A time in microseconds as PyTorch prints it: ``1.500ms``."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_time_share(time_us: float, total_us: float) -> str:
    """``time_us`` as a percentage of ``total_us`` (``NaN`` for a zero total, as PyTorch prints it)."""
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes: int) -> str:
    """A byte count in B, KB, MB or GB (powers of 1024), as PyTorch prints it."""
    kb, mb, gb = 1024, 1024**2, 1024**3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


def _in_unit(time_us: float, default: str, unit: str | None) -> str:
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return default


def _trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def _flops_scale(flops: float) -> tuple[float, str]:
    level = max(0, min(int(math.log10(flops) / 3), len(_FLOP_UNITS) - 1))
    return 10.0 ** (-3 * level), _FLOP_UNITS[level]


def _device_total(events) -> float:
    """The footer's device total, as PyTorch sums it: event-timed host rows and device rows."""
    return sum(e.self_device_time_total for e in events
               if (e.device_type == DeviceType.CPU and e.is_legacy)
               or (e.device_type != DeviceType.CPU and not e.is_user_annotation))


def build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80, with_flops=False, profile_memory=False,
                top_level_events_only=False, time_unit=None) -> str:
    """Rows of events (or averages): Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
    device columns (``Self CUDA`` ... when any row has device time), memory columns, # of Calls,
    Input Shapes, Source Location, Total FLOPs."""
    if len(events) == 0:
        return ""
    use_device = events[0].use_device
    has_device_time = bool(use_device) and any(e.self_device_time_total > 0 for e in events)
    has_device_mem = bool(use_device) and profile_memory and any(e.self_device_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack]
    src_width = None
    if stacks:
        src_width = max(len(entry) for s in stacks for entry in s) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    device_name = str(use_device).upper()
    if has_device_time:
        headers += [f"Self {device_name}", f"Self {device_name} %", f"{device_name} total",
                    f"{device_name} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_device_mem:
            headers += [f"{device_name} Mem", f"Self {device_name} Mem"]
    headers.append("# of Calls")
    row_format, header_sep, line_length = "", "", -_SPACING

    def add_column(width: int, align: str = ">") -> None:
        nonlocal row_format, header_sep, line_length
        row_format += "{: " + align + str(width) + "}" + " " * _SPACING
        header_sep += "-" * width + " " * _SPACING
        line_length += width + _SPACING

    add_column(name_width)
    for _ in headers[1:]:
        add_column(_WIDTH)
    if has_shapes:
        headers.append("Input Shapes")
        add_column(shapes_width)
    if stacks:
        headers.append("Source Location")
        add_column(src_width, "<")
    flops_scale = 1.0
    if with_flops:
        raw = [e.flops for e in events if e.flops and e.flops > 0]
        if raw:
            flops_scale, unit = _flops_scale(min(raw))
            headers.append(f"Total {unit}")
            add_column(_WIDTH)
        else:
            with_flops = False

    total_self = sum(e.self_cpu_time_total for e in events)
    total_device = _device_total(events) if has_device_time else 0.0
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        row = [
            name,
            format_time_share(e.self_cpu_time_total, total_self),
            _in_unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
            format_time_share(e.cpu_time_total, total_self),
            _in_unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
            _in_unit(e.cpu_time, e.cpu_time_str, time_unit),
        ]
        if has_device_time:
            row += [_in_unit(e.self_device_time_total, e.self_device_time_total_str, time_unit),
                    format_time_share(e.self_device_time_total, total_device),
                    _in_unit(e.device_time_total, e.device_time_total_str, time_unit),
                    _in_unit(e.device_time, e.device_time_str, time_unit)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if has_device_mem:
                row += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim_path(e.stack[0], src_width) if e.stack else "")
        if with_flops:
            row.append("--" if not e.flops or e.flops <= 0 else f"{e.flops * flops_scale:8.3f}")
        lines.append(row_format.format(*row))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:]:
                lines.append(row_format.format(*(blank + [_trim_path(entry, src_width)])))
            lines.append(row_format.format(*(blank + [""])))
    lines.append(header_sep)
    lines.append(f"Self CPU time total: {_in_unit(total_self, format_time(total_self), time_unit)}")
    if has_device_time:
        lines.append(f"Self {device_name} time total: {_in_unit(total_device, format_time(total_device), time_unit)}")
    return "\n".join(lines) + "\n"
