"""Tracing and scripting code that makes and reads quantized tensors: the same results as eager, the same
``aten::`` nodes PyTorch records, and graph types that print quantized dtypes as PyTorch prints them
(``QUInt8(2, 3, strides=[3, 1], requires_grad=0, device=cpu)``)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import toolkit

from ..quantization import torch_twins  # noqa: F401  (silences PyTorch's deprecation warnings for quantized tensors)

_X = (np.arange(6, dtype=np.float32).reshape(2, 3) / 7).astype(np.float32)
_SCALES = np.array([0.1, 0.2, 0.3])
_ZERO_POINTS = np.array([0, 1, -1])


def per_tensor(lib, x):
    q = lib.quantize_per_tensor(x, 0.1, 3, lib.quint8)
    return q.dequantize() + 1, q.int_repr(), q


def per_channel(lib, x, s, z):
    q = lib.quantize_per_channel(x, s, z, 1, lib.qint8)
    return q.dequantize() * q.q_per_channel_scales()[0], q.int_repr()


def qparams(lib, x):
    q = lib.quantize_per_tensor(x, 0.5, 2, lib.quint8)
    return x * q.q_scale() + q.q_zero_point()


def qint32(lib, x):
    q = lib.quantize_per_tensor(x, 0.01, 0, lib.qint32)
    return q.int_repr(), q.dequantize()


# One function per case, written once for each library: scripting reads the library from the globals.
def tk_per_tensor(x):
    return per_tensor(toolkit, x)


def th_per_tensor(x):
    return per_tensor(torch, x)


def tk_per_channel(x, s, z):
    return per_channel(toolkit, x, s, z)


def th_per_channel(x, s, z):
    return per_channel(torch, x, s, z)


def tk_qparams(x):
    return qparams(toolkit, x)


def th_qparams(x):
    return qparams(torch, x)


def tk_qint32(x):
    return qint32(toolkit, x)


def th_qint32(x):
    return qint32(torch, x)


def script_per_tensor(x):
    q = toolkit.quantize_per_tensor(x, 0.1, 3, toolkit.quint8)
    return q.dequantize() + 1, q.int_repr(), q


def script_per_channel(x, s, z):
    q = toolkit.quantize_per_channel(x, s, z, 1, toolkit.qint8)
    return q.dequantize() * q.q_per_channel_scales()[0], q.int_repr()


def script_qparams(x):
    q = toolkit.quantize_per_tensor(x, 0.5, 2, toolkit.quint8)
    return x * q.q_scale() + q.q_zero_point()


CASES = {  # name: (toolkit function, torch function, script function, number of inputs)
    "per_tensor": (tk_per_tensor, th_per_tensor, script_per_tensor, 1),
    "per_channel": (tk_per_channel, th_per_channel, script_per_channel, 3),
    "qparams": (tk_qparams, th_qparams, script_qparams, 1),
    "qint32": (tk_qint32, th_qint32, None, 1),
}


def _inputs(lib, n: int) -> tuple:
    x = lib.tensor(_X)
    if n == 1:
        return (x,)
    return x, lib.tensor(_SCALES, dtype=lib.float64), lib.tensor(_ZERO_POINTS)


def _flat(out) -> list:
    return list(out) if isinstance(out, tuple) else [out]


def assert_same(a, b) -> None:
    """Equal results: quantized ones equal as quantized tensors (integers, dtype and parameters)."""
    for x, y in zip(_flat(a), _flat(b), strict=True):
        assert x.dtype == y.dtype
        if x.is_quantized:
            assert toolkit.equal(x, y)
        else:
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def _kind(n) -> str:
    return n.kind() if callable(n.kind) else n.kind


_NODE_LINE = re.compile(r"^\s*%[\w.]+ : (.+?) = ([\w:]+)[\[(]")


def op_nodes(graph) -> list[tuple[str, str]]:
    """``(kind, printed output type)`` of every one-output node of the printed graph but constants and tuple
    packing, in order."""
    out = []
    for line in str(graph).splitlines():
        m = _NODE_LINE.match(line)
        if m and m.group(2) not in ("prim::Constant", "prim::TupleConstruct"):
            out.append((m.group(2), m.group(1)))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_trace_replays_as_eager(name):
    ours, _, _, n = CASES[name]
    args = _inputs(toolkit, n)
    traced = toolkit.jit.trace(ours, args)
    assert_same(traced(*args), ours(*args))


@pytest.mark.parametrize("name", list(CASES))
def test_trace_records_torch_nodes_and_types(name):
    """The same op nodes in the same order as PyTorch's trace, with the same printed output types."""
    ours, theirs, _, n = CASES[name]
    mine = op_nodes(toolkit.jit.trace(ours, _inputs(toolkit, n)).graph)
    twin = op_nodes(torch.jit.trace(theirs, _inputs(torch, n)).graph)
    assert mine == twin


