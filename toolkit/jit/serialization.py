"""``toolkit.jit.save`` and ``toolkit.jit.load``: traced modules and functions as archives that run without their source.

An archive is a zip (entries stored uncompressed) in the layout of ``toolkit.save`` checkpoints:

- ``archive/manifest.json``: format name and version, the tensor and storage tables of ``toolkit.serialization``,
  the module hierarchy (names, original class names, training flags, parameters, buffers, and the int, float,
  bool, Tensor and Optional attributes with their types and values, which scripted code may assign) and the graph as
  JSON: every node with its kind, exact op overload, inputs, typed and named outputs, attributes, nested
  blocks, source location and scope, so the loaded graph prints exactly as the saved one;
- ``archive/data/<key>``: raw little-endian tensor data (parameters, buffers, tensor constants);
- ``archive/code/<name>.py``: the graph's ``.code``; loading parses it with ``ast`` (``code_parser``) and it
  decides what runs, the JSON graph supplying types, names, source locations and scopes, and the control-flow
  blocks (``prim::If``, ``prim::Loop``) its ``if``/``for``/``while`` statements must match;
- ``archive/extra/<name>``: the caller's ``_extra_files``.

Loading never runs code from the file: the manifest is JSON, node kinds are checked against the op registry
and the interpreter's known ``prim::`` kinds (anything else is refused with an error naming the op), and the
rebuilt graph must pass the verifier. Problems with the file raise ``RuntimeError`` naming the file.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import IO, Any

from .. import serialization as S
from .._core import dtypes as _dt
from .._core.device import as_device
from ..nn.modules.module import Module
from ..ops import registry as R
from . import types as T
from .code import graph_to_code
from .ir import Block, Graph, Node, Value
from .loaded_modules import (
    LoadedModule,
    LoadedScriptModule,
    attribute_lookup,
    attribute_types_of,
    restore_attribute,
)
from .script_module import ScriptFunction, ScriptModule

__all__ = ["load", "save"]

FORMAT_NAME = "toolkit.jit.archive"
FORMAT_VERSION = 1
_PREFIX = "archive/"
_MANIFEST = _PREFIX + "manifest.json"
_EXTRA = _PREFIX + "extra/"
_ALLOWED_PRIM_EXTRA = frozenset({"prim::FusionGroup"})
_SIMPLE_TYPES = {t.name: t for t in (T.INT, T.FLOAT, T.BOOL, T.STR, T.NONE, T.ANY)}


# ---------------------------------------------------------------------------------------------------- saving
def _enc_type(t: T.JitType):
    if isinstance(t, T.TensorType):
        return {"k": "Tensor", "dtype": None if t.dtype is None else t.dtype.name,
                "sizes": None if t.sizes is None else list(t.sizes),
                "strides": None if t.strides is None else list(t.strides),
                "device": None if t.device is None else str(t.device), "requires_grad": t.requires_grad}
    if isinstance(t, T.ListType):
        return {"k": "List", "elem": _enc_type(t.elem)}
    if isinstance(t, T.TupleType):
        return {"k": "Tuple", "elems": [_enc_type(e) for e in t.elems]}
    if isinstance(t, T.DictType):
        return {"k": "Dict", "key": _enc_type(t.key), "value": _enc_type(t.value)}
    if isinstance(t, T.OptionalType):
        return {"k": "Optional", "elem": _enc_type(t.elem)}
    if isinstance(t, T.ModuleType):
        return {"k": "Module", "name": t.qualified_name}
    if isinstance(t, T.OtherType):
        return {"k": "Other", "name": t.name}
    if str(t) in _SIMPLE_TYPES:
        return str(t)
    raise TypeError(f"toolkit.jit.save: cannot save a value of IR type {t}")


class _GraphEncoder:
    def __init__(self, writer: S._Writer):
        self.writer = writer
        self.ids: dict[Value, int] = {}

    def define(self, v: Value) -> dict:
        self.ids[v] = len(self.ids)
        return {"name": v._name, "unique": v.unique, "type": _enc_type(v.type)}

    def ref(self, v: Value) -> int:
        return self.ids[v]

    def graph(self, g: Graph) -> dict:
        return {"inputs": [self.define(v) for v in g.inputs], "unique": g._unique,
                "nodes": [self.node(n) for n in g.block.nodes], "outputs": [self.ref(v) for v in g.outputs]}

    def node(self, n: Node) -> dict:
        attrs = []
        for k, v in n.attributes.items():
            if isinstance(v, Graph):
                attrs.append([k, {"graph": _GraphEncoder(self.writer).graph(v)}])
            else:
                attrs.append([k, {"value": self.writer.encode(v, f"{n.kind}[{k}]")}])
        blocks = []
        out = {"kind": n.kind, "op": None if n.op is None else n.op.schema.full_name,
               "inputs": [self.ref(v) for v in n.inputs], "outputs": [self.define(v) for v in n.outputs],
               "attrs": attrs, "blocks": blocks, "source": None if n.source is None else list(n.source),
               "scope": n.scope}
        for b in n.blocks:
            blocks.append({"inputs": [self.define(v) for v in b.inputs],
                           "nodes": [self.node(m) for m in b.nodes], "outputs": [self.ref(v) for v in b.outputs]})
        return out


def _enc_module(m: Module, writer: S._Writer, path: str) -> dict:
    src = m.__dict__.get("_original", m)
    return {
        "class": m._get_name(),
        "training": bool(m.training),
        "parameters": [[k, writer.encode(p, f"{path}.{k}")] for k, p in m._parameters.items()],
        "buffers": [[k, writer.encode(b, f"{path}.{k}")] for k, b in m._buffers.items()],
        "non_persistent": sorted(m._non_persistent_buffers_set),
        "attributes": [[k, _enc_type(t), writer.encode(src.__dict__[k], f"{path}.{k}")]
                       for k, t in attribute_types_of(m).items()],
        "children": [[k, None if c is None else _enc_module(c, writer, f"{path}.{k}")] for k, c in m._modules.items()],
    }


def save(m, f, _extra_files: dict | None = None) -> None:
    """Save a traced ``ScriptModule`` or ``ScriptFunction`` to a path or a binary file object.

    Saving to a path is atomic: a temporary file next to the target is written, fsynced and renamed over it.
    """
    writer = S._Writer()
    if isinstance(m, ScriptModule):
        kind, name = "module", "forward"
        model: dict[str, Any] = {"kind": kind, "module": _enc_module(m, writer, "self")}
        model["module"]["class"] = m.original_name
    elif isinstance(m, ScriptFunction):
        kind, name = "function", m.name
        model = {"kind": kind, "name": name}
    else:
        raise TypeError("toolkit.jit.save: expected a ScriptModule or ScriptFunction (what toolkit.jit.trace "
                        f"returns), got {type(m).__name__}")
    model["graph"] = _GraphEncoder(writer).graph(m.inlined_graph)  # the flat graph: calls inlined
    blobs = [(k, S._little_endian(flat, {_dt._NAMES[r["dtype"]] for r in writer.tensors if r["storage"] == k}))
             for k, flat in writer.blobs]
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "byteorder": "little",
                "storages": {k: {"nbytes": int(flat.nbytes)} for k, flat in blobs},
                "tensors": writer.tensors, "root": None, "model": model}
    texts = {f"{_PREFIX}code/{name}.py": graph_to_code(m.inlined_graph, name)}
    for k, v in (_extra_files or {}).items():
        texts[_EXTRA + k] = v
    if isinstance(f, (str, os.PathLike)):
        _save_atomic(os.fspath(f), manifest, blobs, texts)
    elif hasattr(f, "write"):
        _write(f, manifest, blobs, texts)
    else:
        raise AttributeError(f"toolkit.jit.save: expected a path or a writable binary file object, got {type(f).__name__}")


def _write(fileobj: IO[bytes], manifest: dict, blobs: list, texts: dict) -> None:
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False, separators=(",", ":")))
        for key, flat in blobs:
            info = zipfile.ZipInfo(_PREFIX + "data/" + key, date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w", force_zip64=flat.nbytes > 0x7FFFFFFF) as dest:
                mv = memoryview(flat)
                for i in range(0, flat.nbytes, S._CHUNK):
                    dest.write(mv[i:i + S._CHUNK])
        for name, text in texts.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), text)


def _save_atomic(path: str, manifest: dict, blobs: list, texts: dict) -> None:
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise RuntimeError(f"Parent directory {directory} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            _write(fh, manifest, blobs, texts)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------------- loading
_check = S._check
_Corrupt = S._Corrupt


def _dec_type(d) -> T.JitType:
    if isinstance(d, str):
        _check(d in _SIMPLE_TYPES, f"unknown type {d!r}")
        return _SIMPLE_TYPES[d]
    _check(isinstance(d, dict), f"bad type entry {d!r:.80}")
    k = d.get("k")
    if k == "Tensor":
        dtype = None if d["dtype"] is None else _dt._NAMES.get(d["dtype"])
        _check(d["dtype"] is None or dtype is not None, f"unknown dtype {d['dtype']!r}")
        dev = None if d["device"] is None else as_device(d["device"])
        rg = d["requires_grad"]
        _check(rg is None or isinstance(rg, bool), "bad requires_grad in a tensor type")
        return T.TensorType(dtype, d["sizes"], d["strides"], dev, rg)
    if k == "List":
        return T.ListType(_dec_type(d["elem"]))
    if k == "Tuple":
        return T.TupleType([_dec_type(e) for e in d["elems"]])
    if k == "Dict":
        return T.DictType(_dec_type(d["key"]), _dec_type(d["value"]))
    if k == "Optional":
        return T.OptionalType(_dec_type(d["elem"]))
    if k == "Module":
        t = T.ModuleType.__new__(T.ModuleType)
        t.qualified_name = str(d["name"])
        return t
    if k == "Other":
        return T.OtherType(str(d["name"]))
    raise _Corrupt(f"unknown type kind {k!r}")


def _allowed_prims() -> frozenset:
    from .interpreter import _EXEC
    from .script.runtime import PYTHON_ONLY_KINDS  # nodes calling Python objects never come from an archive

    return (frozenset(_EXEC) | _ALLOWED_PRIM_EXTRA) - PYTHON_ONLY_KINDS


class _GraphDecoder:
    def __init__(self, reader: S._Reader, prims: frozenset):
        self.reader, self.prims = reader, prims
        self.values: dict[int, Value] = {}
        self.graph = Graph()

    def define(self, v: Value, d: dict) -> Value:
        v.type = _dec_type(d["type"])
        name = d["name"]
        _check(name is None or isinstance(name, str), "bad value name")
        v.set_debug_name(name)
        _check(S._is_int(d["unique"]), "bad value number")
        v.unique = d["unique"]
        self.values[len(self.values)] = v
        return v

    def ref(self, i) -> Value:
        _check(S._is_int(i) and i in self.values, f"reference to an undefined value {i!r}")
        return self.values[i]

    def decode(self, d: dict) -> Graph:
        g = self.graph
        for vd in d["inputs"]:
            self.define(g.add_input(), vd)
        self.nodes(d["nodes"], g.block)
        for i in d["outputs"]:
            g.register_output(self.ref(i))
        _check(S._is_int(d["unique"]), "bad graph numbering")
        g._unique = max([d["unique"]] + [v.unique + 1 for v in self.values.values()])
        return g

    def nodes(self, nodes: list, block: Block) -> None:
        _check(isinstance(nodes, list), "bad node list")
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
                _check(isinstance(k, str) and isinstance(a, dict), "bad node attribute")
                if "graph" in a:
                    n[k] = _GraphDecoder(self.reader, self.prims).decode(a["graph"])
                else:
                    n[k] = self.reader.decode(a["value"])
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

    def op_for(self, kind: str, op_name):
        if kind.startswith("aten::") and not (op_name is None and kind in self.prims):
            _check(isinstance(op_name, str), f"node {kind} names no op")
            try:
                op = R.get(op_name)
            except KeyError:
                op = None
            if op is None or op.schema.full_name != op_name or op.qualified_name != kind:
                raise _Corrupt(f"unknown op {kind} ({op_name}): only ops in toolkit's registry can be loaded")
            return op
        if kind not in self.prims:
            raise _Corrupt(f"unknown op {kind}: only registry ops and the interpreter's prim:: kinds "
                           f"({', '.join(sorted(self.prims))}) can be loaded")
        _check(op_name is None, f"node {kind} cannot name an op")
        return None


def _dec_module(d: dict, reader: S._Reader) -> LoadedModule:
    _check(isinstance(d, dict) and isinstance(d.get("class"), str), "bad module entry")
    m = LoadedModule(d["class"])
    _check(isinstance(d["training"], bool), "bad training flag")
    m.training = d["training"]
    for k, p in d["parameters"]:
        p = reader.decode(p)
        from ..nn.parameter import Parameter

        _check(p is None or isinstance(p, Parameter), f"parameter {k!r} is not a Parameter")
        m._parameters[str(k)] = p
    from ..tensor import Tensor

    for k, b in d["buffers"]:
        b = reader.decode(b)
        _check(b is None or isinstance(b, Tensor), f"buffer {k!r} is not a tensor")
        m._buffers[str(k)] = b
    m._non_persistent_buffers_set.update(str(k) for k in d["non_persistent"])
    for k, c in d["children"]:
        m._modules[str(k)] = None if c is None else _dec_module(c, reader)
    for k, t, v in d.get("attributes", []):  # archives written before attributes were saved have none
        restore_attribute(m, k, _dec_type(t), reader.decode(v))
    return m


def _rebuild_from_code(zf: zipfile.ZipFile, graph: Graph, name, attributes=None) -> None:
    """What runs comes from the archive's readable code, parsed (never executed) against the decoded graph."""
    from .code_parser import CodeError, rebuild_from_code

    _check(isinstance(name, str), "bad function name")
    entry = f"{_PREFIX}code/{name}.py"
    try:
        text = zf.read(entry).decode("utf-8")
    except KeyError:
        raise _Corrupt(f"no {entry} in the archive") from None
    except UnicodeDecodeError as e:
        raise _Corrupt(f"{entry} is not UTF-8 text ({e})") from None
    try:
        rebuild_from_code(graph, text, attributes)
    except CodeError as e:
        raise _Corrupt(f"{entry}: {e}") from None


