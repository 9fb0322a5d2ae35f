"""Shared by the fusion tests: which ops the fuser may take, where nodes ended up, and ulp-exact comparisons."""

from __future__ import annotations

import numpy as np

import toolkit
from toolkit.jit.codegen.elementwise import FUSIBLE_KINDS
from toolkit.ops import registry as R


def statically_fusible(o: R.OpDef) -> bool:
    """An op the code generator can take at all: elementwise/comparison with a formula and eager's promotion."""
    return (o.kind in FUSIBLE_KINDS and bool(o.formula) and o.promotion != R.PROMOTE_NONE
            and o.n_outputs == 1)


def fusible_ops() -> list[R.OpDef]:
    return [o for o in R.all_ops() if statically_fusible(o)]


def groups(graph) -> list:
    """The FusionGroup nodes of a graph (or of what ``graph_for`` returned), in program order."""
    g = getattr(graph, "graph", graph)
    return [n for n in g.all_nodes() if n.kind == "prim::FusionGroup"]


def fused_nodes(graph) -> list:
    """Every node inside a fusion group's subgraph (constants left out)."""
    return [m for n in groups(graph) for m in n["Subgraph"].nodes() if m.kind != "prim::Constant"]


def unfused_nodes(graph, kind: str) -> list:
    g = getattr(graph, "graph", graph)
    return [n for n in g.all_nodes() if n.kind == kind]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN/inf positions must agree first)."""
    int_t = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia = a.view(int_t).astype(np.int64)
    ib = b.view(int_t).astype(np.int64)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + sign), ia)  # map the sign-magnitude bit patterns onto a monotone line
    ib = np.where(ib < 0, -(ib + sign), ib)
    return np.abs(ia - ib)


def assert_same(actual, expected, maxulp: int = 0, what: str = "") -> None:
    """Same shape and dtype; equal ints/bools; floats: same NaN/inf places and within ``maxulp`` ulp."""
    a = actual.detach().numpy() if isinstance(actual, toolkit.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if isinstance(expected, toolkit.Tensor) else np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
    if a.dtype.kind != "f":
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    assert (nan_a == nan_e).all(), f"{what}: NaN at different places\n{a}\n{e}"
    ok = ~nan_a
    a, e = a[ok], e[ok]
    inf = np.isinf(a) | np.isinf(e)
    np.testing.assert_array_equal(a[inf], e[inf], err_msg=what)
    zero = (a == 0) & (e == 0)
    assert (np.signbit(a[zero]) == np.signbit(e[zero])).all(), f"{what}: zeros of different signs\n{a}\n{e}"
    d = ulp_distance(a[~inf], e[~inf])
    worst = int(d.max()) if d.size else 0
    assert worst <= maxulp, f"{what}: {worst} ulp apart (allowed {maxulp})\n{a}\n{e}"


def assert_close_chain(actual, expected, what: str = "") -> None:
    """For chains of math functions, where one-ulp differences compound: same dtype, values within 1e-5."""
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6,
                               equal_nan=True, err_msg=what)
