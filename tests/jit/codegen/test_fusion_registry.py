"""Fused against unfused for every op the fuser can take, generated from the registry.

Each fusible op gets one traced function holding many *variants* of a call to
it, built from the op's registered samples: every dtype PyTorch and eager mode
accept for it (float32, float64, int64, int32, bool), broadcast secondary
arguments, a main argument read through a transposed or sliced (non-contiguous)
view, Python numbers (including ones that change the result dtype, int tensor
* 2.5) and 0-dim tensors. Each variant's op is fed by one elementwise node
(``neg``, ``logical_not`` for bool; another op where that is the op under test)
applied to the inverted input, so the op sees the sample's values, and feeds a
chain of ``add`` nodes (``mul`` for ``add``) joining all variants: one fusion
group, and so one compiled kernel, covers the whole op. Every variant's result
is also a function output, compared with eager mode: ints and bools exactly,
floats within ``maxulp`` (0 for exact arithmetic, a few ulp where a math
function is called, and the listed exceptions). A second trace runs zero-size
inputs. Nothing here names an op except the tolerance table and the
hand-picked must-not-fuse cases.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
import torch

import toolkit
from toolkit.jit.codegen.elementwise import fusibility

from ...ops.test_registry import _call_tk, _torch_fn
from ..fusion_helpers import assert_same, fused_nodes, fusible_ops, groups, statically_fusible, unfused_nodes

SHAPE = (2, 3, 4)
DTYPES = ("float32", "float64", "int64", "int32", "bool")
# Floats agree bit for bit (literals and Scalar arguments are typed in the compute dtype, as eager's numpy steps
# are) except where the formula calls a math function: eager runs numpy's vectorized routine, the fused loop libm's
# through numba (``**`` included), and the two may round the last bit or two differently.
MATH_ULP = 4
MAXULP = {
    # eager's gelu(approximate='none') runs the formula with float64 intermediates (a map kernel); the fused loop
    # steps in float32, as PyTorch's own kernel does; 1 + erf(x) cancels for x << 0, so the last bits move more
    "gelu": 128,
    # x - tanh(x) cancels for small x, scaling tanh's one-ulp difference up
    "tanhshrink": 16,
}


def maxulp(o) -> int:
    """How far (in ulp) a fused float result of ``o`` may be from eager's; see the table above."""
    if o.name in MAXULP:
        return MAXULP[o.name]
    return MATH_ULP if any(_is_math(x) for x in ast.walk(ast.parse(o.formula, mode="eval"))) else 0


def _is_math(x: ast.AST) -> bool:
    """A math function (or helper) call or a power: everything else in a formula rounds exactly as eager."""
    if isinstance(x, ast.Pow):
        return True
    if isinstance(x, ast.Call):
        return not (isinstance(x.func, ast.Name) and x.func.id in ("min", "max", "abs", "bool", "float", "int"))
    return False


class Variant:
    """One call of the op: arguments with ``("in", k)`` standing for traced input k."""

    def __init__(self, label: str, args: list, kwargs: dict, main: int, values: list, views: list):
        self.label = label
        self.args = args
        self.kwargs = kwargs
        self.main = main  # the argument fed by the helper node
        self.values = values  # the numpy value of each input this variant owns
        self.views = views  # per input: None, "transposed" or "sliced" (only the main one is a view)

    def inputs(self) -> list:
        """The traced inputs: the main one inverted (the graph's helper node inverts it back), as its view."""
        k = sum(1 for a in self.args[:self.main] if _is_input(a))
        return [_make_input(v, view, i == k) for i, (v, view) in enumerate(zip(self.values, self.views))]


def _is_input(a) -> bool:
    return isinstance(a, tuple) and a[:1] == ("in",)


def _is_tensor_arg(o, i: int) -> bool:
    return i < len(o.args) and o.args[i].type.startswith("Tensor")


def _as_dtype(v: np.ndarray, dtype: str) -> np.ndarray:
    """A float64 sample as ``dtype`` (ints: rounded after scaling by 4, so they are not all 0 and 1)."""
    if v.dtype != np.float64 or dtype == "float64":
        return v
    if dtype == "bool":
        return np.asarray(v > 0)
    if dtype.startswith("int"):
        return np.asarray(np.round(np.nan_to_num(v, posinf=7.0, neginf=-7.0) * 4)).astype(dtype)
    return v.astype(dtype)


def _fit(v: np.ndarray, main: bool) -> np.ndarray:
    """The main argument takes the group's shape; others keep a shape that broadcasts to it (or 0-dim)."""
    if main:
        return np.resize(v, SHAPE) if v.size else np.zeros(SHAPE, v.dtype)
    if v.ndim == 0:
        return v
    try:
        if np.broadcast_shapes(v.shape, SHAPE) == SHAPE:
            return v
    except ValueError:
        pass
    return np.resize(v, SHAPE[-1:]) if v.size else np.zeros(SHAPE[-1:], v.dtype)


