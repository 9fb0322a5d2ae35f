"""The graph IR: a Graph of Nodes in SSA form, Blocks for control flow, typed Values with use lists.

Shaped like TorchScript's IR, which users read in the seed slides::

    graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu), %y : ...):
      %2 : int = prim::Constant[value=2]()
      %3 : Float(3, ...) = aten::mul(%x, %2)
      return (%3)

Nodes are created through a Graph and inserted at its insertion point
(``with graph.inserting_before(node): ...``), so passes edit graphs the way
TorchScript's do. ``aten::`` nodes keep a reference to their registry OpDef.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from . import kinds as K
from . import types as T
from .printer import graph_to_string, node_to_string
from .verify import verify

_NAME_SUFFIX = re.compile(r"^(.*)\.(\d+)$")


class Use:
    """One use of a Value: input ``offset`` of ``user``."""

    __slots__ = ("user", "offset")

    def __init__(self, user: Node, offset: int):
        self.user, self.offset = user, offset

    def __eq__(self, other) -> bool:
        return isinstance(other, Use) and self.user is other.user and self.offset == other.offset

    def __repr__(self) -> str:
        return f"Use({self.user.kind}, {self.offset})"


class Value:
    """An SSA value: defined once (by a node output or a block parameter), used by node inputs."""

    __slots__ = ("graph", "node", "offset", "type", "_name", "unique", "uses", "__weakref__")

    def __init__(self, graph: Graph, node: Node | None, offset: int, type: T.JitType):
        self.graph = graph
        self.node = node  # producing node; for a block parameter the owning block's param node
        self.offset = offset
        self.type = type
        self._name: str | None = None
        self.unique = graph._next_unique()
        self.uses: list[Use] = []

    # -- names ------------------------------------------------------------------------------
    @property
    def debug_name(self) -> str:
        """The name printed after ``%``: the user's variable name when known, else a number."""
        return self._name if self._name is not None else str(self.unique)

    def has_debug_name(self) -> bool:
        return self._name is not None

    def set_debug_name(self, name: str | None) -> Value:
        """Name the value; a name already in use gets a ``.N`` suffix (``x``, ``x.1``, ``x.2``)."""
        names = self.graph._names
        if self._name is not None:
            names.pop(self._name, None)
        if name is None or name.isdigit():
            self._name = None
            return self
        base = name
        m = _NAME_SUFFIX.match(name)
        if m:
            base = m.group(1)
        if name in names:
            k = 1
            while f"{base}.{k}" in names:
                k += 1
            name = f"{base}.{k}"
        names[name] = self
        self._name = name
        return self

    def take_debug_name(self, name: str) -> Value:
        """Name the value ``name`` even if another value has it: that one is renamed ``name.N``.

        This is how TorchScript's tracer resolves a clash, so a traced graph names the latest
        binding of a reassigned variable plainly (``%y``) and the earlier ones ``%y.1``, ``%y.3``:
        each base name's suffixes only grow, skipping one after each rename, as PyTorch's do.
        ``set_debug_name`` (the new value takes the suffix) is what script mode keeps.
        """
        names, suffixes = self.graph._names, self.graph._name_suffixes
        owner = names.get(name)
        if owner is not None and owner is not self:
            base, k = name, 1
            m = _NAME_SUFFIX.match(name)
            if m:
                base, k = m.group(1), int(m.group(2))
            if base in suffixes:
                k = max(k, suffixes[base] + 1)
            while f"{base}.{k}" in names:
                k += 1
            suffixes[base] = k + 1
            owner.set_debug_name(f"{base}.{k}")
        return self.set_debug_name(name)

    # -- uses -------------------------------------------------------------------------------
    def replace_all_uses_with(self, other: Value) -> None:
        for u in list(self.uses):
            u.user.replace_input(u.offset, other)
        if self.graph is not None:
            for b in _blocks_returning(self):
                b.outputs = [other if v is self else v for v in b.outputs]

    def __repr__(self) -> str:
        return f"%{self.debug_name} : {self.type}"


def _blocks_returning(v: Value) -> Iterator[Block]:
    for b in v.graph.all_blocks():
        if any(o is v for o in b.outputs):
            yield b


