"""An archive is data, not a program: ``toolkit.jit.load`` refuses graphs that reach objects the archive did not
create (dunder chains, builtins on modules or foreign objects, undeclared attributes, unknown kinds, mistyped
values), bounds nesting in the manifest and the code, and loaded calls check their arguments' types.

Attacks are built as an attacker builds them: a real traced or scripted module is saved, its manifest's graph is
edited, and the code is printed again from the edited graph, so it parses and matches."""

import io
import json
import numbers
import random
import signal
import sys
import warnings
import zipfile
from contextlib import contextmanager

import pytest
import torch

import toolkit
import toolkit.jit.ir.types as JT
from toolkit import nn
from toolkit import serialization as S
from toolkit.jit.kinds import steps
from toolkit.jit.serialization.archive_decode import GraphDecoder
from toolkit.jit.serialization.code import graph_to_code
from toolkit.jit.serialization.loaded_modules import LoadedModule

MANIFEST = "archive/manifest.json"
TENSOR = {"k": "Tensor", "dtype": None, "sizes": None, "strides": None, "device": None, "requires_grad": None}


# -- models ---------------------------------------------------------------------------------------------
def _mlp():
    toolkit.manual_seed(0)
    return toolkit.jit.trace(nn.Sequential(nn.Linear(4, 3), nn.Tanh()), toolkit.randn(2, 4))


class Stateful(nn.Module):
    o: toolkit.Tensor | None

    def __init__(self):
        super().__init__()
        self.count = 0
        self.scale = 1.5
        self.o = None
        self.lin = nn.Linear(3, 3)
        self.register_buffer("steps", toolkit.zeros(()))

    def forward(self, x):
        self.count += 1
        self.steps = self.steps + 1
        self.o = x
        if self.training:
            x = x * self.scale
        return self.lin(x) * self.count


def lists(x: toolkit.Tensor, n: int) -> toolkit.Tensor:
    xs = [x]
    for i in range(3):
        xs.append(x * i)
    d = {"a": x}
    print(f"{len(xs)} items")
    return xs[n % 3] + d["a"] + len(xs)


def _stateful():
    toolkit.manual_seed(0)
    return toolkit.jit.script(Stateful())


BASES = {  # name -> (make, inputs)
    "mlp": (_mlp, lambda: (toolkit.randn(2, 4),)),
    "stateful": (_stateful, lambda: (toolkit.randn(3),)),
    "lists": (lambda: toolkit.jit.script(lists), lambda: (toolkit.randn(3), 2)),
    "forking": (lambda: toolkit.jit.script(Forking()), lambda: (toolkit.randn(3),)),
}


# -- archives as an attacker edits them -----------------------------------------------------------------
def _archive(obj) -> bytes:
    buf = io.BytesIO()
    toolkit.jit.save(obj, buf)
    return buf.getvalue()


def _read(data: bytes) -> tuple[dict, dict]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    return json.loads(zf.read(MANIFEST)), {n: zf.read(n) for n in zf.namelist()}


def _code_entry(manifest: dict) -> str:
    model = manifest["model"]
    return f"archive/code/{'forward' if model['kind'] == 'module' else model['name']}.py"


def _print_code(data: bytes, manifest: dict) -> str | None:
    """The code the (edited) graph prints, as the attacker writes it into the archive; None if it cannot print."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        reader = S._Reader(zf, manifest, None)
        g = GraphDecoder(reader, frozenset(steps.EXEC)).decode(manifest["model"]["graph"])
        return graph_to_code(g, _code_entry(manifest)[len("archive/code/"):-3])
    except Exception:
        return None


def _write(entries: dict, manifest_text: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, body in entries.items():
            zf.writestr(name, manifest_text if name == MANIFEST and manifest_text is not None else body)
    return out.getvalue()


def _edited(data: bytes, edit, reprint: bool = True) -> bytes:
    """``data`` with ``edit(manifest)`` applied to its manifest and the code printed again from the edited graph."""
    manifest, entries = _read(data)
    edit(manifest)
    entries[MANIFEST] = json.dumps(manifest).encode()
    if reprint:
        code = _print_code(_write(entries), manifest)
        if code is not None:
            entries[_code_entry(manifest)] = code.encode()
    return _write(entries)


def _with_code(data: bytes, edit) -> bytes:
    manifest, entries = _read(data)
    entry = _code_entry(manifest)
    code = entries[entry].decode()
    edited = edit(code)
    assert edited != code, f"the edit does not apply to the code:\n{code}"
    entries[entry] = edited.encode()
    return _write(entries)


class Nodes:
    """Appends nodes to the end of a manifest graph's top block (value ids are definition order)."""

    def __init__(self, manifest: dict | None, graph: dict | None = None):
        self.g = manifest["model"]["graph"] if graph is None else graph
        self.count = len(self.g["inputs"])
        stack = list(self.g["nodes"])
        while stack:
            n = stack.pop()
            self.count += len(n["outputs"])
            for b in n["blocks"]:
                self.count += len(b["inputs"])
                stack.extend(b["nodes"])

    def add(self, kind, inputs, outputs=(TENSOR,), attrs=None, op=None) -> list:
        ids = list(range(self.count, self.count + len(outputs)))
        self.count += len(outputs)
        self.g["nodes"].append({
            "kind": kind, "op": op, "inputs": list(inputs),
            "outputs": [{"name": None, "unique": 100000 + i, "type": t} for i, t in zip(ids, outputs)],
            "attrs": [[k, {"value": v}] for k, v in (attrs or {}).items()], "blocks": [], "source": None,
            "scope": ""})
        return ids

    def one(self, kind, inputs, out=TENSOR, **attrs) -> int:
        return self.add(kind, inputs, (out,), attrs)[0]

    def const(self, value, typ) -> int:
        return self.one("prim::Constant", [], typ, value=value)

    def getattr(self, obj: int, name: str, typ="Any") -> int:
        return self.one("prim::GetAttr", [obj], typ, name=name)

    def use(self, v: int) -> None:
        """Return ``(v, <old output>)`` so the new nodes matter to the result."""
        old = self.g["outputs"][0]
        t = self.add("prim::TupleConstruct", [old, v], ({"k": "Tuple", "elems": ["Any", "Any"]},))[0]
        self.g["outputs"] = [t]


