"""NaN-skipping reductions, quantiles, scans, histograms, covariance, differences, search ops against PyTorch.

The generated registry tests cover each op's samples; here are what they cannot reach: NaN and tied inputs
where a gradient is not defined, tensor arguments passed by keyword (weights, ``sorter``), the errors, the
in-place scans, and the derivative rules of the ops composed of other ops (which eager autograd never calls,
so they are checked against it).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.dispatch import bind
from toolkit.ops import registry

from ..conftest import assert_close

NAN = float("nan")


def _both(fn, *arrays, **kwargs):
    """``fn(lib, *tensors, **kwargs)`` for toolkit and for torch, with the same data."""
    ours = fn(toolkit, *[toolkit.tensor(a) for a in arrays], **kwargs)
    theirs = fn(torch, *[torch.from_numpy(np.array(a)) for a in arrays], **kwargs)
    return ours, theirs


def _same_error(fn, *arrays, match: str | None = None, **kwargs):
    """Both libraries refuse the call with the same exception type; ours names what is wrong."""
    with pytest.raises(Exception) as theirs:
        fn(torch, *[torch.from_numpy(np.array(a)) for a in arrays], **kwargs)
    with pytest.raises(theirs.type, match=match):
        fn(toolkit, *[toolkit.tensor(a) for a in arrays], **kwargs)


# ----------------------------------------------------------------------------- NaN and ties
NAN_ROWS = np.array([[1.0, NAN, NAN, 4.0], [NAN, NAN, NAN, NAN], [NAN, 3.0, 2.0, 2.0], [5.0, 5.0, 1.0, 1.0]])


@pytest.mark.parametrize("call", [
    lambda m, x: m.nansum(x, 1),
    lambda m, x: m.nanmean(x, 1),
    lambda m, x: m.nanmean(x),
    lambda m, x: m.nanmedian(x, 1).values,  # an all-NaN row's index depends on PyTorch's selection algorithm
    lambda m, x: m.nanmedian(x[[0, 2, 3]], 1),
    lambda m, x: m.nanmedian(x, 0, keepdim=True),
    lambda m, x: m.nanmedian(x),
    lambda m, x: m.nanmedian(x[1]),
    lambda m, x: m.cummax(x, 1),
    lambda m, x: m.cummin(x, 0),
    lambda m, x: m.logcumsumexp(x, 1),
    lambda m, x: m.quantile(x, 0.3, dim=1),
    lambda m, x: m.nanquantile(x, 0.3, dim=1),
    lambda m, x: m.nanquantile(x, m.tensor([0.2, 0.9], dtype=m.float64), dim=0, interpolation="nearest"),
    lambda m, x: m.nanquantile(x, 0.5),
    lambda m, x: m.unique_consecutive(x, return_counts=True),
    lambda m, x: m.isin(x, m.tensor([NAN, 2.0], dtype=m.float64)),
    lambda m, x: m.searchsorted(m.tensor([1.0, 2.0, NAN], dtype=m.float64), x),
])
def test_nan_handling_matches_torch(call):
    ours, theirs = _both(call, NAN_ROWS)
    assert_close(ours, theirs)


@pytest.mark.parametrize("seed", range(8))
def test_ties_pick_the_index_torch_picks(seed):
    x = np.random.default_rng(seed).integers(0, 3, (5, 7)).astype(np.float64)
    x[np.random.default_rng(seed + 100).uniform(0, 1, x.shape) < 0.2] = NAN
    for call in (lambda m, t: m.nanmedian(t, 1), lambda m, t: m.nanmedian(t, 0), lambda m, t: m.cummax(t, 1),
                 lambda m, t: m.cummin(t, 0), lambda m, t: m.cummax(t.T, 0)):
        ours, theirs = _both(call, x)
        assert_close(ours, theirs)


def test_named_tuples():
    x = toolkit.tensor([[1.0, 3.0, 2.0]])
    r = x.cummax(1)
    assert type(r) is toolkit.return_types.cummax and r.values.tolist() == [[1.0, 3.0, 3.0]]
    assert type(x.cummin(1)) is toolkit.return_types.cummin
    m = x.nanmedian(1)
    assert type(m) is toolkit.return_types.nanmedian and m.indices.tolist() == [2]
    h = toolkit.histogram(x, bins=2)
    assert type(h) is toolkit.return_types.histogram and h.bin_edges.tolist() == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("call", [
    lambda m, x: m.nansum(x),
    lambda m, x: m.nansum(x, 0, dtype=m.int32),
    lambda m, x: m.nansum(x.float(), dtype=m.float64),
    lambda m, x: m.nanmean(x.float(), dtype=m.float64),
    lambda m, x: m.nanmedian(x),
    lambda m, x: m.cummax(x.to(m.int16), 1),
    lambda m, x: m.cov(x),
    lambda m, x: m.corrcoef(x),
    lambda m, x: m.diff(x, append=x[:, :1].double()),
    lambda m, x: m.trapezoid(x),
    lambda m, x: m.cumulative_trapezoid(x, dx=2),
    lambda m, x: m.bincount(x[0].abs(), x[1].abs().half()),
    lambda m, x: m.searchsorted(x[0].sort().values, 2.5),
    lambda m, x: m.bucketize(x, m.tensor([0.5, 2.5], dtype=m.float16)),
])
def test_integer_inputs_follow_torch_dtypes(call):
    x = np.array([[1, 4, 2, 2], [3, 0, 1, 5]])
    ours, theirs = _both(call, x)
    assert_close(ours, theirs)


def test_half_inputs():
    x = np.random.default_rng(0).uniform(0, 4, 40).astype(np.float16)
    for call in (lambda m, t: m.histc(t, 6), lambda m, t: m.nansum(t), lambda m, t: m.logcumsumexp(t, 0)):
        ours, theirs = _both(call, x)
        assert_close(ours, theirs, accum=40)


# ----------------------------------------------------------------------------- keyword tensors
def test_histogram_weights():
    rng = np.random.default_rng(1)
    x, w = rng.uniform(0, 1, 30), rng.uniform(0, 2, 30)
    for kwargs in ({"bins": 4}, {"bins": 5, "density": True, "range": (0.2, 0.8)}):
        ours, theirs = _both(lambda m, a, b, kw=kwargs: m.histogram(a, weight=b, **kw), x, w)
        assert_close(ours, theirs, accum=30)
    ours, theirs = _both(lambda m, a, b, e: m.histogram(a, e, weight=b, density=True), x, w,
                         np.array([0.0, 0.3, 0.35, 1.0]))
    assert_close(ours, theirs, accum=30)


def test_searchsorted_sorter_and_sides():
    seq, values = np.array([3.0, 1.0, 2.0, 2.0, 5.0]), np.array([[2.0, 0.0], [6.0, 3.0]])
    sorter = np.argsort(seq, kind="stable")
    for kwargs in ({}, {"right": True}, {"side": "right"}, {"side": "left", "out_int32": True}):
        ours, theirs = _both(lambda m, s, v, o, kw=kwargs: m.searchsorted(s, v, sorter=o, **kw), seq, values,
                             sorter)
        assert_close(ours, theirs)


@pytest.mark.parametrize("kwargs", [
    {"fweights": np.array([1, 2, 0, 3])},
    {"aweights": np.array([0.5, 1.0, 2.0, 0.25])},
    {"fweights": np.array([1, 2, 1, 3]), "aweights": np.array([0.5, 1.0, 2.0, 0.25]), "correction": 0},
    {"fweights": np.array([1, 2, 1, 3]), "aweights": np.array([0.5, 1.0, 2.0, 0.25]), "correction": 2},
])
def test_cov_weights_and_their_gradients(kwargs):
    x = np.random.default_rng(2).uniform(-2, 2, (3, 4))

    def run(lib, to):
        xt = to(x).requires_grad_()
        kw = {k: (to(v).requires_grad_() if k == "aweights" else to(v)) if isinstance(v, np.ndarray) else v
              for k, v in kwargs.items()}
        out = lib.cov(xt, **kw)
        out.sum().backward()
        grads = [xt.grad] + ([kw["aweights"].grad] if "aweights" in kw else [])
        return [out.detach()] + grads

    ours = run(toolkit, toolkit.tensor)
    theirs = run(torch, lambda a: torch.from_numpy(np.array(a)))
    assert_close(ours, theirs, accum=4)


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("call,with_nan", [
    (lambda m, x, q: m.quantile(x, q, dim=1), False),
    (lambda m, x, q: m.nanquantile(x, q), True),
    (lambda m, x, q: m.nanquantile(x, q, dim=1), True),
    (lambda m, x, q: m.quantile(x, q, dim=0, keepdim=True, interpolation="midpoint"), False),
])
def test_quantile_gradient_reaches_q(call, with_nan):
    rng = np.random.default_rng(3)
    x, q = rng.permutation(12).reshape(3, 4) / 4.0, np.array([0.15, 0.62])
    if with_nan:
        x[0, 1] = NAN

    def run(lib, to):
        xt, qt = to(x).requires_grad_(), to(q).requires_grad_()
        out = call(lib, xt, qt)
        (out * to(np.arange(out.numel()).reshape(tuple(out.shape)) + 1.0)).sum().backward()
        return out.detach(), xt.grad, qt.grad

    ours = run(toolkit, toolkit.tensor)
    theirs = run(torch, lambda a: torch.from_numpy(np.array(a)))
    assert_close(ours, theirs)


def test_nan_reduction_gradients_skip_nan():
    x = np.array([[1.0, NAN, 3.0], [NAN, 2.0, 0.5]])
    for call in (lambda m, t: m.nansum(t, 1), lambda m, t: m.nanmean(t), lambda m, t: m.nanmedian(t, 1).values,
                 lambda m, t: m.nanmedian(t)):
        ours = toolkit.tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        call(toolkit, ours).sum().backward()
        call(torch, theirs).sum().backward()
        assert_close(ours.grad, theirs.grad)


def _composite_cases():
    for o in registry.all_ops():
        if o.composite is None or o.derivative is None or o.samples is None or not o.differentiable:
            continue
        if o.name not in ("quantile", "nanquantile", "diff", "trapezoid", "trapz", "cumulative_trapezoid", "cov",
                          "corrcoef", "msort"):
            continue
        for i, (args, kwargs) in enumerate(o.samples(np.random.default_rng(0))):
            yield pytest.param(o, args, kwargs, id=f"{o.schema.full_name}-{i}")


@pytest.mark.parametrize("o,args,kwargs", list(_composite_cases()))
def test_composite_derivative_rule_matches_autograd(o, args, kwargs):
    """The JIT differentiates a composed op by its rule; eager autograd by its parts: both must agree."""
    targs = [toolkit.tensor(a.astype(np.float64), requires_grad=True)
             if isinstance(a, np.ndarray) and a.dtype.kind == "f" and k in o.diff_args
             else toolkit.tensor(a) if isinstance(a, np.ndarray) else a for k, a in enumerate(args)]
    inputs = [t for t in targs if isinstance(t, toolkit.Tensor) and t.requires_grad]
    if not inputs:
        pytest.skip("no differentiable inputs")
    out = getattr(toolkit, o.name)(*targs, **kwargs)
    if not out.requires_grad:
        pytest.skip("no samples integrated: a constant zero")
    grad = toolkit.tensor(np.random.default_rng(1).uniform(-1, 1, tuple(out.shape)))
    expected = toolkit.autograd.grad(out, inputs, grad, allow_unused=True)
    bound = bind(o, tuple(targs), dict(kwargs))
    saved = {}
    for name in o.saved_names:
        if name == "result":
            saved[name] = out
        elif name in o.arg_names:
            saved[name] = bound[o.arg_names.index(name)]
        else:
            t = bound[o.arg_names.index(name.rsplit("_", 1)[0])]
            saved[name] = None if t is None else tuple(t.shape)
    with toolkit.no_grad():
        got = o.derivative(grad, **saved)
    got = got if isinstance(got, (tuple, list)) else (got,)
    got = [got[o.diff_args.index(k)] for k, t in enumerate(targs) if isinstance(t, toolkit.Tensor) and t.requires_grad]
    for g, e in zip(got, expected):
        assert_close(g, e if e is not None else toolkit.zeros_like(g), accum=16)


# ----------------------------------------------------------------------------- in-place scans and methods
@pytest.mark.parametrize("name,dim", [("cumsum_", 1), ("cumprod_", 0), ("cumsum_", -1)])
def test_inplace_scans(name, dim):
    a = np.random.default_rng(4).uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    ours, theirs = toolkit.tensor(a), torch.from_numpy(a.copy())
    version = ours._version
    assert getattr(ours, name)(dim) is ours
    assert ours._version > version
    getattr(theirs, name)(dim)
    assert_close(ours, theirs, accum=4)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    ours, theirs = toolkit.tensor(ints), torch.from_numpy(ints.copy())
    getattr(ours, name)(dim)
    getattr(theirs, name)(dim)
    assert_close(ours, theirs)


def test_inplace_scan_gradient():
    a = np.random.default_rng(5).uniform(0.5, 1.5, (2, 3))
    ours, theirs = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (ours * 1).cumprod_(1).sum().backward()
    (theirs * 1).cumprod_(1).sum().backward()
    assert_close(ours.grad, theirs.grad)


@pytest.mark.parametrize("method,args,kwargs", [
    ("nansum", (1,), {}), ("nanmean", (), {"keepdim": True}), ("nanmedian", (0,), {}), ("nanquantile", (0.4,), {}),
    ("quantile", (0.25, 1), {}), ("cummax", (1,), {}), ("cummin", (0,), {}), ("logcumsumexp", (1,), {}),
    ("histc", (5,), {}), ("histogram", (3,), {}), ("cov", (), {}), ("corrcoef", (), {}), ("diff", (), {"n": 2}),
    ("msort", (), {}), ("unique_consecutive", (), {"return_inverse": True}), ("nonzero_static", (), {"size": 5}),
])
def test_tensor_methods(method, args, kwargs):
    a = np.random.default_rng(6).uniform(-2, 2, (3, 4))
    ours, theirs = _both(lambda m, t: getattr(t, method)(*args, **kwargs), a)
    assert_close(ours, theirs, accum=4)


def test_functions_without_methods():
    for name in ("trapezoid", "trapz", "cumulative_trapezoid", "searchsorted", "bucketize", "isin"):
        assert hasattr(toolkit, name)
        assert hasattr(toolkit.Tensor, name) == hasattr(torch.Tensor, name)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call,array,match", [
    (lambda m, x: m.nanmean(x), np.array([1, 2]), "nanmean"),
    (lambda m, x: m.nanmean(x.double(), dtype=m.int64), np.array([1, 2]), "nanmean"),
    (lambda m, x: m.nanmedian(x), np.array([True]), "median"),
    (lambda m, x: m.nanmedian(x, 0), np.zeros((0, 2)), "median"),
    (lambda m, x: m.quantile(x, 1.5), np.array([1.0, 2.0]), "quantile"),
    (lambda m, x: m.quantile(x, m.tensor([0.5, 1.5], dtype=m.float64)), np.array([1.0, 2.0]), "quantile"),
    (lambda m, x: m.quantile(x, m.tensor([[0.5]], dtype=m.float64)), np.array([1.0, 2.0]), "quantile"),
    (lambda m, x: m.quantile(x, m.tensor([0.5])), np.array([1.0, 2.0]), "same dtype"),
    (lambda m, x: m.quantile(x, 0.5), np.array([1, 2]), "float or double"),
    (lambda m, x: m.nanquantile(x, 0.5), np.zeros(0), "non-empty"),
    (lambda m, x: m.quantile(x, 0.5, interpolation="cubic"), np.array([1.0, 2.0]), "interpolation"),
    (lambda m, x: m.quantile(x, 0.5, dim=2), np.array([1.0, 2.0]), "out of range"),
    (lambda m, x: m.logcumsumexp(x, 0), np.array([1, 2]), "logcumsumexp"),
    (lambda m, x: m.cummax(x, 2), np.array([1.0, 2.0]), "out of range"),
    (lambda m, x: m.histc(x), np.array([1, 2]), "histogram"),
    (lambda m, x: m.histc(x, 4, 3, 1), np.array([1.0, 2.0]), "max must be larger than min"),
    (lambda m, x: m.histc(x, 4), np.array([1.0, NAN]), "not finite"),
    (lambda m, x: m.histc(x, 0), np.array([1.0, 2.0]), "bins must be > 0"),
    (lambda m, x: m.histogram(x, 3), np.array([1, 2]), "histogramdd"),
    (lambda m, x: m.histogram(x, 3, range=(2.0, 1.0)), np.array([1.0, 2.0]), "min should not exceed max"),
    (lambda m, x: m.histogram(x, m.tensor([0.0, 1.0], dtype=m.float64)), np.array([1.0], np.float32), "dtype"),
    (lambda m, x: m.bincount(x), np.array([1, -2]), "non-negative"),
    (lambda m, x: m.bincount(x), np.array([1.0]), "bincount"),
    (lambda m, x: m.bincount(x), np.array([[1]]), "1-d"),
    (lambda m, x: m.bincount(x, m.tensor([1.0])), np.array([1, 2]), "same length"),
    (lambda m, x: m.bincount(x, minlength=-1), np.array([1, 2]), "minlength"),
    (lambda m, x: m.cov(x), np.zeros((2, 2, 2)), "two or fewer dimensions"),
    (lambda m, x: m.cov(x), np.array([True, False]), "bool"),
    (lambda m, x: m.cov(x, fweights=m.tensor([1.0, 2.0])), np.array([1.0, 2.0]), "integral"),
    (lambda m, x: m.cov(x, fweights=m.tensor([1, -2])), np.array([1.0, 2.0]), "negative"),
    (lambda m, x: m.cov(x, aweights=m.tensor([1, 2])), np.array([1.0, 2.0]), "floating point"),
    (lambda m, x: m.cov(x, aweights=m.tensor([1.0, 2.0, 3.0])), np.array([1.0, 2.0]), "numel"),
    (lambda m, x: m.corrcoef(x), np.zeros((2, 2, 2)), "corrcoef"),
    (lambda m, x: m.diff(x), np.array(1.0), "one-dimensional"),
    (lambda m, x: m.diff(x, -1), np.array([1.0]), "non-negative"),
    (lambda m, x: m.diff(x, prepend=m.tensor(1.0)), np.array([1.0]), "same dimension"),
    (lambda m, x: m.trapezoid(x), np.array([True, False]), "bool"),
    (lambda m, x: m.trapezoid(x, m.tensor([1.0, 2.0])), np.array([1.0, 2.0, 3.0]), "one `x` value"),
    (lambda m, x: m.cumulative_trapezoid(x, dim=1), np.array([1.0, 2.0]), "out of range"),
    (lambda m, x: m.searchsorted(x, m.tensor([1.0])), np.array(1.0), "positive dimension"),
    (lambda m, x: m.searchsorted(x, m.tensor([[1.0], [2.0]])), np.array([[1.0, 2.0]]), "first N-1 dimensions"),
    (lambda m, x: m.searchsorted(x, 1.0), np.array([[1.0, 2.0]]), "scalar only"),
    (lambda m, x: m.searchsorted(x, m.tensor([1.0]), side="middle"), np.array([1.0, 2.0]), "side"),
    (lambda m, x: m.searchsorted(x, m.tensor([1.0]), side="left", right=True), np.array([1.0, 2.0]), "opposites"),
    (lambda m, x: m.searchsorted(x, m.tensor([1.0]), sorter=m.tensor([0, 1], dtype=m.int32)), np.array([1.0, 2.0]),
     "long"),
    (lambda m, x: m.searchsorted(x, m.tensor([1.0]), sorter=m.tensor([0])), np.array([1.0, 2.0]), "same size"),
    (lambda m, x: m.searchsorted(x, m.tensor([True])), np.array([True, False]), "Bool"),
    (lambda m, x: m.bucketize(m.tensor([1.0]), x), np.array([[1.0, 2.0]]), "1 dimension"),
    (lambda m, x: m.isin(x, m.tensor([1])), np.array([True]), "isin"),
    (lambda m, x: x.nonzero_static(size=-1), np.array([1.0]), "size"),
    (lambda m, x: m.unique_consecutive(x, dim=0), np.array(1.0), "no dimensions"),
    (lambda m, x: m.unique_consecutive(x, dim=0), np.zeros((2, 0)), "0 sized dimensions"),
])
def test_errors_match_torch(call, array, match):
    _same_error(call, array, match=match)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_gradients_with_nan_slices(name):
    """A slice that reads a NaN whatever q is sends q no gradient (and ``q = 0`` of an all-NaN slice a NaN one)."""
    x = np.array([[NAN, NAN, NAN], [1.0, 2.0, 3.0], [1.0, NAN, 2.0]])
    q = np.array([0.0, 0.3, 0.9])

    def run(lib, to):
        xt, qt = to(x).requires_grad_(), to(q).requires_grad_()
        out = getattr(lib, name)(xt, qt, dim=1)
        out.nan_to_num().sum().backward()
        return out.detach(), xt.grad, qt.grad

    ours = run(toolkit, toolkit.tensor)
    theirs = run(torch, lambda a: torch.from_numpy(np.array(a)))
    assert_close(ours, theirs)


@pytest.mark.parametrize("name", ["max", "min", "median", "nanmedian", "amax"])
@pytest.mark.parametrize("values", [[1.0, NAN, 3.0, NAN], [NAN, NAN, NAN], [2.0, 1.0, 2.0]])
def test_full_reduction_gradient_shares_a_nan_result(name, values):
    """A NaN picked by max, min, median or nanmedian shares its gradient among the NaN elements, as in
    PyTorch; amax shares it with none (a NaN gradient)."""
    ours, theirs = toolkit.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    getattr(toolkit, name)(ours).backward()
    getattr(torch, name)(theirs).backward()
    assert_close(ours.grad, theirs.grad)
