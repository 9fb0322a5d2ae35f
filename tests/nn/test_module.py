"""Module and Parameter against torch.nn: registration, traversal, state dicts, modes, hooks, copies."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close, to_torch
from toolkit import nn


def _classes(lib):
    """The same nested model in either library (shared module, buffers, a None parameter)."""
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 3)
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.register_parameter("unused", None)

        def forward(self, x):
            return self.fc(x) + self.running

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Flatten(), lib.nn.Linear(5, 2, bias=False))
            self.scale = lib.nn.Parameter(lib.ones(1))
            self.alias = self.block.fc

        def forward(self, x):
            return self.head(self.block(x)) * self.scale

    return Block, Net


Block, Net = _classes(toolkit)  # module level, so that pickle finds them
Block.__qualname__, Net.__qualname__ = "Block", "Net"
_TorchBlock, _TorchNet = _classes(torch)


def _build(lib):
    return Net() if lib is toolkit else _TorchNet()


def _copy_weights(src, dst) -> None:
    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(src.state_dict(keep_vars=True).items(), dst.state_dict(keep_vars=True).items()):
            assert n1 == n2
            p2.copy_(torch.from_numpy(p1.detach().numpy().copy()))


@pytest.fixture
def pair():
    a, b = _build(toolkit), _build(torch)
    _copy_weights(a, b)
    return a, b


# ------------------------------------------------------------------------------------------- Parameter
def test_parameter_basics():
    data = toolkit.arange(6.0).reshape(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, toolkit.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    tp = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))
    assert repr(p) == repr(tp).replace("torch.", "toolkit.")
    assert not nn.Parameter(toolkit.ones(2), requires_grad=False).requires_grad
    with toolkit.no_grad():
        assert nn.Parameter(toolkit.ones(2)).requires_grad
    p.data.mul_(2)  # shares storage with the data it came from
    assert data.tolist() == [[0, 2, 4], [6, 8, 10]]
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(toolkit.ones(2, dtype=toolkit.int64))


def test_parameter_ops_return_tensors_and_autograd():
    p = nn.Parameter(toolkit.tensor([1.0, -2.0, 3.0]))
    x = toolkit.tensor([0.5, 0.5, 2.0])
    outs = [p + x, 1 + p, p * p, toolkit.exp(p), toolkit.relu(p), p @ x, p.sum(), p[1:], p.view(3, 1)]
    assert all(type(o) is toolkit.Tensor and o.requires_grad for o in outs)
    (p * x + p.exp()).sum().backward()
    assert_close(p.grad, torch.tensor([0.5, 0.5, 2.0]) + torch.tensor([1.0, -2.0, 3.0]).exp())
    with toolkit.no_grad():
        p.add_(1).mul_(2)
    assert p.tolist() == [4.0, -2.0, 8.0] and type(p) is nn.Parameter and p.is_leaf


def test_parameter_data_assignment_deepcopy_pickle():
    p = nn.Parameter(toolkit.ones(2, 2))
    p.grad = toolkit.full((2, 2), 3.0)
    p.data = toolkit.zeros(3, dtype=toolkit.float64)
    assert p.dtype is toolkit.float64 and p.shape == (3,) and type(p) is nn.Parameter
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [0.0, 0.0, 0.0]
    q.data.add_(1)
    assert p.tolist() == [0.0, 0.0, 0.0]
    r = pickle.loads(pickle.dumps(nn.Parameter(toolkit.arange(3.0), requires_grad=False)))
    assert type(r) is nn.Parameter and not r.requires_grad and r.tolist() == [0.0, 1.0, 2.0]


def test_buffer_assignment():
    m = nn.Module()
    m.b = nn.Buffer(toolkit.ones(2))
    m.c = nn.Buffer(toolkit.ones(2), persistent=False)
    assert isinstance(m.b, nn.Buffer) and not isinstance(toolkit.ones(1), nn.Buffer)
    assert [n for n, _ in m.named_buffers()] == ["b", "c"]
    assert list(m.state_dict()) == ["b"]


# ------------------------------------------------------------------------------------------- registration
def test_traversal_order_matches_torch(pair):
    a, b = pair
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in b.named_parameters()]
    assert [n for n, _ in a.named_parameters(remove_duplicate=False)] == [
        n for n, _ in b.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in b.named_buffers()]
    assert [n for n, _ in a.named_children()] == [n for n, _ in b.named_children()]
    assert [n for n, _ in a.named_modules()] == [n for n, _ in b.named_modules()]
    assert [n for n, _ in a.named_modules(remove_duplicate=False)] == [
        n for n, _ in b.named_modules(remove_duplicate=False)]
    assert [n for n, _ in a.named_modules(prefix="m")] == [n for n, _ in b.named_modules(prefix="m")]
    assert [n for n, _ in a.block.named_parameters(prefix="x", recurse=False)] == ["x.unused"][:0]
    assert [n for n, _ in a.named_parameters(recurse=False)] == [n for n, _ in b.named_parameters(recurse=False)]
    assert len(list(a.parameters())) == len(list(b.parameters())) == 6
    assert len(list(a.modules())) == len(list(b.modules()))


def test_forward_matches_torch(pair):
    a, b = pair
    x = toolkit.randn(7, 4)
    assert_close(a(x), b(to_torch(x)), accum=4 + 3 + 5)  # three layers: their sums' errors add in variance


def test_setattr_rules_and_errors():
    m = nn.Module()
    m.w = nn.Parameter(toolkit.ones(1))
    assert "w" in m._parameters and "w" not in m.__dict__
    m.w = None
    assert m._parameters["w"] is None
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'w' \(toolkit.nn.Parameter"):
        m.w = toolkit.ones(1)
    m.sub = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'sub'"):
        m.sub = 3
    m.register_buffer("buf", toolkit.zeros(1))
    m.buf = toolkit.ones(2)  # assigning a tensor to a buffer name replaces the buffer
    assert m._buffers["buf"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'buf'"):
        m.buf = "x"
    m.plain = toolkit.ones(1)
    assert "plain" in m.__dict__
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_buffer("plain", toolkit.ones(1))
    with pytest.raises(KeyError, match=r'buffer name can.+t contain "\."'):
        m.register_buffer("a.b", None)
    with pytest.raises(KeyError, match="parameter name can.+t be empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' object to parameter 'q'"):
        m.register_parameter("q", toolkit.ones(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("z", 3)
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        _ = m.nope
    del m.sub, m.buf, m.w, m.plain
    assert not m._modules and not m._buffers and not m._parameters and "plain" not in m.__dict__

    class Early(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(toolkit.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_nonleaf_parameter_rejected():
    m = nn.Module()
    p = nn.Parameter(toolkit.ones(1))
    q = nn.Parameter(toolkit.ones(1))
    q.grad_fn = (p * 2).grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'q'"):
        m.register_parameter("q", q)


def test_get_submodule_parameter_and_dir(pair):
    a, _ = pair
    assert a.get_submodule("head.0") is a.head[0]
    assert a.get_parameter("block.fc.weight") is a.block.fc.weight
    assert a.get_buffer("block.running") is a.block.running
    with pytest.raises(AttributeError, match="Block has no attribute `nope`"):
        a.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        a.get_parameter("block.running")
    assert {"block", "head", "scale", "forward"} <= set(dir(a))


# ------------------------------------------------------------------------------------------- state dicts
def test_state_dict_matches_torch(pair):
    a, b = pair
    sa, sb = a.state_dict(), b.state_dict()
    assert isinstance(sa, OrderedDict) and list(sa) == list(sb)
    for k in sa:
        assert_close(sa[k], sb[k])
        assert not sa[k].requires_grad
    assert all(isinstance(v, nn.Parameter) for k, v in a.state_dict(keep_vars=True).items() if "running" not in k)
    assert list(a.state_dict(prefix="model.")) == list(b.state_dict(prefix="model."))


def test_load_state_dict_roundtrip_and_errors(pair):
    a, b = pair
    c = _build(toolkit)
    res = c.load_state_dict(a.state_dict())
    assert repr(res) == "<All keys matched successfully>" and res.missing_keys == [] and res.unexpected_keys == []
    for k, v in c.state_dict().items():
        assert np.array_equal(v.numpy(), a.state_dict()[k].numpy())
    sd = a.state_dict()
    tsd = b.state_dict()
    del sd["head.0.bias"], tsd["head.0.bias"]
    sd["extra.w"] = toolkit.ones(1)
    tsd["extra.w"] = torch.ones(1)
    with pytest.raises(RuntimeError) as e1:
        c.load_state_dict(sd)
    with pytest.raises(RuntimeError) as e2:
        _build(torch).load_state_dict(tsd)
    assert str(e1.value) == str(e2.value)
    assert str(e1.value).startswith('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: '
                                    '"head.0.bias". \n\tUnexpected key(s) in state_dict: "extra.w". ')
    r1 = c.load_state_dict(sd, strict=False)
    r2 = _build(torch).load_state_dict(tsd, strict=False)
    assert r1.missing_keys == r2.missing_keys and r1.unexpected_keys == r2.unexpected_keys
    assert repr(r1) == repr(r2)
    bad = a.state_dict()
    bad["head.0.weight"] = toolkit.zeros(2, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for head.0.weight: copying a param with shape "
                                           r"toolkit.Size\(\[2, 2\]\) from checkpoint, the shape in current model is "
                                           r"toolkit.Size\(\[5, 3\]\)."):
        c.load_state_dict(bad)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        c.load_state_dict([1])


def test_load_state_dict_assign_keeps_requires_grad():
    m = nn.Linear(2, 2)
    w = toolkit.full((2, 2), 7.0)
    m.load_state_dict({"weight": w, "bias": toolkit.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad and m.weight.tolist() == w.tolist()


# ------------------------------------------------------------------------------------------- modes and conversion
def test_train_eval_propagate(pair):
    a, b = pair
    assert a.training and all(m.training for m in a.modules())
    assert a.eval() is a
    b.eval()
    assert [m.training for m in a.modules()] == [m.training for m in b.modules()] == [False] * 7
    a.block.train()
    assert a.block.fc.training and not a.head.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        a.train(1)


def test_requires_grad_and_zero_grad(pair):
    a, _ = pair
    a(toolkit.randn(2, 4)).sum().backward()
    assert all(p.grad is not None for p in a.parameters())
    a.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in a.parameters())
    a.zero_grad()
    assert all(p.grad is None for p in a.parameters())
    a.requires_grad_(False)
    assert not any(p.requires_grad for p in a.parameters())


def test_bfloat16_is_refused_with_a_clear_error_and_changes_nothing():
    m = nn.Linear(3, 2)
    with pytest.raises(TypeError, match=r"Linear.bfloat16\(\): toolkit has no bfloat16 dtype"):
        m.bfloat16()
    assert m.weight.dtype is toolkit.float32


def test_to_dtype_in_place(pair):
    a, b = pair
    w = a.block.fc.weight
    a(toolkit.randn(2, 4)).sum().backward()
    a.double()
    b.double()
    assert a.block.fc.weight is w and w.dtype is toolkit.float64 and w.grad.dtype is toolkit.float64
    assert [str(v.dtype) for v in a.state_dict().values()] == [str(v.dtype).replace("torch", "toolkit") for v in b.state_dict().values()]
    assert all(v.dtype is toolkit.float64 for v in a.state_dict().values())
    x = toolkit.randn(3, 4, dtype=toolkit.float64)
    assert_close(a(x), b(to_torch(x)))
    a.to(toolkit.float32)
    assert w.dtype is toolkit.float32
    a.to(dtype=toolkit.float64, device="cpu")
    assert w.dtype is toolkit.float64
    a.float().cpu()
    assert w.dtype is toolkit.float32
    m = nn.Module()
    m.register_buffer("idx", toolkit.arange(3))
    m.double()
    assert m.idx.dtype is toolkit.int64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                        "dtype=toolkit.int32"):
        m.to(toolkit.int32)


def test_apply_visits_children_first(pair):
    a, b = pair
    seen, tseen = [], []
    a.apply(lambda m: seen.append(type(m).__name__))
    b.apply(lambda m: tseen.append(type(m).__name__))
    assert seen == tseen


def test_repr_matches_torch(pair):
    a, b = pair
    assert repr(a) == repr(b)

    class WithExtra(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    ours = WithExtra

    class WithExtra(torch.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(ours()) == repr(WithExtra())
    assert repr(nn.Module()) == "Module()"


def test_forward_not_implemented():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'):
        nn.Module()(1)


# ------------------------------------------------------------------------------------------- hooks
def test_forward_hooks_order_modify_remove(pair):
    a, _ = pair
    calls = []
    h1 = a.register_forward_pre_hook(lambda m, args: calls.append("pre1"))
    a.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h3 = a.register_forward_pre_hook(lambda m, args: calls.append("pre0"), prepend=True)
    h4 = a.register_forward_hook(lambda m, args, out: calls.append(("post", float(args[0].sum()))))
    h5 = a.register_forward_hook(lambda m, args, out: out + 100)
    x = toolkit.ones(2, 4)
    out = a(x)
    assert calls == ["pre0", "pre1", ("post", 0.0)]
    expected = a.forward(toolkit.zeros(2, 4)) + 100
    assert_close(out, expected)
    for h in (h1, h3, h4, h5):
        h.remove()
    calls.clear()
    out = a(x)
    assert calls == [] and out.shape == (2, 2)


def test_forward_hooks_with_kwargs_and_always_call():
    class M(nn.Module):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative")
            return x * scale

    m = M()
    seen = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": kwargs.get("scale", 1.0) * 2}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs["scale"]), with_kwargs=True)
    assert m(toolkit.ones(1), scale=3.0).item() == 6.0
    assert seen == [6.0]
    always = []
    with m.register_forward_hook(lambda mod, args, out: always.append(out), always_call=True):
        with pytest.raises(ValueError, match="negative"):
            m(toolkit.ones(1), scale=-1.0)
    assert always == [None]
    bad = nn.Identity()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(toolkit.ones(1))


def _hooked_pair():
    toolkit.manual_seed(3)
    a = nn.Sequential(nn.Linear(3, 4), nn.Tanh() if hasattr(nn, "Tanh") else nn.Identity(), nn.Linear(4, 2))
    b = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh() if hasattr(nn, "Tanh") else torch.nn.Identity(),
                            torch.nn.Linear(4, 2))
    _copy_weights(a, b)
    return a, b


def test_full_backward_hooks_match_torch():
    a, b = _hooked_pair()
    got, want = [], []

    def record(store):
        def hook(mod, grad_input, grad_output):
            store.append(("hook", type(mod).__name__, [None if g is None else g.detach().numpy().copy()
                                                       for g in grad_input + grad_output]))
        return hook

    def pre(store):
        def hook(mod, grad_output):
            store.append(("pre", type(mod).__name__))
            return (grad_output[0] * 2,)
        return hook

    for mods, store in ((a, got), (b, want)):
        mods[0].register_full_backward_hook(record(store))
        mods[2].register_full_backward_pre_hook(pre(store))
        mods[2].register_full_backward_hook(record(store))
    x = toolkit.randn(5, 3, requires_grad=True)
    tx = to_torch(x)
    a(x).pow(2).sum().backward()
    b(tx).pow(2).sum().backward()
    assert [s[:2] for s in got] == [s[:2] for s in want]
    n = 3 + 4 + 5  # each value sums along a chain of two layers' products and the batch of 5
    for g, w in zip(got, want):
        if g[0] == "hook":
            for ga, wa in zip(g[2], w[2]):
                assert (ga is None) == (wa is None)
                if ga is not None:
                    assert_close(ga, wa, accum=n)
    assert_close(x.grad, tx.grad, accum=n)
    for p, tp in zip(a.parameters(), b.parameters()):
        assert_close(p.grad, tp.grad, accum=n)


def test_full_backward_hook_replaces_grad_input_and_no_input_grad():
    a, b = _hooked_pair()
    for m in (a[0], b[0]):
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0 + 1,))
    x = toolkit.randn(2, 3, requires_grad=True)
    tx = to_torch(x)
    a(x).sum().backward()
    b(tx).sum().backward()
    assert_close(x.grad, tx.grad)
    seen, tseen = [], []
    a[2].register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
    b[2].register_full_backward_hook(lambda mod, gi, go: tseen.append((gi, go[0].shape)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect to "
                                         "module outputs since no inputs require gradients"):
        a[2](toolkit.randn(2, 4)).sum().backward()
    with pytest.warns(UserWarning):
        b[2](torch.randn(2, 4)).sum().backward()
    assert seen == [((None,), (2, 2))] and tseen == [((None,), torch.Size([2, 2]))]
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        a[2].register_backward_hook(lambda *args: None)


# ------------------------------------------------------------------------------------------- copies
def test_deepcopy_and_pickle_model(pair):
    a, b = pair
    a(toolkit.randn(2, 4)).sum().backward()
    c = copy.deepcopy(a)
    assert c.alias is c.block.fc and c.block.fc is not a.block.fc
    assert type(c.block.fc.weight) is nn.Parameter
    with toolkit.no_grad():
        c.block.fc.weight.add_(1)
    assert not np.array_equal(c.block.fc.weight.detach().numpy(), a.block.fc.weight.detach().numpy())
    d = pickle.loads(pickle.dumps(_build(toolkit)))
    x = toolkit.randn(3, 4)
    d.load_state_dict(a.state_dict())
    assert_close(d(x), a(x))
    assert [n for n, _ in d.named_parameters()] == [n for n, _ in a.named_parameters()]
    assert d.alias is d.block.fc and d.training