def _load(data: bytes):
    return toolkit.jit.load(io.BytesIO(data))


def _refused(data: bytes, *fragments: str) -> RuntimeError:
    """Loading ``data`` raises the loader's RuntimeError (exactly that type) with each fragment in its message."""
    with pytest.raises(RuntimeError) as info:
        _load(data)
    e = info.value
    assert type(e) is RuntimeError, repr(e)
    msg = str(e)
    assert msg.startswith("toolkit.jit.load: <BytesIO> is not a valid archive"), msg
    for f in fragments:
        assert f in msg, msg
    return e


# -- the dunder chain ----------------------------------------------------------------------------------
def _dunder_chain(marker) -> callable:
    """``self.__class__.forward.__globals__``: ``__builtins__['__import__']('os').system('touch <marker>')``,
    calling through ``aten::format`` on a module whose ``format`` the graph first sets with ``aten::_set_item``."""

    def edit(manifest):
        g = Nodes(manifest)
        glob = g.getattr(g.getattr(g.getattr(0, "__class__"), "forward"), "__globals__")
        builtins = g.one("aten::__getitem__", [glob, g.const("__builtins__", "str")], "Any")
        imp = g.one("aten::__getitem__", [builtins, g.const("__import__", "str")], "Any")
        types_module = g.one("aten::__getitem__", [glob, g.const("T", "str")], "Any")
        namespace = g.getattr(types_module, "__dict__")
        key = g.const("format", "str")
        g.add("aten::_set_item", [namespace, key, imp], ())
        os_module = g.one("aten::format", [types_module, g.const("os", "str")], "str")
        g.add("aten::_set_item", [namespace, key, g.getattr(os_module, "system")], ())
        g.one("aten::format", [types_module, g.const(f"touch {marker}", "str")], "str")

    return edit


def test_dunder_chain_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "PWNED"
    data = _edited(_archive(_mlp()), _dunder_chain(marker))
    assert "self.__class__.forward.__globals__" in _read(data)[1]["archive/code/forward.py"].decode()
    try:
        try:
            m = _load(data)
        except RuntimeError as e:
            assert type(e) is RuntimeError
            assert "archive/code/forward.py: line 5: " in str(e) and "prim::GetAttr[name=\"__class__\"]" in str(e)
            assert "'__class__' is not an attribute the archive declares for module Sequential" in str(e)
        else:
            m.eval()
            with toolkit.no_grad():
                m(toolkit.randn(2, 4))
            pytest.fail("the archive loaded")
        assert not marker.exists()
    finally:
        JT.__dict__.pop("format", None)
    assert not marker.exists() and "format" not in vars(JT)


# -- builtins on foreign objects ---------------------------------------------------------------------------
def _foreign(kind):
    def edit(manifest):
        g = Nodes(manifest)
        x = 1  # the input tensor
        if kind == "getitem_of_self":
            v = g.one("aten::__getitem__", [0, g.const("0", "str")], "Any")
        elif kind == "pop_of_self":
            v = g.one("aten::pop", [0], "Any")
        elif kind == "len_of_self":
            v = g.one("aten::len", [0], "int")
        elif kind == "self_in_a_list":
            v = g.one("prim::ListConstruct", [0], {"k": "List", "elem": "Any"})
        elif kind == "attribute_of_a_tensor":
            v = g.getattr(x, "__class__")
        elif kind == "attribute_of_a_constant":
            v = g.getattr(g.const("text", "str"), "__class__")
        elif kind == "format_fields":
            v = g.one("aten::format", [g.const("{0.__class__.__init__.__globals__}", "str"), x], "str")
        elif kind == "cast_to_module":
            v = g.one("prim::unchecked_cast", [x], {"k": "Module", "name": "__torch__.Linear"})
        g.use(v)

    return edit


@pytest.mark.parametrize("kind,fragment", [
    ("getitem_of_self", "cannot be passed to aten::__getitem__"),
    ("pop_of_self", "cannot be passed to aten::pop"),
    ("len_of_self", "cannot be passed to aten::len"),
    ("self_in_a_list", "cannot be passed to prim::ListConstruct"),
    ("attribute_of_a_tensor", "an archive reads only the tensor properties"),
    ("attribute_of_a_constant", "which is not a module"),
    ("format_fields", "only '{}' fields are supported"),
    ("cast_to_module", "only self and its submodules read by prim::GetAttr are modules"),
])
def test_builtins_on_foreign_objects_are_refused(kind, fragment):
    _refused(_edited(_archive(_mlp()), _foreign(kind)), "archive/code/forward.py: line ", fragment)


@pytest.mark.parametrize("kind,fragment", [
    ("getitem_of_self", "cannot be passed to aten::__getitem__"),
    ("attribute_of_a_tensor", "an archive reads only the tensor properties"),
    ("cast_to_module", "only self and its submodules read by prim::GetAttr are modules"),
])
def test_version_1_archives_whose_graph_runs_as_saved_are_checked_all_the_same(kind, fragment):
    def edit(manifest):
        _foreign(kind)(manifest)
        manifest["version"] = 1  # the code is not rebuilt: the saved graph itself is what the check sees

    _refused(_edited(_archive(_mlp()), edit), "archive/code/forward.py: ", fragment)


def test_format_fields_built_at_run_time_are_refused_when_they_run():
    def edit(manifest):
        g = Nodes(manifest)
        fmt = g.one("aten::add.str", [g.const("{0.__init__", "str"), g.const(".__globals__}", "str")], "str")
        g.use(g.one("aten::format", [fmt, 1], "str"))

    m = _load(_edited(_archive(_mlp()), edit))
    with pytest.raises(ValueError, match=r"only '\{\}' fields are supported"):
        m(toolkit.randn(2, 4))


