"""Formatting for the side-by-side benchmarks: tables of best and median seconds per call, ratios of the best,
and the machine they ran on. The timing itself is in :mod:`benchmarks.harness`."""

from __future__ import annotations

import os
import platform

from .harness import Timing, Variant


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def fmt(seconds: float) -> str:
    if seconds != seconds:
        return "n/a"
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.3f} s "


def per_library(setup: str, number: int, libs: tuple = ("toolkit", "torch"), *args) -> list[Variant]:
    """The same setup function for each library, one variant each (labelled by the library's name)."""
    return [Variant(lib, setup, (lib, *args), number) for lib in libs]


def cell(t: Timing) -> str:
    """``best / median`` of one variant, or why it has no figure."""
    if not t.samples:
        return f"n/a ({t.error.replace('|', '/')})" if t.error else "n/a"
    return f"{fmt(t.best).strip()} / {fmt(t.median).strip()}"


def ratio(a: Timing, b: Timing) -> str:
    """The ratio of the best figures, ``a`` over ``b``."""
    if not a.samples or not b.samples:
        return "n/a"
    return f"{a.best / b.best:.2f}x"


def threads_note(rows: list) -> str:
    """One line naming the thread settings each library ran with in its own process."""
    seen: dict = {}
    for _, times in rows:
        for label, t in times.items():
            if t.threads:
                seen.setdefault(label, t.threads)
    return "Threads: " + "; ".join(f"{k}: {v}" for k, v in seen.items()) if seen else ""


def meets(mine: Timing, ref: Timing, target: float | None) -> str:
    """Whether ``mine``'s best time is within ``target`` times ``ref``'s best (``-`` where no target is set)."""
    if target is None:
        return "-"
    if not mine.samples or not ref.samples:
        return "n/a"
    return "yes" if mine.best <= target * ref.best else "no"


def table(title: str, rows: list[tuple], target: str, ref: str | None = None, extra: tuple = ()) -> str:
    """Rows of ``(case, {label: Timing})`` or ``(case, {label: Timing}, target)`` as markdown: best / median per
    column, then the first column's ratio of best figures to ``ref`` (by default the second column) and to each
    label in ``extra``. A row's ``target`` is the largest ratio to ``ref`` it should show (``None``: none set);
    when any row has one, the table gets a target column and whether the best figures meet it."""
    targets = [r[2] if len(r) > 2 else None for r in rows]
    with_targets = any(t is not None for t in targets)
    labels = list(dict.fromkeys(k for r in rows for k in r[1]))
    rows = [(r[0], {k: r[1].get(k, Timing([])) for k in labels}) for r in rows]
    refs = [ref or (labels[1] if len(labels) > 1 else labels[0]), *extra]
    goal = [f"target (ratio to {refs[0]})", "meets"] if with_targets else []
    out = [f"### {title}", "", f"Target: {target}", "",
           "| case | " + " | ".join(f"{k} (best / median)" for k in labels) + " | "
           + " | ".join([*(f"ratio to {r}" for r in refs), *goal]) + " |",
           "|---" * (len(labels) + len(refs) + len(goal) + 1) + "|"]
    for (case, times), row_target in zip(rows, targets, strict=True):
        mine = times[labels[0]]
        cells = [ratio(mine, times[r]) for r in refs]
        if with_targets:
            bound = "-" if row_target is None else f"<= {row_target:g}x"
            cells += [bound, meets(mine, times[refs[0]], row_target)]
        out.append(f"| {case} | " + " | ".join(cell(times[k]) for k in labels) + " | " + " | ".join(cells) + " |")
    note = threads_note(rows)
    return "\n".join(out) + ("\n\n" + note if note else "") + "\n"
