"""``export``: a module, traced module, scripted module or scripted function to an ONNX model file.

As ``torch.onnx.export`` with ``dynamo=False`` (the TorchScript-based exporter): a plain module is traced on
``args`` (in eval mode for ``TrainingMode.EVAL``), a scripted one is exported from its graph with control
flow kept. Calls are inlined, each node is lowered by its op's ``onnx_lowering`` (``@op.symbolic`` beside the
op) or its prim kind's (``_prim.py``), parameters and buffers become initializers, and the model passes
``onnx.checker.check_model(full_check=True)`` before it is written, atomically.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import io
import os
from collections.abc import Mapping, Sequence
from importlib import metadata

from .._core.files import open_mode, write_atomic
from ..jit.ir import types as T
from ..jit.ir.propagate import propagate_types
from ..jit.passes.manager import run_passes
from ..jit.script_module import ScriptFunction, ScriptModule
from ..nn.modules.module import Module
from ..tensor import Tensor
from . import (
    _control_flow,  # noqa: F401  (attaches prim::If's and prim::Loop's)
    _optimize,
    _prim,  # noqa: F401  (attaches the prim kinds' lowerings)
)
from ._builder import GraphBuilder, Value, _ModelState, _Module
from .errors import OnnxExporterError

DEFAULT_OPSET = 17
MIN_OPSET, MAX_OPSET = 13, 21  # the lowerings are written for opset 13 and later (Split/Squeeze take inputs)


class TrainingMode(enum.IntEnum):
    """The mode the model is exported in, as ``torch.onnx.TrainingMode``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """How ops are written, as ``torch.onnx.OperatorExportTypes``; only ``ONNX`` (standard ops) is written."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


_EXPORTING = False


def is_in_onnx_export() -> bool:
    """Whether an ``export`` is running (models may take an ONNX-friendly path while traced for it)."""
    return _EXPORTING


@contextlib.contextmanager
def _exporting():
    global _EXPORTING
    saved, _EXPORTING = _EXPORTING, True
    try:
        yield
    finally:
        _EXPORTING = saved


@contextlib.contextmanager
def _mode(model, training: TrainingMode):
    """Put a plain module in the mode ``training`` asks for while it is traced; restore it after."""
    if not isinstance(model, Module) or training == TrainingMode.PRESERVE:
        yield
        return
    was = model.training
    model.train(training == TrainingMode.TRAINING)
    try:
        yield
    finally:
        model.train(was)


def _split_args(args, kwargs) -> tuple[tuple, dict]:
    """``args`` as torch takes them: a tensor, a tuple, or a tuple ending in a dict of keyword arguments."""
    if isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _graph_of(model, args: tuple, kwargs: dict, training: TrainingMode):
    """(graph with calls inlined, module or None, whether the graph was scripted, input values to bind)."""
    scripted = False
    if isinstance(model, ScriptModule):
        module, graph = model, model.graph
        scripted = not _is_traced(graph)
    elif isinstance(model, ScriptFunction) or (hasattr(model, "graph") and not isinstance(model, Module)):
        module, graph = None, model.graph
        scripted = not _is_traced(graph)
    else:
        from ..jit import trace  # the tracer records the model's ops; imported here, jit sits beside onnx

        args = _positional(model, args, kwargs)
        with _mode(model, training):
            traced = trace(model, args, check_trace=False)
        return _graph_of(traced, args, {}, training)
    graph = run_passes(graph.copy(), ["inline_calls"])
    if kwargs:
        args = tuple(args) + tuple(kwargs.values())
    return graph, module, scripted, args


def _positional(model, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments placed by the signature of ``forward`` (the tracer takes positional inputs)."""
    if not kwargs:
        return tuple(args)
    bound = inspect.signature(getattr(model, "forward", model)).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _is_traced(graph) -> bool:
    """Traced graphs type their tensor inputs completely; scripted ones know only that they are tensors."""
    return any(isinstance(v.type, T.TensorType) and v.type.complete_shape() for v in graph.inputs)


def _dim_names(dynamic_axes: Mapping | None) -> dict[str, dict[int, str]]:
    """``dynamic_axes`` as ``{name: {axis: dim name}}`` (a list of axes gets PyTorch's generated names)."""
    out: dict[str, dict[int, str]] = {}
    for name, axes in (dynamic_axes or {}).items():
        if isinstance(axes, Mapping):
            out[name] = {int(a): str(d) for a, d in axes.items()}
        elif isinstance(axes, Sequence):
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
        else:
            raise ValueError(f"dynamic_axes[{name!r}] must be a list of axes or a dict of axis -> name, "
                             f"not {type(axes).__name__}")
    return out


def _dims_for(name: str, rank: int | None, dims: dict[str, dict[int, str]]):
    if name not in dims or rank is None:
        return None
    out: list = [None] * rank
    for a, d in dims[name].items():
        if not -rank <= a < rank:
            raise ValueError(f"dynamic_axes[{name!r}] names axis {a}, but the value has {rank} dimensions")
        out[a % rank] = d
    return out


