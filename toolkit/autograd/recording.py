"""Building the graph: the dispatcher calls ``record`` after an op whose inputs require grad."""

from __future__ import annotations

from ..tensor import Tensor
from .node import AccumulateGrad, node_class
from .saved import SavedTensor


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made once and reused so hooks and edges agree."""
    ex = t._extras()
    acc = ex.get("grad_accumulator")
    if acc is None:
        acc = ex["grad_accumulator"] = AccumulateGrad(t)
    return acc


def gradient_edge(t: Tensor):
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def _is_diff_dtype(a) -> bool:
    return a.dtype.kind == "f"


def record(op, bound: list, outputs, saved_self) -> None:
    """Attach a new node to ``outputs``; in-place ops rebase ``self``'s history onto it."""
    node = node_class(op)()
    node.op = op
    edges, metas, needs = [], [], []
    for i in op.diff_args:
        v = bound[i]
        items = v if isinstance(v, list) else (v,)
        for e in items:
            if isinstance(e, Tensor):
                edge = gradient_edge(e)
                edges.append(edge)
                metas.append((e._data.shape, e.dtype))
                needs.append(edge[0] is not None)
            else:
                edges.append((None, 0))
                metas.append(None)
                needs.append(False)
    if op.kind == "inplace":
        # The old history of ``self`` is this node's first input.
        self_t = bound[0]
        metas[0] = (self_t._data.shape, self_t.dtype)
    node.next_functions = tuple(edges)
    node._input_meta = metas
    node._needs = tuple(needs)
    node._freed = False
    outs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    node._n_outputs = len(outs)
    node._output_meta = [(o._data.shape, o.dtype) if _is_diff_dtype(o._data) else None for o in outs]
    saved, attrs = {}, {}
    names = op.arg_names
    for name in op.saved_names:
        if name == "result":
            if len(outs) == 1 and not isinstance(outputs, list):
                saved["result"] = SavedTensor(outs[0], is_output=True)
            else:
                saved["result"] = tuple(SavedTensor(o, is_output=True, output_nr=k) for k, o in enumerate(outs))
            continue
        if name.endswith(("_shape", "_dtype")) and name not in names:
            base, _, what = name.rpartition("_")
            t = bound[names.index(base)]
            attrs[name] = (tuple(t._data.shape) if what == "shape" else t.dtype) if isinstance(t, Tensor) else None
            continue
        v = saved_self if (name == "self" and saved_self is not None) else bound[names.index(name)]
        if isinstance(v, Tensor):
            saved[name] = SavedTensor(v)
        elif isinstance(v, list) and any(isinstance(e, Tensor) for e in v):
            saved[name] = [SavedTensor(e) if isinstance(e, Tensor) else e for e in v]
        else:
            attrs[name] = v
    node._saved = saved
    node._attrs = attrs
    for k, o in enumerate(outs):
        if _is_diff_dtype(o._data):
            o.grad_fn = node
            o._requires_grad = True
            o._output_nr = k
