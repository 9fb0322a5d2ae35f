"""``toolkit.jit.save`` and ``toolkit.jit.load``: traced modules and functions as archives that run without their source.

An archive is a zip (entries stored uncompressed) in the layout of ``toolkit.save`` checkpoints:

- ``archive/manifest.json``: format name and version, the tensor and storage tables of ``toolkit.serialization``,
  the module hierarchy (names, original class names, training flags, parameters, buffers, and the int, float,
  bool, Tensor and Optional attributes with their types and values, which scripted code may assign) and the graph as
  JSON: every node with its kind, exact op overload, inputs, typed and named outputs, attributes, nested
  blocks, source location and scope, so the loaded graph prints exactly as the saved one;
- ``archive/data/<key>``: raw little-endian tensor data (parameters, buffers, tensor constants);
- ``archive/code/<name>.py``: the graph's ``.code`` (with the defaults of the last parameters, as
  ``hx: Optional[Tensor]=None``); loading parses it with ``ast`` (``code_parser``) and it decides what runs, the JSON graph supplying types, names, source locations and scopes, and the control-flow
  blocks (``prim::If``, ``prim::Loop``) its ``if``/``for``/``while`` statements must match; a ``prim::fork``'s
  ``Subgraph`` is saved as a graph of its own and printed as a nested ``def`` with its ``fork(...)`` call;
- ``archive/extra/<name>``: the caller's ``_extra_files``.

Loading never runs code from the file: an archive is data, not a program. The manifest is JSON read under the
byte budget of ``toolkit.load`` (``max_bytes``) and at most ``MAX_JSON_DEPTH`` levels deep; node kinds must be
registry ops or interpreter kinds with a schema; the code is parsed, never run, at most ``code_parser.MAX_DEPTH``
levels deep; and the graph the code rebuilt is checked as a whole (``archive_check``: typed values, modules
touched only through the members the archive declares for them, builtins only on the types their schemas allow)
and must pass the verifier, all before the module is built. Calls of what loads are checked against the types
its graph declares. Problems with the file raise ``RuntimeError`` naming the file, what is wrong and, for a node,
its line in the archive's code, with the error that revealed it (if any) as ``__cause__``.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from typing import IO, Any

from ... import serialization as S
from ..._core import dtypes as _dt
from ...nn.modules.module import Module
from ..frontend.script.refs import ExceptionRef
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ..ir.printer import node_to_string
from ..ir.verify import verify
from ..script_module import (
    ScriptFunction,
    ScriptModule,
    argument_defaults,
    extra_methods,
    method_defaults,
    method_graph,
)
from .archive_decode import (
    MAX_JSON_DEPTH,
    SIMPLE_TYPES,
    GraphDecoder,
    decode_module,
    json_depth,
    loadable_kinds,
)
from .archive_globals import global_modules_as_constants
from .archive_quantized import ArchiveReader, ArchiveWriter
from .archive_types import ARCHIVE_EXCEPTIONS
from .code import default_literal, exception_name, graph_to_code
from .loaded_modules import LoadedScriptFunction, LoadedScriptModule, attribute_lookup, attribute_types_of

__all__ = ["load", "save"]

FORMAT_NAME = "toolkit.jit.archive"
FORMAT_VERSION = 2
# Version 2: the code is printed as TorchScript prints it (calls inlined into their single use, builtins as
# ``torch.size``/``int(...)``). Version 1's code put one node per statement; its graph is loaded as saved.
CODE_AS_PRINTED_SINCE = 2
_PREFIX = "archive/"
_MANIFEST = _PREFIX + "manifest.json"
_EXTRA = _PREFIX + "extra/"


# ---------------------------------------------------------------------------------------------------- saving
def _enc_type(t: T.JitType):
    if isinstance(t, T.TensorType):
        return {"k": "Tensor", "dtype": None if t.dtype is None else t.dtype.name,
                "sizes": None if t.sizes is None else list(t.sizes),
                "strides": None if t.strides is None else list(t.strides),
                "device": None if t.device is None else str(t.device), "requires_grad": t.requires_grad,
                **({"names": list(t.names)} if t.names is not None else {})}
    if isinstance(t, T.ListType):
        return {"k": "List", "elem": _enc_type(t.elem)}
    if isinstance(t, T.TupleType):
        return {"k": "Tuple", "elems": [_enc_type(e) for e in t.elems]}
    if isinstance(t, T.DictType):
        return {"k": "Dict", "key": _enc_type(t.key), "value": _enc_type(t.value)}
    if isinstance(t, T.OptionalType):
        return {"k": "Optional", "elem": _enc_type(t.elem)}
    if isinstance(t, T.FutureType):
        return {"k": "Future", "elem": _enc_type(t.elem)}
    if isinstance(t, T.ModuleType):
        return {"k": "Module", "name": t.qualified_name}
    if isinstance(t, T.OtherType):
        return {"k": "Other", "name": t.name}
    if str(t) in SIMPLE_TYPES:
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
        if n.kind == K.PYTHON_OP:
            where = "" if n.source is None else f" at {n.source[0]}:{n.source[1]}"
            raise TypeError(f"toolkit.jit.save: the graph runs Python code (prim::PythonOp {n.attributes.get('name')!r}"
                            f"{where}: a Python fallback statement or an @ignore'd call), which an archive cannot "
                            "hold; compile it without fallback=True or leave the Python part out of the graph")
        attrs = []
        for k, v in n.attributes.items():
            if isinstance(v, Graph):
                attrs.append([k, {"graph": _GraphEncoder(self.writer).graph(v)}])
            elif isinstance(v, ExceptionRef):
                attrs.append([k, {"exception": _raised_name(n, v)}])
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


def _raised_name(n: Node, ref: ExceptionRef) -> str:
    """The class a ``prim::RaiseException`` raises, as the archive names it; only the builtin errors an archive may
    raise (``ARCHIVE_EXCEPTIONS``) can be saved, since loading never looks a class up by name."""
    if ref.cls not in ARCHIVE_EXCEPTIONS:
        where = f" at {n.source_location}" if n.source is not None else ""
        allowed = ", ".join(sorted(c.__name__ for c in ARCHIVE_EXCEPTIONS))
        raise TypeError(f"toolkit.jit.save: cannot save 'raise {exception_name(ref.cls)}'{where}: archives raise "
                        f"only Python's builtin errors ({allowed}); raise one of those instead")
    return exception_name(ref.cls)


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


def _defaults(m) -> tuple:
    """The default values of the saved ``forward``'s (or function's) last parameters, which the archive's code
    writes in its ``def`` (``hx: Optional[Tensor]=None``) so that loaded calls may leave them out."""
    return _checked_defaults(argument_defaults(m))


def _checked_defaults(defaults: tuple) -> tuple:
    for d in defaults:
        try:
            default_literal(d)
        except ValueError as e:
            raise TypeError(f"toolkit.jit.save: cannot save a default argument value: {e}") from None
    return defaults


def save(m, f, _extra_files: dict | None = None) -> None:
    """Save a traced or scripted ``ScriptModule`` or ``ScriptFunction`` to a path or a binary file object.

    Saving to a path is atomic: a temporary file next to the target is written, fsynced and renamed over it.
    Modules that scripted code reads from globals are saved as constants of their state now
    (``archive_globals``); a ``raise`` saves only Python's builtin errors (``archive_types.ARCHIVE_EXCEPTIONS``).
    """
    writer = ArchiveWriter()
    if isinstance(m, ScriptModule):
        kind, name = "module", "forward"
        model: dict[str, Any] = {"kind": kind, "module": _enc_module(m, writer, "self")}
        model["module"]["class"] = m.original_name
    elif isinstance(m, ScriptFunction):
        kind, name = "function", m.name
        model = {"kind": kind, "name": name}
    else:
        raise TypeError("toolkit.jit.save: expected a ScriptModule or ScriptFunction (what toolkit.jit.trace and "
                        f"toolkit.jit.script return), got {type(m).__name__}")
    texts = {}
    graph = m.inlined_graph  # the flat graph: calls inlined; None for a module traced without forward
    if graph is not None:
        graph = global_modules_as_constants(graph)
        texts[f"{_PREFIX}code/{name}.py"] = graph_to_code(graph, name, _defaults(m))
    model["graph"] = None if graph is None else _GraphEncoder(writer).graph(graph)
    if kind == "module":
        model["methods"] = []
        for mname, method in extra_methods(m).items():
            mgraph = global_modules_as_constants(method_graph(method))
            model["methods"].append({"name": mname, "graph": _GraphEncoder(writer).graph(mgraph)})
            texts[f"{_PREFIX}code/{mname}.py"] = graph_to_code(mgraph, mname, _checked_defaults(method_defaults(method)))
    blobs = [(k, S._little_endian(flat, {_dt._NAMES[r["dtype"]] for r in writer.tensors if r["storage"] == k}))
             for k, flat in writer.blobs]
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "byteorder": "little",
                "storages": {k: {"nbytes": int(flat.nbytes)} for k, flat in blobs},
                "tensors": writer.tensors, "root": None, "model": model}
    for k, v in (_extra_files or {}).items():
        texts[_EXTRA + k] = v
    if isinstance(f, (str, os.PathLike)):
        S.write_atomically(os.fspath(f), lambda fh: _write(fh, manifest, blobs, texts))
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


# ---------------------------------------------------------------------------------------------------- loading
_check = S._check
_Corrupt = S._Corrupt

MAX_MANIFEST_BYTES = 256 << 20
"""The largest manifest that is read (the byte budget, ``max_bytes``, may be smaller)."""
MAX_CODE_BYTES = 64 << 20
"""The largest ``archive/code/<name>.py`` that is read. The code is also at most twice the manifest's size plus
1 MiB (the printer writes less text per node than the manifest's record of it), so what parsing it takes stays
in proportion to the graph."""
# what a malformed file can provoke in the zip, JSON and IR code under ``load``: reported as the file's fault
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError,
              NotImplementedError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile)


def _read_text(archive, entry: str) -> str:
    """An archive's code, read under the byte budget and ``MAX_CODE_BYTES``."""
    _check(entry in archive.zf.namelist(), f"no {entry} in the archive")
    info = archive.entry(entry)
    limit = min(MAX_CODE_BYTES, 2 * archive.entry(_MANIFEST).file_size + (1 << 20))
    _check(info.file_size <= limit, f"{entry} holds {info.file_size} bytes, more than the {limit} the archive's "
                                    f"code may have (at most {MAX_CODE_BYTES}, and twice the manifest's size "
                                    "plus 1 MiB)")
    try:
        return bytes(archive.read(entry)).decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Corrupt(f"{entry} is not UTF-8 text ({e})") from e


def _code_entry(name) -> str:
    _check(isinstance(name, str) and name.isidentifier(), f"bad function name {name!r:.80}")
    return f"{_PREFIX}code/{name}.py"


def _rebuild_from_code(archive, graph: Graph, name, attributes=None,
                       version: int = FORMAT_VERSION) -> tuple[dict, tuple]:
    """What runs comes from the archive's readable code, parsed (never executed) against the decoded graph.

    Returns the code line each node came from, for the messages of the graph's check, and the default values of
    the function's last parameters. An archive of a version before ``CODE_AS_PRINTED_SINCE`` printed its code in
    an earlier layout: its graph runs as saved (checked as a whole all the same) and only the code's defaults
    are read, so archives saved before keep loading.
    """
    from .code_parser import (  # lazy: loads toolkit.jit.serialization.code_attributes, toolkit.jit.serialization.code_blocks only when used
        CodeError,
        rebuild_from_code,
        signature_defaults,
    )

    entry = _code_entry(name)
    text = _read_text(archive, entry)
    lines: dict = {}
    defaults: list = []
    try:
        if version < CODE_AS_PRINTED_SINCE:
            defaults.extend(signature_defaults(text))
        else:
            rebuild_from_code(graph, text, attributes, lines, defaults)
    except CodeError as e:
        raise _Corrupt(f"{entry}: {e}") from e.__cause__
    return lines, tuple(defaults)


def _check_graph(graph: Graph, root, entry: str, lines: dict) -> None:
    """The whole graph, as the code rebuilt it, against what an archive may do (``archive_check``)."""
    from .archive_check import (  # lazy: loads toolkit.jit.serialization.archive_check only when used
        GraphRefused,
        check_graph,
    )

    try:
        check_graph(graph, root)
    except GraphRefused as e:
        n = e.node
        if n is None:
            raise _Corrupt(f"{entry}: {e.reason}") from None
        where = f"line {lines[n]}: " if n in lines else ""
        saved = f" (saved from {n.source_location})" if n.source is not None else ""
        text = node_to_string(n, source_locations=False).strip().splitlines()[0]
        raise _Corrupt(f"{entry}: {where}{text}{saved}: {e.reason}") from None


def _build(zf: zipfile.ZipFile, archive, manifest: dict, map_location):
    reader = ArchiveReader(zf, manifest, map_location, archive)
    model = manifest.get("model")
    _check(isinstance(model, dict), "the manifest has no model")
    if model["kind"] == "module":
        root = decode_module(model["module"], reader)
        lookup = attribute_lookup(root)
        graph, defaults = None, ()
        if model["graph"] is not None:  # None: a module traced without forward
            graph, defaults = _load_method(archive, reader, model["graph"], "forward", root, lookup,
                                             manifest["version"])
        sm = LoadedScriptModule(root, graph, defaults)
        sm.__dict__["original_name"] = root.original_name
        methods = model.get("methods", [])
        _check(isinstance(methods, list), "the model's methods are not a list")
        for entry in methods:
            _check(isinstance(entry, dict), "a saved method is not a JSON object")
            name = entry["name"]
            _check(isinstance(name, str) and name.isidentifier() and not name.startswith("_")
                   and not hasattr(LoadedScriptModule, name) and name not in sm.__dict__,
                   f"bad method name {name!r:.80}: it must be a public identifier that no module member has")
            mgraph, mdefaults = _load_method(archive, reader, entry["graph"], name, root, lookup,
                                               manifest["version"])
            sm._add_loaded_method(name, mgraph, mdefaults)
        return sm
    graph = GraphDecoder(reader, loadable_kinds()).decode(model["graph"])
    _verify(graph, "the saved graph")  # so the code is matched against well-formed blocks
    if model["kind"] == "function":
        lines, defaults = _rebuild_from_code(archive, graph, model["name"], lambda path, name: None,  # no attributes
                                             manifest["version"])
        _check_graph(graph, None, _code_entry(model["name"]), lines)
        _verify(graph, "the graph")
        return LoadedScriptFunction(graph, model["name"], defaults)
    raise _Corrupt(f"unknown model kind {model['kind']!r:.80}")


def _load_method(archive, reader, saved: dict, name: str, root, lookup, version: int) -> tuple[Graph, tuple]:
    """One method of a saved module: its graph decoded, rebuilt from its code, checked; and its defaults."""
    graph = GraphDecoder(reader, loadable_kinds()).decode(saved)
    _verify(graph, f"the saved graph of {name}")  # so the code is matched against well-formed blocks
    lines, defaults = _rebuild_from_code(archive, graph, name, lookup, version)
    _check_graph(graph, root, _code_entry(name), lines)
    _verify(graph, f"the graph of {name}")
    return graph, defaults


def _verify(graph: Graph, what: str) -> None:
    """The verifier on ``graph`` and on the ``Subgraph`` of each of its ``prim::fork`` nodes, nested ones too."""
    graphs = [graph]
    while graphs:
        g = graphs.pop()
        try:
            verify(g)
        except Exception as e:
            raise _Corrupt(f"{what} does not verify: {e}") from None
        for n in g.all_nodes():
            if n.kind == K.FORK:
                sub = n.attributes.get("Subgraph")
                _check(isinstance(sub, Graph), f"{what} has a prim::fork node without a Subgraph")
                graphs.append(sub)


def _load_from(fileobj: IO[bytes], map_location, extra_files: dict | None, max_bytes: int | None):
    try:
        zf = zipfile.ZipFile(fileobj, "r")
    except zipfile.BadZipFile as e:
        raise _Corrupt(f"not a zip archive, or the archive is truncated ({e})") from None
    with zf:
        names = zf.namelist()
        _check(_MANIFEST in names, f"no {_MANIFEST} in the archive"
               + (" (a toolkit.save checkpoint: read it with toolkit.load)"
                  if any(n.endswith("/data.pkl") for n in names) else ""))
        archive = S.BoundedArchive(zf, max_bytes)
        info = archive.entry(_MANIFEST)
        _check(info.file_size <= MAX_MANIFEST_BYTES, f"the manifest holds {info.file_size} bytes, more than the "
                                                     f"{MAX_MANIFEST_BYTES} an archive's manifest may have")
        manifest = S._parse_manifest(archive.read(_MANIFEST))
        _check(isinstance(manifest, dict), "the manifest is not a JSON object")
        _check(manifest.get("format") == FORMAT_NAME,
               f"unknown format {manifest.get('format')!r:.80}, expected {FORMAT_NAME!r}"
               + (" (a toolkit.save checkpoint: read it with toolkit.load)"
                  if manifest.get("format") == S.FORMAT_NAME else ""))
        version = manifest.get("version")
        _check(S._is_int(version) and version >= 1, f"bad format version {version!r:.40}")
        _check(version <= FORMAT_VERSION, f"format version {version} was written by a newer toolkit; this toolkit "
                                          f"reads versions up to {FORMAT_VERSION}")
        _check(manifest.get("byteorder") == "little", f"unsupported byte order {manifest.get('byteorder')!r:.40}")
        _check(isinstance(manifest.get("storages"), dict), "the manifest has no storage table")
        _check(isinstance(manifest.get("tensors"), list), "the manifest has no tensor table")
        _check(json_depth(manifest, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH,
               f"the manifest nests more than {MAX_JSON_DEPTH} levels deep")
        obj = _build(zf, archive, manifest, map_location)
        if extra_files is not None:
            for k in list(extra_files):
                try:
                    extra_files[k] = bytes(archive.read(_EXTRA + k))
                except _Corrupt:
                    if _EXTRA + k in zf.namelist():
                        raise
        return obj


def load(f, map_location=None, _extra_files: dict | None = None, _restore_shapes: bool = False, *,
         max_bytes: int | None = None):
    """Load what ``toolkit.jit.save`` wrote: a ``ScriptModule`` or ``ScriptFunction`` that runs without the source.

    ``map_location`` is as for ``toolkit.load``. ``_extra_files`` keys are filled with the saved bytes.
    ``max_bytes`` bounds the bytes read out of the archive, as for ``toolkit.load``.

    An archive is data, not a program: its graph is checked as a whole (``archive_check``) before
    anything is built, and calls of what loads are checked against the argument types its graph declares.
    Every problem with the file raises ``RuntimeError`` naming the file, what is wrong and, for a node, its line
    in the archive's code; its ``__cause__`` is the error that revealed it, if any.
    """
    if max_bytes is not None and not (S._is_int(max_bytes) and max_bytes >= 0):
        raise ValueError(f"toolkit.jit.load: max_bytes should be a non-negative int or None, got {max_bytes!r}")
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
            return _load_from(fileobj, map_location, _extra_files, max_bytes)
        except _Corrupt as e:
            raise RuntimeError(f"toolkit.jit.load: {name} is not a valid archive: {e}") from e.__cause__
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as e:
            raise RuntimeError(f"toolkit.jit.load: {name} is not a valid archive (truncated or corrupt file): {e}") \
                from e
        except _MALFORMED as e:
            raise RuntimeError(f"toolkit.jit.load: {name} is not a valid archive: malformed model description "
                               f"({type(e).__name__}: {str(e)[:200]})") from e
    finally:
        if opened is not None:
            opened.close()