def test_graph_prints_quantized_tensor_types_as_torch():
    ours = str(toolkit.jit.trace(tk_per_tensor, _inputs(toolkit, 1)).graph)
    theirs = str(torch.jit.trace(th_per_tensor, _inputs(torch, 1)).graph)
    quint8 = "QUInt8(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
    assert f"%q : {quint8} = aten::quantize_per_tensor(%x, %1, %2, %3)" in theirs
    assert f"%q : {quint8} = aten::quantize_per_tensor(%x, %1, %2, %3)" in ours
    tuple_type = f"(Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), " \
                 f"Byte(2, 3, strides=[3, 1], requires_grad=0, device=cpu), {quint8})"
    assert tuple_type in theirs and tuple_type in ours


def test_graph_prints_qint8_and_qint32_types():
    g = toolkit.jit.trace(tk_per_channel, _inputs(toolkit, 3)).graph
    assert "QInt8(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::quantize_per_channel" in str(g)
    g = toolkit.jit.trace(tk_qint32, _inputs(toolkit, 1)).graph
    assert "QInt32(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::quantize_per_tensor" in str(g)
    assert "Int(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::int_repr" in str(g)


@pytest.mark.parametrize("name", [k for k, v in CASES.items() if v[2] is not None])
def test_script_runs_as_eager(name):
    ours, _, scripted_fn, n = CASES[name]
    args = _inputs(toolkit, n)
    scripted = toolkit.jit.script(scripted_fn)
    assert_same(scripted(*args), ours(*args))


def test_script_records_torch_nodes():
    """Scripting gives the nodes PyTorch's scripting gives, with ``q_scale`` a float and ``q_zero_point`` an int."""
    def theirs(x):
        q = torch.quantize_per_tensor(x, 0.5, 2, torch.quint8)
        return x * q.q_scale() + q.q_zero_point()

    mine = [k for k in op_nodes(toolkit.jit.script(script_qparams).graph)]
    twin = [k for k in op_nodes(torch.jit.script(theirs).graph)]
    assert mine == twin
    assert ("aten::q_scale", "float") in mine and ("aten::q_zero_point", "int") in mine


def test_script_takes_a_quantized_dtype_as_a_constant():
    g = toolkit.jit.script(script_per_tensor).graph
    (const,) = [n for n in g.nodes() if _kind(n) == "prim::Constant" and n.attributes.get("value") is toolkit.quint8]
    assert str(const.outputs[0].type) == "ScalarType"


def test_trace_of_a_quantized_input():
    """A quantized tensor passed in: the graph input prints its quantized type, the replay reads new inputs."""
    def f(q):
        return q.dequantize() * 2, q.int_repr()

    x = toolkit.tensor(_X)
    q = toolkit.quantize_per_tensor(x, 0.1, 3, toolkit.quint8)
    traced = toolkit.jit.trace(f, (q,))
    assert "%q : QUInt8(2, 3, strides=[3, 1], requires_grad=0, device=cpu)" in str(traced.graph)
    other = toolkit.quantize_per_tensor(x * 2, 0.05, 1, toolkit.quint8)
    assert_same(traced(other), f(other))