# -- attributes the archive does not declare -------------------------------------------------------------
@pytest.mark.parametrize("name", ["__class__", "__dict__", "forward", "_parameters", "_modules", "state_dict",
                                  "original_name", "_attribute_types", "weight", "nothing"])
def test_undeclared_attributes_are_refused(name):
    def edit(manifest):
        g = Nodes(manifest)
        g.use(g.getattr(0, name))

    _refused(_edited(_archive(_mlp()), edit), f"{name!r} is not an attribute the archive declares for module "
                                             "Sequential (it declares 0, 1, training)")


def test_declared_attributes_of_submodules_load():
    def edit(manifest):
        g = Nodes(manifest)
        lin = g.getattr(0, "0", {"k": "Module", "name": "__torch__.Linear"})
        g.use(g.getattr(lin, "in_features", "int"))

    out = _load(_edited(_archive(_mlp()), edit))(toolkit.randn(2, 4))
    assert out[1] == 4


@pytest.mark.parametrize("name,fragment", [
    ("count", None),  # declared: assigning it loads
    ("lin", "'lin' is not an attribute the archive declares for module Stateful (it assigns only its typed "
            "attributes and buffers)"),
    ("training", "it assigns only its typed attributes and buffers"),
    ("__class__", "'__class__' is not an attribute"),
])
def test_setattr_only_on_declared_attributes(name, fragment):
    def edit(manifest):
        g = Nodes(manifest)
        g.add("prim::SetAttr", [0, g.const(7, "int")], (), {"name": name})

    data = _edited(_archive(_stateful()), edit)
    if fragment is None:
        m = _load(data)
        m(toolkit.randn(3))
        assert m.count == 7
    else:
        e = _refused(data)
        assert fragment in str(e) or "the module has no attribute" in str(e), str(e)


@pytest.mark.parametrize("table,name", [
    ("parameters", "__class__"), ("parameters", "forward"), ("parameters", "_parameters"),
    ("parameters", "original_name"), ("parameters", "training"), ("parameters", "a.b"), ("buffers", ""),
    ("children", "__dict__"), ("attributes", "state_dict"), ("attributes", "_original"),
])
def test_member_names_that_would_shadow_module_internals_are_refused(table, name):
    def edit(manifest):
        m = manifest["model"]["module"]["children"][0][1]
        if table == "attributes":
            m["attributes"].append([name, "int", 1])
        elif table == "children":
            m["children"].append([name, None])
        else:
            m[table].append([name, {"$": "tensor", "index": 0}])

    _refused(_edited(_archive(_mlp()), edit, reprint=False), f"name {name!r}")


# -- unknown kinds and ops ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,op", [
    ("prim::PythonOp", None), ("prim::CallMethod", None), ("prim::FusionGroup", None), ("prim::TensorMethod", None),
    ("prim::ModuleConstant", None), ("aten::isinstance", None),
    ("prim::TupleIndex", None), ("aten::system", None), ("aten::system", "system"), ("aten::tanh", "mul"),
    ("__builtins__", None),
])
def test_unknown_node_kinds_and_ops_are_refused(kind, op):
    def edit(manifest):
        n = next(n for n in manifest["model"]["graph"]["nodes"] if n["kind"] == "aten::tanh")
        n["kind"], n["op"] = kind, op

    _refused(_edited(_archive(_mlp()), edit, reprint=False), f"unknown op {kind}")


def test_graph_valued_attributes_are_refused():
    def edit(manifest):
        g = manifest["model"]["graph"]
        g["nodes"][-1]["attrs"].append(["Subgraph", {"graph": json.loads(json.dumps(g))}])

    _refused(_edited(_archive(_mlp()), edit, reprint=False), "not graphs")


# -- types -------------------------------------------------------------------------------------------------
def _retype(kind, typ):
    def edit(manifest):
        n = next(n for n in manifest["model"]["graph"]["nodes"] if n["kind"] == kind)
        n["outputs"][0]["type"] = typ

    return edit


def _mistyped(case):
    def edit(manifest):
        g = Nodes(manifest)
        if case == "op_argument":
            g.use(g.add("aten::mul", [1, g.const("text", "str")], op="mul")[0])
        elif case == "constant":
            g.use(g.const(2, "str"))
        elif case == "list_element":
            g.use(g.one("prim::ListConstruct", [1], {"k": "List", "elem": "int"}))
        elif case == "builtin_argument":
            g.add("aten::append", [1, 1], ())
        elif case == "input":
            manifest["model"]["graph"]["inputs"][1]["type"] = "Any"
        elif case == "module_constant":
            g.use(g.const(None, {"k": "Module", "name": "__torch__.M"}))

    return edit


@pytest.mark.parametrize("edit,fragment", [
    (_retype("aten::tanh", "int"), "is declared int, but aten::tanh gives Tensor"),
    (_retype("aten::tanh", "str"), "is declared str, but aten::tanh gives Tensor"),
    (_retype("aten::tanh", {"k": "Module", "name": "__torch__.X"}), "only self and its submodules"),
    (_retype("prim::GetAttr", "int"), "is a module but is declared int"),
    (_retype("aten::tanh", {"k": "Other", "name": "function"}), "unknown type 'function'"),
    (_retype("aten::tanh", dict(TENSOR, device="quantum:0")), "unsupported device 'quantum:0'"),
    (_retype("aten::tanh", dict(TENSOR, sizes=["a"])), "bad sizes in a tensor type"),
    (_mistyped("op_argument"), "argument 'other' of aten::mul must be Tensor, but"),
    (_mistyped("constant"), "the constant 2 is not a value of its declared type str"),
    (_mistyped("list_element"), "cannot be an element of int[]"),
    (_mistyped("builtin_argument"), "aten::append takes (t[] self, t el) -> ()"),
    (_mistyped("input"), "has type Any, which a call cannot check"),
    (_mistyped("module_constant"), "is not a value of its declared type"),
])
def test_type_mismatches_are_refused(edit, fragment):
    _refused(_edited(_archive(_mlp()), edit), fragment)


