"""Symbolic autodiff for specialized graphs: a forward graph and a backward graph, both fusible.

The backward graph is derived from the registry's derivative formulas, the same
ones eager autograd runs: the specialized forward graph is run once with
autograd recording, and the backward pass over that recording (the engine
calling each op's ``grad``, summing broadcast gradients, accumulating values
used twice) is itself recorded into a graph by the tracer. Forward values the
backward reads become inputs of the backward graph ("saved" values) and extra
outputs of the forward graph; gradient inputs come first. Both graphs are then
optimized and fused like any other graph, so a training step runs fused
kernels both ways.

At run time the forward graph runs without recording and a single autograd
node, ``DifferentiableGraphBackward``, connects its outputs to the graph's
differentiable leaves (inputs and parameters that require grad); its backward
runs the backward graph. Asked for a differentiable backward
(``create_graph=True``), it recomputes through the plain graph with eager
autograd instead, so higher-order gradients stay exact.
"""

from __future__ import annotations

import warnings

from ...autograd import grad as autograd_grad
from ...autograd.function import Function
from ...autograd.grad_mode import LOCAL, enable_grad, no_grad
from ...factories import ones_like
from ...random import get_rng_state, set_rng_state
from ...tensor import Tensor
from ...utils._pytree import tree_rebuild, tree_tensors
from ..frontend.trace import Tracer, TracerWarning
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Graph, Node, Value
from ..kinds.effects import has_side_effects, is_mutating, is_random
from ..passes.fuse import fusion_groups
from .interpreter import Interpreter


class _BackwardTracer(Tracer):
    """Records the backward pass; forward tensors it meets become inputs of the backward graph."""

    def __init__(self, forward_values: dict):
        super().__init__(None)
        self._forward = forward_values  # id(array) -> (forward Value, tensor)
        self._saved_inputs: dict = {}
        self.saved: list[Value] = []
        # a tensor the backward reads that is neither a forward value nor computed here (a dropout mask or
        # pooling indices made inside one op): it would be frozen into the graph as a constant
        self.froze_tensor = False

    def tensor_value(self, t: Tensor) -> Value:
        v = self.lookup(t)
        if v is not None:
            return v
        e = self._forward.get(id(t._data))
        if e is not None and e[1]._data is t._data:
            fv = e[0]
            bv = self._saved_inputs.get(fv)
            if bv is None:
                bv = self.graph.add_input(fv._name, T.TensorType.of(e[1]))
                self._saved_inputs[fv] = bv
                self.saved.append(fv)
            self.bind_tensor(t, bv)
            return bv
        if self.lookup_parameter(t) is None:
            self.froze_tensor = True
            if t.requires_grad:  # made inside an op composed of others: no plan is kept (froze_tensor)
                return super().tensor_value(t.detach())
        return super().tensor_value(t)

    def lookup_parameter(self, t: Tensor):
        frame = self._frame()
        while frame is not None:
            p = self._param_map(frame.module).get(id(t))
            if p is not None and p[2] is t:
                return p
            frame = frame.parent
        return None


