"""PyTorch's names for graph nodes: the class name of an op's ``grad_fn``, and the short name its errors use.

Kept apart from the node classes so that saved tensors, which the nodes hold,
can name a node in their version-mismatch error without importing the nodes.

PyTorch names a node after the derivative formula that ran, not after the
function called: ``conv2d`` records ``ConvolutionBackward0``, ``arcsin``
``AsinBackward0``, and the second formula of one name is ``Backward1``
(``pow(Tensor, Tensor)`` is ``PowBackward1``). Each op says so beside its
definition (``OpDef.grad_fn``); an op that says nothing is named after itself.
"""

from __future__ import annotations

import re

from ..ops.registry import OpDef


def default_node_name(op_name: str) -> str:
    """``log1p`` -> ``Log1PBackward0``: the op's name in CamelCase, a letter after a digit capitalized too, as
    PyTorch spells them (``Rad2DegBackward0``, ``MaxPool2DWithIndicesBackward0``); an in-place ``_`` dropped."""
    return "".join(p.title() for p in op_name.strip("_").split("_")) + "Backward0"


def node_name(op: OpDef, bound: list | None = None, outputs: tuple | None = None) -> str:
    """The class name of ``op``'s ``grad_fn`` for one call (``bound``: its arguments, ``outputs``: results).

    An in-place op is named as its out-of-place op (``mul_`` records ``MulBackward0``), an alias as the op it
    names. A rule that depends on the call needs the call: asked without one, the op's own name is given.
    """
    while True:
        declared = op.grad_fn
        if declared is None and op.inplace_of is not None:
            op = op.inplace_of
            continue
        if isinstance(declared, OpDef):
            op = declared
            continue
        if declared is None:
            return default_node_name(op.name)
        if isinstance(declared, str):
            return declared
        if bound is None:
            return default_node_name(op.name)
        if len(bound) < len(op.args):  # a call may leave trailing defaults out: the rule sees every argument
            bound = [*bound, *(a.default for a in op.args[len(bound):])]
        return declared(bound, outputs)


def is_per_call(op: OpDef) -> bool:
    """Whether ``op``'s node name depends on the call (a rule), so that its class is not cached on the op."""
    while True:
        declared = op.grad_fn
        if declared is None and op.inplace_of is not None:
            op = op.inplace_of
        elif isinstance(declared, OpDef):
            op = declared
        else:
            return callable(declared)


def short_name(node) -> str:
    """``ExpBackward0`` -> ``Exp``, as PyTorch names a producer in its version-mismatch error."""
    cls = node if isinstance(node, type) else type(node)
    return re.sub(r"Backward\d*$", "", cls.__name__)
