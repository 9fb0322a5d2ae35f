"""Named dimensions: PyTorch's name inference rules as pure functions of names, shapes and bound arguments.

A tensor's names live in its rarely used ``_extra`` dict (``_extra["names"]``, a tuple of str or None), so an
unnamed tensor carries nothing and the dispatcher's one ``_extra is not None`` check is all it pays. Each op's
rule is its ``OpDef.name_rule``: one of the standard rules named here (``KEEP``, ``UNIFY``, ``REDUCE``,
``MATMUL``) or a function ``rule(op, bound, out_ndim) -> names``; ``toolkit.dispatch.names`` applies it.

Example::

    unify_from_right(("N", "C"), (None, "C"))  # ("N", "C")
    unify_from_right(("N", "C"), ("N",))       # RuntimeError: ... dim 'C' and dim 'N' ... do not match.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

KEEP = "keep"  # the output has self's names (unary elementwise, clone, contiguous, softmax)
UNIFY = "unify"  # names of all tensor inputs unified from the right (binary elementwise, broadcasting)
REDUCE = "reduce"  # self's names less the reduced dims (``dim``; all of them when None), kept with keepdim
MATMUL = "matmul"  # the contracted dims drop, batch dims unify (mm, bmm, matmul)

ELLIPSIS = "..."


class _NameState(threading.local):
    off = False  # True while an op runs on named inputs (its inner calls then ignore names) and in backward
    # Set on the class (so for every thread) once any tensor is given names: until then the few checks that
    # are not behind a tensor's own ``_extra`` (composite ops) cost one attribute read.
    in_use = False


NAME_STATE = _NameState()


def names_of(t) -> tuple | None:
    """The names of tensor ``t`` when it has any (None for an unnamed tensor or a non-tensor)."""
    extra = getattr(t, "_extra", None)
    return extra.get("names") if extra else None


def full_names(t) -> tuple:
    """``t.names``: a name or None per dimension."""
    n = names_of(t)
    return n if n is not None else (None,) * t.ndim


def repr_names(names: Sequence) -> str:
    """Names as PyTorch's messages print them: ``['N', None]``."""
    return "[" + ", ".join("None" if n is None else repr(n) for n in names) + "]"


def check_names(names, ndim: int, what: str = "names") -> tuple | None:
    """Validate ``names`` for a tensor of ``ndim`` dims: the stored tuple (None when all are None)."""
    if names is None:
        return None
    names = tuple(names)
    if len(names) != ndim:
        raise RuntimeError(f"Number of names ({len(names)}) and number of dimensions in tensor ({ndim}) do not "
                           "match. Attempted to create a tensor with names " + repr_names(names))
    seen = set()
    for n in names:
        if n is None:
            continue
        if not isinstance(n, str):
            raise TypeError(f"{what}: expected a str or None for each name, got {type(n).__name__}")
        if not n.isidentifier() or n.startswith("_"):
            raise RuntimeError(f"Invalid name: a valid identifier contains only digits, alphabetical characters "
                               f"and/or underscore and starts with a non-digit. got: '{n}'.")
        if n in seen:
            raise RuntimeError(f"Cannot construct a tensor with duplicate names. Got names: {repr_names(names)}.")
        seen.add(n)
    return names if seen else None


def dim_of(names: tuple, ndim: int, name: str) -> int:
    """The position of dimension ``name`` (PyTorch's ``dimname_to_position``)."""
    if names is not None and name in names:
        return names.index(name)
    shown = repr_names(names if names is not None else (None,) * ndim)
    raise RuntimeError(f"Name '{name}' not found in Tensor{shown}.")


def check_written(have: tuple, computed: tuple | None) -> None:
    """PyTorch's rule for a named tensor an op writes its result into (``out=``, an in-place op's ``self``): it
    must already have exactly the computed names (an unnamed one simply takes them)."""
    computed = computed if computed is not None else (None,) * len(have)
    if tuple(have) != tuple(computed):
        raise RuntimeError(f"Name mismatch: specified out tensor with names {repr_names(have)} are not the same as "
                           f"the computed output names {repr_names(computed)}. Please rename the out tensor's dims "
                           "with `Tensor.rename`.")


