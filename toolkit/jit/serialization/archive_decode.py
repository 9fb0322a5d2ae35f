"""The manifest of a ``toolkit.jit.save`` archive as IR, read as it is written: value types, the graph (nodes with
their kinds, ops, inputs, typed outputs, attributes, blocks, sources and scopes) and the module hierarchy
(parameters, buffers, submodules and typed attributes as a tree of ``LoadedModule``).

Decoding checks the form of each record and that node kinds can load at all (registry ops, and the interpreter's
kinds that have a schema); what the nodes do to which values is checked afterwards, on the graph the archive's
code rebuilt, by ``archive_check``. The manifest nests at most ``MAX_JSON_DEPTH`` levels (checked before any of
this recurses) and the graph has at most ``archive_check.MAX_NODES`` nodes.
"""

from __future__ import annotations

from ... import serialization as S
from ..._core import dtypes as _dt
from ..._core.device import as_device
from ..._core.names import check_names
from ...nn.parameter import Parameter
from ...ops import registry as R
from ...tensor import Tensor
from ..frontend.script.refs import ExceptionRef
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from .archive_types import OTHER_TYPES, archive_exception
from .loaded_modules import LoadedModule, check_member_name, restore_attribute

__all__ = ["MAX_JSON_DEPTH", "SIMPLE_TYPES", "GraphDecoder", "decode_module", "decode_type", "json_depth", "loadable_kinds"]

_check = S._check
_Corrupt = S._Corrupt
SIMPLE_TYPES = {t.name: t for t in (T.INT, T.FLOAT, T.BOOL, T.STR, T.NONE, T.ANY)}
_MAX_DIMS = 64

MAX_JSON_DEPTH = 256
"""The deepest the manifest's JSON may nest: a nested block takes 4 levels (node, its blocks, a block, its
nodes) and a nested list or optional type 1, so graphs keep to about 60 levels of ``if``/``for`` and types to
about 240. Everything that walks the graph afterwards (the verifier, the code printer and parser, the archive
check, the interpreter) recurses at most that deep, well inside Python's recursion limit."""


def json_depth(obj, limit: int) -> int:
    """How deep ``obj`` nests (stopping past ``limit``), without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if d > limit:
            return d
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


def _sizes(v, what: str):
    _check(v is None or (isinstance(v, list) and len(v) <= _MAX_DIMS
                         and all(s is None or (S._is_int(s) and abs(s) < 1 << 63) for s in v)),
           f"bad {what} in a tensor type: {v!r:.80}")
    return v


def _type_names(v, sizes) -> tuple | None:
    """A tensor type's dimension names (present for a named tensor only): one str or None per dim."""
    if v is None:
        return None
    _check(isinstance(v, list) and sizes is not None, f"bad names in a tensor type: {v!r:.80}")
    try:
        return check_names(v, len(sizes))
    except (RuntimeError, TypeError) as e:
        raise _Corrupt(f"bad names in a tensor type: {v!r:.80} ({e})") from e


def decode_type(d) -> T.JitType:
    if isinstance(d, str):
        _check(d in SIMPLE_TYPES, f"unknown type {d!r:.80}")
        return SIMPLE_TYPES[d]
    _check(isinstance(d, dict), f"bad type entry {d!r:.80}")
    k = d.get("k")
    if k == "Tensor":
        dtype = None if d["dtype"] is None else _dt._NAMES.get(d["dtype"]) if isinstance(d["dtype"], str) else None
        _check(d["dtype"] is None or dtype is not None, f"unknown dtype {d['dtype']!r:.80}")
        dev = d["device"]
        if dev is not None:
            _check(isinstance(dev, str) and len(dev) <= 64, f"bad device {dev!r:.80} in a tensor type")
            try:
                dev = as_device(dev)
            except Exception as e:
                raise _Corrupt(f"unsupported device {d['device']!r:.80} in a tensor type ({e})") from e
        rg = d["requires_grad"]
        _check(rg is None or isinstance(rg, bool), "bad requires_grad in a tensor type")
        sizes = _sizes(d["sizes"], "sizes")
        return T.TensorType(dtype, sizes, _sizes(d["strides"], "strides"), dev, rg, _type_names(d.get("names"), sizes))
    if k == "List":
        return T.ListType(decode_type(d["elem"]))
    if k == "Tuple":
        _check(isinstance(d["elems"], list), "bad tuple type")
        return T.TupleType([decode_type(e) for e in d["elems"]])
    if k == "Dict":
        return T.DictType(decode_type(d["key"]), decode_type(d["value"]))
    if k == "Optional":
        return T.OptionalType(decode_type(d["elem"]))
    if k == "Future":
        return T.FutureType(decode_type(d["elem"]))
    if k == "Module":
        _check(isinstance(d["name"], str) and len(d["name"]) <= 1024, "bad module type name")
        t = T.ModuleType.__new__(T.ModuleType)
        t.qualified_name = d["name"]
        return t
    if k == "Other":
        _check(d["name"] in OTHER_TYPES, f"unknown type {d['name']!r:.80}")
        return T.OtherType(d["name"])
    raise _Corrupt(f"unknown type kind {k!r:.80}")


