"""Scripted modules that assign attributes (``prim::SetAttr``): ``.code`` and ``.graph`` print the assignments
as TorchScript does, and ``toolkit.jit.save``/``load`` round-trip them with the attributes' values; archive code
that assigns or reads an attribute the module lacks, or with the wrong type, is refused naming the line."""

import io
import json
import re
import warnings
import zipfile

import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.jit.frontend.script import FrontendError

from ...serialization.test_code_parser import _edit_code, _load_bytes
from .helpers import same

CODE = "archive/code/forward.py"


def _stateful(base):
    class Stateful(base.nn.Module):
        o: base.Tensor | None

        def __init__(self):
            super().__init__()
            self.count = 0
            self.scale = 1.5
            self.flag = False
            self.o = None
            self.register_buffer("steps", base.zeros(()))

        def forward(self, x):
            self.count += 1
            self.scale = self.scale * 2.0
            self.flag = not self.flag
            self.steps = self.steps + 1
            self.o = x
            return x * self.count

    return Stateful


def _torchscript(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(m)


def _archive(m) -> bytes:
    buf = io.BytesIO()
    toolkit.jit.save(m, buf)
    return buf.getvalue()


def _roundtrip(m):
    return _load_bytes(_archive(m))


def test_code_golden():
    s = toolkit.jit.script(_stateful(toolkit)())
    assert s.code == (
        "def forward(self,\n"
        "    x: Tensor) -> Tensor:\n"
        "  count = self.count\n"
        "  self.count = torch.add(count, 1)\n"
        "  scale = self.scale\n"
        "  self.scale = torch.mul(scale, 2.)\n"
        "  flag = self.flag\n"
        "  self.flag = torch.__not__(flag)\n"
        "  steps = self.steps\n"
        "  self.steps = torch.add(steps, 1)\n"
        "  self.o = x\n"
        "  count0 = self.count\n"
        "  return torch.mul(x, count0)\n")


def _attribute_lines(code: str) -> list:
    return [line for line in code.splitlines() if "self." in line]


def test_attribute_reads_and_assignments_print_as_torchscript():
    ours = toolkit.jit.script(_stateful(toolkit)()).code
    theirs = _torchscript(_stateful(torch)()).code
    assert _attribute_lines(ours) == _attribute_lines(theirs)
    assert ours == theirs
    assert "  self.count = torch.add(count, 1)" in theirs.splitlines()


def _setattr_lines(graph_text: str) -> list:
    return [line for line in graph_text.splitlines() if "prim::SetAttr" in line]


def test_graph_prints_setattr_as_torchscript():
    ours = _setattr_lines(toolkit.jit.script(_stateful(toolkit)()).graph.to_string(source_locations=False))
    theirs = _setattr_lines(str(_torchscript(_stateful(torch)()).graph))
    shape = re.compile(r'^   = prim::SetAttr\[name="(\w+)"\]\(%self, %[\w.]+\)')
    assert [shape.match(line).group(1) for line in ours] == [shape.match(line).group(1) for line in theirs] \
        == ["count", "scale", "flag", "steps", "o"]
    assert '   = prim::SetAttr[name="o"](%self, %x)' in ours


# -- round trips ----------------------------------------------------------------------------------------------
class IntCount(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count += 2
        return x * self.count


class FloatScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 0.5

    def forward(self, x):
        self.scale = self.scale * 3.0
        return x * self.scale


class BoolFlag(nn.Module):
    def __init__(self):
        super().__init__()
        self.flag = False

    def forward(self, x):
        self.flag = not self.flag
        if self.flag:
            return x + 1
        return x - 1


class BufferSteps(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", toolkit.zeros(2))

    def forward(self, x):
        self.steps = self.steps + x
        return self.steps * 2


class TensorLast(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = toolkit.ones(2)

    def forward(self, x):
        y = x + self.last
        self.last = y
        return y


class OptionalLast(nn.Module):
    last: toolkit.Tensor | None

    def __init__(self):
        super().__init__()
        self.last = None
        self.calls = 0

    def forward(self, x, keep: bool):
        self.calls += 1
        if keep:
            self.last = x * self.calls
        else:
            self.last = None
        return x


def _state(m, names):
    return [getattr(m, n) for n in names]


def _same_state(a: list, b: list) -> bool:
    """Equal values of the same types (tensors: same shape and values)."""
    return len(a) == len(b) and all(
        same(x, y) if isinstance(x, toolkit.Tensor) else (type(x) is type(y) and x == y) for x, y in zip(a, b))


@pytest.mark.parametrize("cls,names,args", [
    (IntCount, ["count"], lambda i: (toolkit.ones(2),)),
    (FloatScale, ["scale"], lambda i: (toolkit.ones(2),)),
    (BoolFlag, ["flag"], lambda i: (toolkit.ones(2),)),
    (BufferSteps, ["steps"], lambda i: (toolkit.full((2,), float(i + 1)),)),
    (TensorLast, ["last"], lambda i: (toolkit.full((2,), float(i)),)),
    (OptionalLast, ["last", "calls"], lambda i: (toolkit.full((2,), 2.0), i % 3 != 2)),
], ids=["int", "float", "bool", "tensor-buffer", "tensor", "optional"])
def test_round_trip_restores_the_state_and_keeps_updating_it(cls, names, args):
    ref, s = cls(), toolkit.jit.script(cls())
    for i in range(3):
        assert same(s(*args(i)), ref(*args(i)))
    saved = _state(s, names)
    assert _same_state(saved, _state(ref, names))
    loaded = _roundtrip(s)
    assert loaded.code == s.code
    assert _same_state(_state(loaded, names), saved)
    changes = set()
    for i in range(3, 8):  # profiling run, then optimized plans: the attribute changes as calls go
        assert same(loaded(*args(i)), ref(*args(i)))
        assert _same_state(_state(loaded, names), _state(ref, names))
        changes.add(repr(_state(loaded, names)))
    assert len(changes) > 1
    again = _roundtrip(loaded)  # a loaded module saves its current state
    assert _same_state(_state(again, names), _state(ref, names))


def test_optional_attribute_round_trips_both_ways():
    s = toolkit.jit.script(OptionalLast())
    x = toolkit.ones(2)
    s(x, True)
    loaded = _roundtrip(s)
    assert same(loaded.last, x) and loaded.calls == 1
    loaded(x, False)
    assert loaded.last is None and loaded.calls == 2
    again = _roundtrip(loaded)  # saved while None: still Optional[Tensor], so the code may assign a tensor
    again(x, True)
    assert same(again.last, x * 3) and again.calls == 3
    assert "    self.last = None\n" in again.code


class ReadsAroundWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 1

    def forward(self, x):
        before = self.count
        self.count = 5
        return x * before + self.count


def test_reads_print_where_the_graph_reads():
    s = toolkit.jit.script(ReadsAroundWrite())
    assert _attribute_lines(s.code) == ["  count = self.count", "  self.count = 5", "  count0 = self.count"]
    loaded = _roundtrip(s)
    x = toolkit.ones(1)
    assert loaded(x).tolist() == [6.0] and loaded.count == 5
    assert loaded(x).tolist() == [10.0]


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count += 1
        return x + self.count


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Counter()
        self.total = 0

    def forward(self, x):
        self.sub.count = self.sub.count + 10
        y = self.sub(x)
        self.total = self.total + self.sub.count
        return y


def test_nested_submodule_attributes_round_trip():
    ref, s = Outer(), toolkit.jit.script(Outer())
    x = toolkit.zeros(1)
    assert same(s(x), ref(x))
    assert "  self.sub.count = torch.add(count, 10)\n" in s.code
    loaded = _roundtrip(s)
    assert (loaded.sub.count, loaded.total) == (11, 11)
    for _ in range(3):
        assert same(loaded(x), ref(x))
        assert (loaded.sub.count, loaded.total) == (ref.sub.count, ref.total)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        return x + self.count


class AssignsPlainSub(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Plain()

    def forward(self, x):
        self.sub.count = 3
        return self.sub(x)


def test_assigning_an_attribute_its_class_never_assigns_is_a_clear_compile_error():
    with pytest.raises(FrontendError, match=r"attribute 'count' of 'Plain' can be assigned only as 'self\.count = "
                                            r"\.\.\.' in a method of its own class"):
        toolkit.jit.script(AssignsPlainSub())


def test_loaded_attributes_are_assigned_from_python_with_their_type():
    loaded = _roundtrip(toolkit.jit.script(IntCount()))
    loaded.count = 10
    assert loaded(toolkit.ones(1)).tolist() == [12.0] and loaded.count == 12
    with pytest.raises(RuntimeError, match=r"Could not cast attribute 'count' of IntCount to type int: got str"):
        loaded.count = "x"
    assert loaded.count == 12


# -- archives whose code or manifest was edited -----------------------------------------------------------------
def _stateful_archive() -> bytes:
    s = toolkit.jit.script(_stateful(toolkit)())
    s(toolkit.ones(2))
    return _archive(s)


def test_editing_an_assignment_changes_what_runs():
    data = _stateful_archive()
    loaded = _load_bytes(_edit_code(data, lambda c: c.replace("torch.add(count, 1)",
                                                               "torch.add(count, 5)"), CODE))
    assert loaded(toolkit.ones(2)).tolist() == [6.0, 6.0] and loaded.count == 6
    loaded = _load_bytes(_edit_code(data, lambda c: c.replace("  self.o = x\n", "  self.o = None\n"), CODE))
    loaded(toolkit.ones(2))
    assert loaded.o is None


def test_an_assignment_edited_to_a_name_drops_the_call_it_replaces():
    """The code decides what runs: ``self.count = count`` in place of ``torch.add(count, 1)`` assigns count as read,
    and the call the code no longer writes is gone from the loaded graph."""
    loaded = _load_bytes(_edit_code(_stateful_archive(), lambda c: c.replace("  self.count = torch.add(count, 1)",
                                                                             "  self.count = count"), CODE))
    assert loaded(toolkit.ones(2)).tolist() == [1.0, 1.0] and loaded.count == 1
    assert "aten::add.int" not in str(loaded.graph)


@pytest.mark.parametrize("old,new,match", [
    ("  self.count = torch.add", "  self.bogus = torch.add",
     r"self\.bogus at line 4: the module has no attribute 'bogus' that code can read or assign"),
    ("  self.o = x", "  self.steps_ = x", r"self\.steps_ at line 11: the module has no attribute 'steps_'"),
    ("  self.o = x", "  self.count = x",
     r"wrong type for attribute assignment at line 11: self\.count is int, the value is Tensor"),
    ("  self.steps = torch.add", "  self.scale = torch.add",
     r"wrong type for attribute assignment at line 10: self\.scale is float, the value is Tensor"),
    ("  count0 = self.count", "  count0 = self.nothing",
     r"self\.nothing at line 12: the module has no attribute 'nothing'"),
    ("  count0 = self.count", "  count0 = self.scale",
     r"wrong type for attribute read at line 12: self\.scale is float, the graph reads int"),
    ("  self.o = x", "  x.o = x", r"x at line 11 is Tensor, not a module"),
    ("  self.o = x", "  self.o = secret", r"unknown name 'secret'"),
    ("  self.o = x", "  o = x", r"expected an attribute assignment for prim::SetAttr at line 11, got 'o = x'"),
    ("  self.count = torch.add(count, 1)", "  self.count = count + 1",
     r"unsupported expression 'count \+ 1' at line 4"),
])
def test_tampered_attribute_code_is_refused_naming_the_line(old, new, match):
    data = _stateful_archive()
    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: archive/code/forward\.py: .*" + match):
        _load_bytes(_edit_code(data, lambda c: c.replace(old, new), CODE))


def _edit_manifest(data: bytes, edit) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == "archive/manifest.json":
                manifest = json.loads(body)
                edit(manifest["model"]["module"])
                body = json.dumps(manifest).encode()
            dst.writestr(name, body)
    return out.getvalue()


def _set_attribute(entry: list, name: str, typ, value) -> None:
    for a in entry:
        if a[0] == name:
            a[1:] = [typ, value]


@pytest.mark.parametrize("edit,match", [
    (lambda m: _set_attribute(m["attributes"], "count", "int", "three"),
     r"attribute 'count' of Stateful is int, but its saved value is str"),
    (lambda m: _set_attribute(m["attributes"], "count", "str", "three"),
     r"archive/code/forward.py: wrong type for attribute read at line 3: self.count is str, the graph reads int"),
    (lambda m: _set_attribute(m["attributes"], "count", {"k": "List", "elem": {"k": "List", "elem": "int"}}, [[3]]),
     r"attribute 'count' of Stateful has type int\[\]\[\], which modules cannot hold"),
    (lambda m: m["attributes"].append(["steps", "int", 1]),
     r"attribute 'steps' of Stateful is also a parameter, buffer or submodule"),
    (lambda m: m["attributes"].append(["__class__", "int", 1]), r"bad attribute name '__class__'"),
])
def test_tampered_attribute_values_are_refused(edit, match):
    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: " + match):
        _load_bytes(_edit_manifest(_stateful_archive(), edit))


def test_archive_without_attribute_entries_loads_modules_that_assign_none():
    toolkit.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    x = toolkit.randn(4, 3)
    data = _archive(toolkit.jit.trace(m, x))

    def drop(entry):
        entry.pop("attributes")
        for _, child in entry["children"]:
            drop(child)

    loaded = _load_bytes(_edit_manifest(data, drop))
    assert same(loaded(x), m(x))
    assert _load_bytes(data)._modules["0"].in_features == 3  # saved with the module, as TorchScript keeps it


def test_an_assigned_value_that_is_also_returned_keeps_its_name():
    from toolkit.jit import Graph, Interpreter
    from toolkit.jit.ir import types as T
    from toolkit.jit.serialization.code import graph_to_code
    from toolkit.jit.serialization.code_parser import rebuild_from_code

    from ...control_flow_graphs import op

    g = Graph()
    me, x = g.add_input("self", T.ModuleType(TensorLast)), g.add_input("x")
    y = op(g, "mul", x, x)
    g.insert("prim::SetAttr", [me, y], 0)["name"] = "last"
    g.register_output(y)
    code = graph_to_code(g, "f")
    assert code.endswith("  _0 = torch.mul(x, x)\n  self.last = _0\n  return _0\n")
    m = TensorLast()
    out = Interpreter(rebuild_from_code(g, code)).run([m, toolkit.full((2,), 3.0)])[0]
    assert out.tolist() == m.last.tolist() == [9.0, 9.0]


def _branchy(base):
    class Branchy(base.nn.Module):
        last: base.Tensor | None

        def __init__(self):
            super().__init__()
            self.last = None
            self.n = 0

        def forward(self, x, c: bool):
            if c:
                self.last = x
                self.n += 1
            else:
                self.last = None
            for i in range(3):
                self.n = self.n + i
            return x

    return Branchy


def test_assignments_in_ifs_and_loops_print_as_torchscript_and_round_trip():
    s = toolkit.jit.script(_branchy(toolkit)())
    theirs = _torchscript(_branchy(torch)()).code
    assert s.code == theirs
    ref = _branchy(toolkit)()
    x = toolkit.ones(2)
    s(x, True)
    ref(x, True)
    loaded = _roundtrip(s)
    for c in (False, True, True, False):
        assert same(loaded(x * 2, c), ref(x * 2, c))
        assert loaded.n == ref.n and _same_state([loaded.last], [ref.last])


class NoneNoAnnotation(nn.Module):
    def __init__(self):
        super().__init__()
        self.last = None

    def forward(self, x):
        self.last = x
        return x


def test_a_none_attribute_without_a_declared_type_holds_only_none():
    with pytest.raises(FrontendError, match=r"Wrong type for attribute assignment: 'last' is NoneType but the value "
                                            r"is Tensor"):
        toolkit.jit.script(NoneNoAnnotation())
