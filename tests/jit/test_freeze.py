"""``toolkit.jit.freeze``: parameters and attributes become graph constants, compared with ``torch.jit.freeze``."""

import io

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _net(base):
    class Net(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = base.nn.Linear(3, 4)
            self.seq = base.nn.Sequential(base.nn.Linear(4, 4), base.nn.ReLU(), base.nn.Dropout(0.5))
            self.k = 2.0
            self.version = 3
            self.register_buffer("b", base.ones(4))

        def forward(self, x):
            return self.seq(self.l(x)) * self.k + self.b + self.version

        @base.jit.export
        def other(self, x):
            return x + self.b

    return Net


def _pair(factory):
    """The same model in toolkit and torch, with the same weights."""
    tk, th = factory(toolkit)(), factory(torch)()
    with torch.no_grad():
        for name, p in th.state_dict().items():
            rng = np.random.default_rng(sum(map(ord, name)))
            p.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, p.shape)).to(p.dtype))  # positive: running_var too
    tk.load_state_dict({k: toolkit.tensor(v.numpy()) for k, v in th.state_dict().items()})
    return tk, th


def _kinds(graph) -> list:
    return [n.kind() if callable(n.kind) else n.kind for n in graph.nodes()]


def _getattr_names(graph) -> set:
    names = set()
    for n in graph.nodes():
        if (n.kind() if callable(n.kind) else n.kind) == "prim::GetAttr":
            names.add(n.s("name") if hasattr(n, "s") else n["name"])
    return names


def test_freeze_inlines_weights_as_constants_and_matches_eager_and_torch():
    tk, th = _pair(_net)
    ftk = toolkit.jit.freeze(toolkit.jit.script(tk.eval()))
    fth = torch.jit.freeze(torch.jit.script(th.eval()))
    assert _getattr_names(ftk.graph) == _getattr_names(fth.graph) == set()
    consts = {v.debug_name for n in ftk.graph.nodes() if n.kind == "prim::Constant" for v in n.outputs}
    assert {"self.l.weight", "self.l.bias", "self.seq.0.weight", "self.b"} <= consts
    assert "aten::linear" in _kinds(ftk.graph)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    out = ftk(toolkit.tensor(x))
    assert not out.requires_grad  # the constants are detached, as PyTorch's are
    assert_close(out, fth(torch.from_numpy(x)))
    assert_close(out, tk(toolkit.tensor(x)).detach())
    ftk.graph.verify()


def test_frozen_module_drops_state_and_methods_like_torch():
    tk, th = _pair(_net)
    ftk = toolkit.jit.freeze(toolkit.jit.script(tk.eval()))
    fth = torch.jit.freeze(torch.jit.script(th.eval()))
    assert isinstance(ftk, toolkit.jit.ScriptModule)
    assert list(ftk.state_dict()) == list(fth.state_dict()) == []
    assert list(ftk.parameters()) == []
    for name in ("other", "version", "l"):
        assert hasattr(ftk, name) == hasattr(fth, name) is False


def test_not_a_script_module_is_an_error_as_in_torch():
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        torch.jit.freeze(_net(torch)().eval())
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        toolkit.jit.freeze(_net(toolkit)().eval())


def test_training_mode_is_an_error_as_in_torch():
    with pytest.raises(RuntimeError, match="eval mode"):
        torch.jit.freeze(torch.jit.script(_net(torch)()))
    with pytest.raises(RuntimeError, match="eval mode"):
        toolkit.jit.freeze(toolkit.jit.script(_net(toolkit)()))


