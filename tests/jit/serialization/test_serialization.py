"""toolkit.jit.save/load: archives round-trip graphs exactly and run without the model's source."""

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import torch

import toolkit
import toolkit.nn as nn
from toolkit.jit import Graph, load, save
from toolkit.jit.ir import types as T
from toolkit.jit.serialization.code import graph_to_code

from ...conftest import assert_close
from ..control_flow_graphs import (
    branchy,
    breaking_loop,
    from_torch,
    if_node,
    if_without_outputs,
    loop,
    loop_inside_if,
    op,
    script,
    two_carried_with_nested_if,
    while_loop,
)


def _roundtrip(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


def _mlp():
    toolkit.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


class _ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).relu().flatten(1))


class _TwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)

    def forward(self, x, y):
        h = self.a(x)
        return h * y, h.sum()


def _grads(module, fn, *inputs):
    module.zero_grad()
    xs = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    sum(o.sum() for o in outs).backward()
    return [p.grad.numpy().copy() for p in module.parameters()] + [x.grad.numpy().copy() for x in xs]


@pytest.mark.parametrize("make,inputs", [
    (_mlp, lambda: (toolkit.randn(5, 4),)),
    (_ConvNet, lambda: (toolkit.randn(2, 2, 5, 5),)),
    (_TwoOut, lambda: (toolkit.randn(4, 3), toolkit.randn(4, 2))),
])
def test_module_round_trip_outputs_grads_state(make, inputs):
    toolkit.manual_seed(1)
    m = make()
    args = inputs()
    sm = toolkit.jit.trace(m, args, check_trace=False)
    lm = _roundtrip(sm)
    assert isinstance(lm, toolkit.jit.ScriptModule)
    assert str(lm.graph) == str(sm.inlined_graph)  # archives hold the flat graph: the submodule calls inlined
    assert lm.code == graph_to_code(sm.inlined_graph)
    assert repr(lm).splitlines()[0] == repr(sm).splitlines()[0]
    sd, lsd = m.state_dict(), lm.state_dict()
    assert list(sd) == list(lsd)
    for k in sd:
        np.testing.assert_array_equal(sd[k].numpy(), lsd[k].numpy())
    assert all(type(p) is nn.Parameter for p in lm.parameters())
    m.eval(), sm.eval(), lm.eval()
    a, b = sm(*args), lm(*args)
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())
    m.train(), lm.train()
    assert lm.training and all(c.training for c in lm.modules())
    for g0, g1 in zip(_grads(m, sm, *args), _grads(lm, lm, *args)):
        np.testing.assert_allclose(g0, g1, rtol=1e-6, atol=1e-7)
    lm.eval()
    assert not any(c.training for c in lm.modules())


def test_loaded_params_are_independent_and_trainable():
    m = _mlp()
    x = toolkit.randn(5, 4)
    lm = _roundtrip(toolkit.jit.trace(m, x))
    opt = toolkit.optim.SGD(lm.parameters(), lr=0.1)
    before = m[0].weight.detach().numpy().copy()
    lm(x).sum().backward()
    opt.step()
    np.testing.assert_array_equal(m[0].weight.detach().numpy(), before)
    assert not np.array_equal(lm.state_dict()["0.weight"].numpy(), before)


def _fn(x, y):
    return (2 * x + y).sin() * y.mean(0, keepdim=True)


def test_function_round_trip():
    x, y = toolkit.randn(3, 4), toolkit.randn(3, 4)
    sf = toolkit.jit.trace(_fn, (x, y))
    lf = _roundtrip(sf)
    assert isinstance(lf, toolkit.jit.ScriptFunction) and lf.name == "_fn"
    assert str(lf.graph) == str(sf.graph)
    np.testing.assert_array_equal(lf(x, y).numpy(), _fn(x, y).numpy())
    xs = [x.clone().requires_grad_(True) for _ in range(2)]
    ys = [y.clone().requires_grad_(True) for _ in range(2)]
    sf(xs[0], ys[0]).sum().backward()
    lf(xs[1], ys[1]).sum().backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(ys[0].grad.numpy(), ys[1].grad.numpy(), rtol=1e-6)


def test_loaded_module_traces_again():
    m = _mlp()
    x = toolkit.randn(2, 4)
    lm = _roundtrip(toolkit.jit.trace(m, x))
    again = toolkit.jit.trace(lm, x)
    np.testing.assert_array_equal(again(x).detach().numpy(), m(x).detach().numpy())