def _accepted(o, args: list, kwargs: dict) -> bool:
    """PyTorch and eager mode both take this call (eager's gaps against PyTorch are the op tests' business)."""
    th = [torch.from_numpy(np.array(a)) if isinstance(a, np.ndarray) else a for a in args]
    tk = [toolkit.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        return isinstance(_torch_fn(o)(*th, **kwargs), torch.Tensor) and _call_tk(o, tk, kwargs) is not None
    except Exception:  # noqa: BLE001 (any refusal means: not a call to test)
        return False


def _variant(o, label: str, args: list, kwargs: dict, n_inputs: int, view: str | None):
    """The Variant for concrete numpy ``args`` (main = first tensor argument), or None if torch refuses it."""
    main = next((i for i, a in enumerate(args) if isinstance(a, np.ndarray) and _is_tensor_arg(o, i)), None)
    if main is None:
        return None
    args = [_fit(a, i == main) if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
    if not _accepted(o, args, kwargs):
        return None
    placed, values, views = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            placed.append(("in", n_inputs + len(values)))
            values.append(a)
            views.append(view if i == main else None)
        else:
            placed.append(a)
    return Variant(label, placed, kwargs, main, values, views)


def _binary_template(o, samples):
    for args, kwargs in samples:
        if (len(args) >= 2 and all(isinstance(a, np.ndarray) for a in args[:2]) and _is_tensor_arg(o, 1)
                and o.args[1].type == "Tensor" and not kwargs and args[0].dtype == np.float64
                and args[1].dtype == np.float64 and 1 in o.promote_args):
            return args
    return None


def _shape_key(args: list, kwargs: dict) -> tuple:
    """What makes two samples different calls here: argument shapes, dtypes, special values, numbers, options."""
    key = []
    for a in args:
        if isinstance(a, np.ndarray):
            fin = bool(np.isfinite(a).all()) if a.dtype.kind == "f" else True
            key.append((a.shape if a.ndim == 0 else "array", a.dtype.str, fin, bool((a == 0).any())))
        else:
            key.append((type(a).__name__, repr(a)))
    return tuple(key), repr(sorted(kwargs.items()))


def build_variants(o) -> list[Variant]:
    """The variants of ``o`` that PyTorch and eager mode accept, from its samples (see the module docstring).

    Samples that differ only in their random values count once; the first float sample runs in every dtype,
    later ones in one dtype each, in turn, which keeps the kernel (and its compile time) small.
    """
    samples = list(o.samples(np.random.default_rng(0)))
    out: list[Variant] = []
    n = 0
    views = (None, "transposed", "sliced")

    def add(label, args, kwargs, view=None) -> bool:
        nonlocal n
        v = _variant(o, label, list(args), dict(kwargs), n, view)
        if v is not None:
            out.append(v)
            n += len(v.values)
        return v is not None

    seen: set = set()
    turn = 0
    for s, (args, kwargs) in enumerate(samples):
        if any(isinstance(a, (list, tuple)) for a in args):
            continue
        key = _shape_key(list(args), kwargs)
        if key in seen:
            continue
        seen.add(key)
        generic = all(a.dtype == np.float64 for a in args if isinstance(a, np.ndarray))
        if not generic:
            add(f"sample {s} native", args, kwargs, views[len(out) % 3])
            continue
        first = not any(v.label.startswith("sample") and "native" not in v.label for v in out)
        order = DTYPES if first else DTYPES[turn % len(DTYPES):] + DTYPES[:turn % len(DTYPES)]
        for dtype in order:
            cast = [_as_dtype(a, dtype) if isinstance(a, np.ndarray) else a for a in args]
            if add(f"sample {s} {dtype}", cast, kwargs, views[len(out) % 3]) and not first:
                turn += 1
                break
    template = _binary_template(o, samples)
    if template is not None:  # Python numbers and 0-dim tensors as the second argument: promotion edge cases
        a, b = template[0], template[1]
        b0 = np.asarray(b.flat[0] if b.size else 1.0)
        extra = [
            ("int64 tensor, Python float", [_as_dtype(a, "int64"), 2.5]),
            ("bool tensor, Python int", [_as_dtype(a, "bool"), 2]),
            ("float32 tensor, 0-dim float64", [_as_dtype(a, "float32"), b0]),
            ("int32 tensor, 0-dim int64", [_as_dtype(a, "int32"), _as_dtype(b0, "int64")]),
            ("int64 tensor, 0-dim float32", [_as_dtype(a, "int64"), b0.astype(np.float32)]),
        ]
        for label, args in extra:
            add(label, args + list(template[2:]), {}, "transposed" if "0-dim" in label else None)
    return out


def _make_input(value: np.ndarray, view: str | None, inverted: bool) -> toolkit.Tensor:
    """``value`` (negated, logically for bool, when ``inverted``) as a tensor of the requested layout."""
    pre = value
    if inverted:
        pre = np.logical_not(value) if value.dtype == np.bool_ else np.negative(value)
    if view == "transposed":
        return toolkit.tensor(np.ascontiguousarray(pre.transpose(2, 1, 0))).permute(2, 1, 0)
    if view == "sliced":
        return toolkit.tensor(np.repeat(pre, 2, axis=-1))[..., ::2]
    return toolkit.tensor(pre)


def _invert(o, x: toolkit.Tensor) -> toolkit.Tensor:
    """The helper feeding the op: ``neg`` (``logical_not`` for bool), or another op where that is ``o`` itself."""
    if x.dtype == toolkit.bool:
        return x.bitwise_xor(True) if o.name == "logical_not" else x.logical_not()
    return x * -1 if o.name == "neg" else x.neg()


def _join(o, outs: list) -> toolkit.Tensor:
    """The helper fed by every variant: a chain of ``add`` (``mul`` where the op is ``add``)."""
    joined = outs[0]
    for r in outs[1:]:
        joined = joined * r if o.name == "add" else joined + r
    if len(outs) == 1:
        joined = _invert(o, joined)
    return joined


def _function(o, variants: list[Variant]):
    def fn(*inputs):
        outs = []
        for v in variants:
            args = []
            for i, a in enumerate(v.args):
                if _is_input(a):
                    a = _invert(o, inputs[a[1]]) if i == v.main else inputs[a[1]]
                args.append(a)
            outs.append(_call_tk(o, args, v.kwargs))
        return (*outs, _join(o, outs))

    return fn


def _eager(o, variants: list[Variant]):
    """What eager mode computes for every variant (with the sample values themselves), and the join."""
    outs = []
    for v in variants:
        vals = iter(v.values)
        args = [toolkit.tensor(next(vals)) if _is_input(a) else a for a in v.args]
        outs.append(_call_tk(o, args, v.kwargs))
    return (*outs, _join(o, outs))


def _op_id(o) -> str:
    return o.schema.full_name


def _cases():
    cases = []
    for o in fusible_ops():
        if o.samples is None:
            continue
        variants = build_variants(o)
        if variants:
            cases.append((o, variants))
    return cases


CASES = _cases()
COVERED = {_op_id(o) for o, _ in CASES}


def _check(o, variants, inputs, kind):
    fn = _function(o, variants)
    traced = toolkit.jit.trace(fn, tuple(inputs), check_trace=False)
    plan = traced.graph_for(*inputs)
    got = traced(*inputs)
    expected = _eager(o, variants)
    tolerance = maxulp(o)
    for g, e, v in zip(got, expected, variants):
        assert_same(g, e, tolerance if g.dtype.is_floating_point else 0, f"{_op_id(o)} [{v.label}]")
    _check_joined(got[-1], expected, tolerance, _op_id(o))
    inside = [n for n in fused_nodes(plan) if n.kind == kind]  # Python-number variants may pick another overload
    outside = unfused_nodes(plan, kind)
    assert len(inside) + len(outside) == len(variants), "a variant's node was lost or duplicated by the plan"
    for n in outside:
        assert fusibility(n) is not None, f"{n} stayed outside every fusion group though it is fusible"
    return plan, inside, outside


def _check_joined(got, expected: tuple, tolerance: int, what: str) -> None:
    """The join sums every variant: exact where each term is; else within the terms' ulps times their magnitude."""
    if tolerance == 0 or not got.dtype.is_floating_point:
        assert_same(got, expected[-1], 0, f"{what} [joined]")
        return
    a, e = got.numpy().astype(np.float64), expected[-1].numpy().astype(np.float64)
    terms = [t.numpy() for t in expected[:-1]]
    eps = max(np.finfo(t.dtype).eps if t.dtype.kind == "f" else 0.0 for t in terms)
    scale = sum(np.abs(np.nan_to_num(t.astype(np.float64), posinf=0.0, neginf=0.0)) for t in terms)
    np.testing.assert_allclose(a, e, rtol=0, atol=float((tolerance + 1) * eps * np.max(scale, initial=0.0)) + 1e-300,
                               equal_nan=True, err_msg=f"{what} [joined]")


@pytest.mark.parametrize("o,variants", [pytest.param(o, v, id=_op_id(o)) for o, v in CASES])
def test_fused_equals_eager(o, variants):
    inputs = [x for v in variants for x in v.inputs()]
    plan, inside, outside = _check(o, variants, inputs, o.qualified_name)
    assert any(n.op is o for n in inside), f"no variant of {_op_id(o)} fused: {[fusibility(n) for n in outside]}"
    assert len(groups(plan)) == 1, f"expected one kernel for all variants:\n{plan}"
    assert len(plan.kernels) == 1 and plan.kernels[0].calls >= 1, "the fused kernel did not run"


@pytest.mark.parametrize("o,variants", [pytest.param(o, v, id=_op_id(o)) for o, v in CASES])
def test_zero_size_inputs(o, variants):
    picked = [v for v in variants if v.label.startswith("sample")][:2]
    zero = renumbered([Variant(v.label, v.args, v.kwargs, v.main,
                               [np.zeros((0,) + x.shape[1:], x.dtype) if x.shape == SHAPE else x for x in v.values],
                               [None] * len(v.values)) for v in picked])
    inputs = [x for v in zero for x in v.inputs()]
    plan, inside, _ = _check(o, zero, inputs, o.qualified_name)
    assert any(n.op is o for n in inside), f"no zero-size variant of {_op_id(o)} fused"
    assert all(tuple(n.outputs[0].type.sizes)[0] == 0 for n in inside)


def renumbered(variants: list[Variant]) -> list[Variant]:
    """``variants`` as the only ones of a traced function: their inputs numbered from 0."""
    k = 0
    for v in variants:
        args = []
        for a in v.args:
            if _is_input(a):
                a, k = ("in", k), k + 1
            args.append(a)
        v.args = args
    return variants


def test_every_fusible_op_is_covered():
    fusible = {_op_id(o) for o in fusible_ops()}
    assert COVERED == fusible, f"fusible ops without a fusion test: {sorted(fusible - COVERED)}"


def _ints(*shape, low=-9, high=9, dtype=toolkit.int64):
    return toolkit.tensor(np.random.default_rng(1).integers(low, high, shape)).to(dtype)


_POS = toolkit.tensor(np.random.default_rng(2).uniform(0.5, 3.0, (3, 4)))
MUST_NOT_FUSE = [
    ("div floor", lambda x, y: toolkit.div(x.neg(), y, rounding_mode="floor").neg(),
     (_POS.float(), _POS.float() + 1), "aten::div", "rounding_mode"),
    ("div trunc", lambda x, y: toolkit.div(x.neg(), y, rounding_mode="trunc").neg(),
     (_ints(3, 4), _ints(3, 4, low=1)), "aten::div", "rounding_mode"),
    ("integer floor_divide", lambda x, y: toolkit.floor_divide(x.neg(), y).neg(),
     (_ints(3, 4), _ints(3, 4, low=1)), "aten::floor_divide", "integer division"),
    ("integer remainder", lambda x, y: toolkit.remainder(x.neg(), y).neg(),
     (_ints(3, 4), _ints(3, 4, low=1)), "aten::remainder", "integer division"),
    ("integer pow", lambda x, y: toolkit.pow(x.neg(), y).neg(),
     (_ints(3, 4, dtype=toolkit.int32), _ints(3, 4, low=0, high=4, dtype=toolkit.int32)), "aten::pow",
     "integer division"),
    ("square", lambda x: x.neg().square().neg(), (_ints(3, 4),), "aten::square", "own dtypes"),
    ("lerp", lambda x, y, w: toolkit.lerp(x.neg(), y, w).neg(), (_POS, _POS * 2, _POS / 4), "aten::lerp",
     "own dtypes"),
    ("isclose", lambda x, y: toolkit.isclose(x.neg(), y).logical_not(), (_POS, -_POS), "aten::isclose",
     "own dtypes"),
]


@pytest.mark.parametrize("fn,inputs,kind,reason", [pytest.param(*c[1:], id=c[0]) for c in MUST_NOT_FUSE])
def test_arguments_that_must_not_fuse_stay_unfused_and_correct(fn, inputs, kind, reason):
    traced = toolkit.jit.trace(fn, inputs)
    plan = traced.graph_for(*inputs)
    [node] = unfused_nodes(plan, kind)
    assert node.owning_block is plan.graph.block, f"{kind} went into a fusion group:\n{plan}"
    assert reason in fusibility(node), fusibility(node)
    assert_same(traced(*inputs), fn(*inputs))


def test_ops_that_compute_their_own_dtypes_are_not_fusible():
    from toolkit.ops import registry as R

    own = {o.name for o in R.all_ops() if o.kind in ("elementwise", "comparison") and o.formula
           and not statically_fusible(o)}
    assert {"square", "lerp", "isclose"} <= own
