"""Passes and the manager that runs them: verify after each, and keep the graph after each step.

A pass is a Python function from graph to graph (it may edit the graph in place
and return it, or return None) with a name; ``register_pass`` gives it one and
makes it available to ``PassManager`` by that name::

    @toolkit.jit.register_pass("drop_clones")
    def drop_clones(graph):
        ...
        return graph

    pm = toolkit.jit.PassManager(["constant_propagation", "drop_clones", "dce"])
    graph = pm.run(graph)
    print(pm.report())
    print(pm.history[1].graph)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..ir.graph import Graph
from ..ir.verify import verify

_PASSES: dict[str, Pass] = {}


class Pass:
    """A named graph transformation; ``requires`` names passes that must run before it in the same manager."""

    name: str = ""
    requires: tuple = ()
    ensures: tuple = ()

    def __init__(self, fn: Callable | None = None, name: str | None = None, requires: Iterable = (),
                 ensures: Iterable = ()):
        self.fn = fn
        if name is not None:
            self.name = name
        if not self.name:
            raise ValueError("a pass needs a name")
        self.requires = tuple(requires) or type(self).requires
        self.ensures = tuple(ensures) or type(self).ensures
        self.__doc__ = getattr(fn, "__doc__", None) or type(self).__doc__

    def __call__(self, graph: Graph) -> Graph | None:
        if self.fn is None:
            raise NotImplementedError(f"pass {self.name!r} has no function")
        return self.fn(graph)

    def __repr__(self) -> str:
        return f"<Pass {self.name}>"


def register_pass(name: str, requires: Iterable = (), ensures: Iterable = (), replace: bool = False):
    """Decorator: register a function (or a ``Pass`` subclass) under ``name`` so managers can run it by name."""

    def deco(obj):
        if isinstance(obj, type) and issubclass(obj, Pass):
            p = obj(name=name, requires=requires, ensures=ensures)
        elif isinstance(obj, Pass):
            p = obj
            p.name = name
        elif callable(obj):
            p = Pass(obj, name, requires, ensures)
        else:
            raise TypeError(f"register_pass: expected a function or a Pass, got {type(obj).__name__}")
        if name in _PASSES and not replace:
            raise ValueError(f"a pass named {name!r} is already registered (pass replace=True to override it)")
        _PASSES[name] = p
        return obj

    return deco


def get_pass(name: str) -> Pass:
    try:
        return _PASSES[name]
    except KeyError:
        raise KeyError(f"no pass named {name!r}; registered passes: {', '.join(sorted(_PASSES))}") from None


def registered_passes() -> list[str]:
    return sorted(_PASSES)


def _as_pass(p) -> Pass:
    if isinstance(p, str):
        return get_pass(p)
    if isinstance(p, Pass):
        return p
    if isinstance(p, type) and issubclass(p, Pass):
        return p()
    if callable(p):
        return Pass(p, getattr(p, "__name__", None) or type(p).__name__)
    raise TypeError(f"PassManager: a pass must be a name, a function or a Pass, not {type(p).__name__}")


@dataclass
class PassRecord:
    """One step of a manager's run: the graph after the pass, and what the pass changed."""

    name: str
    graph: Graph
    changed: bool
    added: Counter = field(default_factory=Counter)
    removed: Counter = field(default_factory=Counter)

    @property
    def summary(self) -> str:
        if not self.changed:
            return "no change"
        parts = []
        if self.removed:
            parts.append("removed " + ", ".join(f"{c} {k}" for k, c in sorted(self.removed.items())))
        if self.added:
            parts.append("added " + ", ".join(f"{c} {k}" for k, c in sorted(self.added.items())))
        return "; ".join(parts) or "rewired"


def _values(g: Graph):
    yield from g.inputs
    for n in g.all_nodes():
        yield from n.outputs
        for b in n.blocks:
            yield from b.inputs


def snapshot(g: Graph) -> Graph:
    """A copy that prints exactly as ``g`` does (unnamed values keep their numbers)."""
    c = g.copy()
    for a, b in zip(_values(g), _values(c)):
        b.unique = a.unique
    c._unique = g._unique
    return c


def _kinds(g: Graph) -> Counter:
    return Counter(n.kind for n in g.all_nodes())


class PassManager:
    """Runs passes in order on a graph, verifying after each; ``history`` holds a ``PassRecord`` per pass."""

    def __init__(self, passes: Iterable = (), verify: bool = True):
        self.passes = [_as_pass(p) for p in passes]
        self.verify = verify
        self.history: list[PassRecord] = []

    def add(self, p) -> PassManager:
        self.passes.append(_as_pass(p))
        return self

    def run(self, graph: Graph) -> Graph:
        """Run every pass on ``graph`` (edited in place where the passes do so) and return the result."""
        self.history = []
        done: set = set()
        if self.verify:
            verify(graph)
        for p in self.passes:
            missing = [r for r in p.requires if r not in done]
            if missing:
                raise RuntimeError(f"pass {p.name!r} requires {missing} to run before it")
            before_text = graph.to_string(source_locations=False)
            before_kinds = _kinds(graph)
            out = p(graph)
            if out is not None:
                if not isinstance(out, Graph):
                    raise TypeError(f"pass {p.name!r} returned {type(out).__name__}, not a Graph or None")
                graph = out
            if self.verify:
                try:
                    verify(graph)
                except RuntimeError as e:
                    raise type(e)(f"after pass {p.name!r}: {e}") from None
            after_kinds = _kinds(graph)
            changed = graph.to_string(source_locations=False) != before_text
            self.history.append(PassRecord(p.name, snapshot(graph), changed, after_kinds - before_kinds,
                                           before_kinds - after_kinds))
            done.add(p.name)
            done.update(p.ensures)
        return graph

    __call__ = run

    def report(self, graphs: bool = False) -> str:
        """One line per pass run (and, with ``graphs``, the graph after it)."""
        lines = []
        for i, r in enumerate(self.history):
            lines.append(f"{i}: {r.name}: {r.summary}")
            if graphs:
                lines.append(r.graph.to_string(source_locations=False))
        return "\n".join(lines)


DEFAULT_PIPELINE = ("constant_propagation", "peephole", "cse", "dce")


def run_passes(graph: Graph, passes: Iterable | None = None) -> Graph:
    """Run ``passes`` (names, functions or ``Pass`` objects; the default pipeline when None) on ``graph``."""
    return PassManager(DEFAULT_PIPELINE if passes is None else passes).run(graph)