def _build(zf: zipfile.ZipFile, manifest: dict, map_location):
    reader = S._Reader(zf, manifest, map_location)
    model = manifest.get("model")
    _check(isinstance(model, dict), "the manifest has no model")
    try:
        graph = _GraphDecoder(reader, _allowed_prims()).decode(model["graph"])
        _verify(graph, "the saved graph")  # so the code is matched against well-formed blocks
        if model["kind"] == "module":
            root = _dec_module(model["module"], reader)
            _rebuild_from_code(zf, graph, "forward", attribute_lookup(root))
            sm = LoadedScriptModule(root, graph)
            sm.__dict__["original_name"] = root.original_name
            obj = sm
        elif model["kind"] == "function":
            _rebuild_from_code(zf, graph, model["name"], lambda path, name: None)  # functions have no attributes
            _check(isinstance(model["name"], str), "bad function name")
            obj = ScriptFunction(graph, model["name"])
        else:
            raise _Corrupt(f"unknown model kind {model['kind']!r}")
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RuntimeError) as e:
        if isinstance(e, _Corrupt):
            raise
        raise _Corrupt(f"malformed model description ({type(e).__name__}: {e})") from None
    _verify(graph, "the graph")
    return obj


def _verify(graph: Graph, what: str) -> None:
    from .verify import verify

    try:
        verify(graph)
    except Exception as e:
        raise _Corrupt(f"{what} does not verify: {e}") from None


