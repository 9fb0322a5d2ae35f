"""ONNX import: an ONNX model becomes a toolkit IR graph of registry ops, run by the JIT like a loaded archive.

``import_onnx(model_or_path)`` reads a ``ModelProto`` (or a path, bytes or binary file), builds a ``Graph``
whose ``aten::`` nodes carry their registry ``OpDef`` (as traced graphs do), and returns a ScriptModule
that runs it with the JIT's interpreter and executor. Float initializers become the module's parameters,
named as the exporter named them (``conv1.weight`` is ``imported.conv1.weight``, so ``load_state_dict`` of
the original model fits); other initializers and ``Constant`` nodes are constants folded at import time::

    m = toolkit.onnx.import_onnx("net.onnx")
    y = m(x)               # runs the graph; autograd records as for any module
    print(m.graph)         # aten::convolution, aten::max_pool2d, ...

Every ONNX op type the importer knows is one entry of ``ONNX_OPS`` below, which builds registered ops
through ``registry.get``; a model using other op types is refused before anything is built, with an
error naming them all. Shape arithmetic (``Shape -> Gather -> Concat -> Reshape``, as dynamic axes export
it) is followed at import time: static sizes fold to ints, dynamic ones become ``aten::size(x, d)``.
The values and the graph being built are ``_import_graph.py``'s; this module is the table and the entry point.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from .. import factories
from ..jit.ir import types as T
from ..jit.serialization.loaded_modules import LoadedScriptModule
from ._import_graph import OnnxImportError, _Importer, _Ints, _Node
from ._types import toolkit_dtype

_INT64_MAX = 2**62  # ONNX writes "to the end" of a Slice as INT64_MAX (or close to it)


# -- the table: ONNX op type -> a builder of registered ops ---------------------------------------------------

def _unary(name: str) -> Callable:
    return lambda im, n: im.aten(name, im.tensor(n.input(0), n.op_type))


def _binary(name: str, scalar: Callable | None = None) -> Callable:
    def build(im: _Importer, n: _Node):
        a, b = (im.get(x) for x in n.inputs[:2])
        if scalar is not None and (isinstance(a, _Ints) or isinstance(b, _Ints)):
            return _ints_binary(im, n, scalar)
        return im.aten(name, im.tensor(n.inputs[0], n.op_type), im.tensor(n.inputs[1], n.op_type))

    return build


_SCALAR_KINDS = {"add": "aten::add.int", "sub": "aten::sub.int", "mul": "aten::mul.int", "div": "aten::floordiv.int"}


def _ints_binary(im: _Importer, n: _Node, name: str) -> _Ints:
    """Size arithmetic (``batch * 4``): Python ints fold, run-time sizes use the scripted ``int`` builtins."""
    a, b = im.ints(n.inputs[0]), im.ints(n.inputs[1])
    la, lb = a.items, b.items
    if len(la) != len(lb):
        la, lb = (la * len(lb), lb) if len(la) == 1 else (la, lb * len(la))
    fold = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__, "div": lambda x, y: int(x / y)}[name]
    out = []
    for x, y in zip(la, lb):
        if isinstance(x, int) and isinstance(y, int):
            out.append(fold(x, y))
        else:
            node = im.graph.insert(_SCALAR_KINDS[name], [im._argument(x), im._argument(y)])
            node.output().type = T.INT
            out.append(node.output())
    return _Ints(out, a.scalar and b.scalar)


def _div(im: _Importer, n: _Node):
    if any(isinstance(im.get(x), _Ints) for x in n.inputs[:2]):
        return _ints_binary(im, n, "div")
    a, b = im.tensor(n.inputs[0], "Div"), im.tensor(n.inputs[1], "Div")
    integral = a.type.dtype is not None and not a.type.dtype.is_floating_point
    return im.aten("div", a, b, rounding_mode="trunc" if integral else None)


def _gemm(im: _Importer, n: _Node):
    a, b, c = (im.tensor(n.input(i), "Gemm") for i in range(3))
    alpha, beta = n.attr("alpha", 1.0), n.attr("beta", 1.0)
    ta, tb = n.attr("transA", 0), n.attr("transB", 0)
    if not ta and tb and alpha == 1.0 and beta == 1.0:
        return im.aten("linear", a, b, c)
    a = im.aten("t", a) if ta else a
    b = im.aten("t", b) if tb else b
    if c is None:
        y = im.aten("mm", a, b)
        return y if alpha == 1.0 else im.aten("mul", y, im._argument(factories.tensor(np.float32(alpha))))
    return im.aten("addmm", c, a, b, beta=beta, alpha=alpha)


def _symmetric_pads(n: _Node, k: int) -> list:
    if n.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise OnnxImportError(f"auto_pad={n.attr('auto_pad')} is not supported (pads must be explicit)")
    pads = n.attr("pads", [0] * (2 * k))
    if list(pads[:k]) != list(pads[k:]):
        raise OnnxImportError(f"asymmetric pads {pads} are not supported")
    return list(pads[:k])


def _conv(im: _Importer, n: _Node):
    x, w, b = (im.tensor(n.input(i), "Conv") for i in range(3))
    k = len(n.attr("kernel_shape", ())) or im.rank(n.inputs[1]) - 2
    return im.aten("convolution", x, w, b, n.attr("strides", [1] * k), _symmetric_pads(n, k),
                   n.attr("dilations", [1] * k), False, [0] * k, n.attr("group", 1))


def _max_pool(im: _Importer, n: _Node):
    ks = list(n.attr("kernel_shape"))
    k = len(ks)
    return im.aten(f"max_pool{k}d", im.tensor(n.inputs[0], "MaxPool"), ks, n.attr("strides", [1] * k),
                   _symmetric_pads(n, k), n.attr("dilations", [1] * k), bool(n.attr("ceil_mode", 0)))


def _avg_pool(im: _Importer, n: _Node):
    ks = list(n.attr("kernel_shape"))
    k = len(ks)
    return im.aten(f"avg_pool{k}d", im.tensor(n.inputs[0], "AveragePool"), ks, n.attr("strides", [1] * k),
                   _symmetric_pads(n, k), bool(n.attr("ceil_mode", 0)), bool(n.attr("count_include_pad", 0)))


def _global_avg_pool(im: _Importer, n: _Node):
    return im.aten("mean", im.tensor(n.inputs[0]), list(range(2, im.rank(n.inputs[0]))), True)


def _softmax(name: str) -> Callable:
    def build(im: _Importer, n: _Node):
        axis = n.attr("axis", -1 if im.opset >= 13 else 1)
        if im.opset < 13 and axis not in (-1, im.rank(n.inputs[0]) - 1):
            raise OnnxImportError(f"axis={axis} before opset 13 (a softmax over flattened trailing dims)")
        return im.aten(name, im.tensor(n.inputs[0], n.op_type), axis)

    return build


def _reshape(im: _Importer, n: _Node):
    x = im.tensor(n.inputs[0], "Reshape")
    shape = im.ints(n.inputs[1])
    if not n.attr("allowzero", 0):  # a 0 copies the input's size there
        shape = _Ints([im.size(x, i) if s == 0 else s for i, s in enumerate(shape.items)])
    return im.aten("reshape", x, im.int_list(shape))


def _flatten(im: _Importer, n: _Node):
    x, axis = im.tensor(n.inputs[0], "Flatten"), n.attr("axis", 1)
    if axis == 0:
        return im.aten("reshape", x, [1, -1])
    y = im.aten("flatten.using_ints", x, axis, -1)
    return im.aten("flatten.using_ints", y, 0, axis - 1) if axis > 1 else y


def _transpose(im: _Importer, n: _Node):
    perm = n.attr("perm") or list(reversed(range(im.rank(n.inputs[0]))))
    return im.aten("permute", im.tensor(n.inputs[0], "Transpose"), list(perm))


def _concat(im: _Importer, n: _Node):
    if any(isinstance(im.get(x), _Ints) for x in n.inputs):
        return _Ints([i for x in n.inputs for i in im.ints(x).items])
    return im.aten("cat", [im.tensor(x, "Concat") for x in n.inputs], n.attr("axis"))


def _split(im: _Importer, n: _Node):
    x, axis = im.tensor(n.inputs[0], "Split"), n.attr("axis", 0)
    sizes = n.attr("split") or (list(im.ints(n.input(1)).items) if n.input(1) else None)
    if sizes is None:
        return im.unpack(im.aten("chunk", x, len(n.outputs), axis), len(n.outputs))
    return im.unpack(im.aten("split_with_sizes", x, [int(s) for s in sizes], axis), len(sizes))


def _slice(im: _Importer, n: _Node):
    if im.opset < 10:
        starts, ends, axes, steps = n.attr("starts"), n.attr("ends"), n.attr("axes"), None
    else:
        starts, ends = (list(im.ints(n.inputs[i]).items) for i in (1, 2))
        axes, steps = im.axes(n, 3), (list(im.ints(n.input(4)).items) if n.input(4) else None)
    axes = axes or list(range(len(starts)))
    steps = steps or [1] * len(starts)
    if any(not isinstance(s, int) or s < 1 for s in steps):
        raise OnnxImportError(f"steps {steps} are not supported (only positive constant steps)")
    v = im.get(n.inputs[0])
    if isinstance(v, _Ints):
        (s,), (e,), (st,) = starts, ends, steps
        return _Ints(v.items[s:e:st])
    x = im.tensor(n.inputs[0], "Slice")
    for a, s, e, st in zip(axes, starts, ends, steps):
        x = im.aten("slice", x, a, s, None if isinstance(e, int) and e >= _INT64_MAX else e, st)
    return x


def _unsqueeze(im: _Importer, n: _Node):
    axes = im.axes(n, 1)
    v = im.get(n.inputs[0])
    if isinstance(v, _Ints) and v.scalar and axes in ([0], [-1]):
        return _Ints(v.items)
    x = im.tensor(n.inputs[0], "Unsqueeze")
    out_rank = im.rank(n.inputs[0]) + len(axes) if any(a < 0 for a in axes) else 0
    for a in sorted(a + out_rank if a < 0 else a for a in axes):
        x = im.aten("unsqueeze", x, a)
    return x


def _squeeze(im: _Importer, n: _Node):
    axes = im.axes(n, 1)
    v = im.get(n.inputs[0])
    if isinstance(v, _Ints) and len(v.items) == 1:
        return _Ints(v.items, scalar=True)
    return im.aten("squeeze", im.tensor(n.inputs[0], "Squeeze"), axes)


def _gather(im: _Importer, n: _Node):
    axis, data, idx = n.attr("axis", 0), im.get(n.inputs[0]), im.const(n.inputs[1])
    if isinstance(data, _Ints):
        if idx is None:
            raise OnnxImportError("a shape indexed by run-time indices")
        items = [data.items[int(i)] for i in np.ravel(idx)]
        return _Ints(items, scalar=idx.ndim == 0)
    x = im.tensor(n.inputs[0], "Gather")
    if idx is not None and idx.ndim == 0:
        return im.aten("select", x, axis, int(idx))
    index = im.tensor(n.inputs[1], "Gather")
    if idx is not None and idx.ndim == 1 or im.rank(n.inputs[1]) == 1:
        return im.aten("index_select", x, axis, index)
    if axis == 0 and im.rank(n.inputs[0]) == 2:
        return im.aten("embedding", x, index)
    raise OnnxImportError("Gather with indices of rank > 1 is supported on axis 0 of a matrix only")


def _shape(im: _Importer, n: _Node):
    x, shape = im.tensor(n.inputs[0], "Shape"), im.shape(n.inputs[0])
    if shape is None:
        raise OnnxImportError("the rank of the input is not known")
    dims = [s if s is not None else im.size(x, i) for i, s in enumerate(shape)]
    return _Ints(dims[n.attr("start", 0):n.attr("end", None)])


def _cast(im: _Importer, n: _Node):
    dt = toolkit_dtype(n.attr("to"))
    v = im.get(n.inputs[0])
    if isinstance(v, _Ints) and not dt.is_floating_point:
        return v
    return im.aten("_to_copy", im.tensor(n.inputs[0], "Cast"), dtype=dt)


def _constant_of_shape(im: _Importer, n: _Node):
    value = n.attr("value")
    arr = im.onnx.numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
    return im.aten("full", im.int_list(im.ints(n.inputs[0])), arr.ravel()[0].item(),
                   dtype=toolkit_dtype(im.onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)))


def _expand(im: _Importer, n: _Node):
    return im.aten("expand", im.tensor(n.inputs[0], "Expand"), im.int_list(im.ints(n.inputs[1])))


def _reduce(name: str) -> Callable:
    def build(im: _Importer, n: _Node):
        axes = im.axes(n, 1)
        keep = bool(n.attr("keepdims", 1))
        if not axes:
            if n.attr("noop_with_empty_axes", 0):
                return im.tensor(n.inputs[0])
            axes = list(range(im.rank(n.inputs[0])))
        return im.aten(name, im.tensor(n.inputs[0], n.op_type), axes, keep)

    return build


def _clip(im: _Importer, n: _Node):
    x = im.tensor(n.inputs[0], "Clip")
    if im.opset < 11:
        return im.aten("clamp", x, n.attr("min"), n.attr("max"))
    lo, hi = (im.const(n.input(i)) for i in (1, 2))
    if (lo is not None or not n.input(1)) and (hi is not None or not n.input(2)):
        return im.aten("clamp", x, None if lo is None else lo.item(), None if hi is None else hi.item())
    return im.aten("clamp.Tensor", x, im.tensor(n.input(1)), im.tensor(n.input(2)))


def _batch_norm(im: _Importer, n: _Node):
    x, scale, bias, mean, var = (im.tensor(n.inputs[i], "BatchNormalization") for i in range(5))
    return im.aten("batch_norm", x, mean, var, scale, bias, False, n.attr("momentum", 0.9), n.attr("epsilon", 1e-5))


def _pad(im: _Importer, n: _Node):
    mode = n.attr("mode", "constant")
    pads = n.attr("pads") if im.opset < 11 else list(im.ints(n.inputs[1]).items)
    value = n.attr("value", 0.0) if im.opset < 11 else (im.const(n.input(2)) if n.input(2) else None)
    k = len(pads) // 2
    torch_pads = [p for d in reversed(range(k)) for p in (pads[d], pads[d + k])]
    fill = 0.0 if value is None else float(np.asarray(value).ravel()[0])
    return im.aten("pad", im.tensor(n.inputs[0], "Pad"), torch_pads, mode, fill if mode == "constant" else None)


def _identity(im: _Importer, n: _Node):
    v = im.get(n.inputs[0])
    return v if isinstance(v, _Ints) else im.tensor(n.inputs[0])


def _sum(im: _Importer, n: _Node):
    out = im.tensor(n.inputs[0], "Sum")
    for x in n.inputs[1:]:
        out = im.aten("add", out, im.tensor(x, "Sum"))
    return out


ONNX_OPS: dict[str, Callable] = {
    "Abs": _unary("abs"), "Add": _binary("add", "add"), "And": _binary("logical_and"),
    "AveragePool": _avg_pool, "BatchNormalization": _batch_norm, "Cast": _cast, "Ceil": _unary("ceil"),
    "Clip": _clip, "Concat": _concat, "ConstantOfShape": _constant_of_shape, "Conv": _conv, "Cos": _unary("cos"),
    "Div": _div, "Dropout": _identity, "Elu": lambda im, n: im.aten("elu", im.tensor(n.inputs[0]), n.attr("alpha", 1.0)),
    "Equal": _binary("eq"), "Erf": _unary("erf"), "Exp": _unary("exp"), "Expand": _expand,
    "Flatten": _flatten, "Floor": _unary("floor"), "Gather": _gather, "Gemm": _gemm,
    "Gelu": lambda im, n: im.aten("gelu", im.tensor(n.inputs[0]), approximate=n.attr("approximate", "none")),
    "GlobalAveragePool": _global_avg_pool, "Greater": _binary("gt"), "GreaterOrEqual": _binary("ge"),
    "Identity": _identity,
    "LeakyRelu": lambda im, n: im.aten("leaky_relu", im.tensor(n.inputs[0]), n.attr("alpha", 0.01)),
    "Less": _binary("lt"), "LessOrEqual": _binary("le"), "Log": _unary("log"),
    "LogSoftmax": _softmax("log_softmax.int"), "MatMul": _binary("matmul"), "Max": _binary("maximum"),
    "MaxPool": _max_pool, "Min": _binary("minimum"), "Mul": _binary("mul", "mul"), "Neg": _unary("neg"),
    "Not": _unary("logical_not"), "Or": _binary("logical_or"), "Pad": _pad, "Pow": _binary("pow"),
    "Reciprocal": _unary("reciprocal"), "ReduceMax": _reduce("amax"), "ReduceMean": _reduce("mean"),
    "ReduceMin": _reduce("amin"), "ReduceSum": _reduce("sum"), "Relu": _unary("relu"), "Reshape": _reshape,
    "Shape": _shape, "Sigmoid": _unary("sigmoid"), "Sin": _unary("sin"), "Slice": _slice,
    "Softmax": _softmax("softmax.int"), "Softplus": _unary("softplus"), "Split": _split, "Sqrt": _unary("sqrt"),
    "Squeeze": _squeeze, "Sub": _binary("sub", "sub"), "Sum": _sum, "Tanh": _unary("tanh"),
    "Tile": lambda im, n: im.aten("tile", im.tensor(n.inputs[0]), im.int_list(im.ints(n.inputs[1]))),
    "Transpose": _transpose, "Unsqueeze": _unsqueeze,
    "Where": lambda im, n: im.aten("where.self", *(im.tensor(x, "Where") for x in n.inputs)),
}
"""Every ONNX op type the importer knows (``Constant`` folds at import), each building registered ops."""


def _load(model_or_path):
    import onnx  # optional dependency: only ONNX import reads models

    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    if isinstance(model_or_path, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model_or_path))
    if isinstance(model_or_path, (str, os.PathLike)) or hasattr(model_or_path, "read"):
        return onnx.load(model_or_path)
    raise TypeError(f"import_onnx expects a ModelProto, a path, bytes or a binary file, got "
                    f"{type(model_or_path).__name__}")


def import_onnx(model_or_path) -> LoadedScriptModule:
    """The ONNX model as a toolkit module that runs it with the JIT (see the module docstring).

    ``model_or_path``: an ``onnx.ModelProto``, a path, the serialized bytes or a binary file object.
    Raises ``OnnxImportError`` naming the op types toolkit cannot express.
    """
    return _Importer(_load(model_or_path), ONNX_OPS).build()


def show(model_or_path, ir=None):
    """Draw the ONNX model in a notebook beside the toolkit IR it came from (``ir``: a Graph, or a traced or
    scripted function or module): ``toolkit.notebook.onnx_view.OnnxView``, which displays itself."""
    from ..notebook.onnx_view import OnnxView  # optional: the notebook views, loaded on demand

    return OnnxView(_load(model_or_path), ir)
