"""Sizes read while tracing are graph values, as PyTorch's tracer records them: ``x.size(0)`` is ``aten::size``
made a 0-dim ``Long`` tensor (``prim::NumToTensor``), and an op taking it as an int reads it with ``aten::Int``,
so the trace runs at other shapes."""

import collections
import warnings

import pytest
import torch

import toolkit
from toolkit import nn
from toolkit.jit.frontend.trace import TracerWarning
from toolkit.tensor import Tensor

from ...conftest import assert_close
from ..call_helpers import copy_weights

SIZE_KINDS = ("aten::size", "aten::numel", "prim::NumToTensor", "aten::Int")


def _kinds(g) -> collections.Counter:
    """The graph's node kinds with their counts, constants left out (the two libraries pass defaults differently)."""
    kinds = [n.kind() if callable(n.kind) else n.kind for n in g.nodes()]
    return collections.Counter(k for k in kinds if k != "prim::Constant")


def _sizes_example(x):
    s = x.size(0)
    t = x.shape[1]
    return x.view(s, -1) * t


def _functions(lib):
    return {
        "example": _sizes_example,
        "view_size0": lambda x: x.view(x.size(0), -1),
        "reshape_shape0": lambda x: x.reshape(x.shape[0], 2, -1),
        "zeros_size0": lambda x: lib.zeros(x.size(0), 3),
        "view_numel": lambda x: x.view(x.numel()),
        "view_whole_size": lambda x: x.view(x.size()),
        "size_arithmetic": lambda x: x.view(x.size(0) * 2, -1) + x.size(0) // 2,
        "negative_dim": lambda x: x.reshape(-1, x.size(-1)),
        "sliced_size": lambda x: x.reshape(x.size()[:2] + (-1,)),
    }


@pytest.mark.parametrize("name", list(_functions(torch)))
def test_sizes_trace_as_torch_records_them_and_run_at_another_shape(name):
    x, other = toolkit.randn(4, 4, 5), toolkit.randn(6, 4, 5)
    fn, tfn = _functions(toolkit)[name], _functions(torch)[name]
    traced = toolkit.jit.trace(fn, x)
    ttraced = torch.jit.trace(tfn, torch.from_numpy(x.numpy()))
    assert _kinds(traced.graph) == _kinds(ttraced.graph)
    assert any(k in _kinds(traced.graph) for k in SIZE_KINDS)
    assert_close(traced(other), ttraced(torch.from_numpy(other.numpy())))
    assert_close(traced(other), fn(other))


def test_the_example_prints_as_torch_does():
    g = str(toolkit.jit.trace(_sizes_example, toolkit.randn(3, 4, 5)).graph)
    assert "%2 : int = aten::size(%x, %1)" in g
    assert "%s : Long(device=cpu) = prim::NumToTensor(%2)\n" in g  # no source line, as PyTorch's
    assert "= aten::Int(%s)\n" in g
    assert "aten::mul(%16, %t)" in g  # the size multiplies as a tensor


def test_sizes_read_while_tracing_are_long_tensors_and_dims_stay_ints():
    seen = {}

    def f(x):
        seen.update(size=x.size(), s=x.size(0), shape=x.shape, numel=x.numel(), dim=x.dim(), ndim=x.ndim)
        return x + 1

    toolkit.jit.trace(f, toolkit.randn(3, 4))
    assert isinstance(seen["size"], toolkit.Size) and isinstance(seen["shape"], toolkit.Size)
    for t in (*seen["size"], *seen["shape"], seen["s"], seen["numel"]):
        assert isinstance(t, Tensor) and t.dim() == 0 and t.dtype == toolkit.int64
    assert [int(t) for t in seen["size"]] == [3, 4] and int(seen["numel"]) == 12
    assert type(seen["dim"]) is int and type(seen["ndim"]) is int  # as in PyTorch: ranks are static in a trace


def test_sizes_are_plain_ints_outside_tracing_and_after_it():
    x = toolkit.randn(3, 4)
    toolkit.jit.trace(lambda y: y.view(y.size(0), -1), x)
    assert type(x.size(0)) is int and type(x.shape[1]) is int and type(x.numel()) is int
    assert type(x.size()) is toolkit.Size and list(x.size()) == [3, 4]
    assert Tensor.size is Tensor.__dict__["size"] and "TracedSize" not in repr(type(x.shape))


def test_tensor_methods_are_restored_when_the_traced_function_raises():
    plain = (Tensor.__dict__["size"], Tensor.__dict__["shape"], Tensor.__dict__["numel"])

    def f(x):
        x.size(0)
        raise ValueError("boom")

    with pytest.raises(ValueError):
        toolkit.jit.trace(f, toolkit.randn(2))
    assert (Tensor.__dict__["size"], Tensor.__dict__["shape"], Tensor.__dict__["numel"]) == plain


def test_size_used_as_an_int_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        toolkit.jit.trace(lambda x: toolkit.zeros(x.size(0), x.shape[1]) + x, toolkit.randn(2, 3))


