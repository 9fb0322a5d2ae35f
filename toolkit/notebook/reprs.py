"""Rich notebook displays of toolkit objects; the core's ``_repr_mimebundle_`` methods delegate here lazily.

Each bundle keeps ``text/plain`` exactly the object's ``repr`` (what a terminal
shows), gives graph-like objects their static picture (``image/svg+xml`` and
``image/png``, see ``graph_view``), and adds ``text/html``: graphs, ``graph_for`` results and scripted code
as ``GraphView`` drawings, profiles as ``ProfileView``, modules as a collapsible
tree with parameter counts, tensors as their metadata, summary statistics and,
for large ones, a histogram. A view that cannot be built never hides the
object: the bundle falls back to text with a warning naming the error.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..jit.ir.graph import Graph
from ..jit.runtime.executor import GraphFor
from ..nn.modules.module import Module
from ..profiler import EventList, profile
from ..tensor import Tensor
from . import _html
from ._html import esc
from .profile_view import ProfileView

HISTOGRAM_MIN_NUMEL = 100  # tensors with at least this many elements get a histogram
HISTOGRAM_BINS = 30
STATS_SAMPLE = 4_000_000  # statistics of larger tensors are taken over an even sample of this size


def mimebundle(obj, include=None, exclude=None) -> dict:
    """``{"text/plain": repr(obj), "text/html": ...}`` for any toolkit object with a rich view."""
    text = repr(obj)
    try:
        html = to_html(obj)
    except Exception as e:  # a broken view must not hide the value itself
        warnings.warn(f"toolkit.notebook: no HTML view of this {type(obj).__name__}: {type(e).__name__}: {e}",
                      RuntimeWarning, stacklevel=2)
        return {"text/plain": text}
    bundle = {"text/plain": text, "text/html": html}
    try:
        bundle.update(static_images(obj))
    except Exception as e:
        warnings.warn(f"toolkit.notebook: no static picture of this {type(obj).__name__}: {type(e).__name__}: {e}",
                      RuntimeWarning, stacklevel=2)
    if include:
        bundle = {k: v for k, v in bundle.items() if k in include}
    if exclude:
        bundle = {k: v for k, v in bundle.items() if k not in exclude}
    return bundle


def static_images(obj) -> dict:
    """``image/svg+xml`` and ``image/png`` of a graph-like object's drawing (see ``graph_view``), else {}."""
    from .graph_view import GraphView  # optional: the graph view needs PIL

    graph = obj if isinstance(obj, (Graph, GraphFor)) else getattr(obj, "inlined_graph", None) or \
        getattr(obj, "graph", None)
    if not isinstance(graph, (Graph, GraphFor)):
        return {}
    bundle = GraphView(graph).static_bundle()
    del bundle["text/plain"]
    return bundle


def to_html(obj) -> str:
    """The HTML view of a Tensor, Graph, graph_for result, scripted function or module, Module or profile."""
    from .graph_view import GraphView  # optional: the graph view needs PIL

    if isinstance(obj, Tensor):
        return tensor_html(obj)
    if isinstance(obj, (Graph, GraphFor)):
        return GraphView(obj).to_html()
    if isinstance(obj, (profile, EventList)):
        return ProfileView(obj).to_html()
    if isinstance(obj, Module):
        graph = getattr(obj, "inlined_graph", None)  # a traced module's graph with its calls inlined: what runs
        tree = module_tree_html(obj)
        if isinstance(graph, Graph):  # a ScriptModule: its tree, then what it runs
            return tree + scripted_html(obj, graph)
        return tree
    graph = getattr(obj, "graph", None)
    if isinstance(graph, Graph):
        return scripted_html(obj, graph)
    raise TypeError(f"no rich view for {type(obj).__name__}")


def scripted_html(obj, graph) -> str:
    """A scripted or traced function or module: its graph drawn, and its ``.code``."""
    from .graph_view import GraphView  # optional: the graph view needs PIL

    code = getattr(obj, "code", None)
    extra = ""
    if isinstance(code, str):
        extra = _html.root(f"<details><summary><b>code</b></summary><pre>{esc(code)}</pre></details>",
                           script=False)
    return GraphView(graph, title=getattr(obj, "__name__", None) or getattr(obj, "original_name", None)).to_html() \
        + extra


# -- tensors ------------------------------------------------------------------------------------
def tensor_stats(t) -> dict:
    """Summary statistics of a tensor's values (finite ones for min/max/mean/std), as plain numbers."""
    a = np.asarray(t.detach().cpu().numpy())
    flat = a.reshape(-1)
    sampled = flat.size > STATS_SAMPLE
    if sampled:
        flat = flat[:: int(np.ceil(flat.size / STATS_SAMPLE))]
    out: dict = {"numel": int(a.size), "sampled": bool(sampled)}
    if flat.size == 0:
        return out
    if flat.dtype == np.bool_:
        out["true"] = int(flat.sum())
        out["false"] = int(flat.size - out["true"])
        return out
    if np.iscomplexobj(flat):
        flat = np.abs(flat)
        out["of"] = "abs"
    values = flat.astype(np.float64)
    finite = values[np.isfinite(values)]
    out["nan"] = int(np.isnan(values).sum())
    out["inf"] = int(np.isinf(values).sum())
    out["zeros"] = int((values == 0).sum())
    if finite.size:
        out.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()),
                   std=float(finite.std(ddof=1)) if finite.size > 1 else 0.0)
    return out