def test_preserved_attrs_stay_attributes_and_preserved_methods_are_kept():
    tk, th = _pair(_net)
    mtk, mth = toolkit.jit.script(tk.eval()), torch.jit.script(th.eval())
    ftk = toolkit.jit.freeze(mtk, preserved_attrs=["version", "other", "b"])
    fth = torch.jit.freeze(mth, preserved_attrs=["version", "other", "b"])
    # toolkit's script mode reads an int attribute no method assigns as a compile-time constant, so only the
    # buffer is still read at run time; torch reads both
    assert _getattr_names(ftk.graph) == {"b"} and _getattr_names(fth.graph) == {"b", "version"}
    assert _getattr_names(ftk.other.graph) == _getattr_names(fth.other.graph) == {"b"}
    assert list(ftk.state_dict()) == list(fth.state_dict()) == ["b"]
    assert ftk.version == fth.version == 3
    x = np.ones((2, 3), np.float32)
    with toolkit.no_grad():
        ftk.b.fill_(5.0)
    with torch.no_grad():
        fth.b.fill_(5.0)
    assert_close(ftk(toolkit.tensor(x)), fth(torch.from_numpy(x)))
    assert mtk.b.tolist() != [5.0] * 4  # the frozen module holds a copy
    assert_close(ftk.other(toolkit.ones(4)), fth.other(torch.ones(4)))


def test_unknown_preserved_attr_is_an_error_as_in_torch():
    with pytest.raises(RuntimeError, match="Unknown name: nope"):
        torch.jit.freeze(torch.jit.script(_net(torch)().eval()), preserved_attrs=["nope"])
    with pytest.raises(RuntimeError, match="Unknown name: nope"):
        toolkit.jit.freeze(toolkit.jit.script(_net(toolkit)().eval()), preserved_attrs=["nope"])


def test_frozen_weights_are_a_copy():
    m = toolkit.jit.script(_net(toolkit)().eval())
    f = toolkit.jit.freeze(m)
    x = toolkit.ones(2, 3)
    before = f(x)
    with toolkit.no_grad():
        m.l.weight.add_(1.0)
    assert_close(f(x), before)
    assert not np.allclose(m(x).detach().numpy(), before.numpy())