def _load_from(fileobj: IO[bytes], map_location, extra_files: dict | None):
    try:
        zf = zipfile.ZipFile(fileobj, "r")
    except zipfile.BadZipFile as e:
        raise _Corrupt(f"not a zip archive, or the archive is truncated ({e})") from None
    with zf:
        _check(_MANIFEST in zf.namelist(), f"no {_MANIFEST} in the archive")
        try:
            manifest = json.loads(zf.read(_MANIFEST).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise _Corrupt(f"the manifest is not valid JSON ({e})") from None
        _check(isinstance(manifest, dict), "the manifest is not a JSON object")
        _check(manifest.get("format") == FORMAT_NAME,
               f"unknown format {manifest.get('format')!r}, expected {FORMAT_NAME!r}"
               + (" (a toolkit.save checkpoint: read it with toolkit.load)"
                  if manifest.get("format") == S.FORMAT_NAME else ""))
        version = manifest.get("version")
        _check(S._is_int(version) and version >= 1, f"bad format version {version!r}")
        _check(version <= FORMAT_VERSION, f"format version {version} was written by a newer toolkit; this toolkit "
                                          f"reads versions up to {FORMAT_VERSION}")
        _check(manifest.get("byteorder") == "little", f"unsupported byte order {manifest.get('byteorder')!r}")
        _check(isinstance(manifest.get("storages"), dict), "the manifest has no storage table")
        _check(isinstance(manifest.get("tensors"), list), "the manifest has no tensor table")
        obj = _build(zf, manifest, map_location)
        if extra_files is not None:
            for k in list(extra_files):
                try:
                    extra_files[k] = zf.read(_EXTRA + k)
                except KeyError:
                    pass
        return obj


def load(f, map_location=None, _extra_files: dict | None = None, _restore_shapes: bool = False):
    """Load what ``toolkit.jit.save`` wrote: a ``ScriptModule`` or ``ScriptFunction`` that runs without the source.

    ``map_location`` is as for ``toolkit.load``. ``_extra_files`` keys are filled with the saved bytes.
    """
    name = S._describe(f)
    opened = None
    try:
        if isinstance(f, (str, os.PathLike)):
            if not os.path.exists(os.fspath(f)):
                raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
            if os.path.isdir(os.fspath(f)):
                raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
            opened = open(os.fspath(f), "rb")
            fileobj = opened
        elif hasattr(f, "read"):
            fileobj = f if hasattr(f, "seek") else io.BytesIO(f.read())
        else:
            raise AttributeError(f"toolkit.jit.load: expected a path or a readable binary file object, "
                                 f"got {type(f).__name__}")
        try:
            return _load_from(fileobj, map_location, _extra_files)
        except _Corrupt as e:
            raise RuntimeError(f"toolkit.jit.load: {name} is not a valid archive: {e}") from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
            raise RuntimeError(f"toolkit.jit.load: {name} is not a valid archive (truncated or corrupt file): {e}") \
                from None
    finally:
        if opened is not None:
            opened.close()
