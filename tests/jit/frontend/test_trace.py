"""Tracing functions and modules at the dispatcher: graphs, outputs, gradients, warnings, check_trace."""

import inspect
import warnings

import numpy as np
import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.jit import TracerWarning, TracingCheckError
from toolkit.jit.serialization.code import graph_to_code

from ...conftest import assert_close


def _kinds(g):
    return [n.kind for n in g.nodes()]


def _line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(src) if text in s)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                      nn.MaxPool2d(2))
        self.head = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def _grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("make, shape", [(MLP, (5, 4)), (ConvNet, (2, 2, 6, 6))])
def test_traced_module_matches_eager_values_and_gradients(make, shape):
    toolkit.manual_seed(0)
    m = make().eval()
    x = toolkit.randn(*shape)
    tm = toolkit.jit.trace(m, x)
    tm.graph.verify()
    xe = x.clone().requires_grad_()
    xt = x.clone().requires_grad_()
    out_e = m(xe)
    out_e.pow(2).sum().backward()
    ge, gxe = _grads(m), xe.grad.numpy().copy()
    m.zero_grad()
    out_t = tm(xt)
    out_t.pow(2).sum().backward()
    np.testing.assert_allclose(out_t.detach().numpy(), out_e.detach().numpy(), rtol=1e-6, atol=1e-6)
    for a, b in zip(_grads(m), ge):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), gxe, rtol=1e-5, atol=1e-6)


def test_traced_module_shares_parameters_and_state():
    m = MLP()
    tm = toolkit.jit.trace(m, toolkit.randn(2, 4))
    assert isinstance(tm, toolkit.jit.ScriptModule) and isinstance(tm, nn.Module)
    assert tm.fc1.weight is m.fc1.weight
    assert [(n, id(p)) for n, p in tm.named_parameters()] == [(n, id(p)) for n, p in m.named_parameters()]
    assert list(tm.state_dict()) == list(m.state_dict())
    tm.eval()
    assert not tm.training and not m.training and not m.fc1.training
    tm.train()
    assert tm.training and m.training