def unify_from_right(a: tuple, b: tuple, action: str = "broadcast") -> tuple:
    """Broadcast two name lists as PyTorch does: aligned from the right, None matching anything, a name that
    matches but sits at another position from the right being an error (``Misaligned dims``). ``action`` is the
    verb the messages use (``cat`` for concatenation)."""
    out = list(a if len(a) >= len(b) else b)
    for i in range(1, min(len(a), len(b)) + 1):
        x, y = a[-i], b[-i]
        if x is not None and y is not None and x != y:
            raise RuntimeError(f"Error when attempting to {action} dims {repr_names(a)} and dims {repr_names(b)}: "
                               f"dim '{x}' and dim '{y}' are at the same position from the right but do not match.")
        n = x if x is not None else y
        if n is not None:
            for other, side in ((a, x), (b, y)):
                if side is None and n in other:
                    left, right = (a, b) if other is a else (b, a)
                    raise RuntimeError(
                        f"Misaligned dims when attempting to {action} dims {repr_names(left)} and dims "
                        f"{repr_names(right)}: dim '{n}' appears in a different position from the right across "
                        "both lists.")
        out[-i] = n
    return tuple(out)


def _stored(names: tuple) -> tuple | None:
    return names if any(n is not None for n in names) else None


def tensors_of(op, bound) -> list:
    """The call's tensor arguments, those in lists included."""
    out = []
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, (list, tuple)):
            out.extend(e for e in v if hasattr(e, "_extra"))
        elif hasattr(v, "_extra"):
            out.append(v)
    return out


def keep(op, bound, out_ndim: int) -> tuple | None:
    return names_of(bound[0])


def unify(op, bound, out_ndim: int) -> tuple | None:
    acc = ()
    for t in tensors_of(op, bound):
        acc = unify_from_right(acc, full_names(t))
    return _stored(acc)


def reduce(op, bound, out_ndim: int) -> tuple | None:
    """Self's names less the reduced ``dim``s; all kept where the output keeps every dim (``keepdim``,
    ``cumsum``), none where it has no dims left."""
    names = full_names(bound[0])
    if out_ndim == len(names):
        return _stored(names)
    if out_ndim == 0 or "dim" not in op.arg_names:
        return None
    dim = bound[op.arg_names.index("dim")]
    dims = {wrapped(d, len(names)) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
    return _stored(tuple(n for i, n in enumerate(names) if i not in dims))


def matmul(op, bound, out_ndim: int) -> tuple | None:
    """PyTorch's ``compute_matmul_outnames``: contract self's last dim with other's second to last (its only one
    for a vector); the batch dims unify."""
    return _stored(matmul_names(op.name, full_names(bound[0]), full_names(bound[1])))


def matmul_names(op_name: str, a: tuple, b: tuple) -> tuple:
    """The output names of ``a @ b`` given the operands' names (all of them, None for unnamed dims)."""
    if not a or not b:
        raise RuntimeError(f"{op_name}: both arguments to matmul need to be at least 1D, but they are "
                           f"{len(a)}D and {len(b)}D")
    if len(a) >= 2 and len(b) >= 2:
        return check_unique(op_name, unify_from_right(a[:-2], b[:-2]) + a[-2:-1] + b[-1:])
    return check_unique(op_name, a[:-1] + (b[:-2] + b[-1:] if len(b) >= 2 else ()))


def check_unique(op_name: str, names: tuple) -> tuple:
    """``names`` when no name repeats (a contraction may bring the same name from both sides), else PyTorch's
    ``checkUnique`` error."""
    named = [n for n in names if n is not None]
    for n in named:
        if named.count(n) > 1:
            raise RuntimeError(f"{op_name}: Attempted to propagate dims '{n}' and '{n}' to the output, but that "
                               f"would create a tensor with duplicate names {repr_names(names)}. Please rename your "
                               "inputs with Tensor.rename to prevent this.")
    return names


STANDARD = {KEEP: keep, UNIFY: unify, REDUCE: reduce, MATMUL: matmul}


def unnamed(op, bound, out_ndim: int) -> None:
    """``as_strided``: a view of the storage in any geometry, which PyTorch gives no names."""
    return None


def keep_right(op, bound, out_ndim: int) -> tuple | None:
    """``expand``: self's names on the output's last dims, its new leading dims unnamed."""
    names = names_of(bound[0])
    if names is None or out_ndim <= len(names):
        return names
    return (None,) * (out_ndim - len(names)) + names


def reverse(op, bound, out_ndim: int) -> tuple | None:
    """``t``: a matrix's two names swap (a vector's or a scalar's stay)."""
    return _stored(full_names(bound[0])[::-1])


def addmm(op, bound, out_ndim: int) -> tuple | None:
    """``addmm``, ``addmv``: the product's names (``matmul``'s rule on ``mat1``, ``mat2``) unified with self's."""
    product = matmul_names(op.name, full_names(bound[1]), full_names(bound[2]))
    return _stored(unify_from_right(product, full_names(bound[0])))


def linear(op, bound, out_ndim: int) -> tuple | None:
    """``linear(input, weight, bias)`` as PyTorch computes it, ``input @ weight.t() + bias``: input's last dim
    gives way to weight's first, and the bias's names unify with the result."""
    out = matmul_names(op.name, full_names(bound[0]), full_names(bound[1])[::-1])
    if len(bound) > 2 and hasattr(bound[2], "_extra"):
        out = unify_from_right(out, full_names(bound[2]))
    return _stored(out)


def cat(op, bound, out_ndim: int) -> tuple | None:
    """PyTorch's ``compute_cat_outnames``: every input has the same number of dims, their names unify."""
    out = None
    for t in bound[0]:
        names = full_names(t)
        if not names:
            raise RuntimeError("zero-dimensional tensor cannot be concatenated")
        if out is not None and len(out) != len(names):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(out)} and {len(names)}")
        out = names if out is None else unify_from_right(out, names, "cat")
    return _stored(out) if out else None