def _detached_leaf(x):
    if isinstance(x, Tensor) and x.requires_grad:
        return x.detach().requires_grad_()
    if isinstance(x, (tuple, list)) and any(isinstance(e, Tensor) for e in x):
        items = [_detached_leaf(e) for e in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    if isinstance(x, dict):
        return {k: _detached_leaf(e) for k, e in x.items()}
    return x


def _is_leaf(v: Value, value) -> bool:
    if not isinstance(value, Tensor) or not value.requires_grad:
        return False
    return v.node is None or K.facts(v.node.kind).leaf_for_autodiff


class DifferentiablePlan:
    """A forward graph, a backward graph, and how their values line up (see the module docstring)."""

    def __init__(self, graph: Graph, backward: Graph, n_outputs: int, n_saved: int, n_leaves: int,
                 diff_positions: tuple, fallback: Graph):
        self.graph = graph  # the forward graph: outputs, then saved values, then leaves
        self.backward_graph = backward
        self.n_outputs = n_outputs
        self.n_saved = n_saved
        self.n_leaves = n_leaves
        self.diff_positions = diff_positions  # which flattened outputs are differentiable
        self.fallback_graph = fallback
        # a differentiable backward re-runs the plain graph: it must draw the forward's random numbers again
        self.draws_random = any(is_random(n) for n in fallback.all_nodes())
        self._interpreters = None
        self._fallback = None
        self.runs = 0
        self.fused = False

    @property
    def interpreter(self) -> Interpreter:
        return self._prepared()[0]

    @property
    def backward_interpreter(self) -> Interpreter:
        return self._prepared()[1]

    def _prepared(self) -> tuple:
        """Interpreters made on first use, after the executor has optimized and fused both graphs."""
        if self._interpreters is None:
            self._interpreters = (Interpreter(self.graph), Interpreter(self.backward_graph))
        return self._interpreters

    def fusion_groups(self) -> list:
        return fusion_groups(self.graph)

    def backward_fusion_groups(self) -> list:
        return fusion_groups(self.backward_graph)

    def run(self, inputs: list) -> list:
        self.runs += 1
        rng = get_rng_state() if self.draws_random else None
        with no_grad():
            res = self.interpreter.run(inputs)
        k = self.n_outputs
        outs, saved, leaves = res[:k], res[k:k + self.n_saved], res[k + self.n_saved:]
        flat: list = []
        tree_tensors(outs, flat)
        diff = [flat[i] for i in self.diff_positions]
        if not LOCAL.grad_enabled or not any(t.requires_grad for t in leaves):
            return outs
        wrapped = DifferentiableGraph.apply(self, inputs, rng, diff, saved, *leaves)
        if not isinstance(wrapped, tuple):
            wrapped = (wrapped,)
        for i, w in zip(self.diff_positions, wrapped):
            flat[i] = w
        return tree_rebuild(outs, iter(flat))

    def recompute_grads(self, inputs: list, leaves: tuple, grads: tuple, rng=None) -> tuple:
        """Gradients through the plain graph with eager autograd (differentiable, for create_graph).

        ``rng``: the random state the forward run started from. The recomputation draws the
        forward's numbers again and then puts the caller's random stream back where it was,
        so a call draws its random numbers once (plans are built only for graphs whose other
        effects are none, see ``build``).
        """
        if self._fallback is None:
            self._fallback = Interpreter(self.fallback_graph)
        now = None
        if rng is not None:
            now = get_rng_state()
            set_rng_state(rng)
        try:
            with enable_grad():
                outs = self._fallback.run(inputs)
        finally:
            if now is not None:
                set_rng_state(now)
        flat: list = []
        tree_tensors(outs, flat)
        diff = [flat[i] for i in self.diff_positions]
        pairs = [(o, g) for o, g in zip(diff, grads) if o.requires_grad and g is not None]
        live = [t for t in leaves if t.requires_grad]
        got = autograd_grad([o for o, _ in pairs], live, [g for _, g in pairs], create_graph=True,
                            allow_unused=True)
        it = iter(got)
        return tuple(next(it) if t.requires_grad else None for t in leaves)


class DifferentiableGraph(Function):
    """The autograd node of a differentiable plan's run (``DifferentiableGraphBackward`` in ``grad_fn``)."""

    @staticmethod
    def forward(ctx, plan, inputs, rng, diff, saved, *leaves):
        ctx.plan = plan
        ctx.inputs = inputs
        ctx.rng = rng
        ctx.leaves = leaves
        ctx.save_for_backward(*saved)
        return tuple(diff)

    @staticmethod
    def backward(ctx, *grads):
        plan = ctx.plan
        if LOCAL.grad_enabled:
            res = plan.recompute_grads(ctx.inputs, ctx.leaves, grads, ctx.rng)
        else:
            res = plan.backward_interpreter.run(list(grads) + list(ctx.saved_tensors))
        return (None, None, None, None, None, *res)


def build(graph: Graph, inputs: list) -> DifferentiablePlan | None:
    """The differentiable plan of a specialized graph for these inputs, or None where it cannot be built.

    ``graph`` becomes the plan's forward graph (outputs are appended to it).
    None when the graph has control flow, nothing in it needs a gradient, an
    output aliases a leaf, or the backward pass reads a tensor's value into
    Python (it would be baked into the graph), or running the graph once more
    would leave a trace (see ``_reruns_without_trace``).
    """
    if any(n.blocks for n in graph.nodes()) or not _reruns_without_trace(graph):
        return None
    fallback = graph.copy()
    # Fresh leaves stand in for inputs that require grad: the recording must stop at this graph's
    # inputs, not run on into whatever history they carry from earlier calls.
    inputs = [_detached_leaf(x) for x in inputs]
    env: dict = dict(zip(graph.inputs, inputs))

    def on_node(n, values):
        for o, x in zip(n.outputs, values):
            env[o] = x

    rng = get_rng_state()  # this run only shows the structure: the caller's random stream stays as it was
    try:
        with enable_grad():
            outs = Interpreter(graph).run(inputs, on_node)
    finally:
        set_rng_state(rng)
    flat: list = []
    tree_tensors(outs, flat)
    leaf_values = [v for v, x in env.items() if _is_leaf(v, x)]
    leaves = [env[v] for v in leaf_values]
    if any(t.grad_fn is not None for t in leaves):
        return None  # an attribute computed with history (not a parameter): eager autograd handles it
    diff_positions = tuple(i for i, t in enumerate(flat) if t.requires_grad and t.grad_fn is not None)
    if not leaves or not diff_positions:
        return None
    leaf_storages = {id(t._storage) for t in leaves}
    if any(id(flat[i]._storage) in leaf_storages for i in diff_positions) or len({id(t) for t in flat}) != len(flat):
        return None
    forward_values = {}
    for v, x in env.items():
        if isinstance(x, Tensor):
            forward_values.setdefault(id(x._data), (v, x))
    diff = [flat[i] for i in diff_positions]
    seeds = [ones_like(t) for t in diff]
    tracer = _BackwardTracer(forward_values)
    for k, s in enumerate(seeds):
        tracer.add_input(s, f"grad_{k}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TracerWarning)
        with tracer:
            grads = autograd_grad(diff, leaves, seeds, allow_unused=True)
            out_values = [tracer.graph.insert_constant(None) if g is None else tracer.output_value(g, True)
                          for g in grads]
    if any(issubclass(w.category, TracerWarning) for w in caught) or tracer.froze_tensor:
        return None  # eager autograd keeps what the forward run computed; a plan would replay stale values
    backward = tracer.graph
    for n in backward.all_nodes():
        n.source = None  # the line that first ran the plan says nothing about where a gradient comes from
    for v in out_values:
        backward.register_output(v)
    n_outputs = len(graph.outputs)
    for v in tracer.saved + leaf_values:
        graph.register_output(v)
    return DifferentiablePlan(graph, backward, n_outputs, len(tracer.saved), len(leaf_values), diff_positions,
                              fallback)


def _reruns_without_trace(graph: Graph) -> bool:
    """Whether running ``graph`` once more than the call asks for leaves nothing behind.

    ``build`` runs the graph once to record it, and a differentiable backward runs it
    again: both must not repeat the call's side effects. Random draws are undone
    (the default generator's state is put back) and pure builtins do nothing else;
    a node that writes a tensor or a list (the registry's in-place kinds and ``a!``
    annotations), draws from a generator passed in, prints or does what this module
    cannot see (a Python call) keeps the graph to the plain executor, where each
    node runs once per call.
    """
    return all(_reruns_harmlessly(n) for n in graph.all_nodes())


def _reruns_harmlessly(n: Node) -> bool:
    if not has_side_effects(n):
        return True
    if is_mutating(n):
        return False
    if n.op is not None:  # a random op: harmless when it draws from the default generator, whose state is put back
        return is_random(n) and all(
            v.node is not None and v.node.kind == K.CONSTANT and v.node.attributes.get("value") is None
            for v, a in zip(n.inputs, n.op.args) if a.type.startswith("Generator"))
    from ..kinds import builtins  # scripted builtins (len, int arithmetic, ...): plain Python functions

    return n.kind in builtins.FUNCTIONS