def loadable_kinds() -> frozenset:
    from .archive_check import loadable_kinds  # lazy: the archive checker loads with the first archive read

    return loadable_kinds()


class GraphDecoder:
    """The manifest's graph as IR, as it is written: kinds are checked against what can load, everything else
    (types, what nodes do to which values) by ``archive_check`` once the code has decided what runs."""

    def __init__(self, reader: S._Reader, prims: frozenset):
        self.reader, self.prims = reader, prims
        self.values: dict[int, Value] = {}
        self.graph = Graph()
        self.n_nodes = 0

    def define(self, v: Value, d: dict) -> Value:
        v.type = decode_type(d["type"])
        name = d["name"]
        _check(name is None or (isinstance(name, str) and len(name) <= 1024), "bad value name")
        v.set_debug_name(name)
        _check(S._is_int(d["unique"]) and 0 <= d["unique"] < 1 << 62, "bad value number")
        v.unique = d["unique"]
        self.values[len(self.values)] = v
        return v

    def ref(self, i) -> Value:
        _check(S._is_int(i) and i in self.values, f"reference to an undefined value {i!r:.40}")
        return self.values[i]

    def decode(self, d: dict) -> Graph:
        g = self.graph
        for vd in d["inputs"]:
            self.define(g.add_input(), vd)
        self.nodes(d["nodes"], g.block)
        for i in d["outputs"]:
            g.register_output(self.ref(i))
        _check(S._is_int(d["unique"]) and 0 <= d["unique"] < 1 << 62, "bad graph numbering")
        g._unique = max([d["unique"]] + [v.unique + 1 for v in self.values.values()])
        return g

    def nodes(self, nodes: list, block: Block) -> None:
        from .archive_check import (
            MAX_NODES,  # lazy: loads toolkit.jit.serialization.archive_check only when used
        )

        _check(isinstance(nodes, list), "bad node list")
        self.n_nodes += len(nodes)
        _check(self.n_nodes <= MAX_NODES, f"the graph has more than {MAX_NODES} nodes")
        for nd in nodes:
            kind = nd["kind"]
            _check(isinstance(kind, str), "bad node kind")
            op = self.op_for(kind, nd["op"])
            n = Node(self.graph, kind, op)
            for i in nd["inputs"]:
                n.add_input(self.ref(i))
            for vd in nd["outputs"]:
                self.define(n.add_output(), vd)
            for k, a in nd["attrs"]:
                if kind == K.FORK and k == "Subgraph" and isinstance(a, dict) and "graph" in a:
                    n[k] = self.subgraph(a["graph"])
                    continue
                _check(isinstance(k, str) and isinstance(a, dict) and ("value" in a or "exception" in a),
                       f"bad attribute {k!r:.40} of a {kind} node: a node loaded from an archive holds values, "
                       "not graphs (only prim::fork holds its Subgraph)")
                n[k] = self.reader.decode(a["value"]) if "value" in a else _exception(a["exception"])
            src = nd["source"]
            _check(src is None or (isinstance(src, list) and len(src) == 2 and isinstance(src[0], str)
                                   and S._is_int(src[1])), "bad source location")
            n.source = None if src is None else (src[0], src[1])
            _check(isinstance(nd["scope"], str), "bad scope")
            n.scope = nd["scope"]
            block.nodes.append(n)
            n.owning_block = block
            for bd in nd["blocks"]:
                b = n.add_block()
                for vd in bd["inputs"]:
                    self.define(b.add_input(), vd)
                self.nodes(bd["nodes"], b)
                for i in bd["outputs"]:
                    b.register_output(self.ref(i))

    def subgraph(self, d: dict) -> Graph:
        """A ``prim::fork``'s ``Subgraph``: a graph of its own, closed (its values refer only to each other), whose
        nodes count towards the same ``MAX_NODES``."""
        _check(isinstance(d, dict), "bad Subgraph of a prim::fork node")
        sub = GraphDecoder(self.reader, self.prims)
        sub.n_nodes = self.n_nodes
        g = sub.decode(d)
        self.n_nodes = sub.n_nodes
        return g

    def op_for(self, kind: str, op_name):
        registry_kind = kind.startswith("aten::") or kind.startswith("quantized::")  # quantized:: ops too
        if not registry_kind and kind not in self.prims and isinstance(op_name, str) and "::" in kind:
            return _library_op(kind, op_name)  # an op of a namespace a library defines (``extension::lltm``)
        if registry_kind and not (op_name is None and kind in self.prims):
            _check(isinstance(op_name, str), f"unknown op {kind:.80}: an aten:: node names its registry op, or is "
                                             "one of the interpreter's kinds that have a schema")
            try:
                op = R.get(op_name)
            except KeyError:
                op = None
            if op is None or op.schema.full_name != op_name or op.qualified_name != kind:
                raise _Corrupt(f"unknown op {kind:.80} ({op_name:.80}): only ops in toolkit's registry can be loaded")
            return op
        if kind not in self.prims:
            raise _Corrupt(f"unknown op {kind:.80}: only registry ops and the interpreter's kinds that have a schema "
                           "can be loaded")
        _check(op_name is None, f"node {kind} cannot name an op")
        return None


