"""``AutogradView``: the ``grad_fn`` graph behind a tensor, drawn by Graphviz as torchviz's ``make_dot`` draws it.

One box per graph node, named by its class (``MulBackward0``, ``AccumulateGrad``...), edges from each node's
``next_functions`` to the node that feeds them gradients; leaves (blue) carry the parameter's name when
``params`` maps names to tensors, the output tensor is green and, with ``show_saved``, the tensors each node
saved for backward are orange boxes with their shapes. The drawing comes from Graphviz's ``dot`` as SVG, and as
PNG too since JupyterLab draws SVG outputs only in trusted notebooks (a PNG shows either way); no JavaScript.

The SVG carries a small stylesheet (``static/autograd.css``) reading JupyterLab's theme variables, so where the
drawing sits inline in a themed page (an HTML export of a notebook, a page that embeds it) its card, plain boxes,
text and edges follow a light or dark theme; the coloured boxes keep their light fills and black text in both.
Where the variables are missing (the SVG shown as an image, a viewer of its own) the fallbacks are the light
drawing ``dot`` made, and the PNG is always that one.

    >>> AutogradView(loss, params=dict(model.named_parameters()))      # in a notebook cell: draws it
    >>> AutogradView(loss, show_saved=True).save("loss.svg")

Both toolkit and PyTorch tensors are read the same way (``grad_fn``, ``next_functions``, ``variable``, saved
values as ``_saved_*``), so the same model's graphs can be set side by side.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from . import _html

_COLORS = {"leaf": "lightblue", "saved": "orange", "output": "darkolivegreen1"}
_NODE_ATTR = {"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
              "height": "0.2", "fontname": "monospace"}
_SAVED_PREFIX = "_saved_"


@dataclass
class AutogradNode:
    """One box: ``kind`` is ``fn`` (a grad_fn), ``leaf`` (AccumulateGrad), ``saved`` or ``output``."""

    id: str
    kind: str
    label: str
    obj: object = field(repr=False, default=None)


def _is_tensor(value) -> bool:
    return hasattr(value, "grad_fn") and hasattr(value, "requires_grad") and hasattr(value, "shape")


def _size_str(shape) -> str:
    return "(" + ", ".join(str(int(d)) for d in shape) + ")"


def _saved_values(fn) -> list[tuple[str, object]]:
    """``(name, value)`` of what ``fn`` saved for backward, as its ``_saved_<name>`` attributes give them.

    PyTorch lists them in ``dir(fn)``; toolkit's op nodes answer ``_saved_<name>`` for the names in their
    ``_saved`` and ``_attrs`` tables. Values already freed by a backward pass are left out.
    """
    names = [a[len(_SAVED_PREFIX):] for a in dir(fn) if a.startswith(_SAVED_PREFIX)]
    for table in ("_saved", "_attrs"):
        entries = getattr(fn, table, None)
        if isinstance(entries, dict):
            names.extend(k for k in entries if k not in names)
    out = []
    for name in names:
        try:
            out.append((name, getattr(fn, _SAVED_PREFIX + name)))
        except (RuntimeError, AttributeError):
            continue
    return out


class AutogradView:
    """The autograd graph of ``root`` (a tensor, or a tuple/list of them) as boxes and edges, drawn to SVG.

    ``params`` (name -> tensor, e.g. ``dict(model.named_parameters())``) names the leaves; ``show_saved``
    adds each node's saved tensors, ``show_attrs`` its other saved values (truncated to ``max_attr_chars``).
    ``nodes`` and ``edges`` hold the graph; ``source`` is its Graphviz text and ``svg()`` the drawing.
    """

    def __init__(self, root, params: dict | None = None, show_attrs: bool = False, show_saved: bool = False,
                 max_attr_chars: int = 50) -> None:
        roots = list(root) if isinstance(root, (tuple, list)) else [root]
        for r in roots:
            if not _is_tensor(r):
                raise TypeError(f"AutogradView: expected a tensor or a tuple/list of tensors, got {type(r).__name__}")
            if r.grad_fn is None and not r.requires_grad:
                raise ValueError("AutogradView: the tensor has no grad_fn and does not require grad, so it has no "
                                 "autograd graph (compute it from tensors with requires_grad=True, outside no_grad)")
        self._names: dict[int, str] = {}
        for name, value in (params or {}).items():
            if not isinstance(name, str) or not _is_tensor(value):
                raise TypeError(f"AutogradView: params maps names (str) to tensors, got {type(name).__name__} -> "
                                f"{type(value).__name__}")
            self._names[id(value)] = name
        self.show_attrs, self.show_saved, self.max_attr_chars = show_attrs, show_saved, max_attr_chars
        self.nodes: list[AutogradNode] = []
        self.edges: list[tuple[str, str, bool]] = []  # (from, to, is a saved-tensor link)
        self._ids: dict[object, str] = {}
        for r in roots:
            self._add_output(r)

    # --- the graph ---

    def _node(self, key, kind: str, label: str, obj) -> tuple[str, bool]:
        """The id for ``key``, creating its node when new; ``obj`` is kept so ids are never reused."""
        if key in self._ids:
            return self._ids[key], False
        nid = str(len(self._ids))
        self._ids[key] = nid
        self.nodes.append(AutogradNode(nid, kind, label, obj))
        return nid, True

    def _var_label(self, var, name: str | None = None) -> str:
        name = self._names.get(id(var), "") if name is None else name
        return f"{name}\n {_size_str(var.shape)}"

    def _add_output(self, var) -> None:
        out, _ = self._node(("var", id(var)), "output", self._var_label(var), var)
        if var.grad_fn is not None:
            self.edges.append((self._add_fn(var.grad_fn), out, False))

    def _add_fn(self, root) -> str:
        root_id, new = self._fn_node(root)
        if not new:
            return root_id
        todo = [root]
        while todo:
            fn = todo.pop()
            fid = self._ids[("fn", id(fn))]
            if self.show_saved:
                self._add_saved(fn, fid)
            for child, _ in getattr(fn, "next_functions", ()):
                if child is None:
                    continue
                cid, child_new = self._fn_node(child)
                self.edges.append((cid, fid, False))
                if child_new:
                    todo.append(child)
        return root_id

    def _fn_node(self, fn) -> tuple[str, bool]:
        var = getattr(fn, "variable", None)
        if _is_tensor(var):  # AccumulateGrad: the leaf it accumulates into
            return self._node(("fn", id(fn)), "leaf", self._var_label(var), fn)
        label = type(fn).__name__
        if self.show_attrs:
            attrs = [(n, v) for n, v in _saved_values(fn) if not _is_tensor(v) and not _holds_tensors(v)]
            if attrs:
                lines = [f"{n}: {_clip(str(v), self.max_attr_chars)}" for n, v in attrs]
                label += "\n" + "-" * max(len(s) for s in lines) + "\n" + "\n".join(lines)
        return self._node(("fn", id(fn)), "fn", label, fn)

    def _add_saved(self, fn, fid: str) -> None:
        for name, value in _saved_values(fn):
            items = [(name, value)] if _is_tensor(value) else (
                [(f"{name}[{i}]", v) for i, v in enumerate(value) if _is_tensor(v)] if _holds_tensors(value) else [])
            for label, t in items:
                sid, _ = self._node(("saved", id(fn), label), "saved", self._var_label(t, label), t)
                self.edges.append((fid, sid, True))

    # --- drawing ---

    @property
    def source(self) -> str:
        """The graph in Graphviz's dot language (``graphviz.Digraph.source``)."""
        return self._digraph().source

    def _digraph(self):
        import graphviz  # optional: graphviz

        dot = graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr={"size": "12,12"})
        for n in self.nodes:
            attrs = {"fillcolor": _COLORS[n.kind]} if n.kind in _COLORS else {}
            dot.node(n.id, n.label, **attrs)
        for a, b, saved in self.edges:
            dot.edge(a, b, **({"dir": "none"} if saved else {}))
        return dot

    def svg(self) -> str:
        """The drawing as SVG text, laid out by Graphviz's ``dot`` program (Debian's ``graphviz`` package)."""
        return _themed(self._render("svg").decode("utf-8"))

    def png(self) -> bytes:
        """The drawing as PNG bytes (what a notebook shows while it is untrusted: JupyterLab draws SVG outputs
        of trusted notebooks only)."""
        return self._render("png")

    def _render(self, fmt: str) -> bytes:
        try:
            import graphviz  # optional: graphviz
        except ImportError as e:
            raise RuntimeError("AutogradView needs the graphviz Python package (pip install graphviz)") from e
        try:
            return self._digraph().pipe(format=fmt)
        except graphviz.ExecutableNotFound as e:
            raise RuntimeError("AutogradView needs Graphviz's `dot` program on PATH (apt-get install graphviz)") from e

    def save(self, path) -> str:
        """Write the SVG drawing to ``path``; returns the path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg())
        return str(path)

    def __repr__(self) -> str:
        fns = sum(n.kind == "fn" for n in self.nodes)
        leaves = sum(n.kind == "leaf" for n in self.nodes)
        head = f"AutogradView: {fns} grad_fn node{'s' * (fns != 1)}, {leaves} lea{'ves' if leaves != 1 else 'f'}"
        return head + "\n" + "\n".join(self._tree_lines())

    def _tree_lines(self) -> list[str]:
        """Each root's graph as an indented listing (a node seen before is listed once, marked ``^``)."""
        children: dict[str, list[str]] = {}
        for a, b, saved in self.edges:
            if not saved:
                children.setdefault(b, []).append(a)
        by_id = {n.id: n for n in self.nodes}
        lines, seen = [], set()
        stack = [(n.id, 0) for n in reversed(self.nodes) if n.kind == "output"]
        while stack:
            nid, depth = stack.pop()
            n = by_id[nid]
            parts = n.label.split("\n")[:1 if n.kind == "fn" else 2]
            text = " ".join(part.strip() for part in parts if part.strip())
            lines.append("  " * depth + text + (" ^" if nid in seen else ""))
            if nid not in seen:
                seen.add(nid)
                stack.extend((c, depth + 1) for c in reversed(children.get(nid, [])))
        return lines

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {"text/plain": repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
            bundle["image/png"] = base64.b64encode(self.png()).decode("ascii")
        except RuntimeError as e:
            bundle["text/plain"] += f"\n({e})"
        return bundle


def _themed(svg: str) -> str:
    """``dot``'s SVG marked ``tk-autograd`` with the theme stylesheet inside, its rules scoped to that class (a
    stylesheet in an inline SVG applies to the whole page, and graph views draw with ``dot`` too)."""
    start = svg.find("<svg ")
    if start < 0:
        return svg
    end = svg.index(">", start) + 1
    return (svg[:start] + '<svg class="tk-autograd" ' + svg[start + 5:end]
            + f"<style>{_html.static_text('autograd.css')}</style>" + svg[end:])


def _holds_tensors(value) -> bool:
    return isinstance(value, (tuple, list)) and any(_is_tensor(v) for v in value)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
