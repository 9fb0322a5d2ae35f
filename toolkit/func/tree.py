"""Pytrees for the function transforms: every leaf of nested tuples, lists and dicts, and their structure.

``toolkit.utils._pytree`` collects the *tensors* of a structure; the transforms need more: every leaf (a
``None`` in ``in_dims`` or a Python number returned by ``f`` is a leaf too), a structure (``TreeSpec``) that
compares equal between two trees and prints as PyTorch's does (the transforms' error messages show it), and
a spec-driven broadcast of ``in_dims``/``out_dims`` prefixes onto a tree's leaves.
"""

from __future__ import annotations

from typing import Any


class TreeSpec:
    """The shape of a pytree: a node type, its context (dict keys, namedtuple class) and child specs."""

    __slots__ = ("type", "context", "children")

    def __init__(self, type_: type | None, context: Any = None, children: list | None = None):
        self.type = type_
        self.context = context
        self.children = children or []

    @property
    def is_leaf(self) -> bool:
        return self.type is None

    @property
    def num_leaves(self) -> int:
        return 1 if self.is_leaf else sum(c.num_leaves for c in self.children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.type, len(self.children)))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf:
            return "*"
        indent += 2
        parts = [c.__repr__(indent) for c in self.children]
        body = (",\n" + " " * indent).join(parts)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{body}])"


LEAF = TreeSpec(None)


def _node(obj) -> tuple[type, Any, list] | None:
    """``(type, context, children)`` for a container node, None for a leaf."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj), type(obj), list(obj)
    if isinstance(obj, (tuple, list)):
        return type(obj), None, list(obj)
    if isinstance(obj, dict):
        return type(obj), list(obj), list(obj.values())
    return None


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    """Leaves of ``tree`` depth first, and its spec; ``tree_unflatten(leaves, spec)`` rebuilds it."""
    leaves: list = []

    def walk(obj) -> TreeSpec:
        node = _node(obj)
        if node is None:
            leaves.append(obj)
            return LEAF
        kind, context, children = node
        return TreeSpec(kind if kind in (tuple, list, dict) or context is not None else tuple, context,
                        [walk(c) for c in children])

    return leaves, walk(tree)


def tree_unflatten(leaves, spec: TreeSpec):
    """The tree of shape ``spec`` holding ``leaves`` in order."""
    it = iter(leaves)

    def build(s: TreeSpec):
        if s.is_leaf:
            return next(it)
        items = [build(c) for c in s.children]
        if s.type is dict or (isinstance(s.context, list) and issubclass(s.type, dict)):
            return s.type(zip(s.context, items))
        if s.context is not None and hasattr(s.context, "_fields"):
            return s.context(*items)
        return s.type(items)

    return build(spec)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec: TreeSpec) -> list | None:
    """``prefix`` (a tree whose leaves stand for whole subtrees of ``spec``) as one value per leaf of ``spec``.

    ``in_dims=(0, None)`` for ``f(x, {"a": y, "b": z})`` broadcasts ``None`` to both ``y`` and ``z``. None
    when ``prefix`` does not match ``spec``'s structure.
    """
    out: list = []

    def walk(p, s: TreeSpec) -> bool:
        node = _node(p)
        if node is None:
            out.extend([p] * s.num_leaves)
            return True
        if s.is_leaf:
            return False
        kind, context, children = node
        if kind is not s.type and not (issubclass(kind, tuple) and issubclass(s.type, tuple)):
            return False
        if len(children) != len(s.children):
            return False
        if isinstance(p, dict):
            if set(context) != set(s.context):
                return False
            children = [p[k] for k in s.context]
        return all(walk(c, cs) for c, cs in zip(children, s.children))

    return out if walk(prefix, spec) else None


def treespec_pprint(spec: TreeSpec) -> str:
    """A spec as a literal with ``*`` for leaves, ``(*, [*, *], {'a': *})``, as the transforms' errors show it."""
    if spec.is_leaf:
        return "*"
    parts = [treespec_pprint(c) for c in spec.children]
    if spec.type is dict or isinstance(spec.context, list):
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(spec.context, parts)) + "}"
    if spec.type is list:
        return "[" + ", ".join(parts) + "]"
    inner = ", ".join(parts) + ("," if len(parts) == 1 else "")
    name = spec.type.__name__ if spec.context is not None else ""
    return f"{name}({inner})"
