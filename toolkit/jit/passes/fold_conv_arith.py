"""Fold a constant shift or scale of a convolution's output into its bias or weight, in a frozen graph.

``conv(x, w, b) + c`` is ``conv(x, w, b + c)`` and ``conv(x, w, b) * c`` is ``conv(x, w * c, b * c)``
when ``c`` is a number or a per-channel constant (shape ``(1, C, 1, ...)`` or one element), so
the elementwise op goes and the convolution gets new constants (``<bias>_fused_add``,
``<weight>_fused_mul``, as PyTorch names them). The conditions are PyTorch's: constant
parameters, a floating weight, a constant that changes neither the output's shape nor
its dtype, and an output whose values the elementwise op alone reads. The result differs by
rounding only, so ``freeze(..., optimize_numerics=False)`` does not run it.

Which elementwise ops shift and which scale is read from the identities the registry
declares for them: ``other`` with identity 0 shifts ``self`` (``add``, ``sub``), with
identity 1 scales it (``mul``, ``div`` without a rounding mode).
"""

from __future__ import annotations

from ... import dispatch
from ..._core import dtypes
from ...autograd.grad_mode import no_grad
from ...ops import api
from ...ops import registry as R
from ...tensor import Tensor
from ..ir.graph import Block, Graph, Node
from .fold_conv_bn import (
    argument,
    constant_of,
    has_constant_parameters,
    is_convolution,
    only_user,
    set_argument,
    source_name,
)
from .manager import register_pass

_SHIFT, _SCALE = 0, 1


def _role(n: Node) -> int | None:
    """``_SHIFT`` or ``_SCALE`` when ``n`` shifts or scales its ``self`` by a constant ``other``, else None."""
    op = n.op
    if op is None or op.kind != R.ELEMENTWISE or op.arg_names[:2] != ("self", "other"):
        return None
    for keep, const, identity, cond in op.identities:
        if (keep, const) != ("self", "other") or identity not in (_SHIFT, _SCALE):
            continue
        if cond is not None:
            try:
                if argument(n, cond[0]) != cond[1]:
                    continue
            except LookupError:
                continue
        return identity
    return None


def _keeps_shape_and_dtype(other, weight) -> bool:
    """A number, or a tensor of one element or of shape ``(1, C, 1, ...)`` that broadcasts to the output without
    changing its shape, whose dtype the weight's absorbs."""
    if not isinstance(other, Tensor):
        return isinstance(other, (int, float)) and not isinstance(other, bool)
    if other.dim() > weight.dim():
        return False
    if other.numel() > 1 and other.dim() != weight.dim():
        return False  # the channel axis lines up with the output's only at full rank
    for i in range(other.dim()):
        if other.shape[i] != 1 and not (i == 1 and other.shape[i] == weight.shape[0]):
            return False
    if dtypes.promote_types(other.dtype, weight.dtype) is weight.dtype:
        return True
    return other.dim() == 0 and other.dtype.is_floating_point  # a 0-dim float does not promote a float output


def _resized(other, shape: list, like):
    """``other`` as a tensor of ``shape`` with ``like``'s dtype and device (a number filled, one element expanded)."""
    if not isinstance(other, Tensor):
        return api.full(shape, other, dtype=like.dtype, device=like.device)
    if other.numel() == 1:
        return other.reshape([1]).expand(shape)
    return other.reshape(shape)


def _run(n: Node, first, second):
    """The node's op on ``first`` and ``second`` and its other (constant) arguments."""
    args = [first, second] + [argument(n, name) for name in n.op.arg_names[2:]]
    return dispatch.execute(n.op, args)


def _fold(graph: Graph, conv: Node, n: Node, role: int) -> bool:
    if not only_user(conv, n) or not (has_constant_parameters(conv) and has_constant_parameters(n)):
        return False
    w, b, other = argument(conv, "weight"), argument(conv, "bias"), constant_of(n.inputs[1])
    if w is None or not w.dtype.is_floating_point or not _keeps_shape_and_dtype(other, w):
        return False
    channels = w.shape[0]
    kind = n.kind.split("::")[-1]
    b_name = source_name(conv.inputs[2]) if len(conv.inputs) > 2 else ""
    with no_grad():
        if role == _SHIFT:
            per_channel = _resized(other, [channels], w)
            bias = per_channel.new_zeros([channels]) if b is None else b
            set_argument(graph, conv, "bias", _run(n, bias, per_channel).to(bias.dtype).contiguous(),
                         b_name and f"{b_name}_fused_{kind}")
        else:
            w_name = source_name(conv.inputs[1])
            scale = _resized(other, [channels] + [1] * (w.dim() - 1), w)
            set_argument(graph, conv, "weight", _run(n, w, scale).to(w.dtype).contiguous(),
                         w_name and f"{w_name}_fused_{kind}")
            if b is not None:
                scale = _resized(other, [channels], b)
                set_argument(graph, conv, "bias", _run(n, b, scale).to(b.dtype).contiguous(),
                             b_name and f"{b_name}_fused_{kind}")
    n.output().replace_all_uses_with(conv.output())
    n.destroy()
    return True


def fold_conv_arith_changed(graph: Graph, b: Block | None = None) -> bool:
    """Fold each constant shift or scale of a convolution's output; whether any was folded."""
    changed = False
    for n in list((b or graph.block).nodes):
        for inner in n.blocks:
            changed |= fold_conv_arith_changed(graph, inner)
        if n.owning_block is None or not n.inputs:
            continue
        role = _role(n)
        conv = n.inputs[0].node
        if role is not None and conv is not None and is_convolution(conv):
            try:
                changed |= _fold(graph, conv, n, role)
            except LookupError:
                continue
    return changed


@register_pass("fold_conv_arith")
def fold_conv_arith(graph: Graph) -> Graph:
    """Fold constant additions, subtractions, multiplications and divisions of convolution outputs into the
    convolutions; the constants left unused are ``dce``'s."""
    fold_conv_arith_changed(graph)
    return graph
