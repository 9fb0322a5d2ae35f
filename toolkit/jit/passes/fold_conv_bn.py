"""Fold an eval-mode ``batch_norm`` into the convolution or ``linear`` before it, in a frozen graph.

``batch_norm(conv(x, w, b), mean, var, gamma, beta, False, _, eps)`` scales each output channel
by ``s = gamma / sqrt(var + eps)`` and shifts it, which is ``conv(x, w * s, (b - mean) * s + beta)``:
one op instead of two, with new weight and bias constants (named ``<weight>_fused_bn``,
as PyTorch names them). It applies when every argument but the input is a constant,
which is what freezing a module in eval mode gives, and the layer's output is read by the
normalization alone (or by shape reads such as a module's ``input.dim()`` check, which the
fold leaves right, as the output keeps its shape). The result differs from the two
ops by rounding only, so ``freeze(..., optimize_numerics=False)`` does not run it.

Which ops take part is read from their schemas in the registry: a layer whose
arguments begin ``Tensor input, Tensor weight, Tensor? bias`` and whose weight's first
dimension is the output channel (convolutions that are not transposed, ``linear``),
and a normalization with ``running_mean``, ``running_var``, ``training`` and ``eps``.

Example::

    toolkit.jit.run_passes(frozen.graph, ["fold_conv_bn", "dce"])
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops import api as F
from ...ops import registry as R
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Block, Graph, Node, Value
from ..kinds.builtins import SCHEMAS
from .manager import register_pass

_LAYER_ARGS = ("input", "weight", "bias")
_NORM_ARGS = frozenset({"input", "running_mean", "running_var", "weight", "bias", "training", "eps"})


def constant_of(v: Value):
    """The constant ``v`` holds (seen through ``prim::unchecked_cast``); LookupError when it is computed."""
    n = v.node
    while n is not None and n.kind == K.UNCHECKED_CAST:
        n = n.inputs[0].node
    if n is None or n.kind != K.CONSTANT:
        raise LookupError
    return n.attributes.get("value")


def source_name(v: Value) -> str:
    """The debug name of the constant behind ``v`` (seen through ``prim::unchecked_cast``)."""
    while v.node is not None and v.node.kind == K.UNCHECKED_CAST:
        v = v.node.inputs[0]
    return v.debug_name if v.has_debug_name() else ""


def is_weighted_layer(n: Node) -> bool:
    """A convolution (not transposed) or ``linear``: ``out[:, c]`` is ``weight[c]`` applied to the input, plus
    ``bias[c]``."""
    op = n.op
    return (op is not None and op.kind == R.NN and op.arg_names[:3] == _LAYER_ARGS
            and "transposed" not in op.arg_names and "output_padding" not in op.arg_names)


def is_convolution(n: Node) -> bool:
    return is_weighted_layer(n) and "groups" in n.op.arg_names


def has_constant_parameters(n: Node) -> bool:
    """Whether every input but the first is a constant (PyTorch's condition for these folds)."""
    for v in n.inputs[1:]:
        try:
            constant_of(v)
        except LookupError:
            return False
    return True


def only_user(layer: Node, n: Node) -> bool:
    """Whether ``n`` is the one node reading ``layer``'s values: other uses may read its shape only (a module's
    ``input.dim()`` check), which a fold keeps."""
    return all(u.user is n or _reads_shape_only(u.user) for u in layer.output().uses)


def _reads_shape_only(n: Node) -> bool:
    """A builtin that reads only a tensor's metadata (``x.dim()``, ``x.size()``, ``x.numel()``): each of its
    signatures taking a Tensor returns an int, an int list or a bool."""
    if n.op is not None or n.kind not in SCHEMAS:
        return False
    sigs = [sig for sig in SCHEMAS[n.kind] if sig.startswith("(Tensor")]
    return bool(sigs) and all(sig.rsplit("-> ", 1)[1] in ("int", "int[]", "bool") for sig in sigs)


def argument(n: Node, name: str):
    """The constant value of the node's argument ``name`` (its schema default when the node omits it)."""
    i = n.op.arg_names.index(name)
    return constant_of(n.inputs[i]) if i < len(n.inputs) else n.op.args[i].default


def set_argument(graph: Graph, n: Node, name: str, value, debug_name: str) -> None:
    """Make the node's argument ``name`` a new constant ``value``, inserted before the node."""
    i = n.op.arg_names.index(name)
    with graph.inserting_before(n):
        c = graph.insert_constant(value, T.TensorType.of(value))
    c.node.source, c.node.scope = n.source, n.scope
    if debug_name:
        c.set_debug_name(debug_name)
    while len(n.inputs) <= i:  # an omitted default argument
        default = n.op.args[len(n.inputs)].default
        with graph.inserting_before(n):
            n.add_input(graph.insert_constant(default))
    old = n.inputs[i]
    n.replace_input(i, c)
    drop_unused_casts([old])


def drop_unused_casts(values) -> None:
    """Remove the ``prim::unchecked_cast`` nodes among ``values``' producers that nothing reads any more (``dce``
    keeps them, not knowing the kind)."""
    for v in values:
        while v.node is not None and v.node.kind == K.UNCHECKED_CAST and not v.uses \
                and v.node.owning_block is not None:
            n, v = v.node, v.node.inputs[0]
            n.destroy()


def _is_eval_norm(n: Node) -> bool:
    op = n.op
    return op is not None and _NORM_ARGS <= set(op.arg_names)


def _fold(graph: Graph, layer: Node, bn: Node) -> bool:
    if not (has_constant_parameters(layer) and has_constant_parameters(bn)) or not only_user(layer, bn):
        return False
    if argument(bn, "training") is not False:
        return False
    mean, var, gamma, beta = (argument(bn, k) for k in ("running_mean", "running_var", "weight", "bias"))
    w, b, eps = argument(layer, "weight"), argument(layer, "bias"), argument(bn, "eps")
    if mean is None or var is None or w is None:
        return False
    features = mean.numel()
    if mean.dim() != 1 or not (features == w.shape[0] or features == 1 and not is_convolution(layer)):
        return False  # (one feature broadcasts over a linear layer's outputs when it normalizes another dim)
    with no_grad():
        b = w.new_zeros([w.shape[0]]) if b is None else b
        gamma = F.ones_like(mean) if gamma is None else gamma
        beta = F.zeros_like(mean) if beta is None else beta
        scale = gamma * (var + eps).rsqrt()
        fused_w = (w * scale.reshape([-1] + [1] * (w.dim() - 1))).contiguous()
        fused_b = ((b - mean) * scale + beta).contiguous()
    w_name, b_name = source_name(layer.inputs[1]), source_name(layer.inputs[2]) if len(layer.inputs) > 2 else ""
    set_argument(graph, layer, "weight", fused_w, w_name and w_name + "_fused_bn")
    set_argument(graph, layer, "bias", fused_b, b_name and b_name + "_fused_bn")
    bn.output().replace_all_uses_with(layer.output())
    inputs = list(bn.inputs)
    bn.destroy()
    drop_unused_casts(inputs)
    return True


def _block(graph: Graph, b: Block) -> bool:
    changed = False
    for n in list(b.nodes):
        for inner in n.blocks:
            changed |= _block(graph, inner)
        if n.owning_block is None or not _is_eval_norm(n):
            continue
        layer = n.inputs[0].node
        if layer is not None and is_weighted_layer(layer):
            changed |= _fold(graph, layer, n)
    return changed


@register_pass("fold_conv_bn")
def fold_conv_bn(graph: Graph) -> Graph:
    """Fold each eval-mode batch norm with constant statistics into the convolution or linear layer feeding it;
    the constants left unused are ``dce``'s."""
    _block(graph, graph.block)
    return graph


def fold_conv_bn_changed(graph: Graph) -> bool:
    """``fold_conv_bn``, returning whether it folded anything (for a fixed-point loop)."""
    return _block(graph, graph.block)