_PRIM_NAMESPACE = K.CONSTANT.partition("::")[0]  # the interpreter's own kinds' namespace, never a library's


def _library_op(kind: str, op_name: str):
    """The registry op of a node whose namespace a library defines (``toolkit.library.custom_op``): such an op exists
    only once the code defining it has run, so a process that has not registered it gets an error naming the op and
    how to register it (not "corrupt archive": the archive is fine, the process lacks the extension)."""
    _check(kind.partition(".")[0] == op_name.partition(".")[0] and kind.partition("::")[0] != _PRIM_NAMESPACE,
           f"node {kind:.80} names op {op_name:.80}")
    try:
        op = R.get(op_name)
    except KeyError:
        op = None
    if op is None or op.qualified_name != kind.partition(".")[0] or op.schema.full_name != op_name:
        ns = kind.partition("::")[0]
        raise RuntimeError(
            f"toolkit.jit.load: the archive calls {kind:.80}, an op that is not registered in this process. Register "
            f"it before loading: import the module that defines it (with toolkit.library.custom_op('{op_name:.80}', "
            f"...) or toolkit.library.Library('{ns:.40}', 'DEF')), as torch.ops.load_library or importing the "
            "extension does for torch.jit.load")
    return op


def _exception(name) -> ExceptionRef:
    """The class a ``prim::RaiseException`` raises, named as ``"builtins.ValueError"``: one of
    ``ARCHIVE_EXCEPTIONS``, never a name looked up anywhere."""
    try:
        return ExceptionRef(archive_exception(name))
    except ValueError as e:
        raise _Corrupt(str(e)) from None


def decode_module(d: dict, reader: S._Reader) -> LoadedModule:
    _check(isinstance(d, dict) and isinstance(d.get("class"), str) and len(d["class"]) <= 1024, "bad module entry")
    m = LoadedModule(d["class"])
    _check(isinstance(d["training"], bool), "bad training flag")
    m.training = d["training"]
    for k, p in d["parameters"]:
        check_member_name(m, k, "parameter")
        p = reader.decode(p)
        _check(p is None or isinstance(p, Parameter), f"parameter {k!r} is not a Parameter")
        m._parameters[k] = p
    for k, b in d["buffers"]:
        check_member_name(m, k, "buffer")
        b = reader.decode(b)
        _check(b is None or isinstance(b, Tensor), f"buffer {k!r} is not a tensor")
        m._buffers[k] = b
    _check(isinstance(d["non_persistent"], list) and all(isinstance(k, str) for k in d["non_persistent"]),
           "bad list of non-persistent buffers")
    m._non_persistent_buffers_set.update(d["non_persistent"])
    for k, c in d["children"]:
        check_member_name(m, k, "submodule")
        m._modules[k] = None if c is None else decode_module(c, reader)
    for k, t, v in d.get("attributes", []):  # archives written before attributes were saved have none
        restore_attribute(m, k, decode_type(t), reader.decode(v))
    return m