# -- nesting and sizes ------------------------------------------------------------------------------------------
def _nested_types(depth: int):
    """The first node's output type nested ``depth`` lists deep (written as text: json.dumps would recurse)."""
    def build(data):
        manifest, entries = _read(data)
        nodes = manifest["model"]["graph"]["nodes"]
        nodes[-1]["outputs"][0]["type"] = "@@TYPE@@"
        text = json.dumps(manifest).replace('"@@TYPE@@"', '{"k":"List","elem":' * depth + '"int"' + "}" * depth)
        return _write(entries, text)

    return build


def _nested_ifs(depth: int):
    """An ``if`` nested ``depth`` levels deep in the graph, and its code printed the same."""
    def build(data):
        manifest, entries = _read(data)
        g = Nodes(manifest)
        cond = g.const(True, "bool")
        g.g["nodes"].append("@@IF@@")
        head = ('{"kind":"prim::If","op":null,"inputs":[' + str(cond) + '],"outputs":[],"attrs":[],'
                '"blocks":[{"inputs":[],"nodes":[')
        tail = '],"outputs":[]},{"inputs":[],"nodes":[],"outputs":[]}],"source":null,"scope":""}'
        text = json.dumps(manifest).replace('"@@IF@@"', head * depth + tail * depth)
        entries[MANIFEST] = text.encode()
        if depth <= 200:
            code = _print_code(_write(entries), json.loads(text))
            assert code is not None
            entries[_code_entry(manifest)] = code.encode()
        return _write(entries)

    return build


@pytest.mark.parametrize("build,fragment", [
    (_nested_types(300), "nests more than 256 levels deep"),
    (_nested_types(900), "nest"),
    (_nested_types(100_000), "nested too deeply"),
    (_nested_ifs(70), "nests more than 256 levels deep"),
    (_nested_ifs(400), "nested too deeply"),
    (_nested_ifs(900), "nested too deeply"),
])
def test_deep_manifests_give_the_loader_error(build, fragment):
    e = _refused(build(_archive(_mlp())), fragment)
    if "too deeply" in str(e):
        assert isinstance(e.__cause__, RecursionError)


def test_nesting_within_the_limits_loads_and_runs():
    data = _nested_ifs(45)(_archive(_mlp()))
    m = _load(data)
    assert m.code.count("if True:") == 45
    assert m(toolkit.randn(2, 4)).shape == (2, 3)
    data = _nested_types(200)(_archive(_mlp()))
    _refused(data, "is declared")  # deep, but only wrong: the linear gives a tensor


@pytest.mark.parametrize("depth,fragment,cause", [
    (150, "the code nests more than 100 levels deep at line 4", None),
    (50_000, "the code does not parse: Python's parser failed with MemoryError", MemoryError),
])
def test_deep_code_gives_the_loader_error(depth, fragment, cause):
    data = _with_code(_archive(_mlp()), lambda c: c.replace("torch.tanh(input0)", "torch.tanh(" + "-" * depth + "input)"))
    e = _refused(data, "archive/code/forward.py: " + fragment)
    assert (e.__cause__ is None) if cause is None else isinstance(e.__cause__, cause)


def test_deeply_nested_statements_and_huge_literals_give_the_loader_error():
    nested = "".join("  " * (i + 1) + "if True:\n" for i in range(99)) + "  " * 100 + "pass\n"
    data = _with_code(_archive(_mlp()), lambda c: c.replace("  return torch.tanh(input0)\n", nested + "  return torch.tanh(input0)\n"))
    _refused(data, "archive/code/forward.py: the code")
    data = _with_code(_archive(_mlp()), lambda c: c.replace("  return torch.tanh(input0)\n", "  " + "[" * 150 + "]" * 150
                                                            + "\n  return torch.tanh(input0)\n"))
    _refused(data, "archive/code/forward.py: the code")
    big = _with_code(_archive(_mlp()), lambda c: c.replace("torch.tanh(input0)", "torch.tanh(input, " + "9" * 5000 + ")"))
    e = _refused(big, "archive/code/forward.py: the code does not parse")
    assert e.__cause__ is not None


def test_code_larger_than_its_graph_warrants_is_refused_before_it_is_parsed():
    data = _with_code(_archive(_mlp()), lambda c: c + "#" * (2 << 20) + "\n")
    _refused(data, "archive/code/forward.py holds", "the archive's code may have (at most")


def test_graphs_with_too_many_nodes_are_refused(monkeypatch):
    from toolkit.jit.serialization import archive_check

    monkeypatch.setattr(archive_check, "MAX_NODES", 3)
    _refused(_archive(_mlp()), "the graph has more than 3 nodes")


# -- calls --------------------------------------------------------------------------------------------------
class Two(nn.Module):
    def forward(self, x, y):
        return x * y


def _torch_message(*args) -> str:
    class TwoT(torch.nn.Module):
        def forward(self, x, y):
            return x * y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = torch.jit.trace(TwoT(), (torch.ones(3), torch.ones(3)))
        buf = io.BytesIO()
        torch.jit.save(m, buf)
        buf.seek(0)
        loaded = torch.jit.load(buf)
    with pytest.raises(RuntimeError) as info:
        loaded(*args)
    return str(info.value)


def test_wrong_argument_types_raise_the_type_error_the_signature_declares():
    m = _load(_archive(toolkit.jit.trace(Two(), (toolkit.ones(3), toolkit.ones(3)))))
    with pytest.raises(RuntimeError) as info:
        m(toolkit.ones(3), 5)
    msg = str(info.value)
    assert msg.splitlines()[:3] == _torch_message(torch.ones(3), 5).splitlines()[:3] == [
        "forward() Expected a value of type 'Tensor' for argument 'y' but instead found type 'int'.",
        "Position: 2", "Value: 5"]
    assert msg.splitlines()[3].startswith("Declaration: forward(__torch__.")
    assert msg.splitlines()[3].endswith("Two self, Tensor x, Tensor y) -> Tensor")
    for args, fragment in [((toolkit.ones(3),), "forward() is missing value for argument 'y'"),
                           ((toolkit.ones(3),) * 3, "forward() expected at most 3 argument(s) but received 4"),
                           (("x", toolkit.ones(3)), "type 'Tensor' for argument 'x' but instead found type 'str'")]:
        with pytest.raises(RuntimeError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            m(*args)
    assert m(toolkit.ones(3), y=toolkit.ones(3) * 2).tolist() == [2.0, 2.0, 2.0]


def test_scripted_signatures_check_ints_lists_and_optionals():
    f = _load(_archive(toolkit.jit.script(lists)))
    assert f(toolkit.ones(2), 1).shape == (2,)
    with pytest.raises(RuntimeError, match=r"lists\(\) Expected a value of type 'int' for argument 'n' but instead "
                                           r"found type 'float'\.\nPosition: 1\nValue: 1\.5"):
        f(toolkit.ones(2), 1.5)
    s = _load(_archive(_stateful()))
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x' but instead found "
                                           "type 'list'"):
        s([1.0, 2.0, 3.0])