def test_path_save_is_atomic_and_extra_files(tmp_path):
    p = tmp_path / "m.pt"
    sm = toolkit.jit.trace(_mlp(), toolkit.randn(1, 4))
    save(sm, p, _extra_files={"meta.txt": "hello"})
    save(sm, str(p))
    assert os.listdir(tmp_path) == ["m.pt"]
    with zipfile.ZipFile(p) as zf:
        assert "archive/code/forward.py" in zf.namelist()
        assert "def forward(self" in zf.read("archive/code/forward.py").decode()
    save(sm, p, _extra_files={"meta.txt": "hello"})
    extra = {"meta.txt": ""}
    load(p, _extra_files=extra)
    assert extra["meta.txt"] == b"hello"
    with pytest.raises(TypeError, match="expected a ScriptModule or ScriptFunction"):
        save(_mlp(), tmp_path / "x.pt")


_MODEL_SRC = """
import toolkit.nn as nn

class Secret(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(3, 5)
        self.l2 = nn.Linear(5, 2)

    def forward(self, x):
        return self.l2(self.l1(x).sigmoid()), x.exp()
"""


def test_load_in_subprocess_without_source(tmp_path):
    src = tmp_path / "secret_model_mod.py"
    src.write_text(_MODEL_SRC)
    spec = importlib.util.spec_from_file_location("secret_model_mod", src)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["secret_model_mod"] = mod
    spec.loader.exec_module(mod)
    model = mod.Secret()
    x = toolkit.randn(4, 3)
    save(toolkit.jit.trace(model, x), tmp_path / "model.pt")
    expected = [t.detach() for t in model(x)]
    del sys.modules["secret_model_mod"], mod, spec
    src.unlink()
    toolkit.save({"x": x}, tmp_path / "x.pt")
    script = textwrap.dedent(f"""
        import sys, toolkit
        m = toolkit.jit.load({str(tmp_path / 'model.pt')!r})
        assert "secret_model_mod" not in sys.modules
        x = toolkit.load({str(tmp_path / 'x.pt')!r})["x"]
        a, b = m(x)
        toolkit.save({{"a": a.detach(), "b": b.detach(), "name": m.original_name}}, {str(tmp_path / 'out.pt')!r})
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == 0, r.stderr
    out = toolkit.load(tmp_path / "out.pt")
    assert out["name"] == "Secret"
    np.testing.assert_array_equal(out["a"].numpy(), expected[0].numpy())
    np.testing.assert_array_equal(out["b"].numpy(), expected[1].numpy())


def _bytes(obj) -> bytes:
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _with_manifest(data: bytes, edit) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == "archive/manifest.json":
                man = json.loads(body)
                edit(man)
                body = json.dumps(man).encode()
            dst.writestr(name, body)
    return out.getvalue()


def test_corrupt_archives_name_the_file(tmp_path):
    data = _bytes(toolkit.jit.trace(_mlp(), toolkit.randn(2, 4)))
    p = tmp_path / "bad.pt"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(RuntimeError, match=r"bad\.pt.*not a valid archive"):
        load(p)
    p.write_bytes(b"not a zip at all")
    with pytest.raises(RuntimeError, match=r"bad\.pt.*not a zip archive"):
        load(p)

    def newer(man):
        man["version"] = 99

    p.write_bytes(_with_manifest(data, newer))
    with pytest.raises(RuntimeError, match=r"bad\.pt.*version 99 was written by a newer toolkit"):
        load(p)
    toolkit.save({"a": toolkit.ones(2)}, p)
    with pytest.raises(RuntimeError, match=r"bad\.pt.*toolkit\.save checkpoint"):
        load(p)

    def dangling(man):
        man["model"]["graph"]["outputs"] = [999]

    p.write_bytes(_with_manifest(data, dangling))
    with pytest.raises(RuntimeError, match=r"bad\.pt.*undefined value 999"):
        load(p)
    with pytest.raises(ValueError, match="does not exist"):
        load(tmp_path / "missing.pt")


@pytest.mark.parametrize("kind,op", [("aten::system", "system"), ("prim::PythonOp", None),
                                     ("aten::add", "mul.Tensor")])
def test_unknown_ops_are_rejected(kind, op):
    data = _bytes(toolkit.jit.trace(_fn, (toolkit.randn(2), toolkit.randn(2))))

    def tamper(man):
        nodes = man["model"]["graph"]["nodes"]
        n = next(n for n in nodes if n["kind"].startswith("aten::"))
        n["kind"], n["op"] = kind, op

    with pytest.raises(RuntimeError, match=rf"<BytesIO>.*unknown op {kind}"):
        load(io.BytesIO(_with_manifest(data, tamper)))


def test_type_changes_are_caught_by_verifier():
    data = _bytes(toolkit.jit.trace(_fn, (toolkit.randn(2), toolkit.randn(2))))

    def tamper(man):
        man["model"]["graph"]["nodes"] = man["model"]["graph"]["nodes"][1:]

    with pytest.raises(RuntimeError, match="not a valid archive"):
        load(io.BytesIO(_with_manifest(data, tamper)))


# -- control flow --------------------------------------------------------------------------------------
def _cf_function(make, name="f"):
    return toolkit.jit.ScriptFunction(make(), name)


def test_scripted_control_flow_round_trips_and_runs_like_torchscript():
    ts = script(branchy)
    sf = _cf_function(lambda: from_torch(ts), "branchy")
    lf = _roundtrip(sf)
    assert str(lf.graph) == str(sf.graph) and lf.code == sf.code
    assert "  while _" in lf.code and "  for j in range(3):" in lf.code
    torch.manual_seed(0)
    xt = torch.randn(4, dtype=torch.float64)
    for n in (0, 1, 4):
        for c in (True, False):
            expected = ts(xt, n, c).numpy()
            xs = [toolkit.tensor(xt.numpy()).requires_grad_(True) for _ in range(2)]
            a, b = sf(xs[0], n, c), lf(xs[1], n, c)
            assert_close(b.detach(), expected)
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
            a.sum().backward()
            b.sum().backward()
            np.testing.assert_array_equal(xs[0].grad.numpy(), xs[1].grad.numpy())


def _t(*v):
    return toolkit.tensor(list(v), dtype=toolkit.float64)


@pytest.mark.parametrize("make,inputs", [
    (two_carried_with_nested_if, [(_t(1.0, -2.0), _t(0.5, 3.0), c) for c in (True, False)]),
    (loop_inside_if, [(_t(1.0, 4.0), n, c) for n in (0, 3) for c in (True, False)]),
    (while_loop, [(_t(x), _t(5.0)) for x in (0.0, 2.5, 7.0)]),
    (breaking_loop, [(_t(x), n, _t(20.0)) for x in (0.5, 30.0) for n in (0, 2, 10)]),
    (if_without_outputs, [(_t(1.0), c) for c in (True, False)]),
], ids=["two_carried_with_nested_if", "loop_inside_if", "while_loop", "breaking_loop", "if_without_outputs"])
def test_hand_built_control_flow_round_trips(make, inputs):
    sf = _cf_function(make)
    lf = _roundtrip(sf)
    assert str(lf.graph) == str(sf.graph) and lf.code == sf.code
    results = set()
    for args in inputs:
        a, b = sf(*args), lf(*args)
        if a is None:
            assert b is None
            continue
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        results.add(tuple(b.numpy().ravel()))
    assert len(results) > 1 or make is if_without_outputs  # the inputs reach different branches and trip counts


class _Repeat(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)


def _repeat_module():
    """forward(x, n, c): if c: h = x; for i in range(n): h = tanh(self.lin(h)) else: h = relu(x); return h."""
    toolkit.manual_seed(0)
    m = _Repeat()
    g = Graph()
    me, x, n, c = g.add_input("self", T.ModuleType(_Repeat)), g.add_input("x"), g.add_input("n", T.INT), \
        g.add_input("c", T.BOOL)
    lin = g.insert("prim::GetAttr", [me])
    lin["name"] = "lin"
    lin.output().type = T.ModuleType(nn.Linear)
    br, b0, b1 = if_node(g, c)
    br.output().set_debug_name("h")
    with g.inserting_at_end(b0):
        lp, body = loop(g, n, g.insert_constant(True), [x])
        with g.inserting_at_end(body):
            params = []
            for name in ("weight", "bias"):
                get = g.insert("prim::GetAttr", [lin.output()])
                get["name"] = name
                params.append(get.output())
            body.register_output(g.insert_constant(True))
            body.register_output(op(g, "tanh", op(g, "linear", body.inputs[1], *params)))
        b0.register_output(lp.output())
    with g.inserting_at_end(b1):
        b1.register_output(op(g, "relu", x))
    g.register_output(br.output())
    g.verify()
    return m, toolkit.jit.ScriptModule(m, g)


def test_module_with_control_flow_round_trips():
    m, sm = _repeat_module()
    lm = _roundtrip(sm)
    assert str(lm.graph) == str(sm.graph) and lm.code == sm.code
    assert "self.lin.weight" in lm.code
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(lm.state_dict()[k].numpy(), v.numpy())
    x = toolkit.randn(2, 3)
    for n, c in ((0, True), (3, True), (3, False)):
        np.testing.assert_array_equal(sm(x, n, c).detach().numpy(), lm(x, n, c).detach().numpy())
    sm(x, 2, True).sum().backward()
    lm(x, 2, True).sum().backward()
    for p, q in zip(m.parameters(), lm.parameters()):
        assert q.grad is not None and q is not p
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)


def _with_code(data: bytes, entry: str, old: str, new: str) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            body = src.read(name)
            if name == entry:
                assert old.encode() in body
                body = body.replace(old.encode(), new.encode())
            dst.writestr(name, body)
    return out.getvalue()


@pytest.mark.parametrize("old,new,match", [
    ("    else:\n      _0, _1 = a, torch.add(b, a)\n", "",
     r"the if at line 7 has no else block, but prim::If has 2 output\(s\)"),
    ("      _0, _1 = a, torch.add(b, a)\n", "      pass\n", r"the else block of the if at line 7 does not assign the 2 output\(s\) of prim::If"),
    ("for j in range(3):", "for j in sorted(3):", r"expected 'for \.\.\. in range\(\.\.\.\):' for prim::Loop at line 6"),
    ("    a, b = _0, _1\n", "    a, b = _0, _1\n    import os\n", r"unexpected statement 'a, b = \(_0, _1\)' at line 11"),
])
def test_tampered_control_flow_code_is_refused(old, new, match):
    data = _bytes(_cf_function(two_carried_with_nested_if))
    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: archive/code/f\.py: " + match):
        load(io.BytesIO(_with_code(data, "archive/code/f.py", old, new)))


def test_tampered_blocks_in_the_manifest_are_refused():
    data = _bytes(_cf_function(loop_inside_if))

    def drop_else(man):
        n = next(n for n in man["model"]["graph"]["nodes"] if n["kind"] == "prim::If")
        n["blocks"].pop()

    with pytest.raises(RuntimeError, match=r"(?s)the saved graph does not verify: .*prim::If needs 2 blocks, has 1"):
        load(io.BytesIO(_with_manifest(data, drop_else)))

    def bad_block(man):
        n = next(n for n in man["model"]["graph"]["nodes"] if n["kind"] == "prim::If")
        n["blocks"][0] = 7

    with pytest.raises(RuntimeError, match=r"<BytesIO> is not a valid archive: malformed model description"):
        load(io.BytesIO(_with_manifest(data, bad_block)))


@pytest.mark.parametrize("make", [two_carried_with_nested_if, while_loop, breaking_loop])
def test_every_one_line_edit_loads_or_names_a_line(make):
    """Deleting, repeating, indenting or dedenting any line of the body gives a graph that verifies, or an
    error naming the archive entry and a line; never another exception."""
    data = _bytes(_cf_function(make))
    code = _cf_function(make).code
    lines = code.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.endswith(":\n")) + 1
    refused = 0
    for i in range(start, len(lines)):
        line = lines[i]
        for edit in ([], [line, line], ["  " + line], [line[2:]]):
            new = "".join(lines[:i] + edit + lines[i + 1:])
            try:
                lf = load(io.BytesIO(_with_code(data, "archive/code/f.py", code, new)))
            except RuntimeError as e:
                assert re.search(r"<BytesIO> is not a valid archive: archive/code/f\.py: .*line \d+", str(e)), str(e)
                refused += 1
            else:
                lf.graph.verify()
    assert refused > 3 * (len(lines) - start)


# -- modules held in globals ------------------------------------------------------------------------------
class _Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count += 1
        return x * self.count


_GLOBAL_BN = nn.BatchNorm1d(3)
_GLOBAL_COUNTER = _Counter()


def _uses_global_bn(x):
    return _GLOBAL_BN(x) * 2


def _uses_global_counter(x):
    return _GLOBAL_COUNTER(x)


def test_a_module_held_in_a_global_is_saved_as_constants_of_its_state_now():
    toolkit.manual_seed(0)
    _GLOBAL_BN.eval()
    _GLOBAL_BN.running_mean.copy_(toolkit.randn(3))
    s = toolkit.jit.script(_uses_global_bn)
    x = toolkit.randn(4, 3)
    loaded = _roundtrip(s)
    assert not any(n.kind == "prim::ModuleConstant" for n in loaded.graph.all_nodes())
    assert "CONSTANTS.c0" in loaded.code and "self" not in loaded.code
    assert_close(loaded(x), s(x))
    assert_close(loaded(x), torch.nn.functional.batch_norm(
        torch.tensor(x.numpy()), torch.tensor(_GLOBAL_BN.running_mean.numpy()),
        torch.tensor(_GLOBAL_BN.running_var.numpy()), torch.tensor(_GLOBAL_BN.weight.detach().numpy()),
        torch.tensor(_GLOBAL_BN.bias.detach().numpy())) * 2)
    _GLOBAL_BN.running_mean.add_(1)  # a snapshot: later changes to the module do not reach the archive
    assert not bool((loaded(x) == s(x)).all())
    assert "prim::ModuleConstant" in str(s.graph)  # the scripted function itself still reads the live module


def test_a_module_held_in_a_global_that_the_code_assigns_is_refused_at_save():
    s = toolkit.jit.script(_uses_global_counter)
    with pytest.raises(TypeError, match=r"cannot save the assignment of 'count' of the module _Counter held in a "
                                        r"global at .*test_serialization\.py:\d+: an archive saves such a module's "
                                        "state as constants"):
        toolkit.jit.save(s, io.BytesIO())


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(3, 3)

    def forward(self, x):
        return self.l(x) + 1

    def encode(self, x, y):
        return self.l(x) * 2 + y

    @toolkit.jit.export
    def scale(self, x, k: int = 3):
        return self.l(x) * k


def test_every_traced_method_is_saved_and_loaded():
    m = _Encoder()
    x, y = toolkit.randn(2, 3), toolkit.randn(2, 3)
    traced = toolkit.jit.trace_module(m, {"forward": x, "encode": (x, y)})
    loaded = _roundtrip(traced)
    x2, y2 = toolkit.randn(2, 3), toolkit.randn(2, 3)
    assert_close(loaded(x2), m(x2).detach())
    assert_close(loaded.encode(x2, y2), m.encode(x2, y2).detach())
    assert "def encode(self," in loaded.encode.code and "aten::mul" in str(loaded.encode.graph)
    with pytest.raises(RuntimeError, match="encode\\(\\) is missing value for argument 'y'"):
        loaded.encode(x2)
    # a module traced without forward keeps only what was traced, as PyTorch's
    only = _roundtrip(toolkit.jit.trace_module(m, {"encode": (x, y)}))
    assert_close(only.encode(x2, y2), m.encode(x2, y2).detach())
    with pytest.raises(AttributeError, match="no attribute 'forward'"):
        only(x2)
    # and a loaded module saves again with all of its methods
    again = _roundtrip(loaded)
    assert_close(again.encode(x2, y2), m.encode(x2, y2).detach())


def test_exported_scripted_methods_are_saved_with_their_defaults():
    m = _Encoder()
    loaded = _roundtrip(toolkit.jit.script(m))
    x = toolkit.randn(2, 3)
    assert_close(loaded.scale(x), m.scale(x).detach())
    assert_close(loaded.scale(x, 2), m.scale(x, 2).detach())
    assert "k: int=3" in loaded.scale.code


@pytest.mark.parametrize("name", ["__class__", "_parameters", "state_dict", "forward", "not an identifier"])
def test_a_saved_method_named_like_a_module_member_is_refused(name):
    data = _bytes(toolkit.jit.trace_module(_Encoder(), {"forward": toolkit.randn(2, 3),
                                                        "encode": (toolkit.randn(2, 3), toolkit.randn(2, 3))}))

    def rename(man):
        man["model"]["methods"][0]["name"] = name

    with pytest.raises(RuntimeError, match="not a valid archive.*bad method name"):
        load(io.BytesIO(_with_manifest(data, rename)))