def cdist(op, bound, out_ndim: int) -> tuple | None:
    """PyTorch's ``compute_cdist_outnames``: the batch dims unify, then x1's and x2's row dims (second to last)."""
    a, b = full_names(bound[0]), full_names(bound[1])
    if len(a) < 2 or len(b) < 2:  # the op's own check names the problem
        return None
    return _stored(check_unique(op.name, unify_from_right(a[:-2], b[:-2], "cdist") + (a[-2], b[-2])))


def diagonal(op, bound, out_ndim: int) -> tuple | None:
    """``diagonal``: ``dim1`` and ``dim2`` go, and the diagonal, appended last, is unnamed."""
    names = full_names(bound[0])
    gone = {wrapped(bound[k], len(names)) for k in (2, 3)}
    return _stored(tuple(n for i, n in enumerate(names) if i not in gone) + (None,))


def check_unify(op, bound, out_ndim: int) -> None:
    """``masked_select``: the inputs' names must unify as a broadcast would; the (flat) output is unnamed."""
    unify(op, bound, out_ndim)


# Rules that read only the inputs run before the op, so a mismatch raises before anything is written.
for _early in (unify, matmul, addmm, linear, cat, cdist, check_unify):
    _early.early = True


def wrapped(d: int, ndim: int) -> int:
    return d % ndim if ndim else 0


def transpose(op, bound, out_ndim: int) -> tuple | None:
    names = list(full_names(bound[0]))
    i, j = (wrapped(bound[k], len(names)) for k in (1, 2))
    names[i], names[j] = names[j], names[i]
    return _stored(tuple(names))


def drop_dim(op, bound, out_ndim: int) -> tuple | None:
    """``select``, ``unbind``: the ``dim`` argument's dimension goes."""
    names = full_names(bound[0])
    d = wrapped(bound[op.arg_names.index("dim")], len(names))
    return _stored(names[:d] + names[d + 1:])


def squeeze(op, bound, out_ndim: int) -> tuple | None:
    self = bound[0]
    names, shape = full_names(self), tuple(self.shape)
    dim = bound[1] if len(bound) > 1 else None
    dims = range(len(names)) if dim is None else {wrapped(d, len(names)) for d in (
        dim if isinstance(dim, (tuple, list)) else (dim,))}
    return _stored(tuple(n for i, n in enumerate(names) if not (i in dims and shape[i] == 1)))


def flatten(op, bound, out_ndim: int) -> tuple | None:
    names = full_names(bound[0])
    if not names:
        return None
    s, e = (wrapped(bound[k], len(names)) for k in (1, 2))
    return _stored(names[:s] + (names[s] if s == e else None,) + names[e + 1:])


def _flatten_form(t, args: tuple, kwargs: dict):
    if len(args) == 2 and isinstance(args[0], (list, tuple)) and isinstance(args[1], str) and not kwargs:
        s, e, names = flatten_by_names(full_names(t), t.ndim, args[0], args[1])
        return (s, e), {}, names
    return None


flatten.dimname_form = _flatten_form


def unflatten(op, bound, out_ndim: int) -> tuple | None:
    names = full_names(bound[0])
    d = wrapped(bound[1], len(names))
    return _stored(names[:d] + (None,) * len(bound[2]) + names[d + 1:])


