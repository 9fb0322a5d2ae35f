"""``out=`` on the public functions, generated from the registry and checked against PyTorch.

Every exported op with samples is called in PyTorch with and without ``out=``: toolkit must take ``out`` for
the same calls, write the same values, return ``out`` itself, and refuse the dtypes and the autograd cases
PyTorch refuses.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry
from toolkit.ops.registry import FACTORY, INPLACE, RANDOM

from ..conftest import TORCH_DTYPES, assert_close
from .test_registry import _th, _tk

NAMESPACES = {None: (toolkit, torch), "linalg": (toolkit.linalg, torch.linalg)}
PYTHON_LEVEL = ("tensordot", "cdist")  # torch.functional's Python functions, wired in toolkit.functional
TK_DTYPES = {v: k for k, v in TORCH_DTYPES.items()}


def _public(o):
    return o.function if isinstance(o.function, str) else o.name


def _functions(o):
    tk_mod, th_mod = NAMESPACES[o.namespace]
    return getattr(tk_mod, _public(o)), getattr(th_mod, _public(o), None)


OPS = [o for o in registry.all_ops()
       if o.function and o.kind != INPLACE and o.namespace in NAMESPACES and o.samples is not None
       and o.name not in PYTHON_LEVEL and _functions(o)[1] is not None]
CASES = [pytest.param(o, i, id=f"{o.schema.full_name}-{i}")
         for o in OPS for i, _ in enumerate(o.samples(np.random.default_rng(0)))]


def _sample(o, i):
    return list(o.samples(np.random.default_rng(0)))[i]


def _is_result(e) -> bool:
    return isinstance(e, torch.Tensor) or (
        isinstance(e, (tuple, list)) and bool(e) and all(isinstance(x, torch.Tensor) for x in e))


def _th_outs(e, dtypes=None, empty=False):
    es = (e,) if isinstance(e, torch.Tensor) else tuple(e)
    dtypes = dtypes or [x.dtype for x in es]
    outs = tuple(torch.empty((0,) if empty else x.shape, dtype=d) for x, d in zip(es, dtypes))
    return outs[0] if isinstance(e, torch.Tensor) else outs


def _tk_outs(th_outs):
    if isinstance(th_outs, torch.Tensor):
        return toolkit.empty(tuple(th_outs.shape), dtype=TK_DTYPES[th_outs.dtype])
    return tuple(_tk_outs(t) for t in th_outs)


def _torch_accepts(fn, args, kwargs, e) -> bool:
    try:
        fn(*_th(args), **_th(kwargs), out=_th_outs(e))
    except TypeError:
        return False
    return True


_ACCEPTED: dict = {}


def _op_accepts_somewhere(o, th_fn) -> bool:
    """Whether PyTorch takes ``out`` for any sample of ``o`` (an op whose overloads differ takes it for some)."""
    if o not in _ACCEPTED:
        _ACCEPTED[o] = False
        for args, kwargs in o.samples(np.random.default_rng(0)):
            try:
                e = th_fn(*_th(args), **_th(kwargs))
            except Exception:
                continue
            if _is_result(e) and _torch_accepts(th_fn, args, kwargs, e):
                _ACCEPTED[o] = True
                break
    return _ACCEPTED[o]


def _setup(o, i):
    tk_fn, th_fn = _functions(o)
    args, kwargs = _sample(o, i)
    try:
        e = th_fn(*_th(args), **_th(kwargs))
    except Exception:
        pytest.skip("PyTorch refuses this sample")
    if not _is_result(e):
        pytest.skip("no tensor result")
    return tk_fn, th_fn, args, kwargs, e


@pytest.mark.parametrize("o,i", CASES)
def test_out_taken_where_torch_takes_it(o, i):
    tk_fn, th_fn, args, kwargs, e = _setup(o, i)
    if not _torch_accepts(th_fn, args, kwargs, e):
        if not _op_accepts_somewhere(o, th_fn):
            with pytest.raises(TypeError):
                tk_fn(*_tk(args), **_tk(kwargs), out=_tk_outs(_th_outs(e)))
        return
    assert o.out is not None, f"PyTorch's {o.name} takes out="
    for empty in (False, True):
        outs = _tk_outs(_th_outs(e, empty=empty))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = tk_fn(*_tk(args), **_tk(kwargs), out=outs)
        # right-shaped and empty outs are resized without a warning
        assert not [w for w in caught if str(w.message).startswith(RESIZE_WARNING)]
        if isinstance(outs, tuple):
            assert isinstance(r, tuple) and all(a is b for a, b in zip(r, outs))
        else:
            assert r is outs
        if o.kind == RANDOM:
            assert [tuple(t.shape) for t in _flat(r)] == [tuple(t.shape) for t in _flat(e)]
        else:
            assert_close(r if isinstance(r, toolkit.Tensor) else tuple(r), e)


RESIZE_WARNING = "An output with one or more elements was resized"


def _flat(x):
    return [x] if isinstance(x, (toolkit.Tensor, torch.Tensor)) else list(x)


def _other_dtypes(dt: torch.dtype):
    """A wider dtype of the same kind and one of a lower kind: the two casts PyTorch's out rules tell apart."""
    if dt.is_floating_point:
        return (torch.float64 if dt != torch.float64 else torch.float32), torch.int64
    if dt.is_complex:
        return (torch.complex128 if dt != torch.complex128 else torch.complex64), torch.int64
    if dt == torch.bool:
        return (torch.int64,)
    return (torch.int32 if dt != torch.int32 else torch.int64), torch.bool