def _weights_only(base):
    class Scaled(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = base.nn.Parameter(base.ones(3, 3))

        def forward(self, x):
            return x @ (self.w * 2.0 + 1.0).t()

    return Scaled


def test_computation_on_weights_alone_is_folded():
    tk, th = _pair(_weights_only)
    ftk = toolkit.jit.freeze(toolkit.jit.script(tk.eval()))
    fth = torch.jit.freeze(torch.jit.script(th.eval()))
    for kinds in (_kinds(ftk.graph), _kinds(fth.graph)):
        assert "aten::mul" not in kinds and "aten::add" not in kinds and "aten::t" not in kinds
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert_close(ftk(toolkit.tensor(x)), fth(torch.from_numpy(x)), accum=3)


def _counter(base):
    class Counter(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0
            self.w = base.nn.Parameter(base.ones(2))

        def forward(self, x):
            self.calls += 1
            return x * self.w + self.calls

    return Counter


def test_attributes_the_graph_writes_stay_module_state():
    results = []
    for base in (toolkit, torch):
        m = base.jit.script(_counter(base)().eval())
        f = base.jit.freeze(m)
        assert _getattr_names(f.graph) == {"calls"}
        outs = [f(base.zeros(2)).tolist() for _ in range(2)]
        results.append((outs, f.calls, m.calls))
    assert results[0] == results[1] == ([[1.0, 1.0], [2.0, 2.0]], 2, 0)


def test_freeze_traced_module():
    lin = toolkit.nn.Linear(2, 3).eval()
    x = toolkit.randn(4, 2)
    f = toolkit.jit.freeze(toolkit.jit.trace(lin, x))
    assert _getattr_names(f.graph) == set()
    assert_close(f(x), lin(x).detach())


def test_frozen_module_saves_and_loads():
    m = toolkit.jit.script(_net(toolkit)().eval())
    f = toolkit.jit.freeze(m)
    buf = io.BytesIO()
    toolkit.jit.save(f, buf)
    buf.seek(0)
    loaded = toolkit.jit.load(buf)
    x = toolkit.randn(2, 3)
    assert_close(loaded(x), f(x))
    assert _getattr_names(loaded.graph) == set()


def _conv_net(base):
    return lambda: base.nn.Sequential(base.nn.Conv2d(2, 3, 3), base.nn.BatchNorm2d(3), base.nn.ReLU(),
                                      base.nn.Dropout(0.3), base.nn.Flatten(), base.nn.Linear(12, 2))


def test_eval_branches_fold_away_and_conv_batchnorm_matches_torch():
    tk, th = _pair(_conv_net)
    ftk = toolkit.jit.freeze(toolkit.jit.script(tk.eval()))
    fth = torch.jit.freeze(torch.jit.script(th.eval()))
    kinds = _kinds(ftk.graph)
    assert "aten::add_" not in kinds  # num_batches_tracked is counted in training only
    assert not {"training", "weight", "bias"} & _getattr_names(ftk.graph)
    x = np.random.default_rng(2).standard_normal((2, 2, 4, 4)).astype(np.float32)
    assert_close(ftk(toolkit.tensor(x)), fth(torch.from_numpy(x)), accum=18)
    assert_close(ftk(toolkit.tensor(x)), tk(toolkit.tensor(x)).detach(), accum=18)


# -- optimize_frozen_module: dropout removal, batch norm and arithmetic folded into convolutions -------------------
def _names(graph) -> set:
    if isinstance(graph, toolkit.jit.Graph):
        return {v.debug_name for n in graph.nodes() for v in n.outputs}
    return {v.debugName() for n in graph.nodes() for v in n.outputs()}


def _frozen_pair(factory, **kwargs):
    tk, th = _pair(factory)
    return tk.eval(), toolkit.jit.freeze(toolkit.jit.script(tk.eval()), **kwargs), \
        torch.jit.freeze(torch.jit.script(th.eval()), **kwargs)


def _check_outputs(tk, ftk, fth, shape, accum: int, seed: int = 3):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    assert_close(ftk(toolkit.tensor(x)), fth(torch.from_numpy(x)), accum=accum)
    assert_close(ftk(toolkit.tensor(x)), tk(toolkit.tensor(x)).detach(), accum=accum)


def test_conv_batchnorm_and_dropout_fold_like_torch():
    tk, ftk, fth = _frozen_pair(_conv_net)
    for graph in (ftk.graph, fth.graph):
        kinds = _kinds(graph)
        assert "aten::batch_norm" not in kinds and "aten::dropout" not in kinds
        assert kinds.count("aten::conv2d") == 1 and "aten::relu" in kinds and "aten::linear" in kinds
        assert _getattr_names(graph) == set()
    assert {"self.0.weight_fused_bn", "self.0.bias_fused_bn"} <= _names(ftk.graph) & _names(fth.graph)
    _check_outputs(tk, ftk, fth, (2, 2, 4, 4), accum=18)
    ftk.graph.verify()


def test_optimize_numerics_false_keeps_batch_norm_like_torch():
    tk, ftk, fth = _frozen_pair(_conv_net, optimize_numerics=False)
    for graph in (ftk.graph, fth.graph):
        kinds = _kinds(graph)
        assert "aten::batch_norm" in kinds and "aten::dropout" not in kinds
        assert _getattr_names(graph) == set()  # in eval mode the running statistics are constants too
    assert {"self.1.running_mean", "self.1.running_var"} <= _names(ftk.graph) & _names(fth.graph)
    _check_outputs(tk, ftk, fth, (2, 2, 4, 4), accum=18)


def _conv1d_bn(base):
    return lambda: base.nn.Sequential(base.nn.Conv1d(2, 3, 3, bias=False), base.nn.BatchNorm1d(3))


def _linear_bn(base):
    return lambda: base.nn.Sequential(base.nn.Linear(3, 4), base.nn.BatchNorm1d(4), base.nn.Dropout(0.2))


@pytest.mark.parametrize("factory, shape, layer", [(_conv1d_bn, (2, 2, 6), "aten::conv1d"),
                                                    (_linear_bn, (5, 3), "aten::linear")])
def test_batchnorm_folds_into_conv1d_and_linear_like_torch(factory, shape, layer):
    tk, ftk, fth = _frozen_pair(factory)
    for graph in (ftk.graph, fth.graph):
        kinds = _kinds(graph)
        assert layer in kinds and "aten::batch_norm" not in kinds and "aten::dropout" not in kinds
    _check_outputs(tk, ftk, fth, shape, accum=6)


def _conv_read_twice(base):
    class ConvReadTwice(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = base.nn.Conv2d(2, 3, 3)
            self.bn = base.nn.BatchNorm2d(3)

        def forward(self, x):
            y = self.conv(x)
            return self.bn(y) + y

    return ConvReadTwice


def test_conv_whose_output_is_read_elsewhere_keeps_its_batch_norm_like_torch():
    tk, ftk, fth = _frozen_pair(_conv_read_twice)
    for graph in (ftk.graph, fth.graph):
        assert "aten::batch_norm" in _kinds(graph) and "aten::conv2d" in _kinds(graph)
    _check_outputs(tk, ftk, fth, (2, 2, 4, 4), accum=18)


def _alpha_dropouts(base):
    class AlphaDropouts(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = base.nn.Sequential(base.nn.Linear(3, 4), base.nn.AlphaDropout(0.3),
                                          base.nn.FeatureAlphaDropout(0.3))

        def forward(self, x):
            return base.nn.functional.dropout(self.seq(x), 0.5, self.training, True)

    return AlphaDropouts


def test_every_dropout_that_is_not_training_goes():
    tk, ftk, fth = _frozen_pair(_alpha_dropouts)
    assert not {"aten::alpha_dropout", "aten::feature_alpha_dropout", "aten::dropout_"} & set(_kinds(ftk.graph))
    assert "aten::dropout_" not in _kinds(fth.graph)  # PyTorch removes (feature_)dropout(_) and keeps alpha dropout
    _check_outputs(tk, ftk, fth, (2, 2, 3), accum=3)


def test_batchnorm_alone_keeps_constant_statistics_like_torch():
    tk, ftk, fth = _frozen_pair(lambda base: lambda: base.nn.Sequential(base.nn.ReLU(), base.nn.BatchNorm2d(3)))
    for graph in (ftk.graph, fth.graph):
        assert "aten::batch_norm" in _kinds(graph) and _getattr_names(graph) == set()
    _check_outputs(tk, ftk, fth, (2, 3, 2, 2), accum=2)


def test_seed_net_drops_both_dropouts_like_torch():
    from toolkit.demo import seed_net

    th = seed_net(torch).eval()
    tk = seed_net(toolkit).eval()
    tk.load_state_dict({k: toolkit.tensor(v.numpy()) for k, v in th.state_dict().items()})
    ftk, fth = toolkit.jit.freeze(toolkit.jit.script(tk)), torch.jit.freeze(torch.jit.script(th))
    for graph in (ftk.graph, fth.graph):
        kinds = _kinds(graph)
        assert "aten::dropout" not in kinds and "aten::feature_dropout" not in kinds
        assert kinds.count("aten::conv2d") == 2 and kinds.count("aten::linear") == 2
    _check_outputs(tk, ftk, fth, (2, 1, 28, 28), accum=250)


def _conv_arith(shape):
    def factory(base):
        class ConvArith(base.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = base.nn.Conv2d(2, 3, 3)
                self.register_buffer("shift", base.ones(shape))

            def forward(self, x):
                return (self.conv(x) + self.shift) * 2.0 / 4.0 - 1.0

        return ConvArith

    return factory


def test_constant_arithmetic_folds_into_conv_like_torch():
    tk, ftk, fth = _frozen_pair(_conv_arith((1, 3, 1, 1)))
    for graph in (ftk.graph, fth.graph):
        assert [k for k in _kinds(graph) if k != "prim::Constant"] == ["aten::conv2d"]
    _check_outputs(tk, ftk, fth, (2, 2, 5, 5), accum=18)


def test_arithmetic_that_would_broadcast_differently_stays_like_torch():
    tk, ftk, fth = _frozen_pair(_conv_arith((3, 1, 1)))  # lines up with the output's channels only by broadcasting
    for graph in (ftk.graph, fth.graph):
        assert "aten::add" in _kinds(graph)
    _check_outputs(tk, ftk, fth, (2, 2, 5, 5), accum=18)
    _, ftk, fth = _frozen_pair(_conv_arith((1, 3, 1, 1)), optimize_numerics=False)
    for graph in (ftk.graph, fth.graph):
        assert {"aten::add", "aten::mul", "aten::div", "aten::sub"} <= set(_kinds(graph))


def test_frozen_folded_module_saves_and_loads():
    tk, ftk, _ = _frozen_pair(_conv_net)
    buf = io.BytesIO()
    toolkit.jit.save(ftk, buf)
    buf.seek(0)
    loaded = toolkit.jit.load(buf)
    assert "aten::batch_norm" not in _kinds(loaded.graph) and "aten::dropout" not in _kinds(loaded.graph)
    x = toolkit.randn(2, 2, 4, 4)
    assert_close(loaded(x), ftk(x))
    assert_close(loaded(x), tk(x).detach(), accum=18)


# -- the eval-mode exception in the effects layer ---------------------------------------------------------------
def _batch_norm_node(fn):
    return next(n for n in fn.graph.nodes() if n.kind == "aten::batch_norm")


def test_batch_norm_writes_running_stats_unless_training_is_constant_false():
    from toolkit.jit.passes import has_side_effects, is_pure

    F = toolkit.nn.functional

    @toolkit.jit.script
    def train(x, rm, rv):
        return F.batch_norm(x, rm, rv, training=True)

    @toolkit.jit.script
    def infer(x, rm, rv):
        return F.batch_norm(x, rm, rv, training=False)

    @toolkit.jit.script
    def either(x, rm, rv, flag: bool):
        return F.batch_norm(x, rm, rv, training=flag)

    assert has_side_effects(_batch_norm_node(train)) and has_side_effects(_batch_norm_node(either))
    assert not has_side_effects(_batch_norm_node(infer)) and is_pure(_batch_norm_node(infer))
    x = toolkit.randn(4, 3)
    rm, rv = toolkit.zeros(3), toolkit.ones(3)
    for _ in range(3):
        infer(x, rm, rv)
    assert rm.tolist() == [0.0] * 3  # not training: read only
    for _ in range(3):
        train(x, rm, rv)  # the update happens exactly once per call, as eagerly
    erm, erv = toolkit.zeros(3), toolkit.ones(3)
    for _ in range(3):
        F.batch_norm(x, erm, erv, training=True)
    assert_close(rm, erm)
    assert_close(rv, erv)


# -- optimize_for_inference ------------------------------------------------------------------------------------
def test_optimize_for_inference_freezes_and_folds_like_torch():
    tk, th = _pair(_conv_net)
    otk = toolkit.jit.optimize_for_inference(toolkit.jit.script(tk.eval()))
    oth = torch.jit.optimize_for_inference(torch.jit.script(th.eval()))
    assert "aten::batch_norm" not in _kinds(otk.graph) and "aten::dropout" not in _kinds(otk.graph)
    assert "aten::batch_norm" not in _kinds(oth.graph)
    x = np.random.default_rng(4).standard_normal((2, 2, 4, 4)).astype(np.float32)
    assert_close(otk(toolkit.tensor(x)), oth(torch.from_numpy(x)), accum=18)
    assert toolkit.jit.optimize_for_inference(otk) is otk  # already frozen


def test_optimize_for_inference_keeps_other_methods():
    tk, th = _pair(_net)
    otk = toolkit.jit.optimize_for_inference(toolkit.jit.script(tk.eval()), other_methods=["other"])
    oth = torch.jit.optimize_for_inference(torch.jit.script(th.eval()), other_methods=["other"])
    assert_close(otk.other(toolkit.ones(4)), oth.other(torch.ones(4)))


def test_optimize_for_inference_needs_a_script_module_as_in_torch():
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        torch.jit.optimize_for_inference(_net(torch)().eval())
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        toolkit.jit.optimize_for_inference(_net(toolkit)().eval())
