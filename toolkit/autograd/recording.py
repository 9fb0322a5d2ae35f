"""Building the graph: the dispatcher calls ``record`` after an op whose inputs require grad.

In-place ops move a tensor's history onto a new node. When the tensor is a
view, the history of its base moves instead (onto ``CopySlices``), and the
view's own ``grad_fn`` is rebuilt from the base by replaying its view chain
(``views.regenerate_view_history``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from .._core.dtypes import FROM_NUMPY
from ..ops import registry as R
from ..tensor import Tensor
from .grad_mode import LOCAL
from .graph import grad_accumulator, gradient_edge
from .hooks import move_retain_grad
from .naming import short_name
from .node import CopySlices, node_class
from .saved import SavedTensor
from .views import multi_output, regenerate_view_history


def _is_diff_dtype(a) -> bool:
    return a.dtype.kind in "fc"


_save_plans: dict = {}


def _guard_index(test) -> int | None:
    """``k`` when ``test`` is ``needs_input_grad[k]``."""
    if (isinstance(test, ast.Subscript) and isinstance(test.value, ast.Name) and test.value.id == "needs_input_grad"
            and isinstance(test.slice, ast.Constant) and isinstance(test.slice.value, int)):
        return test.slice.value
    return None


def _save_plan(op) -> dict:
    """For each saved name of a derivative, the ``needs_input_grad`` index guarding all its uses.

    A name only read under ``x if needs_input_grad[k] else None`` (or ``if needs_input_grad[k]:``)
    is not saved when input ``k`` needs no gradient, as PyTorch saves ``other`` of ``mul`` only
    when ``self`` requires grad. Names with an unguarded use, or read for the gradients of several
    inputs, map to None: always saved, as PyTorch's generated nodes save them (``other`` of ``div``,
    ``tensor2`` of ``addcdiv``), so a second backward through a freed graph raises where PyTorch's does.
    """
    plan = _save_plans.get(op)
    if plan is not None:
        return plan
    plan = {}
    names = set(op.saved_names)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(op.derivative)))
        fn = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda)))
    except (OSError, TypeError, SyntaxError, StopIteration):
        fn = None
    if fn is None or any(op.args[i].type.endswith("[]") for i in op.diff_args):
        plan = dict.fromkeys(names)
    else:
        def visit(node, guard):
            if isinstance(node, ast.Name) and node.id in names:
                if guard is None or plan.get(node.id, ()) is None:
                    plan[node.id] = None
                else:
                    plan[node.id] = plan.get(node.id, frozenset()) | {guard}
                return
            if isinstance(node, (ast.IfExp, ast.If)):
                k = _guard_index(node.test)
                visit(node.test, guard)
                body = node.body if isinstance(node.body, list) else [node.body]
                orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
                for b in body:
                    visit(b, guard if k is None else k)
                for b in orelse:
                    visit(b, guard)
                return
            for child in ast.iter_child_nodes(node):
                visit(child, guard)

        for stmt in fn.body:
            visit(stmt, None)
        plan = {k: (g if g is None or len(g) == 1 else None) for k, g in plan.items()}
    _save_plans[op] = plan
    return plan


_RESULT, _META, _LIST_META, _VALUE = range(4)


def _saver_plan(op) -> tuple:
    """How to save each of the derivative's names, resolved once per op: (name, how, arg index, what, guard),
    ``guard`` the input whose gradient alone reads the name (-1: always saved)."""
    plan = op.__dict__.get("_saver_plan")
    if plan is not None:
        return plan
    names = op.arg_names
    guards_of = _save_plan(op) if op.wants_needs_input_grad else {}
    savers = []
    for name in op.saved_names:
        guards = guards_of.get(name)  # None, or the one input whose gradient alone reads the name
        guard = -1 if guards is None else next(iter(guards))
        if name == "result":
            savers.append((name, _RESULT, -1, "", guard))
        elif name.endswith(("_shape", "_dtype")) and name not in names:
            base, _, what = name.rpartition("_")
            i = names.index(base)
            how = _LIST_META if op.args[i].type.endswith("[]") else _META
            savers.append((name, how, i, what, guard))
        else:
            savers.append((name, _VALUE, names.index(name), "", guard))
    plan = tuple(savers)
    op.__dict__["_saver_plan"] = plan
    return plan


_NO_EDGE = (None, 0)


def _edge(e: Tensor) -> tuple:
    """The edge a gradient w.r.t. input ``e`` flows into (``gradient_edge``, without its view check where
    ``e`` is no view)."""
    fn = e.grad_fn
    if fn is not None:
        return (fn, e._output_nr) if e._view_chain is None else gradient_edge(e)
    if e._requires_grad:
        return (grad_accumulator(e), 0)
    return _NO_EDGE


def _meta(a) -> tuple | None:
    """What the engine checks a gradient against: shape and dtype, for floating and complex inputs and outputs
    only."""
    return (a.shape, FROM_NUMPY[a.dtype]) if a.dtype.kind in "fc" else None


def _make_node(op, bound: list, outs: tuple, saved_self, self_edge=None):
    node = (op._node_class or node_class(op, bound, outs))()
    node.op = op
    edges, metas, needs = [], [], []
    for i in op.diff_args:
        v = bound[i]
        if type(v) is Tensor or isinstance(v, Tensor):
            if self_edge is None or i != 0:
                edge = _edge(v)
                needs.append(edge[0] is not None)
            else:
                edge = self_edge  # a view's old value: its gradient is wanted by CopySlices
                needs.append(True)
            edges.append(edge)
            a = v._data
            metas.append((a.shape, FROM_NUMPY[a.dtype]) if a.dtype.kind in "fc" else None)  # _meta, inlined
        elif isinstance(v, list):
            for e in v:
                if type(e) is Tensor or isinstance(e, Tensor):
                    edge = _edge(e)
                    edges.append(edge)
                    needs.append(edge[0] is not None)
                    metas.append(_meta(e._data))
                else:
                    edges.append(_NO_EDGE)
                    metas.append(None)
                    needs.append(False)
        else:
            edges.append(_NO_EDGE)
            metas.append(None)
            needs.append(False)
    if op.kind is R.INPLACE:
        # ``self`` is the node's first input: its old history, with its shape and dtype.
        self_t = bound[0]
        metas[0] = (self_t._data.shape, self_t.dtype)
    node.next_functions = tuple(edges)
    node._input_meta = metas
    node._needs = tuple(needs)
    node._n_outputs = len(outs)
    node._output_meta = [_meta(outs[0]._data)] if len(outs) == 1 else [_meta(o._data) for o in outs]
    node._view_version = None
    saved, attrs = {}, {}
    for name, how, i, what, guard in op.__dict__.get("_saver_plan") or _saver_plan(op):
        if guard >= 0 and (guard >= len(needs) or not needs[guard]):
            attrs[name] = None  # read only for a gradient nobody needs
            continue
        if how is _VALUE:
            v = saved_self if (name == "self" and saved_self is not None) else bound[i]
            if type(v) is Tensor or isinstance(v, Tensor):
                saved[name] = SavedTensor(v)
            elif isinstance(v, list) and any(isinstance(e, Tensor) for e in v):
                saved[name] = [SavedTensor(e) if isinstance(e, Tensor) else e for e in v]
            elif v is not None and op.numbers_as_tensors and op.args[i].type == "Tensor":
                saved[name] = v  # PyTorch's wrapped number: a saved tensor there, freed with the others
            else:
                attrs[name] = v
        elif how is _RESULT:
            if len(outs) == 1 and op.n_outputs == 1 and not op.returns_list:
                saved["result"] = SavedTensor(outs[0], is_output=True)
            else:
                res = tuple(SavedTensor(o, is_output=True, output_nr=k) for k, o in enumerate(outs))
                saved["result"] = list(res) if op.returns_list else res
        elif how is _META:
            t = bound[i]
            attrs[name] = (t._data.shape if what == "shape" else t.dtype) if isinstance(t, Tensor) else None
        else:  # _LIST_META
            t = bound[i]
            attrs[name] = [None if e is None else e._data.shape if what == "shape" else e.dtype for e in t]
    node._saved = saved
    node._attrs = attrs
    node._had_saved = bool(saved)
    return node


def record(op, bound: list, outputs, saved_self) -> None:
    """Attach a new node to ``outputs``; in-place ops rebase ``self``'s (or its base's) history onto it."""
    if not LOCAL.grad_enabled:
        return  # another thread has grad enabled; this one does not
    if op.kind is R.INPLACE:
        _record_inplace(op, bound, outputs, saved_self)
        return
    if type(outputs) is Tensor or isinstance(outputs, Tensor):
        node = _make_node(op, bound, (outputs,), saved_self)
        if op.kind is R.VIEW:
            node._view_version = outputs._storage.version
        if outputs._data.dtype.kind in "fc":
            outputs.grad_fn = node
            outputs._requires_grad = True
            outputs._output_nr = 0
        return
    outs = outputs
    node = _make_node(op, bound, outs, saved_self)
    if op.kind is R.VIEW:
        node._view_version = outs[0]._storage.version if outs else None
    for k, o in enumerate(outs):
        if _is_diff_dtype(o._data):
            o.grad_fn = node
            o._requires_grad = True
            o._output_nr = k


def _record_inplace(op, bound: list, self_t: Tensor, saved_self) -> None:
    old = (self_t.grad_fn, self_t._output_nr)
    chain = self_t._view_chain
    if chain is None:
        node = _make_node(op, bound, (self_t,), saved_self)
        self_t.grad_fn = node
        self_t._output_nr = 0
        self_t._requires_grad = True
    else:
        base = self_t._base
        fn = _make_node(op, bound, (self_t,), saved_self, self_edge=(None, 0))
        cs = CopySlices(fn, chain, (base._data.shape, base.dtype))
        cs.next_functions = (gradient_edge(base),) + fn.next_functions[1:]
        old_base = (base.grad_fn, base._output_nr)
        base.grad_fn = cs
        base._output_nr = 0
        base._requires_grad = True
        move_retain_grad(base, *old_base)
        regenerate_view_history(self_t)
    move_retain_grad(self_t, *old)


def check_inplace(op, t: Tensor) -> None:
    """PyTorch's refusals of in-place ops that autograd cannot record (called before the kernel runs)."""
    chain = t._view_chain
    if chain is None:
        if t.grad_fn is None and t._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        return
    for vop, _ in chain:
        if multi_output(vop):
            # The view's own node where it is the last view taken (its name may depend on the call: chunk)
            node = t.grad_fn if vop is chain[-1][0] and t.grad_fn is not None else node_class(vop)
            raise RuntimeError(
                f"Output {t._output_nr} of {short_name(node)} is a view and is being modified inplace. "
                "This view is the output of a function that returns multiple views. Such functions do not allow "
                "the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one."
            )
    b = t._base
    if b._requires_grad and t._extra and t._extra.get("no_grad_view"):
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
            "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
            "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
            "tracked) or both outside (if you want the inplace to be tracked)."
        )
    if b.grad_fn is None and b._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