def _flatten(x, out: list) -> None:
    if isinstance(x, (tuple, list)):
        for e in x:
            _flatten(e, out)
    elif isinstance(x, dict):
        for e in x.values():
            _flatten(e, out)
    else:
        out.append(x)


def _ir_version(opsets: dict) -> int:
    """The oldest IR version that holds these opsets: what ONNX Runtime builds load (onnx itself writes its
    newest IR, which older runtimes refuse)."""
    import onnx.helper  # optional dependency: only export needs it

    ids = [onnx.helper.make_opsetid(d, v) for d, v in opsets.items() if d in ("", "ai.onnx", "ai.onnx.ml")]
    return max(onnx.helper.find_min_ir_version_for(ids, ignore_unknown=True), 7)


def to_model_proto(model, args=(), *, kwargs=None, input_names=None, output_names=None, opset_version=None,
                   export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
                   training=TrainingMode.EVAL, custom_opsets=None, verbose=False, do_constant_folding=True):
    """The checked ``onnx.ModelProto`` of ``model`` (what ``export`` writes)."""
    import onnx  # optional dependency: only export needs it

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ValueError(f"opset_version {opset} is not supported: toolkit exports opsets {MIN_OPSET} to "
                         f"{MAX_OPSET}")
    args, kwargs = _split_args(args, kwargs)
    with _exporting():
        graph, module, scripted, args = _graph_of(model, args, kwargs, TrainingMode(training))
    inputs = graph.inputs[1:] if module is not None else list(graph.inputs)
    if len(args) != len(inputs):
        raise OnnxExporterError(f"the model's graph takes {len(inputs)} inputs but {len(args)} arguments were "
                                "given")
    if scripted:
        for v, a in zip(inputs, args):
            if isinstance(a, Tensor):
                v.type = T.TensorType.of(a)
        propagate_types(graph)
    dims = _dim_names(dynamic_axes)
    state = _ModelState(opset, export_params, TrainingMode(training) == TrainingMode.TRAINING)
    state.root = getattr(module, "_original", module)  # a traced or scripted module runs its original's code
    g = GraphBuilder(state)
    if module is not None:
        g.env[graph.inputs[0]] = _Module(module, "")
    names = list(input_names or ())
    tensor_index = 0

    def bind(a, default: str):
        """The model input(s) for argument ``a``: one per tensor, a tuple or list of tensors flattened in order
        (``(x, (h, c))`` is three inputs, as PyTorch exports it); anything else is a constant of the file."""
        nonlocal tensor_index
        if isinstance(a, (tuple, list)) and a and all(isinstance(e, (Tensor, tuple, list)) for e in a):
            return type(a)(bind(e, f"{default}.{i}") for i, e in enumerate(a))
        if not isinstance(a, Tensor):
            return a  # a number or flag: fixed in the exported model, as the tracer fixes it
        name = names[tensor_index] if tensor_index < len(names) else default
        tensor_index += 1
        shape = tuple(a.shape)
        return g.add_input(name, a.dtype, shape, _dims_for(name, len(shape), dims))

    for v, a in zip(inputs, args):
        g.env[v] = bind(a, v.debug_name)
    if tensor_index < len(names):
        raise ValueError(f"{len(names)} input_names were given for {tensor_index} tensor inputs")
    outs = g.lower_block(graph.block)
    flat: list = []
    _flatten(outs, flat)
    out_names = list(output_names or ())
    for i, (o, ir) in enumerate(zip(flat, _ir_outputs(graph, len(flat)))):
        name = out_names[i] if i < len(out_names) else (ir.debug_name if ir is not None else f"output_{i}")
        rank = g.rank(o) if isinstance(o, Value) else len(getattr(o, "shape", ()))
        out_dims = _dims_for(name, rank, dims)
        if out_dims is None and dims and isinstance(o, Value) and g.shape(o) is not None:
            out_dims = [None] * rank  # dims unknown when inputs are dynamic: not the traced sizes
            _clear_shape(g, o)
        g.add_output(o, name, out_dims)
    model_graph = g.make_graph(list(state.initializers))
    if do_constant_folding:
        _optimize.fold_constants(model_graph, opset)
    _optimize.remove_dead_nodes(model_graph)
    if keep_initializers_as_inputs:
        model_graph.input.extend(_info_of(t) for t in model_graph.initializer)
    model_graph.input.extend(state.param_inputs)
    opsets = {"": opset, **dict(custom_opsets or {})}
    proto = onnx.helper.make_model(
        model_graph, producer_name="toolkit", producer_version=_version(),
        opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in opsets.items()])
    proto.ir_version = _ir_version(opsets)
    _infer_output_types(proto, dims)
    try:
        onnx.checker.check_model(proto, full_check=True)
    except onnx.checker.ValidationError as e:
        raise OnnxExporterError(f"the exported model does not pass onnx.checker: {e}") from e
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    return proto


def _ir_outputs(graph, n: int) -> list:
    """The IR values naming the flat outputs (None where a tuple output's parts have no value of their own)."""
    outs = list(graph.outputs)
    return outs if len(outs) == n else [None] * n