class Node:
    """One operation: kind, input and output values, attributes, nested blocks, op, source location, scope."""

    __slots__ = ("graph", "kind", "inputs", "outputs", "attributes", "blocks", "op", "source", "scope",
                 "owning_block", "__weakref__")

    def __init__(self, graph: Graph, kind: str, op=None):
        self.graph = graph
        self.kind = kind
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.attributes: dict[str, Any] = {}
        self.blocks: list[Block] = []
        self.op = op  # the registry OpDef for aten:: nodes
        self.source: tuple[str, int] | None = None
        self.scope = ""
        self.owning_block: Block | None = None

    # -- inputs and outputs -----------------------------------------------------------------
    def add_input(self, v: Value) -> Value:
        v.uses.append(Use(self, len(self.inputs)))
        self.inputs.append(v)
        return v

    def replace_input(self, i: int, v: Value) -> None:
        old = self.inputs[i]
        old.uses.remove(Use(self, i))
        self.inputs[i] = v
        v.uses.append(Use(self, i))

    def remove_input(self, i: int) -> None:
        self.inputs[i].uses.remove(Use(self, i))
        for j in range(i + 1, len(self.inputs)):
            v = self.inputs[j]
            for u in v.uses:
                if u.user is self and u.offset == j:
                    u.offset = j - 1
                    break
        del self.inputs[i]

    def add_output(self, type: T.JitType = T.TENSOR) -> Value:
        v = Value(self.graph, self, len(self.outputs), type)
        self.outputs.append(v)
        return v

    def output(self) -> Value:
        if len(self.outputs) != 1:
            raise RuntimeError(f"{self.kind} has {len(self.outputs)} outputs, not one")
        return self.outputs[0]

    def add_block(self) -> Block:
        b = Block(self.graph, self)
        self.blocks.append(b)
        return b

    # -- attributes -------------------------------------------------------------------------
    def __getitem__(self, name: str):
        return self.attributes[name]

    def __setitem__(self, name: str, value) -> None:
        self.attributes[name] = value

    def has_attribute(self, name: str) -> bool:
        return name in self.attributes

    # -- position ---------------------------------------------------------------------------
    def in_block_list(self) -> bool:
        return self.owning_block is not None

    def insert_before(self, other: Node) -> Node:
        b = other.owning_block
        b.nodes.insert(b.index(other), self)
        self.owning_block = b
        return self

    def insert_after(self, other: Node) -> Node:
        b = other.owning_block
        b.nodes.insert(b.index(other) + 1, self)
        self.owning_block = b
        return self

    def move_before(self, other: Node) -> None:
        self.owning_block.nodes.remove(self)
        self.insert_before(other)

    def is_before(self, other: Node) -> bool:
        """Whether this node comes first in program order (both in the same graph)."""
        return self.graph._position(self) < self.graph._position(other)

    def destroy(self) -> None:
        """Remove the node; its outputs must have no uses left."""
        for o in self.outputs:
            if o.uses:
                raise RuntimeError(f"cannot destroy {self.kind}: output %{o.debug_name} still has uses")
        for i in reversed(range(len(self.inputs))):
            self.remove_input(i)
        for o in self.outputs:
            o.set_debug_name(None)
        if self.owning_block is not None:
            self.owning_block.nodes.remove(self)
            self.owning_block = None

    @property
    def source_location(self) -> str:
        return f"{self.source[0]}:{self.source[1]}" if self.source else "<unknown>"

    def __repr__(self) -> str:
        return node_to_string(self).strip()


class Block:
    """A list of nodes with parameters (inputs) and returned values (outputs)."""

    __slots__ = ("graph", "owning_node", "inputs", "outputs", "nodes")

    def __init__(self, graph: Graph, owning_node: Node | None):
        self.graph = graph
        self.owning_node = owning_node
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.nodes: list[Node] = []

    def add_input(self, name: str | None = None, type: T.JitType = T.TENSOR) -> Value:
        v = Value(self.graph, None, len(self.inputs), type)
        v.set_debug_name(name)
        self.inputs.append(v)
        return v

    def register_output(self, v: Value) -> int:
        self.outputs.append(v)
        return len(self.outputs) - 1

    def index(self, node: Node) -> int:
        for i, n in enumerate(self.nodes):
            if n is node:
                return i
        raise ValueError(f"{node.kind} is not in this block")

    def __iter__(self) -> Iterator[Node]:
        return iter(list(self.nodes))