# The generic out rules' messages. PyTorch refuses some dtypes with checks of the op's own ("all only supports
# bool tensor for result", "nansum_cpu not implemented for 'Long'"): those the rules need not reproduce.
STANDARD_MESSAGE = re.compile(
    r"^(result type \w+ can't be cast to the desired output type \w+|Expected out tensor to have dtype .*)$")


@pytest.mark.parametrize("o,i", [c for c in CASES if c.values[0].out is not None
                                 and c.values[0].kind not in (FACTORY, RANDOM)])
def test_out_dtype_refused_where_torch_refuses(o, i):
    tk_fn, th_fn, args, kwargs, e = _setup(o, i)
    if not _torch_accepts(th_fn, args, kwargs, e):
        pytest.skip("PyTorch takes no out= for this sample")
    first = e if isinstance(e, torch.Tensor) else e[0]
    n = 1 if isinstance(e, torch.Tensor) else len(e)
    for dt in _other_dtypes(first.dtype):
        dtypes = [dt] + [x.dtype for x in _flat(e)[1:]]
        try:
            th_fn(*_th(args), **_th(kwargs), out=_th_outs(e, dtypes))
            refused = None
        except (RuntimeError, TypeError) as ex:  # torch.cat refuses with a TypeError
            refused = str(ex)
        outs = _tk_outs(_th_outs(e, dtypes))
        if refused is None:
            try:
                r = tk_fn(*_tk(args), **_tk(kwargs), out=outs)
            except RuntimeError:
                if _refused_elsewhere(o, th_fn, first.dtype, dt):
                    pytest.xfail("PyTorch's out rule for this op depends on argument values (matrix_power's n)")
                raise
            assert len(_flat(r)) == n and _flat(r)[0].dtype is TK_DTYPES[dt]
            continue
        m = STANDARD_MESSAGE.match(refused)
        if m:
            named = re.match(r"result type (\w+)", refused)
            with pytest.raises(RuntimeError) as info:
                tk_fn(*_tk(args), **_tk(kwargs), out=outs)
            # PyTorch's mean names the dtype it computes in, not its result's
            if named is None or named.group(1) == TK_DTYPES[first.dtype].title:
                assert str(info.value) == refused


def _refused_elsewhere(o, th_fn, result_dtype, out_dtype) -> bool:
    """Whether PyTorch refuses, for another sample of ``o``, an out of ``out_dtype`` for a ``result_dtype`` result."""
    for args, kwargs in o.samples(np.random.default_rng(0)):
        try:
            e = th_fn(*_th(args), **_th(kwargs))
        except Exception:
            continue
        if not _is_result(e) or _flat(e)[0].dtype != result_dtype:
            continue
        try:
            th_fn(*_th(args), **_th(kwargs), out=_th_outs(e, [out_dtype] + [x.dtype for x in _flat(e)[1:]]))
        except (RuntimeError, TypeError) as ex:
            if STANDARD_MESSAGE.match(str(ex)):
                return True
    return False


