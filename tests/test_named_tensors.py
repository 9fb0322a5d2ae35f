"""Named tensors: factories, the names API, dims by name, and name inference, against PyTorch.

PyTorch 2.13 (the oracle installed here) no longer ships named tensors (``names=``, ``rename``, ``refine_names`` are
gone), so values are compared with torch on the same unnamed data, and names and messages with PyTorch's documented
rules and its error texts (``named_not_supported_kernel``, ``unify_from_right``, ``dimname_to_position``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry as R

NCHW = ("batch", "height", "width")


def _x(shape=(2, 1, 2), names=NCHW):
    return toolkit.randn(*shape, names=list(names))


def test_factories_and_repr():
    t = toolkit.tensor([[1, 0], [0, 1]], names=["height", "width"])
    assert t.names == ("height", "width") and t.has_names()
    assert repr(t) == "tensor([[1, 0],\n        [0, 1]], names=('height', 'width'))"
    for make in (toolkit.zeros, toolkit.ones, toolkit.empty, toolkit.rand, toolkit.randn):
        assert make(2, 3, names=("a", None)).names == ("a", None)
    assert toolkit.full((2,), 1.0, names=("a",)).names == ("a",)
    assert toolkit.randn(2, 3).names == (None, None) and not toolkit.randn(2).has_names()


def test_bad_names():
    with pytest.raises(RuntimeError, match="duplicate names"):
        toolkit.zeros(2, 3, names=("a", "a"))
    with pytest.raises(RuntimeError, match="Number of names"):
        toolkit.zeros(2, 3, names=("a",))


def test_rename_refine_align():
    x = _x()
    assert x.rename(None).names == (None, None, None)
    assert x.rename(batch="B").names == ("B", "height", "width")
    assert x.rename("a", ...).names == ("a", "height", "width")
    y = x.rename_("p", "q", "r")
    assert y is x and x.names == ("p", "q", "r")
    assert toolkit.randn(2, 3, 4).refine_names("a", ...).names == ("a", None, None)
    with pytest.raises(RuntimeError, match="cannot coerce"):
        x.refine_names("z", "q", "r")
    a = _x().align_to("width", ...)
    assert a.names == ("width", "batch", "height") and tuple(a.shape) == (2, 2, 1)
    b = _x().align_to("width", "new", "batch", "height")
    assert b.names == ("width", "new", "batch", "height") and tuple(b.shape) == (2, 1, 2, 1)
    assert _x().align_as(toolkit.zeros(1, 1, 1, names=("width", "height", "batch"))).names == (
        "width", "height", "batch")
    x.names = ["p", None, "r"]
    assert x.names == ("p", None, "r")


def test_flatten_unflatten_by_name():
    x = toolkit.randn(2, 3, 4, names=("N", "C", "H"))
    f = x.flatten(["C", "H"], "CH")
    assert f.names == ("N", "CH") and tuple(f.shape) == (2, 12)
    u = f.unflatten("CH", (("C", 3), ("H", 4)))
    assert u.names == ("N", "C", "H")
    np.testing.assert_array_equal(u.rename(None).numpy(), x.rename(None).numpy())
    with pytest.raises(RuntimeError, match="consecutive"):
        x.flatten(["N", "H"], "NH")


@pytest.mark.parametrize("call,names,ref", [
    (lambda t: t.sum("height"), ("batch", "width"), lambda t: t.sum(1)),
    (lambda t: t.mean("width"), ("batch", "height"), lambda t: t.mean(2)),
    (lambda t: t.mean("width", keepdim=True), NCHW, lambda t: t.mean(2, keepdim=True)),
    (lambda t: t.softmax("width"), NCHW, lambda t: t.softmax(2)),
    (lambda t: t.log_softmax("width"), NCHW, lambda t: t.log_softmax(2)),
    (lambda t: t.transpose("height", "width"), ("batch", "width", "height"), lambda t: t.transpose(1, 2)),
    (lambda t: t.squeeze("height"), ("batch", "width"), lambda t: t.squeeze(1)),
    (lambda t: t.select("width", 1), ("batch", "height"), lambda t: t.select(2, 1)),
    (lambda t: t.max("width").values, ("batch", "height"), lambda t: t.max(2).values),
    (lambda t: t.min("batch").indices, ("height", "width"), lambda t: t.min(0).indices),
    (lambda t: t.cumsum("width"), NCHW, lambda t: t.cumsum(2)),
    (lambda t: t.sum(), (), lambda t: t.sum()),
    (lambda t: t.abs().clone(), NCHW, lambda t: t.abs().clone()),
])
def test_dims_by_name(call, names, ref):
    x = _x()
    got = call(x)
    assert got.names == names
    np.testing.assert_allclose(got.rename(None).numpy(), ref(torch.from_numpy(x.rename(None).numpy())).numpy(),
                               rtol=1e-6)


def test_size_and_unbind_by_name():
    x = _x()
    assert x.size("batch") == 2 and x.size("width") == 2
    assert [u.names for u in x.unbind("batch")] == [("height", "width")] * 2
    with pytest.raises(RuntimeError, match=r"Name 'zz' not found in Tensor\['batch', 'height', 'width'\]\."):
        x.sum("zz")


def test_unify():
    x = toolkit.randn(3, names=("X",))
    assert (x + toolkit.randn(3)).names == ("X",) and (x + x).names == ("X",)
    imgs = toolkit.randn(2, 3, 4, names=("N", "C", "H"))
    assert (imgs * toolkit.randn(4)).names == ("N", "C", "H")
    with pytest.raises(RuntimeError) as e:
        x + toolkit.randn(3, names=("Z",))
    assert str(e.value) == ("Error when attempting to broadcast dims ['X'] and dims ['Z']: dim 'X' and dim 'Z' are "
                            "at the same position from the right but do not match. (in aten::add, on tensors of shape [3] and [3])")


def test_broadcasting_mistake_caught():
    """The seed example: unnamed, (10, 1) - (10,) silently broadcasts to (10, 10); named, it raises."""
    a, b = toolkit.randn(10, 1), toolkit.randn(10)
    assert tuple((a - b).shape) == tuple((torch.randn(10, 1) - torch.randn(10)).shape) == (10, 10)
    with pytest.raises(RuntimeError) as e:
        a.rename("batch", "x") - b.rename("batch")
    assert str(e.value) == ("Error when attempting to broadcast dims ['batch', 'x'] and dims ['batch']: dim 'x' and "
                            "dim 'batch' are at the same position from the right but do not match. (in aten::sub, on tensors "
                            "of shape [10, 1] and [10])")


def test_misaligned():
    with pytest.raises(RuntimeError, match="Misaligned dims"):
        toolkit.randn(3, 3, names=("N", None)) + toolkit.randn(3, names=("N",))


def test_inplace_unifies_before_writing():
    z = toolkit.zeros(3, names=("a",))
    z.add_(toolkit.ones(3))
    assert z.names == ("a",)
    with pytest.raises(RuntimeError, match="do not match"):
        z.add_(toolkit.ones(3, names=("b",)))
    assert z.rename(None).tolist() == [1.0, 1.0, 1.0]


def test_matmul_family():
    a, b = toolkit.randn(2, 3, names=("a", "b")), toolkit.randn(3, 4, names=("c", "d"))
    assert a.mm(b).names == ("a", "d") and (a @ b).names == ("a", "d")
    assert toolkit.randn(5, 2, 3, names=("n", "a", "b")).bmm(toolkit.randn(5, 3, 4, names=("n", "c", "d"))).names == (
        "n", "a", "d")
    assert a.matmul(toolkit.randn(3, names=("c",))).names == ("a",)
    np.testing.assert_allclose(a.mm(b).rename(None).numpy(), torch.from_numpy(a.rename(None).numpy()).mm(
        torch.from_numpy(b.rename(None).numpy())).numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_op_raises_as_pytorch():
    x = _x()
    msg = (" is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, call the "
           "op with an unnamed tensor, and set names on the result of the operation.")
    with pytest.raises(RuntimeError) as e:
        x.view(4)
    assert str(e.value) == "aten::view" + msg
    with pytest.raises(RuntimeError, match="is not yet supported with named tensors"):
        toolkit.pdist(toolkit.randn(3, 3, names=("N", "C")))


def test_gradient_names():
    y = toolkit.randn(2, 3, names=("a", "b"), requires_grad=True)
    (y.softmax("b") * 2).sum().backward()
    assert y.grad.names == ("a", "b")
    ty = torch.from_numpy(y.rename(None).detach().numpy()).requires_grad_()
    (ty.softmax(1) * 2).sum().backward()
    np.testing.assert_allclose(y.grad.rename(None).numpy(), ty.grad.numpy(), rtol=1e-5, atol=1e-6)  # exactly 0: noise


def test_unnamed_tensors_carry_nothing():
    x = toolkit.randn(2, 3)
    assert (x + x)._extra is None and x.sum(0)._extra is None


def _samples(kinds):
    rng = np.random.default_rng(0)
    for d in R.all_ops():
        if d.kind in kinds and d.samples is not None and d.name_rule is not None and d.tensor_args[:1] == (0,):
            for args, kwargs in d.samples(rng):
                if isinstance(args[0], np.ndarray) and args[0].ndim >= 1 and args[0].dtype.kind in "fc":
                    yield pytest.param(d, args, kwargs, id=f"{d.name}.{d.overload}")
                    break


def _tensor(v, names=None):
    if isinstance(v, np.ndarray):
        t = toolkit.from_numpy(v.copy())
        return t.refine_names(*names) if names else t
    return v


@pytest.mark.parametrize("d,args,kwargs", list(_samples((R.ELEMENTWISE, R.COMPARISON, R.REDUCTION))))
def test_registry_named_inputs(d, args, kwargs):
    """Every elementwise and reduction op with samples: a named self gives the unnamed values, and the names its
    rule gives (the reference result is the op on the unnamed data)."""
    names = tuple(f"d{i}" for i in range(args[0].ndim))
    plain = [_tensor(a) for a in args]
    named = [_tensor(args[0], names)] + plain[1:]
    kw = {k: _tensor(v) for k, v in kwargs.items()}
    try:
        ref = d(*plain, **kw)
    except Exception as e:  # the op refuses this sample unnamed: it must refuse it named too
        with pytest.raises(type(e)):
            d(*named, **kw)
        return
    got = d(*named, **kw)
    for r, g in zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)):
        if not isinstance(r, toolkit.Tensor):
            continue
        np.testing.assert_array_equal(g.rename(None).numpy(), r.numpy())
        if g.ndim == len(names) and d.kind != R.REDUCTION:
            assert g.names == names  # the only named input covers every output dim: unify gives its names
        if g.ndim == 0:
            assert g.names == ()