def _infer_output_types(proto, dims: dict[str, dict[int, str]]) -> None:
    """Fill the types of graph outputs the toolkit IR left without a dtype or rank (a scripted graph's types
    stop at ``prim::ListUnpack``) from onnx's shape inference, naming their ``dynamic_axes``."""
    missing = [o for o in proto.graph.output
               if not o.type.tensor_type.elem_type or not o.type.tensor_type.HasField("shape")]
    if not missing:
        return
    import onnx.shape_inference  # optional dependency: only export needs it

    inferred = onnx.shape_inference.infer_shapes(proto)
    types = {v.name: v.type for v in (*inferred.graph.value_info, *inferred.graph.output)}
    for o in missing:
        t = types.get(o.name)
        if t is None or not t.tensor_type.elem_type:
            continue  # the checker names the output
        o.type.CopyFrom(t)
        shape = o.type.tensor_type.shape if t.tensor_type.HasField("shape") else None
        names = _dims_for(o.name, None if shape is None else len(shape.dim), dims)
        for d, name in zip(shape.dim if shape is not None else (), names or ()):
            if name is not None:
                d.Clear()
                d.dim_param = name


def _clear_shape(g: GraphBuilder, v: Value) -> None:
    g._types[v] = (g.dtype(v), tuple(None for _ in g.shape(v)))


def _info_of(tensor_proto):
    import onnx.helper  # optional dependency: only export needs it

    return onnx.helper.make_tensor_value_info(tensor_proto.name, tensor_proto.data_type, list(tensor_proto.dims))


def _version() -> str:
    try:
        return metadata.version("toolkit")
    except metadata.PackageNotFoundError:
        return "0"


def _write(data: bytes, f) -> None:
    """Write to a path atomically (``write_atomic``: a temporary file in its folder, then renamed) or to a file
    object."""
    if isinstance(f, (str, os.PathLike)):
        write_atomic(f, data, mode=open_mode(f))  # as open() leaves it, like the file torch.onnx.export writes
    elif isinstance(f, io.TextIOBase):
        raise TypeError("export writes bytes: open the file in binary mode ('wb')")
    else:
        f.write(data)


def export(model, args=(), f=None, *, kwargs: dict | None = None, verbose: bool | None = None,
           input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None,
           opset_version: int | None = None, dynamo: bool = False, external_data: bool = True,
           dynamic_shapes=None, custom_translation_table=None, report: bool = False, optimize: bool = True,
           verify: bool = False, profile: bool = False, dump_exported_program: bool = False,
           artifacts_dir=".", export_params: bool = True, keep_initializers_as_inputs: bool = False,
           dynamic_axes: Mapping | None = None, training: TrainingMode = TrainingMode.EVAL,
           operator_export_type: OperatorExportTypes = OperatorExportTypes.ONNX, do_constant_folding: bool = True,
           custom_opsets: Mapping[str, int] | None = None, export_modules_as_functions: bool = False,
           autograd_inlining: bool = True):
    """Export ``model`` to ONNX at ``f`` (a path or a binary file object), as ``torch.onnx.export``.

    ``model``: a ``Module`` (traced on ``args``), a ``ScriptModule`` (scripted or traced) or a scripted
    function. ``args``: a tensor, a tuple of arguments, or a tuple ending in a dict of keyword arguments.
    ``input_names``/``output_names`` name the graph's inputs and outputs; ``dynamic_axes`` maps those
    names to their dynamic axes (a list, or a dict of axis -> dim name). Parameters and buffers become
    initializers. The model uses opset ``opset_version`` (17 by default) and the oldest IR version that
    holds it, so ONNX Runtime loads it. With ``do_constant_folding`` (the default) nodes computed from
    initializers and constants alone (a ``Transpose`` of a weight) are computed once and written as
    initializers; nodes whose outputs nothing reads are always left out. toolkit has one exporter, the
    TorchScript-based one: ``dynamo`` and the options of PyTorch's dynamo exporter change nothing, and
    ``dynamic_shapes`` is refused (use ``dynamic_axes``). Returns None when ``f`` is given, else the
    ``onnx.ModelProto``.
    """
    if dynamic_shapes is not None:
        raise NotImplementedError("toolkit.onnx.export takes dynamic_axes; dynamic_shapes belongs to PyTorch's "
                                  "dynamo exporter")
    if OperatorExportTypes(operator_export_type) != OperatorExportTypes.ONNX:
        raise NotImplementedError("toolkit.onnx.export writes standard ONNX ops only (OperatorExportTypes.ONNX)")
    if export_modules_as_functions:
        raise NotImplementedError("export_modules_as_functions is not supported: modules are inlined")
    proto = to_model_proto(model, args, kwargs=kwargs, input_names=input_names, output_names=output_names,
                           opset_version=opset_version, export_params=export_params,
                           keep_initializers_as_inputs=keep_initializers_as_inputs, dynamic_axes=dynamic_axes,
                           training=training, custom_opsets=custom_opsets, verbose=bool(verbose),
                           do_constant_folding=do_constant_folding)
    if f is None:
        return proto
    _write(proto.SerializeToString(), f)
    return None