# -- fuzzing -----------------------------------------------------------------------------------------------------
KINDS = ["prim::GetAttr", "prim::SetAttr", "aten::__getitem__", "aten::pop", "aten::format", "aten::_set_item",
         "aten::append", "aten::len", "aten::keys", "aten::get", "aten::size", "aten::item", "prim::min",
         "prim::unchecked_cast", "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct",
         "prim::ListUnpack", "prim::Constant", "prim::Print", "prim::PythonOp", "prim::CallMethod",
         "prim::TensorMethod", "prim::ModuleConstant", "prim::FusionGroup", "aten::isinstance", "prim::TupleIndex",
         "aten::add", "aten::mul", "aten::linear", "aten::tanh", "aten::add.int", "aten::add.str", "aten::str",
         "prim::fork", "aten::wait"]
NAMES = ["__class__", "__dict__", "__globals__", "__init__", "forward", "_parameters", "_modules", "_original",
         "training", "weight", "bias", "count", "scale", "o", "steps", "lin", "0", "1", "state_dict", "original_name",
         "_attribute_types", "format", "system"]
TYPES = ["int", "str", "bool", "float", "Any", "NoneType", TENSOR, {"k": "Module", "name": "__torch__.X"},
         {"k": "Other", "name": "function"}, {"k": "Other", "name": "Device"}, {"k": "List", "elem": "Any"},
         {"k": "List", "elem": TENSOR}, {"k": "Dict", "key": "str", "value": "Any"}, {"k": "Optional", "elem": "int"},
         {"k": "Tuple", "elems": ["Any", "Any"]}, {"k": "Future", "elem": TENSOR}]


def _all_nodes(block_nodes):
    """The nodes of a manifest graph, those of nested blocks and forked subgraphs included."""
    out, stack = [], list(block_nodes)
    while stack:
        n = stack.pop()
        out.append(n)
        for b in n["blocks"]:
            stack.extend(b["nodes"])
        for _, a in n["attrs"]:
            if isinstance(a, dict) and "graph" in a:
                stack.extend(a["graph"]["nodes"])
    return out


def _op_name(kind):
    from toolkit.ops import registry as R

    try:
        return R.get(kind).schema.full_name
    except KeyError:
        return None


def _members(manifest: dict) -> list:
    """(path of module value ids, declared names) are not tracked: the names the module itself declares."""
    mod = manifest["model"].get("module")
    if mod is None:
        return []
    return [k for table in ("parameters", "buffers", "children") for k, _ in mod[table]] + \
        [a[0] for a in mod.get("attributes", [])] + ["training"]


def _mutate(manifest: dict, rng: random.Random, marker) -> None:
    graph = manifest["model"]["graph"]
    nodes = _all_nodes(graph["nodes"])
    g = Nodes(manifest)
    module = manifest["model"].get("module")
    what = rng.choice(["kind", "name", "operand", "type", "chain", "builtin", "member", "attribute_type",
                       "declared", "format", "widen"])
    n = rng.choice(nodes)
    if what == "kind":
        n["kind"] = rng.choice(KINDS)
        n["op"] = _op_name(n["kind"]) if n["kind"] in ("aten::add", "aten::mul", "aten::linear", "aten::tanh") \
            else None
    elif what == "name":
        target = next((m for m in nodes if m["kind"] in ("prim::GetAttr", "prim::SetAttr")), n)
        target["attrs"] = [["name", {"value": rng.choice(NAMES)}]]
    elif what == "operand" and n["inputs"]:
        n["inputs"][rng.randrange(len(n["inputs"]))] = rng.randrange(g.count)
    elif what == "type" and n["outputs"]:
        rng.choice(n["outputs"])["type"] = rng.choice(TYPES)
    elif what == "widen" and n["outputs"]:  # a value declared Any: loads unless it is a module
        rng.choice(n["outputs"])["type"] = "Any"
    elif what == "chain":  # a dunder chain from self or the input
        v = rng.choice([0, 1])
        for _ in range(rng.randint(1, 4)):
            v = g.getattr(v, rng.choice(NAMES), rng.choice(TYPES))
        g.use(v)
    elif what == "declared" and module is not None:  # a member the module declares: loads
        name = rng.choice(_members(manifest))
        g.use(g.getattr(0, name, "Any"))
    elif what == "format":  # a format of any value
        g.use(g.one("aten::format", [g.const(rng.choice(["{}", "{!r}", "{0.__class__}"]), "str"),
                                     rng.randrange(g.count)], "str"))
    elif what == "builtin":  # a builtin on whatever value (self included), then used
        kind = rng.choice([k for k in KINDS if not k.startswith("prim::") or k == "prim::min"])
        args = [rng.randrange(g.count) for _ in range(rng.randint(1, 3))]
        if kind == "aten::format":
            args = [g.const(rng.choice(["{}", "{0.__class__}", f"touch {marker}"]), "str")] + args
        g.use(g.add(kind, args, (rng.choice(TYPES),), op=_op_name(kind))[0])
    elif what == "member" and module is not None:
        table = rng.choice(["parameters", "buffers", "children"])
        module[table].append([rng.choice(NAMES), None])
    elif what == "attribute_type" and module is not None:
        module.setdefault("attributes", []).append([rng.choice(NAMES), rng.choice(TYPES),
                                                    rng.choice([1, "x", None])])