def _first_float(args):
    for k, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return k
    return None


@pytest.mark.parametrize("o,i", [c for c in CASES if c.values[0].out is not None and c.values[0].diff_args])
def test_out_refuses_inputs_requiring_grad(o, i):
    tk_fn, th_fn, args, kwargs, e = _setup(o, i)
    k = _first_float(args)
    if k is None or not _torch_accepts(th_fn, args, kwargs, e):
        pytest.skip("no floating tensor input, or no out= in PyTorch")
    th_args = list(_th(args))
    th_args[k] = th_args[k].requires_grad_()
    try:
        th_fn(*th_args, **_th(kwargs), out=_th_outs(e))
        pytest.skip("PyTorch takes this input requiring grad")
    except RuntimeError as ex:
        expected = str(ex)
    tk_args = list(_tk(args))
    tk_args[k] = tk_args[k].requires_grad_()
    with pytest.raises(RuntimeError) as info:
        tk_fn(*tk_args, **_tk(kwargs), out=_tk_outs(_th_outs(e)))
    # PyTorch names the aten op that checks: an alias's target (clip: clamp), a composite's part (diff: sub).
    suffix = "(): functions with out=... arguments don't support automatic differentiation, but one of the " \
             "arguments requires grad."
    assert expected.endswith(suffix) and str(info.value) == o.name + suffix


def _both(fn_name, *values, out_tk, out_th, **kwargs):
    """Run ``fn_name`` in both libraries: (toolkit's result or error, torch's result or error, warnings of each)."""
    got = []
    for mod, out, conv in ((toolkit, out_tk, toolkit.tensor), (torch, out_th, torch.tensor)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = getattr(mod, fn_name)(*[conv(v) for v in values], out=out, **kwargs)
            except (RuntimeError, TypeError) as ex:
                r = ex
        got.append((r, [str(w.message) for w in caught]))
    return got


def test_resizing_a_nonempty_out_warns_as_torch():
    (r, w), (e, w_th) = _both("add", [1.0, 2.0, 3.0], [1.0, 1.0, 1.0], out_tk=toolkit.empty(5),
                              out_th=torch.empty(5))
    assert len(w) == len(w_th) == 1 and w[0] == w_th[0].split(" (Triggered internally")[0]
    assert_close(r, e)


def test_out_requiring_grad_is_refused_as_in_torch():
    (r, _), (e, _) = _both("add", [1.0], [2.0], out_tk=toolkit.empty(1, requires_grad=True),
                           out_th=torch.empty(1, requires_grad=True))
    assert type(r) is type(e) is RuntimeError and str(r) == str(e)
    with toolkit.no_grad():
        o = toolkit.empty(1, requires_grad=True)
        assert toolkit.add(toolkit.ones(1), toolkit.ones(1), out=o) is o


@pytest.mark.parametrize("out", [None, (None,), "out"])
def test_out_of_the_wrong_kind(out):
    (r, _), (e, _) = _both("add", [1.0], [2.0], out_tk=out, out_th=out)
    assert isinstance(r, Exception) == isinstance(e, Exception)
    if isinstance(e, TypeError):
        assert str(r) == str(e)


def test_out_that_is_an_input_works_like_in_place():
    a = toolkit.tensor([1.0, 2.0, 3.0])
    assert toolkit.mul(a, a, out=a) is a
    assert_close(a, torch.tensor([1.0, 4.0, 9.0]))
    values, indices = toolkit.empty(0), toolkit.empty(0, dtype=toolkit.int64)
    r = toolkit.sort(toolkit.tensor([3.0, 1.0]), out=[values, indices])
    assert r.values is values and r.indices is indices and type(r).__name__ == "sort"


def test_multi_output_out_needs_one_tensor_per_result():
    (r, _), (e, _) = _both("sort", [3.0, 1.0], out_tk=(toolkit.empty(0),) * 3, out_th=(torch.empty(0),) * 3)
    assert type(r) is type(e) is TypeError and str(r) == str(e)


def test_internal_functions_take_no_out():
    from toolkit.ops import api

    with pytest.raises(TypeError):
        api.add(toolkit.ones(1), toolkit.ones(1), out=toolkit.empty(1))
