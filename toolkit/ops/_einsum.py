"""einsum: the op, its equation parsing (PyTorch's rules and errors) and its derivative, written with einsum itself.

The parser rewrites an equation into explicit subscripts: ``...`` becomes
fresh letters and an implicit output is spelled out. Kernel, meta rule and
derivative all work on that explicit form.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from .._core.meta import TensorMeta
from . import api
from ._linalg_checks import scalar_name
from .registry import LINALG, op

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # PyTorch's label order: A-Z before a-z


@dataclass(frozen=True)
class EinsumSpec:
    inputs: tuple  # explicit subscripts per operand
    output: str
    sizes: dict  # letter -> size (the broadcast size over operands)
    letters_free: str  # letters the equation does not use

    @property
    def equation(self) -> str:
        return ",".join(self.inputs) + "->" + self.output

    @property
    def out_shape(self) -> tuple:
        return tuple(self.sizes[c] for c in self.output)


def _check_term(term: str, offset: int) -> None:
    for i, c in enumerate(term):
        if c not in _LETTERS and c != ".":
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {offset + i} in the equation string, subscripts must be "
                "in [a-zA-Z]"
            )
    if "." in term.replace("...", "", 1) or term.count("...") > 1:
        raise RuntimeError("einsum(): found '.' for operand that is not part of any ellipsis")


def parse_einsum(equation: str, tensors) -> EinsumSpec:
    """Validate ``equation`` against the operands' shapes and return it in explicit form."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not tensors:
        raise RuntimeError("einsum(): must provide at least one operand")
    if len(terms) > len(tensors):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    offset = 0
    for t in terms:
        _check_term(t, offset)
        offset += len(t) + 1
    if arrow:
        _check_term(rhs, offset + 1)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dtype:
            raise RuntimeError(f"expected scalar type {scalar_name(tensors[0])} but found {scalar_name(t)}")
    used = set(eq) - {".", ",", "-", ">"}
    free = "".join(c for c in _LETTERS if c not in used)
    n_ell = 0
    for k, (term, t) in enumerate(zip(terms, tensors)):
        named = len(term.replace("...", ""))
        nd = len(t.shape)
        if "..." in term:
            if named > nd:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than the number of "
                    f"dimensions ({nd}) for operand {k}"
                )
            n_ell = max(n_ell, nd - named)
        elif named != nd:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match the number of "
                f"dimensions ({nd}) for operand {k} and no ellipsis was given"
            )
    if n_ell > len(free):
        raise RuntimeError("einsum(): too many dimensions for the available subscript letters")
    ell, free = free[:n_ell], free[n_ell:]
    inputs, sizes = [], {}
    for k, (term, t) in enumerate(zip(terms, tensors)):
        nd = len(t.shape)
        e = nd - len(term.replace("...", ""))
        explicit = term.replace("...", ell[n_ell - e:]) if "..." in term else term
        for c, s in zip(explicit, t.shape):
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = s
            elif s != prev and s != 1:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {s} for operand {k} which does not broadcast with previously "
                    f"seen size {prev}"
                )
        inputs.append(explicit)
    if arrow:
        output = rhs.replace("...", ell)
        for i, c in enumerate(output):
            if c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
            if output.index(c) != i:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    else:
        counts = {}
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(c for c in _LETTERS if counts.get(c) == 1)
    return EinsumSpec(tuple(inputs), output, sizes, free)


def einsum_backward(grad, equation: str, tensors, needs_input_grad):
    """Each operand's gradient is an einsum of ``grad`` with the other operands.

    A letter repeated within an operand (a diagonal) gets a fresh letter per
    repeat, tied back by identity matrices; a letter summed only within the
    operand is broadcast back by a vector of ones. Both are constants, so the
    result is again an einsum and differentiates the same way.
    """
    spec = parse_einsum(equation, tensors)
    grads = []
    for k, t in enumerate(tensors):
        if not needs_input_grad[k]:
            grads.append(None)
            continue
        terms = [spec.output] + [s for j, s in enumerate(spec.inputs) if j != k]
        operands = [grad] + [o for j, o in enumerate(tensors) if j != k]
        free = list(spec.letters_free)
        target, seen = [], set()
        for c, size in zip(spec.inputs[k], t.shape):
            if c in seen:
                if not free:
                    raise NotImplementedError("einsum backward: too many repeated subscripts for the available letters")
                fresh = free.pop()
                terms.append(c + fresh)
                operands.append(api.eye(size, dtype=grad.dtype))
                target.append(fresh)
            else:
                seen.add(c)
                target.append(c)
        available = set("".join(terms))
        for c, size in zip(spec.inputs[k], t.shape):
            if c not in available:
                terms.append(c)
                operands.append(api.ones((size,), dtype=grad.dtype))
                available.add(c)
        g = api.einsum(",".join(terms) + "->" + "".join(target), operands)
        if any(gs == 1 and ts != 1 for gs, ts in zip(g.shape, t.shape)):
            # the operand's dim met size-1 dims of every other operand: it saw the broadcast value
            g = g.expand([ts if gs == 1 else gs for gs, ts in zip(g.shape, t.shape)])
        grads.append(g)
    return grads


# ---------------------------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------------------------
@op("einsum(str equation, Tensor[] tensors) -> Tensor", kind=LINALG, out=False, autocast="lower", method=False,
    grad_fn="ViewBackward0")
def einsum(equation, tensors):
    """Sum of products over the subscripts of ``equation`` (numpy's einsum with a contraction-order search).

    Operands may be given as a list or as separate arguments: ``einsum('ij,jk->ik', a, b)``.
    """
    spec = parse_einsum(equation, tensors)
    out = np.einsum(spec.equation, *tensors, optimize=len(tensors) > 2)
    if any(np.may_share_memory(out, t) for t in tensors):
        out = out.copy()  # numpy returns views for pure permutations/diagonals; results own their memory
    return np.asarray(out)


@einsum.meta_rule
def _(equation, tensors):
    spec = parse_einsum(equation, tensors)
    return TensorMeta(spec.out_shape, tensors[0].dtype, tensors[0].device)


@einsum.grad
def _(grad, equation, tensors, needs_input_grad):
    return einsum_backward(grad, equation, tensors, needs_input_grad)


@einsum.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield ("ij,jk->ik", [r((2, 3)), r((3, 2))]), {}
    yield ("ij,jk", [r((3, 2)).T, r((3, 4))]), {}
    yield ("bij,bjk->bik", [r((2, 2, 3)), r((2, 3, 2))]), {}
    yield ("i,i->", [r(3), r(3)]), {}
    yield ("i,j->ij", [r(3), r(2)]), {}
    yield ("ij->j", [r((2, 3))]), {}
    yield ("ii->i", [r((3, 3))]), {}
    yield ("ii", [r((3, 3))]), {}
    yield ("...ij,...jk->...ik", [r((2, 1, 2, 3)), r((3, 3, 2))]), {}
    yield ("i...->...", [r((2, 3, 2))]), {}
    yield ("ij,jk,kl->il", [r((2, 3)), r((3, 2)), r((2, 2))]), {}
    yield ("i,ij->j", [r(1), r((3, 2))]), {}
    yield ("bn,anm,bm->ba", [r((2, 3)), r((2, 3, 2)), r((2, 2))]), {}