def histogram_svg(t, bins: int = HISTOGRAM_BINS, width: int = 300, height: int = 80) -> str:
    """A small SVG histogram of a tensor's finite values."""
    a = np.asarray(t.detach().cpu().numpy()).reshape(-1)
    if np.iscomplexobj(a):
        a = np.abs(a)
    a = a.astype(np.float64)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return ""
    counts, edges = np.histogram(a, bins=bins)
    top = counts.max() or 1
    bw = width / bins
    bars = []
    for i, c in enumerate(counts):
        h = (height - 14) * c / top
        bars.append(f'<rect x="{i * bw:.1f}" y="{height - 14 - h:.1f}" width="{max(bw - 1, 0.5):.1f}" '
                    f'height="{h:.1f}" fill="#54aeff"><title>[{edges[i]:.4g}, {edges[i + 1]:.4g}): {c}</title>'
                    "</rect>")
    labels = (f'<text x="0" y="{height - 2}" font-size="9" font-family="monospace">{edges[0]:.4g}</text>'
              f'<text x="{width}" y="{height - 2}" font-size="9" font-family="monospace" text-anchor="end">'
              f"{edges[-1]:.4g}</text>")
    return (f'<svg class="tk-hist" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{"".join(bars)}{labels}</svg>')


def tensor_html(t) -> str:
    """Metadata, statistics, a histogram for large tensors, and the usual printout."""
    meta = [("shape", tuple(t.shape)), ("dtype", t.dtype), ("device", t.device)]
    if t.requires_grad:
        meta.append(("requires_grad", True))
    if t.grad_fn is not None:
        meta.append(("grad_fn", type(t.grad_fn).__name__))
    stats = tensor_stats(t)
    for k in ("min", "max", "mean", "std"):
        if k in stats:
            meta.append((k, f"{stats[k]:.6g}"))
    for k in ("nan", "inf", "zeros", "true", "false"):
        if stats.get(k):
            meta.append((k, stats[k]))
    if stats.get("sampled"):
        meta.append(("statistics", f"over an even sample of {STATS_SAMPLE} elements"))
    rows = "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(v)}</td></tr>" for k, v in meta)
    hist = histogram_svg(t) if stats["numel"] >= HISTOGRAM_MIN_NUMEL and "min" in stats else ""
    text = esc(repr(t))
    body = (f'<div class="tk-tensor" style="display:flex;gap:16px;align-items:flex-start">'
            f'<table class="tk-kv">{rows}</table>{hist}</div>'
            f"<details{' open' if stats['numel'] < HISTOGRAM_MIN_NUMEL else ''}><summary>values</summary>"
            f"<pre>{text}</pre></details>")
    return _html.root(body, script=False)


# -- modules ------------------------------------------------------------------------------------
def _count(params) -> int:
    return sum(int(np.prod(p.shape)) for p in params)


def _module_node(name: str, m, open_: bool) -> str:
    own = list(m._parameters.items())
    total = _count(m.parameters())
    head = (f"<b>{esc(name)}</b>{': ' if name else ''}<code>{esc(m._get_name())}"
            f"({esc(m.extra_repr())})</code> <span style='color:#57606a'>{total:,} params</span>")
    children = list(m.named_children())
    if not children and not own:
        return f"<div style='margin-left:14px'>{head}</div>"
    parts = [f"<details{' open' if open_ else ''} style='margin-left:14px'><summary>{head}</summary>"]
    if own:
        parts.append("<table class='tk-kv' style='margin-left:14px'>")
        for pname, p in own:
            if p is None:
                continue
            parts.append(f"<tr><td>{esc(pname)}</td><td>{esc(list(p.shape))}</td><td>{esc(p.dtype)}</td>"
                         f"<td>{'trainable' if p.requires_grad else 'frozen'}</td></tr>")
        parts.append("</table>")
    parts += [_module_node(cname, c, False) for cname, c in children]
    parts.append("</details>")
    return "".join(parts)


def module_tree_html(m) -> str:
    """The module tree, collapsible, with parameter shapes and counts (total and trainable)."""
    params = list(m.parameters())
    trainable = _count(p for p in params if p.requires_grad)
    head = (f"<div><b>{esc(m._get_name())}</b>: {_count(params):,} parameters "
            f"({trainable:,} trainable), {'training' if m.training else 'eval'} mode</div>")
    return _html.root(head + _module_node("", m, True), script=False)