def _unflatten_form(t, args: tuple, kwargs: dict):
    if len(args) == 2 and isinstance(args[0], str) and not kwargs:
        d, sizes, names = unflatten_by_name(full_names(t), t.ndim, args[0], args[1])
        return (d, sizes), {}, names
    return None


unflatten.dimname_form = _unflatten_form


def flatten_by_names(names: tuple, ndim: int, dims: Sequence, out_dim: str) -> tuple:
    """``flatten(dims, out_dim)``: the positions to flatten (they must be consecutive) and the output names."""
    pos = [dim_of(names, ndim, d) for d in dims]
    if not pos or pos != list(range(pos[0], pos[0] + len(pos))):
        raise RuntimeError(f"flatten(tensor, dims, out_dim): dims must be consecutive in Tensor"
                           f"{repr_names(names)}, got dims = {repr_names(dims)}.")
    return pos[0], pos[-1], names[:pos[0]] + (out_dim,) + names[pos[-1] + 1:]


def unflatten_by_name(names: tuple, ndim: int, dim: str, namedshape: Sequence) -> tuple:
    """``unflatten(dim, namedshape)``: the position, the sizes and the output names."""
    d = dim_of(names, ndim, dim)
    if not namedshape:
        raise RuntimeError("unflatten: sizes must be non-empty")
    new = tuple(n for n, _ in namedshape)
    return d, tuple(s for _, s in namedshape), names[:d] + new + names[d + 1:]


def expand_ellipsis(names: Sequence, tensor_names: tuple, what: str) -> tuple:
    """Replace ``'...'`` in ``names`` by the tensor's names it stands for (``refine_names``, ``align_to``)."""
    names = tuple(ELLIPSIS if n is Ellipsis else n for n in names)
    if ELLIPSIS not in names:
        return names
    if names.count(ELLIPSIS) > 1:
        raise RuntimeError(f"{what}: More than one Ellipsis ('...') found in names ({list(names)}). This function "
                           "supports up to one Ellipsis.")
    i = names.index(ELLIPSIS)
    rest = len(tensor_names) - (len(names) - 1)
    if rest < 0:
        raise RuntimeError(f"{what}: too many names {list(names)} for a tensor of {len(tensor_names)} dims")
    return names[:i] + tensor_names[i:i + rest] + names[i + 1:]


def refine(old: tuple, new: Sequence) -> tuple:
    """``refine_names``: each None may become a name, a name must stay itself."""
    new = expand_ellipsis(new, old, "refine_names")
    if len(new) != len(old):
        raise RuntimeError(f"refine_names: cannot coerce Tensor{repr_names(old)} to Tensor{repr_names(new)} "
                           "because they have a different number of dims")
    for o, n in zip(old, new):
        if o is not None and o != n:
            raise RuntimeError(f"refine_names: cannot coerce Tensor{repr_names(old)} to Tensor{repr_names(new)} "
                               f"because '{o}' is different from '{n}' at index {old.index(o)}")
    return tuple(new)


def align_order(old: tuple, new: Sequence) -> tuple[list, tuple]:
    """``align_to``: for each output dim, the input dim it takes (None: a new dim of size one)."""
    if any(n is None for n in old):
        raise RuntimeError(f"align_to: All input dims must be named. Found unnamed dim at index "
                           f"{old.index(None)} of Tensor{repr_names(old)}")
    new = tuple(ELLIPSIS if n is Ellipsis else n for n in new)
    if ELLIPSIS in new:  # the tensor's other dims, in their order
        i = new.index(ELLIPSIS)
        new = new[:i] + tuple(n for n in old if n not in new) + new[i + 1:]
    for n in old:
        if n not in new:
            raise RuntimeError(f"align_to: Cannot find dim '{n}' from Tensor{repr_names(old)} in desired "
                               f"alignment {repr_names(new)}.")
    return [old.index(n) if n in old else None for n in new], tuple(new)


class names_off:
    """While active, ops ignore names on this thread: a named op's inner calls, backward, the names API's own
    views. Nests: the state before is restored on exit."""

    def __enter__(self) -> None:
        self.before = NAME_STATE.off
        NAME_STATE.off = True

    def __exit__(self, *exc) -> None:
        NAME_STATE.off = self.before


def set_names(t, names: tuple | None) -> None:
    """Store (or, for None, clear) tensor ``t``'s names in its ``_extra``."""
    if names is None:
        if t._extra:
            t._extra.pop("names", None)
        return
    _NameState.in_use = True
    if t._extra is None:
        t._extra = {}
    t._extra["names"] = names