def _train(model, params, x, y, steps=15):
    opt = toolkit.optim.SGD(params, lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_loop_through_traced_module_updates_original():
    toolkit.manual_seed(0)
    m, twin = MLP(), MLP()
    twin.load_state_dict(m.state_dict())
    x = toolkit.randn(16, 4)
    y = x[:, :3] * 0.5
    tm = toolkit.jit.trace(m, x)
    before = m.fc1.weight.detach().clone()
    losses = _train(tm, m.parameters(), x, y)
    eager = _train(twin, twin.parameters(), x, y)
    np.testing.assert_allclose(losses, eager, rtol=1e-5)
    assert losses[-1] < 0.7 * losses[0]
    assert not toolkit.equal(before, m.fc1.weight)
    np.testing.assert_allclose(tm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)


def test_module_graph_reads_parameters_with_getattr_and_keeps_scopes():
    m = ConvNet().eval()
    tm = toolkit.jit.trace(m, toolkit.randn(1, 2, 6, 6))
    text = tm.inlined_graph.to_string(source_locations=False)
    assert text.startswith("graph(%self : __torch__.")
    assert '%features : __torch__.toolkit.nn.modules.container.Sequential = prim::GetAttr[name="features"](%self)' \
        in text
    assert '= prim::GetAttr[name="0"](%features), scope: __module.features.0' in text
    conv = next(n for n in tm.inlined_graph.nodes() if n.kind == "aten::conv2d")
    assert conv.scope == "__module.features.0"
    assert conv.inputs[1].node.kind == "prim::GetAttr" and conv.inputs[1].debug_name == "weight"
    assert 'getattr(self.features, "0").weight' in graph_to_code(tm.inlined_graph)


def test_function_inputs_named_after_parameters_and_loops_unrolled():
    def power(x, n_unused):
        for _ in range(3):
            x = x * x
        return x

    a, b = toolkit.rand(4), toolkit.rand(4)
    t = toolkit.jit.trace(power, (a, b))
    assert [v.debug_name for v in t.graph.inputs] == ["x.1", "n_unused"]  # the last x is %x, as PyTorch names it
    assert _kinds(t.graph) == ["aten::mul"] * 3
    assert toolkit.allclose(t(b, a), power(b, a))


def test_tuple_inputs_and_container_outputs():
    def f(pair, z):
        a, b = pair
        return {"s": a + z, "p": b * z}

    args = ((toolkit.rand(2), toolkit.rand(2)), toolkit.rand(2))
    with pytest.raises(RuntimeError, match="Encountering a dict at the output of the tracer"):
        toolkit.jit.trace(f, args)
    t = toolkit.jit.trace(f, args, strict=False)
    t.graph.verify()
    assert _kinds(t.graph)[0] == "prim::TupleUnpack"
    out = t(*args)
    assert set(out) == {"s", "p"} and toolkit.equal(out["p"], args[0][1] * args[1])

    def g(x):
        return [x + 1, x * 2]

    with pytest.raises(RuntimeError, match="Encountering a list"):
        toolkit.jit.trace(g, toolkit.rand(2))
    out = toolkit.jit.trace(g, toolkit.rand(2), strict=False)(toolkit.ones(2))
    assert isinstance(out, list) and toolkit.equal(out[1], toolkit.full((2,), 2.0))


def test_inplace_and_captured_constants():
    w = toolkit.tensor([1.0, 2.0])

    def f(x):
        y = x.clone()
        y.add_(w)
        return y.relu_()

    t = toolkit.jit.trace(f, toolkit.randn(2))
    assert _kinds(t.graph) == ["prim::Constant", "aten::clone", "prim::Constant", "prim::Constant", "aten::add_", "aten::relu_"]
    x = toolkit.tensor([-3.0, 0.5])
    assert toolkit.equal(t(x), f(x)) and toolkit.equal(x, toolkit.tensor([-3.0, 0.5]))

    p = toolkit.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cannot insert a Tensor that requires grad as a constant"):
        toolkit.jit.trace(lambda x: x * p, toolkit.rand(2))


def _converts(x):
    s = x.sum()
    if s > 100:  # bool(s)
        return x
    n = int(x.max())
    f = float(x.min())
    return x * s.item() + n + f


def test_conversions_warn_at_user_line():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        toolkit.jit.trace(_converts, toolkit.rand(3), check_trace=False)
    ws = [w for w in rec if issubclass(w.category, TracerWarning)]
    assert [(w.filename, w.lineno) for w in ws] == [
        (__file__, _line_of(_converts, "if s > 100")),
        (__file__, _line_of(_converts, "n = int")),
        (__file__, _line_of(_converts, "f = float")),
        (__file__, _line_of(_converts, "s.item()")),
    ]
    assert "Python boolean" in str(ws[0].message) and "Python number" in str(ws[1].message)


def test_no_warning_for_untraced_tensors_or_plain_code():
    c = toolkit.tensor(3.0)

    def f(x):
        return x * float(c)

    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        toolkit.jit.trace(f, toolkit.rand(2))


def _overloads(x, t):
    z = x.clone().fill_(t)  # fill_.Scalar is tried before fill_.Tensor: no conversion happens
    return z + x ** t + x.new_zeros(t.long())


def test_conversion_by_overload_resolution_warns_only_when_a_number_is_taken():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t = toolkit.jit.trace(_overloads, (toolkit.rand(3), toolkit.tensor(3.0)), check_trace=False)
    ws = [w for w in rec if issubclass(w.category, TracerWarning)]
    assert ws == []  # new_zeros takes the traced t.long() as an int: recorded as aten::Int, as PyTorch does
    assert any(n.kind == "aten::Int" for n in t.graph.nodes())
    fill = next(n for n in t.graph.nodes() if n.kind == "aten::fill_")
    assert fill.inputs[1] is t.graph.inputs[1]


def test_random_op_warns_in_training_mode_only():
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.warns(TracerWarning, match="random op"):
        toolkit.jit.trace(m, toolkit.rand(4, 3), check_trace=False)
    m.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        toolkit.jit.trace(m, toolkit.rand(4, 3))


def _branchy(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def test_check_trace_reports_first_diverging_node():
    pos, neg = toolkit.ones(3), -toolkit.ones(3)
    with pytest.raises(TracingCheckError, match=r"(?s)Graphs differed.*aten::mul.*at .*test_trace.py:\d+.*aten::sub"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            toolkit.jit.trace(_branchy, pos, check_inputs=[(neg,)])


@pytest.mark.filterwarnings("ignore:Trace had a random op")
def test_check_trace_warns_on_nondeterministic_values():
    def noisy(x):
        return x + toolkit.rand_like(x)

    with pytest.warns(TracerWarning, match=r"(?s)does not match the Python function.*aten::rand_like"):
        toolkit.jit.trace(noisy, toolkit.zeros(3))


def test_batchnorm_buffers_in_training_mode():
    toolkit.manual_seed(0)
    m, twin = ConvNet(), ConvNet()
    twin.load_state_dict(m.state_dict())
    x = toolkit.randn(3, 2, 6, 6)
    tm = toolkit.jit.trace(m, x, check_trace=False)
    bn = next(n for n in tm.inlined_graph.nodes() if n.kind == "aten::batch_norm")
    assert [v.debug_name for v in bn.inputs[1:5]] == ["running_mean", "running_var", "weight.1", "bias.1"]
    twin(x)  # the trace ran forward once too
    y = toolkit.randn(3, 2, 6, 6)
    np.testing.assert_allclose(tm(y).detach().numpy(), twin(y).detach().numpy(), rtol=1e-5, atol=1e-6)
    for (k, a), b in zip(m.state_dict().items(), twin.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=k)


def test_every_traced_graph_verifies():
    for m, x in [(MLP(), toolkit.rand(2, 4)), (ConvNet().eval(), toolkit.rand(1, 2, 6, 6)),
                 (nn.Sequential(nn.Linear(3, 3), nn.ReLU()), toolkit.rand(1, 3))]:
        toolkit.jit.trace(m, x).graph.verify()


def test_trace_module_api_and_bound_forward():
    m = MLP()
    x = toolkit.randn(2, 4)
    tm = toolkit.jit.trace_module(m, {"forward": (x,)})
    assert tm.graph.inputs[0].debug_name == "self"
    assert toolkit.equal(tm(x), m(x))
    assert isinstance(toolkit.jit.trace(m.forward, x), toolkit.jit.ScriptModule)
    with pytest.raises(AttributeError, match="expected a dictionary"):
        toolkit.jit.trace_module(m, (x,))
    with pytest.raises(AttributeError, match="'MLP' object has no attribute 'other'"):
        toolkit.jit.trace_module(m, {"other": (x,)})


def _two_methods(lib):
    class TwoMethods(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = lib.nn.Linear(3, 3)

        def forward(self, x):
            return self.l(x) + 1

        def other(self, x, y):
            return self.l(x) * 2 + y

    return TwoMethods()


@pytest.mark.filterwarnings("ignore:`torch.jit.trace_method` is deprecated:DeprecationWarning")
def test_trace_module_traces_every_named_method_like_torch():
    tm = _two_methods(torch)
    km = _two_methods(toolkit)
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x, y = np.random.default_rng(0).standard_normal((2, 2, 3)).astype(np.float32)
    kx, ky = toolkit.tensor(x), toolkit.tensor(y)
    traced = toolkit.jit.trace_module(km, {"forward": kx, "other": (kx, ky)})
    twin = torch.jit.trace_module(tm, {"forward": torch.tensor(x), "other": (torch.tensor(x), torch.tensor(y))})
    x2, y2 = x + 1, y * 3  # other inputs than the examples: the graphs run, not the recorded values
    assert_close(traced(toolkit.tensor(x2)), twin(torch.tensor(x2)).detach())
    got = traced.other(toolkit.tensor(x2), toolkit.tensor(y2))
    assert_close(got, twin.other(torch.tensor(x2), torch.tensor(y2)).detach())
    got.sum().backward()  # the traced method trains the original's parameters
    assert km.l.weight.grad is not None and km.l.weight.grad.shape == (3, 3)
    assert "aten::mul" in str(traced.other.graph) and "aten::mul" not in str(traced.graph)
    assert traced.other.code.startswith("def other(self,")
    assert [v.debug_name for v in traced.other.graph.inputs] == ["self", "x", "y"]


def test_trace_module_without_forward_and_with_bad_entries():
    km = _two_methods(toolkit)
    x = toolkit.randn(2, 3)
    only = toolkit.jit.trace_module(km, {"other": (x, x)})
    assert_close(only.other(x, x), km.other(x, x).detach())
    with pytest.raises(AttributeError, match="no attribute 'forward'"):
        only(x)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'y'"):
        toolkit.jit.trace_module(km, {"other": (x,)})


class Branchy(nn.Module):
    def forward(self, x):
        return x + 1

    def other(self, x):
        return x * 2 if bool(x.sum() > 0) else x - 2


def test_trace_module_checks_each_method_on_its_check_inputs():
    m, pos, neg = Branchy(), toolkit.ones(3), -toolkit.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)  # the bool() of a tensor, on purpose
        toolkit.jit.trace_module(m, {"forward": pos, "other": pos}, check_inputs=[{"forward": neg, "other": pos}])
        with pytest.raises(TracingCheckError, match="Graphs differed"):
            toolkit.jit.trace_module(m, {"forward": pos, "other": pos}, check_inputs=[{"forward": pos, "other": neg}])


def test_bad_example_inputs():
    with pytest.raises(TypeError, match="example inputs must be tensors, tuples/lists of tensors or dicts of str"):
        toolkit.jit.trace(lambda d: d[1], ({1: toolkit.rand(2)},))
    with pytest.raises(TypeError, match="not int"):
        toolkit.jit.trace(lambda x, n: x * n, (toolkit.rand(2), 3))
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors, or dictionary of tensors"):
        toolkit.jit.trace(lambda x: 3, toolkit.rand(2))


def _dict_fn(d, z):
    return {"s": d["a"] + z, "p": d["b"] * z}


def test_dict_inputs_and_outputs_match_eager_with_gradients():
    a, b, z = toolkit.rand(3), toolkit.rand(3), toolkit.rand(3)
    with pytest.raises(RuntimeError, match="Encountering a dict at the output of the tracer"):
        toolkit.jit.trace(_dict_fn, ({"a": a, "b": b}, z))
    t = toolkit.jit.trace(_dict_fn, ({"a": a, "b": b}, z), strict=False)
    t.graph.verify()
    assert str(t.graph.inputs[0].type) == "Dict(str, Tensor)"
    assert _kinds(t.graph)[:4] == ["prim::Constant", "aten::__getitem__", "prim::Constant", "aten::__getitem__"]
    assert _kinds(t.graph)[-1] == "prim::DictConstruct"
    xa, xb = toolkit.randn(3, requires_grad=True), toolkit.randn(3, requires_grad=True)
    out = t({"a": xa, "b": xb}, z)
    ref = _dict_fn({"a": xa, "b": xb}, z)
    assert list(out) == ["s", "p"]
    for k in out:
        assert toolkit.equal(out[k], ref[k])
    (out["s"] * out["p"]).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), (xb * z).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(xb.grad.numpy(), ((xa + z) * z).detach().numpy(), rtol=1e-6)
    assert 'Dict[str, Tensor]' in t.code


def test_dict_input_with_tensor_output_is_strict_ok():
    t = toolkit.jit.trace(lambda d: d["x"].relu(), ({"x": toolkit.randn(4)},))
    x = toolkit.tensor([-1.0, 2.0])
    assert toolkit.equal(t({"x": x}), x.relu())
    with pytest.raises(KeyError):
        t({"y": x})


def _creates(x):
    c = toolkit.tensor([1.0, 2.0])
    d = toolkit.as_tensor([3.0, 4.0])
    e = toolkit.from_numpy(np.array([5.0, 6.0], dtype=np.float32))
    return x + c + d + e + toolkit.zeros(2)


def test_tensors_from_python_data_warn_at_user_line_and_become_constants():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        t = toolkit.jit.trace(_creates, toolkit.rand(2))
    ws = [w for w in rec if issubclass(w.category, TracerWarning)]
    assert [(w.filename, w.lineno) for w in ws] == [
        (__file__, _line_of(_creates, "toolkit.tensor(")),
        (__file__, _line_of(_creates, "toolkit.as_tensor(")),
        (__file__, _line_of(_creates, "toolkit.from_numpy(")),
    ]
    names = ["torch.tensor", "torch.as_tensor", "torch.from_numpy"]
    for w, name in zip(ws, names):
        assert str(w.message).startswith(f"{name} results are registered as constants in the trace.")
    consts = [n for n in t.graph.nodes() if n.kind == "prim::Constant" and isinstance(n.attributes.get("value"), toolkit.Tensor)]
    assert len(consts) == 3
    x = toolkit.tensor([10.0, 20.0])
    assert toolkit.equal(t(x), _creates(x))


def test_no_creation_warning_outside_a_trace_or_from_toolkit_internals():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        _creates(toolkit.rand(2))
        toolkit.jit.trace(nn.Linear(2, 2), toolkit.rand(1, 2))


_PKG_MODEL = '''\
import toolkit


def double_tanh(x):
    y = x * 2
    return y.tanh()


if __name__ == "__main__":
    traced = toolkit.jit.trace(double_tanh, (toolkit.ones(3),))
    print(traced.graph)
'''


@pytest.mark.parametrize("how", ["-m", "path"])
def test_nodes_name_the_users_line_under_python_m_and_in_a_package(tmp_path, how):
    """Run as ``python -m pkg.model`` (runpy's frames beneath it) or as a file path: the graph names the
    package module's own lines, never ``<frozen runpy>``."""
    import subprocess
    import sys

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(_PKG_MODEL)
    cmd = [sys.executable, "-m", "pkg.model"] if how == "-m" else [sys.executable, str(pkg / "model.py")]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "runpy" not in out.stdout
    text = out.stdout.replace(str(tmp_path) + "/", "")
    assert "= aten::mul(%x, %1) # pkg/model.py:5" in text and "= aten::tanh(%y) # pkg/model.py:6" in text