def _is_data(v, depth=0) -> bool:
    if depth > 20:
        return False
    if v is None or isinstance(v, (numbers.Number, str, bytes, toolkit.Tensor, toolkit.dtype, toolkit.device, slice,
                                   toolkit.jit.Future)) or v is Ellipsis:  # a Future: a task prim::fork started
        return True
    if isinstance(v, (list, tuple)):
        return all(_is_data(e, depth + 1) for e in v)
    if isinstance(v, dict):
        return all(_is_data(k, depth + 1) and _is_data(x, depth + 1) for k, x in v.items())
    return False


def _declared(m: LoadedModule) -> set:
    return {*m._parameters, *m._buffers, *m._modules, *m.__dict__["_attribute_types"], "training"}


@contextmanager
def _watched(violations: list):
    """Every interpreter kind checks what it is given and gives: archive data, or (as the object of GetAttr and
    SetAttr, named by a declared member) one of the loaded modules; registry ops get data too."""
    from toolkit import dispatch

    saved, execute = dict(steps.EXEC), dispatch.execute

    def value_ok(n, i, x) -> bool:
        if isinstance(x, LoadedModule):  # a forked subgraph gets the module the fork passes it
            return (i == 0 and n.kind in ("prim::GetAttr", "prim::SetAttr") and n["name"] in _declared(x)) or \
                n.kind == "prim::fork"
        return _is_data(x)

    def wrap(h):
        def checked(n, env):
            for i, v in enumerate(n.inputs):
                if not value_ok(n, i, env[v]):
                    violations.append((n.kind, i, type(env[v]).__name__))
            h(n, env)
            for o in n.outputs:
                x = env.get(o)
                if not (_is_data(x) or isinstance(x, LoadedModule)):
                    violations.append((n.kind, "out", type(x).__name__))

        return checked

    def checked_execute(op, args, *rest, **kw):
        if not all(_is_data(a) for a in args):
            violations.append((op.name, [type(a).__name__ for a in args]))
        return execute(op, args, *rest, **kw)

    steps.EXEC.update({k: wrap(h) for k, h in saved.items()})
    dispatch.execute = checked_execute
    try:
        yield
    finally:
        steps.EXEC.clear()
        steps.EXEC.update(saved)
        dispatch.execute = execute


_EVENTS: list = []
_AUDIT = {"hooked": False, "on": False}
_WATCHED_EVENTS = ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                   "ctypes.dlopen", "os.remove", "os.rename", "shutil.rmtree")


def _audit(event, args):
    if _AUDIT["on"] and event.startswith(_WATCHED_EVENTS):
        _EVENTS.append(event)


@contextmanager
def _deadline(seconds: float):
    def expired(signum, frame):
        raise TimeoutError("the loaded model ran too long")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("base", sorted(BASES))
def test_fuzzed_archives_load_and_run_safely_or_are_refused(base, tmp_path, capsys):
    """Mutated archives (node kinds, member names, operands, types, dunder chains, builtins on any value, module
    declarations): each either loads, and its call gives a result or raises an ordinary error, or is refused with
    the loader's RuntimeError; no node ever reaches an object the archive did not create."""
    if not _AUDIT["hooked"]:
        sys.addaudithook(_audit)  # hooks cannot be removed: it records only while a case runs
        _AUDIT["hooked"] = True
    make, inputs = BASES[base]
    data = _archive(make())
    rng = random.Random(f"17-{base}")
    marker = tmp_path / "PWNED"
    loaded = refused = 0
    for _ in range(100):
        manifest, _ = _read(data)
        for _ in range(rng.choice([1, 1, 2, 3])):
            _mutate(manifest, rng, marker)
        case = _edited(data, lambda m, manifest=manifest: m.update(manifest))
        violations: list = []
        _EVENTS.clear()
        _AUDIT["on"] = True
        try:
            with _watched(violations), _deadline(5.0):
                try:
                    m = _load(case)
                except RuntimeError as e:
                    assert type(e) is RuntimeError and str(e).startswith("toolkit.jit.load: <BytesIO> is not a "
                                                                         "valid archive"), repr(e)
                    refused += 1
                    continue
                loaded += 1
                try:
                    m(*inputs())
                except (RuntimeError, TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError,
                        ZeroDivisionError, TimeoutError, MemoryError):
                    pass
        finally:
            _AUDIT["on"] = False
            JT.__dict__.pop("format", None)
        assert not violations, violations
        assert not _EVENTS, _EVENTS
        assert not marker.exists()
    capsys.readouterr()
    assert refused >= 20 and loaded >= 10, (loaded, refused)


# -- raise: only Python's builtin errors, with a message that is data ---------------------------------------
class Checked(nn.Module):
    def forward(self, x):
        if x.dim() != 2:
            raise ValueError(f"expected 2D input, got {x.dim()}D")
        return x * 2


def _checked() -> bytes:
    return _archive(toolkit.jit.script(Checked()))


def _raise_node(manifest: dict) -> dict:
    stack = list(manifest["model"]["graph"]["nodes"])
    while stack:
        n = stack.pop()
        if n["kind"] == "prim::RaiseException":
            return n
        stack.extend(m for b in n["blocks"] for m in b["nodes"])
    raise AssertionError("no prim::RaiseException in the archive")


def test_a_loaded_raise_raises_the_saved_builtin_error():
    m = _load(_checked())
    assert same_values(m(toolkit.ones(2, 2)), toolkit.ones(2, 2) * 2)
    with pytest.raises(ValueError, match="expected 2D input, got 3D"):
        m(toolkit.ones(1, 1, 1))


def same_values(a, b) -> bool:
    return bool((a == b).all())


@pytest.mark.parametrize("name", ["os.system", "builtins.SystemExit", "builtins.KeyboardInterrupt",
                                  "builtins.eval", "__main__.MyError", "subprocess.Popen", "ValueError", ""])