class Graph:
    """A function in SSA form: a top block whose inputs are the graph's inputs and outputs its results."""

    def __init__(self):
        self._unique = 0
        self._names: dict[str, Value] = {}
        self._name_suffixes: dict[str, int] = {}  # base name -> the next suffix ``take_debug_name`` may give
        self.block = Block(self, None)
        self._insert = (self.block, None)  # (block, node to insert before; None = the end)

    def _next_unique(self) -> int:
        u = self._unique
        self._unique += 1
        return u

    # -- the top block ----------------------------------------------------------------------
    @property
    def inputs(self) -> list[Value]:
        return self.block.inputs

    @property
    def outputs(self) -> list[Value]:
        return self.block.outputs

    def add_input(self, name: str | None = None, type: T.JitType = T.TENSOR) -> Value:
        return self.block.add_input(name, type)

    def register_output(self, v: Value) -> int:
        return self.block.register_output(v)

    def nodes(self) -> list[Node]:
        """The top block's nodes (a copy, so callers may edit the graph while iterating)."""
        return list(self.block.nodes)

    def all_blocks(self) -> Iterator[Block]:
        stack = [self.block]
        while stack:
            b = stack.pop()
            yield b
            for n in b.nodes:
                stack.extend(n.blocks)

    def all_values(self) -> Iterator[Value]:
        """Every value: the inputs, then each node's outputs and its blocks' inputs, nested blocks included, in
        an order ``copy()`` preserves (so two copies' values pair up)."""
        yield from self.inputs
        for n in self.all_nodes():
            yield from n.outputs
            for b in n.blocks:
                yield from b.inputs

    def all_nodes(self) -> Iterator[Node]:
        """Every node, nested blocks included, in program order."""
        stack = [iter(self.block.nodes)]
        while stack:
            n = next(stack[-1], None)
            if n is None:
                stack.pop()
                continue
            yield n
            for b in reversed(n.blocks):
                stack.append(iter(b.nodes))

    def _position(self, node: Node) -> int:
        for i, n in enumerate(self.all_nodes()):
            if n is node:
                return i
        raise ValueError(f"{node.kind} is not in the graph")

    # -- creating and inserting nodes -------------------------------------------------------
    def create(self, kind: str, inputs=(), n_outputs: int = 1, op=None) -> Node:
        """A new node, not yet inserted (``insert`` or ``insert_node`` places it)."""
        n = Node(self, kind, op)
        for v in inputs:
            n.add_input(v)
        for _ in range(n_outputs):
            n.add_output()
        return n

    def insert_node(self, node: Node) -> Node:
        """Insert at the insertion point."""
        block, before = self._insert
        if before is None:
            block.nodes.append(node)
            node.owning_block = block
        else:
            node.insert_before(before)
        return node

    def insert(self, kind: str, inputs=(), n_outputs: int = 1, op=None) -> Node:
        return self.insert_node(self.create(kind, inputs, n_outputs, op))

    def insert_constant(self, value, type: T.JitType | None = None) -> Value:
        """A ``prim::Constant`` holding ``value`` (a Python number, bool, str, None, dtype, device or Tensor)."""
        n = self.insert(K.CONSTANT)
        if value is not None:
            n["value"] = value
        n.output().type = type or T.type_of_constant(value)
        return n.output()

    def set_insert_point(self, block_or_node) -> None:
        """Insert at the end of a block, or before a node."""
        if isinstance(block_or_node, Block):
            self._insert = (block_or_node, None)
        else:
            self._insert = (block_or_node.owning_block, block_or_node)

    @contextlib.contextmanager
    def inserting_before(self, node: Node):
        saved = self._insert
        self._insert = (node.owning_block, node)
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_after(self, node: Node):
        b = node.owning_block
        i = b.index(node)
        saved = self._insert
        self._insert = (b, b.nodes[i + 1] if i + 1 < len(b.nodes) else None)
        try:
            yield
        finally:
            self._insert = saved

    @contextlib.contextmanager
    def inserting_at_end(self, block: Block):
        saved = self._insert
        self._insert = (block, None)
        try:
            yield
        finally:
            self._insert = saved

    # -- whole-graph operations -------------------------------------------------------------
    def copy(self) -> Graph:
        """A deep copy with the same names, types, attributes and source locations."""
        g = Graph()
        env: dict[Value, Value] = {}
        for v in self.inputs:
            env[v] = g.add_input(v._name, v.type)
        _copy_block_into(self.block, g.block, env, g)
        for v in self.outputs:
            g.register_output(env[v])
        return g

    def verify(self) -> None:
        """Raise ``RuntimeError`` naming the first broken invariant (dominance, types, block arity)."""
        verify(self)

    def to_string(self, source_locations: bool = True) -> str:
        return graph_to_string(self, source_locations)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return self.to_string()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """Jupyter's rich display, drawn by toolkit.notebook (imported only when a notebook asks)."""
        from ...notebook.reprs import mimebundle  # optional: notebook views, loaded on demand

        return mimebundle(self, include, exclude)


def _copy_block_into(src: Block, dst: Block, env: dict, g: Graph) -> None:
    for n in src.nodes:
        m = Node(g, n.kind, n.op)
        for v in n.inputs:
            m.add_input(env[v])
        for o in n.outputs:
            env[o] = m.add_output(o.type)
            env[o].set_debug_name(o._name)
        m.attributes = {k: (v.copy() if isinstance(v, Graph) else v) for k, v in n.attributes.items()}
        m.source, m.scope = n.source, n.scope
        dst.nodes.append(m)
        m.owning_block = dst
        for b in n.blocks:
            nb = m.add_block()
            for v in b.inputs:
                env[v] = nb.add_input(v._name, v.type)
            _copy_block_into(b, nb, env, g)
            for v in b.outputs:
                nb.register_output(env[v])


def values_read(n: Node) -> Iterator[Value]:
    """Values a node reads, including those its nested blocks read (from outside or from each other)."""
    yield from n.inputs
    for b in n.blocks:
        for m in b.nodes:
            yield from values_read(m)
        yield from b.outputs


def values_defined(n: Node, out: set) -> None:
    """Add to ``out`` the values ``n`` defines: its outputs, and its nested blocks' inputs and nodes' outputs."""
    out.update(n.outputs)
    for b in n.blocks:
        out.update(b.inputs)
        for m in b.nodes:
            values_defined(m, out)
