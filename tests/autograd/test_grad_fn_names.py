"""grad_fn class names against PyTorch's, generated from the op registry.

For every differentiable op with samples, the first sample is run in both
libraries on float64 inputs that require grad, and ``type(out.grad_fn).__name__``
must be PyTorch's: the name of the derivative formula PyTorch runs
(``ConvolutionBackward0`` for ``conv2d``, ``PowBackward1`` for ``pow`` of two
tensors), which each op declares beside its definition (``OpDef.grad_fn``).

``DIFFERENCES`` lists, with the reason for each, the ops whose node is still
named otherwise; a listed op that comes to match fails, so the list stays exact.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import toolkit
from toolkit.autograd.naming import short_name
from toolkit.ops import registry

from ..ops.test_registry import OPS, _call_tk, _th, _tk, _torch_fn

# Where PyTorch's function is a composition of ATen ops and toolkit's op is too (a composite, recording its own
# parts), the last part differs: naming it would need toolkit to compute the op as PyTorch's parts do.
_COMPOSED_OTHERWISE = "toolkit composes it of other ops than PyTorch's, so the last recorded op differs"
# PyTorch returns the input itself, or an output that needs no grad, where toolkit records a node: a difference
# in what is recorded, not in a name.
_NO_NODE_IN_TORCH = "PyTorch records no node for this call (it returns its input, or a non-differentiable output)"
# ``*_copy`` ops are composites ``clone(view(x))`` in toolkit; PyTorch has a node per op (``TBackward0_copy``).
_COPY_OF_VIEW = "a composite clone of the view in toolkit, a node of its own in PyTorch"
# PyTorch calls ``mul``/``div`` with a Python number inside the function (``MulBackward1``, the Scalar formula);
# toolkit's composite passes it as a wrapped number tensor, the ``Tensor`` formula, as ``x * 2`` does in both.
_SCALAR_FORMULA = "PyTorch's internal call takes the Scalar overload (Backward1); toolkit's the Tensor one"

DIFFERENCES = {
    "positive": _NO_NODE_IN_TORCH,
    "real": _NO_NODE_IN_TORCH,
    "conj_physical": _NO_NODE_IN_TORCH,
    "linalg_lu": _NO_NODE_IN_TORCH,
    "lu_unpack": _NO_NODE_IN_TORCH,
    "combinations": _COMPOSED_OTHERWISE,
    "chain_matmul": _COMPOSED_OTHERWISE,
    "dist": _COMPOSED_OTHERWISE,
    "pairwise_distance": _COMPOSED_OTHERWISE,
    "frobenius_norm.dim": _COMPOSED_OTHERWISE,
    "norm_except_dim": _COMPOSED_OTHERWISE,
    "grid_sampler": _COMPOSED_OTHERWISE,
    "grid_sampler_2d": _COMPOSED_OTHERWISE,
    "grid_sampler_3d": _COMPOSED_OTHERWISE,
    "affine_grid_generator": _COMPOSED_OTHERWISE,
    "linalg_vander": _COMPOSED_OTHERWISE,
    "pinverse": _COMPOSED_OTHERWISE,
    "linalg_pinv": _COMPOSED_OTHERWISE,
    "linalg_pinv.atol_rtol_tensor": _COMPOSED_OTHERWISE,
    "linalg_pinv.atol_rtol_float": _COMPOSED_OTHERWISE,
    "linalg_cond": _COMPOSED_OTHERWISE,
    "linalg_cond.p_str": _COMPOSED_OTHERWISE,
    "pixel_shuffle": _COMPOSED_OTHERWISE,
    "pixel_unshuffle": _COMPOSED_OTHERWISE,
    "channel_shuffle": _COMPOSED_OTHERWISE,
    "native_channel_shuffle": "PyTorch's CPU kernel has no autograd formula (its node is NotImplemented)",
    "ormqr": _COMPOSED_OTHERWISE,
    "quantile": _COMPOSED_OTHERWISE,
    "quantile.scalar": _COMPOSED_OTHERWISE,
    "nanquantile": _COMPOSED_OTHERWISE,
    "nanquantile.scalar": _COMPOSED_OTHERWISE,
    "rot90": _COMPOSED_OTHERWISE,
    "linalg_tensorinv": _COMPOSED_OTHERWISE,
    "fill.Tensor": "a composite over fill_, whose in-place node PyTorch names after fill.Tensor (FillBackward1)",
    "_pad_circular": "PyTorch writes the padding in place into a new tensor (CopySlices); toolkit has one node",
    "_sparse_mm": "PyTorch's sparse mm records the transposes of its sparse-dense product",
    "trapezoid.x": _SCALAR_FORMULA,
    "trapezoid.dx": _SCALAR_FORMULA,
    "trapz.x": _SCALAR_FORMULA,
    "trapz.dx": _SCALAR_FORMULA,
    "cumulative_trapezoid.x": _SCALAR_FORMULA,
    **{name: _COPY_OF_VIEW for name in (
        "alias_copy", "diagonal_copy", "expand_copy", "narrow_copy", "permute_copy", "select_copy.int", "squeeze_copy",
        "slice_copy.Tensor", "split_copy.Tensor", "split_with_sizes_copy", "squeeze_copy.dim", "squeeze_copy.dims",
        "t_copy", "transpose_copy.int", "unbind_copy.int", "unfold_copy", "unsqueeze_copy", "as_strided_copy",
        "view_copy")},
}

def _requiring_grad(x, lib):
    """Sample values as ``lib`` tensors, floating ones in float64 and requiring grad."""
    if isinstance(x, np.ndarray) and x.dtype.kind == "f":
        t = toolkit.tensor(x.astype(np.float64)) if lib is toolkit else torch.from_numpy(x.astype(np.float64))
        return t.requires_grad_()
    if isinstance(x, (list, tuple)):
        return type(x)(_requiring_grad(e, lib) for e in x)
    return _tk(x) if lib is toolkit else _th(x)


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _node_name(out) -> str:
    return type(getattr(_first(out), "grad_fn", None)).__name__


DIFFERENTIABLE = [o for o in OPS if o.samples is not None and o.derivative is not None and o.differentiable]


@pytest.mark.parametrize("o", DIFFERENTIABLE, ids=lambda o: o.schema.full_name)
def test_grad_fn_is_named_as_torch_names_it(o):
    name = o.schema.full_name
    sample = next(iter(o.samples(np.random.default_rng(0))), None)
    if sample is None:
        pytest.skip("no sample")
    args, kwargs = sample
    try:
        theirs = _node_name(_torch_fn(o)(*_requiring_grad(args, torch), **{k: _th(v) for k, v in kwargs.items()}))
    except Exception as e:  # noqa: BLE001 - a sample PyTorch refuses with float64 grads says nothing of names
        pytest.skip(f"PyTorch refuses the sample with float64 inputs requiring grad: {type(e).__name__}")
    ours = _node_name(_call_tk(o, _requiring_grad(args, toolkit), {k: _tk(v) for k, v in kwargs.items()}))
    if name in DIFFERENCES:
        assert ours != theirs, f"{name} now records {theirs} as PyTorch does: remove it from DIFFERENCES"
    else:
        assert ours == theirs


def test_every_listed_difference_is_a_registered_op():
    names = {o.schema.full_name for o in DIFFERENTIABLE}
    assert not set(DIFFERENCES) - names


# ----------------------------------------------------------------------------- names that depend on the call
PER_CALL = [
    ("pow of a tensor and a number", lambda m, x: m.pow(x, 2)),
    ("pow of two tensors", lambda m, x: m.pow(x, x)),
    ("pow of a number and a tensor", lambda m, x: m.pow(2, x)),
    ("** operator", lambda m, x: x ** 3),
    ("remainder by a number", lambda m, x: m.remainder(x, 2)),
    ("remainder by a tensor", lambda m, x: m.remainder(x, x + 5)),
    ("fmod by a tensor", lambda m, x: m.fmod(x, x + 5)),
    ("float_power of two tensors", lambda m, x: m.float_power(x, x)),
    ("reshape into a view", lambda m, x: x.reshape(-1)),
    ("reshape that copies", lambda m, x: x.t().reshape(-1)),
    ("flatten that copies", lambda m, x: x.t().flatten()),
    ("squeeze all", lambda m, x: x[None].squeeze()),
    ("squeeze one dim", lambda m, x: x[None].squeeze(0)),
    ("squeeze dims", lambda m, x: x[None, None].squeeze((0, 1))),
    ("clamp by numbers", lambda m, x: x.clamp(0, 1)),
    ("clamp by tensors", lambda m, x: x.clamp(m.zeros(4, dtype=m.float64))),
    ("max of all", lambda m, x: x.max()),
    ("max along a dim", lambda m, x: x.max(0)[0]),
    ("max of two", lambda m, x: x.max(x * 2)),
    ("matmul vectors", lambda m, x: m.matmul(x[0], x[1])),
    ("matmul matrix-vector", lambda m, x: m.matmul(x, x[0])),
    ("matmul vector-matrix", lambda m, x: m.matmul(x[:, 0], x)),
    ("matmul matrices", lambda m, x: m.matmul(x, x.t())),
    ("matmul batched", lambda m, x: m.matmul(x[None], x.t())),
    ("linear with bias", lambda m, x: m.nn.functional.linear(x, x, x[0])),
    ("linear without bias", lambda m, x: m.nn.functional.linear(x, x)),
    ("linear of a batch", lambda m, x: m.nn.functional.linear(x[None], x, x[0])),
    ("nn.Linear", lambda m, x: m.nn.Linear(4, 2).double()(x)),
    ("matrix norm 'fro'", lambda m, x: m.linalg.matrix_norm(x)),
    ("matrix norm 'nuc'", lambda m, x: m.linalg.matrix_norm(x, "nuc")),
    ("matrix norm -inf", lambda m, x: m.linalg.matrix_norm(x, -float("inf"))),
    ("linalg.norm of a vector", lambda m, x: m.linalg.norm(x[0], 3)),
    ("l1_loss mean", lambda m, x: m.nn.functional.l1_loss(x, x * 2)),
    ("l1_loss none", lambda m, x: m.nn.functional.l1_loss(x, x * 2, reduction="none")),
    ("l1_loss sum", lambda m, x: m.nn.functional.l1_loss(x, x * 2, reduction="sum")),
    ("diag of a vector", lambda m, x: m.diag(x[0])),
    ("atleast_2d of a vector", lambda m, x: m.atleast_2d(x[0])),
    ("sum_to_size keeping dims", lambda m, x: x.sum_to_size(1, 4)),
    ("sum_to_size dropping dims", lambda m, x: x.sum_to_size(4)),
    ("in-place mul", lambda m, x: (x * 1).mul_(2)),
    ("in-place clamp", lambda m, x: (x * 1).clamp_(0, 1)),
    ("in-place pow by a tensor", lambda m, x: (x * 1).pow_(x)),
    ("alias multiply", lambda m, x: m.multiply(x, x)),
    ("alias clip", lambda m, x: m.clip(x, 0, 1)),
    ("special.expit", lambda m, x: m.special.expit(x)),
]


@pytest.mark.parametrize("fn", [c[1] for c in PER_CALL], ids=[c[0] for c in PER_CALL])
def test_grad_fn_name_follows_the_call(fn):
    x = np.random.default_rng(0).standard_normal((4, 4))
    ours = fn(toolkit, toolkit.tensor(x).requires_grad_())
    theirs = fn(torch, torch.from_numpy(x).requires_grad_())
    assert _node_name(ours) == _node_name(theirs)
    assert _first(ours).grad_fn.name() == _first(theirs).grad_fn.name()


def test_ops_of_one_formula_share_one_node_class():
    """As in PyTorch, ``mul``, ``multiply`` and ``mul_`` record nodes of one class, each applying its op's rule."""
    x = toolkit.rand(3, requires_grad=True)
    a, b, c = x * x, toolkit.multiply(x, x), (x * 1).mul_(x)
    assert type(a.grad_fn) is type(b.grad_fn) is type(c.grad_fn)
    assert b.grad_fn.next_functions[0][0].variable is x
    b.sum().backward()
    assert toolkit.allclose(x.grad, 2 * x.detach())


def test_declared_names_are_pytorch_spellings():
    """Every declared name is a class name PyTorch could have: ``<CamelCase>Backward<n>`` (``_copy`` after it)."""
    for o in registry.all_ops():
        if isinstance(o.grad_fn, str):
            assert re.fullmatch(r"[A-Z][A-Za-z0-9]*Backward\d+(_copy)?", o.grad_fn), o.schema.full_name


def test_error_messages_use_the_declared_name():
    """Errors name a producer by its PyTorch short name: ``chunk``'s views are outputs of ``Split``."""
    for lib in (toolkit, torch):
        y = (lib.rand(4, requires_grad=True) * 1).chunk(2)[0]
        with pytest.raises(RuntimeError, match="^Output 0 of Split is a view and is being modified inplace"):
            y.mul_(2)
    assert short_name(toolkit.arcsin(toolkit.rand(3, requires_grad=True)).grad_fn) == "Asin"