def test_a_raise_naming_a_class_outside_the_builtin_errors_is_refused_in_the_manifest(name):
    def edit(manifest):
        _raise_node(manifest)["attrs"] = [["exception", {"exception": name}]]

    _refused(_edited(_archive(toolkit.jit.script(Checked())), edit, reprint=False),
             f"prim::RaiseException names the exception class {name!r}, which an archive may not raise",
             "allowed: builtins.ArithmeticError")


@pytest.mark.parametrize("name", ["os.system", "builtins.SystemExit", "builtins.GeneratorExit",
                                  "toolkit.jit.serialization.archive.RuntimeError"])
def test_a_raise_naming_a_class_outside_the_builtin_errors_is_refused_in_the_code(name):
    data = _with_code(_checked(), lambda code: code.replace('"builtins.ValueError"', repr(name)))
    _refused(data, "archive/code/forward.py: ", f"names the exception class {name!r}", "at line ")


@pytest.mark.parametrize("code", [
    'ops.prim.RaiseException(_0, os.system)', 'ops.prim.RaiseException(_0, "builtins.ValueError", 1)',
    'ops.prim.RaiseException(_0, cls="builtins.ValueError")', 'raise ValueError(_0)',
    'ops.prim.RaiseException(__import__("os").system("true"), "builtins.ValueError")',
])
def test_a_raise_written_any_other_way_is_refused(code):
    def edit(text):
        line = next(ln for ln in text.splitlines() if "ops.prim.RaiseException(" in ln)
        msg = line.strip()[len("ops.prim.RaiseException("):].split(",")[0]
        return text.replace(line, line[:len(line) - len(line.lstrip())] + code.replace("_0", msg))

    _refused(_with_code(_checked(), edit), "archive/code/forward.py: ")


def test_editing_the_code_changes_which_allowed_error_is_raised():
    data = _with_code(_checked(), lambda code: code.replace('"builtins.ValueError"', '"builtins.IndexError"'))
    with pytest.raises(IndexError, match="expected 2D input"):
        _load(data)(toolkit.ones(3))


def test_a_raise_whose_message_is_a_module_is_refused():
    def edit(manifest):
        n = _raise_node(manifest)
        n["inputs"] = [0]  # self

    _refused(_edited(_checked(), edit), "a module (%self, Checked) cannot be passed to prim::RaiseException")


def test_a_raise_whose_message_is_other_data_loads_and_raises_it():
    def edit(manifest):
        n = _raise_node(manifest)
        n["inputs"] = [1]  # the input tensor

    m = _load(_edited(_checked(), edit))
    with pytest.raises(ValueError, match=r"^tensor\(\[1\., 1\., 1\.\]\)\nwhile executing"):
        m(toolkit.ones(3))


@pytest.mark.parametrize("n_inputs,n_outputs", [(1, 1), (2, 0)])
def test_a_raise_with_outputs_or_more_inputs_is_refused(n_inputs, n_outputs):
    def edit(manifest):
        g = Nodes(manifest)
        msg = g.const("boom", "str")
        out = g.add("prim::RaiseException", [msg] * n_inputs, ("str",) * n_outputs)
        g.g["nodes"][-1]["attrs"] = [["exception", {"exception": "builtins.ValueError"}]]
        if out:
            g.use(out[0])

    _refused(_edited(_checked(), edit), "prim::RaiseException")


def test_the_graph_check_refuses_a_raise_of_a_class_outside_the_builtin_errors():
    """Behind the decoder and the code parser, the graph check holds the same line (a graph built in memory)."""
    from toolkit.jit.frontend.script.refs import ExceptionRef
    from toolkit.jit.ir.graph import Graph
    from toolkit.jit.serialization.archive_check import GraphRefused, check_graph

    def graph(cls, n_inputs=1, n_outputs=0):
        g = Graph()
        g.add_input("x")
        n = g.insert("prim::RaiseException", [g.insert_constant("boom")] * n_inputs, n_outputs)
        n["exception"] = ExceptionRef(cls)
        g.register_output(g.inputs[0])
        return g

    check_graph(graph(ValueError), None)
    check_graph(graph(ValueError, 0), None)
    for cls in (SystemExit, type("Evil", (Exception,), {})):
        with pytest.raises(GraphRefused, match="which an archive may not raise: only Python's builtin errors"):
            check_graph(graph(cls), None)
    for n_inputs, n_outputs in [(2, 0), (1, 1)]:
        with pytest.raises(GraphRefused, match=r"takes at most 1 input \(the message\) and has no outputs"):
            check_graph(graph(ValueError, n_inputs, n_outputs), None)


def test_reading_tensor_properties_other_than_the_scripted_ones_is_refused():
    def f(x):
        return toolkit.zeros(2, dtype=x.dtype, device=x.device) + x.ndim

    data = _archive(toolkit.jit.script(f))
    assert same_values(_load(data)(toolkit.ones(2)), toolkit.ones(2))  # dtype, device and ndim load

    def edit(manifest):
        g = Nodes(manifest)
        g.use(g.getattr(0, "__class__"))  # the input tensor

    _refused(_edited(data, edit), "prim::GetAttr of '__class__' on the tensor %x: an archive reads only the tensor "
                                  "properties T, data, device, dtype")


# -- parameter defaults: literals of the parameter's type --------------------------------------------------
@pytest.mark.parametrize("default,fragment", [
    ("__import__('os')", "unsupported expression"), ("x", "unsupported expression"),
    ("'text'", "the default value 'text' of forward() argument 'hx' is not Optional[Tuple[Tensor, Tensor]]"),
])
def test_parameter_defaults_other_than_literals_of_their_type_are_refused(default, fragment):
    data = _archive(toolkit.jit.script(nn.GRUCell(2, 3)))
    assert "hx: Optional[Tensor]=None)" in _read(data)[1]["archive/code/forward.py"].decode()
    edited = _with_code(data, lambda code: code.replace("hx: Optional[Tensor]=None)", f"hx: Optional[Tensor]={default})"))
    _refused(edited, fragment.replace("Tuple[Tensor, Tensor]", "Tensor"))