def test_an_untraced_integer_tensor_is_still_a_constant():
    n = toolkit.tensor(3)
    traced = toolkit.jit.trace(lambda x: x.view(n, -1), toolkit.randn(3, 4))
    assert "aten::size" not in str(traced.graph) and "aten::Int" not in str(traced.graph)


def test_eager_ops_take_a_zero_dim_integer_tensor_where_an_int_is_expected():
    x, tx = toolkit.randn(3, 4, 5), torch.randn(3, 4, 5)
    n, tn = toolkit.tensor(60), torch.tensor(60)
    assert x.view(n).shape == tx.view(tn).shape  # the size overload, not view(dtype)
    assert x.reshape(toolkit.tensor(3), -1).shape == tx.reshape(torch.tensor(3), -1).shape
    assert toolkit.zeros(toolkit.tensor(2), 3).shape == torch.zeros(torch.tensor(2), 3).shape
    with pytest.raises(TypeError):
        x.view(toolkit.tensor(60.0))


def _attention(lib):
    class Attention(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = lib.nn.MultiheadAttention(8, 2)

        def forward(self, q):
            return self.attn(q, q, q)[0]

    return Attention


def _trace_both(m, tm, x):
    """``m`` and its torch twin ``tm`` traced at ``x`` (the size checks' warnings silenced, as both warn alike);
    both graphs record sizes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced, ttraced = toolkit.jit.trace(m, x), torch.jit.trace(tm, torch.from_numpy(x.numpy()))
    kinds, tkinds = _kinds(traced.inlined_graph), _kinds(ttraced.inlined_graph)
    assert all(kinds[k] > 0 and tkinds[k] > 0 for k in ("aten::size", "prim::NumToTensor", "aten::Int"))
    return traced, ttraced


@pytest.mark.parametrize("make", [
    lambda lib: _attention(lib)(),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16),
], ids=["MultiheadAttention", "TransformerEncoderLayer"])
def test_attention_traced_at_one_batch_runs_at_another(make):
    toolkit.manual_seed(0)
    m, tm = make(toolkit).eval(), make(torch).eval()
    copy_weights(m, tm)
    x, other = toolkit.randn(5, 3, 8), toolkit.randn(4, 2, 8)
    with toolkit.no_grad(), torch.no_grad():
        traced, ttraced = _trace_both(m, tm, x)
        out = traced(other)
        assert out.shape == (4, 2, 8)
        assert_close(out, m(other))
        assert_close(out, ttraced(torch.from_numpy(other.numpy())), rtol=1e-4, atol=1e-5)


def test_lstm_traced_at_batch_3_runs_at_batch_2():
    toolkit.manual_seed(0)
    m, tm = nn.LSTM(4, 6, 2), torch.nn.LSTM(4, 6, 2)
    copy_weights(m, tm)
    x, other = toolkit.randn(5, 3, 4), toolkit.randn(5, 2, 4)
    traced, ttraced = _trace_both(m, tm, x)
    out, (h, c) = traced(other)
    tout, (th, tc) = ttraced(torch.from_numpy(other.numpy()))
    assert out.shape == (5, 2, 6) and h.shape == (2, 2, 6)
    for a, b in ((out, tout), (h, th), (c, tc)):
        assert_close(a, b.detach(), rtol=1e-4, atol=1e-5)


def test_a_trace_that_reads_sizes_saves_loads_and_runs_at_another_shape(tmp_path):
    traced = toolkit.jit.trace(_sizes_example, toolkit.randn(3, 4, 5))
    toolkit.jit.save(traced, tmp_path / "sizes.pt")
    loaded = toolkit.jit.load(tmp_path / "sizes.pt")
    other = toolkit.randn(6, 4, 5)
    assert_close(loaded(other), _sizes_example(other))
    assert _kinds(loaded.graph) == _kinds(traced.graph)


@pytest.mark.parametrize("mode, kind", [("LSTM", "aten::lstm"), ("GRU", "aten::gru"), ("RNN", "aten::rnn_tanh")])
def test_traced_recurrent_modules_record_one_sequence_op_as_torch(mode, kind):
    """PyTorch's tracer records ``nn.LSTM`` as one ``aten::lstm`` (not a cell per time step), so the trace runs
    at any sequence length; toolkit's records the same op."""
    toolkit.manual_seed(0)
    m = getattr(toolkit.nn, mode)(4, 6, num_layers=2, batch_first=True)
    tm = getattr(torch.nn, mode)(4, 6, num_layers=2, batch_first=True)
    tm.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in m.state_dict().items()})
    traced = toolkit.jit.trace(m, (toolkit.randn(3, 5, 4),))
    torch_traced = torch.jit.trace(tm, (torch.randn(3, 5, 4),))
    assert kind in {n.kind() for n in torch_traced.graph.nodes()}
    kinds = [n.kind for n in traced.graph.nodes()]
    assert kinds.count(kind) == 1 and not any("cell" in k for k in kinds)
    x = toolkit.randn(2, 9, 4)
    got, want = traced(x), torch_traced(torch.from_numpy(x.numpy()))
    assert_close(got[0], want[0].detach(), accum=64)