def test_a_default_for_self_is_refused():
    data = _archive(toolkit.jit.script(nn.GRUCell(2, 3)))
    def edit(code):
        return code.replace("def forward(self,", "def forward(self=None,").replace("input: Tensor,", "input: Tensor=1,")

    _refused(_with_code(data, edit), "forward() has 3 default values for 2 parameters")


# -- forked subgraphs: checked by the same rules -----------------------------------------------------------
class Forking(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        fut = toolkit.jit.fork(self.lin, x)
        return toolkit.jit.wait(fut) + x


def _forking() -> bytes:
    toolkit.manual_seed(0)
    return _archive(toolkit.jit.script(Forking()))


def _top_node(manifest: dict, kind: str) -> dict:
    return next(n for n in manifest["model"]["graph"]["nodes"] if n["kind"] == kind)


def _subgraph(manifest: dict) -> dict:
    return dict(_top_node(manifest, "prim::fork")["attrs"])["Subgraph"]["graph"]


def _in_subgraph(attack):
    """An edit that makes the forked subgraph return what ``attack(nodes of the subgraph)`` adds."""

    def edit(manifest):
        sub = _subgraph(manifest)
        sub["outputs"] = [attack(Nodes(None, sub))]

    return edit


def _nested_fork(g: Nodes) -> int:
    """A fork inside the forked subgraph whose own subgraph walks ``lin.__class__.forward``."""
    inner = {"inputs": [{"name": "m", "unique": 0, "type": g.g["inputs"][0]["type"]}], "unique": 3, "nodes": [],
             "outputs": []}
    ig = Nodes(None, inner)
    inner["outputs"] = [ig.getattr(ig.getattr(0, "__class__"), "forward")]
    fut = g.one("prim::fork", [0], {"k": "Future", "elem": "Any"})
    g.g["nodes"][-1]["attrs"] = [["Subgraph", {"graph": inner}]]
    return g.one("aten::wait", [fut], "Any")


def test_a_forked_submodule_loads_and_runs():
    toolkit.manual_seed(0)
    m = toolkit.jit.script(Forking())
    loaded = _load(_forking())
    assert "fork(__forked_function, self.lin, x)" in loaded.code
    x = toolkit.randn(3)
    assert loaded(x).tolist() == m(x).tolist()


@pytest.mark.parametrize("attack,fragments", [
    (lambda g: g.getattr(g.getattr(0, "__class__"), "forward"),
     ("'__class__' is not an attribute the archive declares for module Linear", "archive/code/forward.py: line ")),
    (lambda g: g.one("aten::format", [g.const("{}", "str"), 0], "str"),
     ("a module (%lin, Linear) cannot be passed to aten::format",)),
    (lambda g: 0, ("a module (%lin, Linear) cannot be returned by a forked Subgraph",)),
    (lambda g: g.one("prim::PythonOp", [1]), ("unknown op prim::PythonOp",)),
    (_nested_fork, ("'__class__' is not an attribute the archive declares for module Linear",)),
], ids=["dunder", "builtin-on-module", "module-returned", "unknown-kind", "nested-fork"])
def test_forged_fork_subgraphs_are_refused(attack, fragments):
    data = _edited(_forking(), _in_subgraph(attack))
    assert "def __forked_function(" in _read(data)[1]["archive/code/forward.py"].decode()
    _refused(data, *fragments)


def _retarget(manifest: dict, kind: str, inputs: list) -> None:
    _top_node(manifest, kind)["inputs"] = inputs


@pytest.mark.parametrize("edit,fragment", [
    (lambda m: _retarget(m, "prim::fork", [3]), "prim::fork passes 1 value(s) to a Subgraph that takes 2"),
    (lambda m: _retarget(m, "prim::fork", [1, 3]), "the Subgraph's parameter %lin is declared"),
    (lambda m: _retarget(m, "aten::wait", [1]), "aten::wait takes a Future (what prim::fork returns), got %x"),
    (lambda m: _top_node(m, "prim::fork")["outputs"][0].update(type={"k": "Future", "elem": "int"}),
     "%fut is declared Future[int], but prim::fork gives Future[Tensor]"),
    (lambda m: _top_node(m, "prim::fork").update(attrs=[]), "has a prim::fork node without a Subgraph"),
    (lambda m: _top_node(m, "aten::add")["attrs"].append(["Subgraph", {"graph": _subgraph(m)}]),
     "bad attribute 'Subgraph' of a aten::add node"),
], ids=["arity", "module-for-tensor", "wait-on-tensor", "future-type", "no-subgraph", "subgraph-elsewhere"])
def test_forks_that_do_not_fit_their_subgraph_are_refused(edit, fragment):
    _refused(_edited(_forking(), edit), fragment)


@pytest.mark.parametrize("old,new,fragment", [
    ("fork(__forked_function, self.lin, x)", "fork(__forked_function, self, x)",
     "'weight' is not an attribute the archive declares for module Forking"),
    ("    return _0", "    return self", "unknown name 'self'"),
    ("fork(__forked_function, self.lin, x)", "fork(print, self.lin, x)", "expected 'name = fork(__forked_function"),
    ("      x: Tensor) -> Tensor:", "      x: Tensor=None) -> Tensor:", "cannot have default values"),
    ("  def __forked_function(lin,", "  def __forked_function(self, lin,", "the code takes 3 inputs, the graph 2"),
], ids=["module-swapped", "reads-enclosing-name", "not-the-def", "default", "extra-parameter"])
def test_forked_functions_in_the_code_are_refused_unless_they_fit(old, new, fragment):
    data = _forking()
    assert old in _read(data)[1]["archive/code/forward.py"].decode()
    _refused(_with_code(data, lambda code: code.replace(old, new, 1)), fragment)


def test_editing_a_forked_function_changes_what_runs():
    data = _with_code(_forking(), lambda code: code.replace("torch.nn.functional.linear(x, lin.weight, lin.bias)",
                                                            "torch.nn.functional.linear(x, lin.weight, None)"))
    loaded = _load(data)
    x = toolkit.randn(3)
    assert loaded(x).tolist() == (nn.functional.linear(x, loaded.lin.weight) + x).tolist()
