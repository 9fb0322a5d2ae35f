"""The ops a trace records, against ``torch.jit.trace`` on the same code: names, argument order and constants.

Each graph is reduced to its ``aten::`` nodes, each with its arguments as
graph-input positions, earlier op outputs or constant values, so the two
tracers' records compare directly.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F


def _torch_ops(g) -> list:
    desc, ops = {}, []
    for i, v in enumerate(g.inputs()):
        desc[v] = ("input", i)
    for n in g.nodes():
        kind = n.kind()
        if kind == "prim::Constant":
            val = n.output().toIValue()
            # A number bound to a Tensor argument is a 0-d "wrapped number" tensor constant here; toolkit
            # records the number itself.
            desc[n.output()] = val.item() if isinstance(val, torch.Tensor) and val.dim() == 0 else val
        elif kind == "prim::ListConstruct":
            desc[n.output()] = [desc[v] for v in n.inputs()]
        elif kind.startswith("aten::"):
            ops.append((kind, [desc[v] for v in n.inputs()]))
            for k, o in enumerate(n.outputs()):
                desc[o] = ("op", len(ops) - 1, k)
    return ops


def _tk_ops(g) -> list:
    """The same reduction of a toolkit graph."""
    desc, ops = {}, []
    for i, v in enumerate(g.inputs):
        desc[id(v)] = ("input", i)
    for n in g.nodes():
        if n.kind == "prim::Constant":
            desc[id(n.output())] = n.attributes.get("value")
        elif n.kind == "prim::ListConstruct":
            desc[id(n.output())] = [desc[id(v)] for v in n.inputs]
        elif n.kind.startswith("aten::"):
            ops.append((n.kind, [desc[id(v)] for v in n.inputs]))
            for k, o in enumerate(n.outputs):
                desc[id(o)] = ("op", len(ops) - 1, k)
    return ops


def _both(fn_tk, fn_th, *arrays, requires_grad=False):
    tk_args = tuple(toolkit.tensor(a).requires_grad_(requires_grad) for a in arrays)
    th_args = tuple(torch.tensor(a).requires_grad_(requires_grad) for a in arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = toolkit.jit.trace(fn_tk, tk_args, check_trace=False)
        r = torch.jit.trace(fn_th, th_args, check_trace=False)
    return _tk_ops(t.graph), _torch_ops(r.graph)


_X = np.linspace(0.5, 2.0, 60, dtype=np.float32).reshape(6, 10)
_I = np.arange(1, 7, dtype=np.int64).reshape(2, 3)


REFLECTED = {
    "2*x+y": (lambda lib: lambda x, y: 2 * x + y, (_X, _X)),
    "2+x": (lambda lib: lambda x: 2 + x, (_X,)),
    "2.5*x": (lambda lib: lambda x: 2.5 * x, (_X,)),
    "2-x": (lambda lib: lambda x: 2 - x, (_X,)),
    "1.5-x": (lambda lib: lambda x: 1.5 - x, (_X,)),
    "2/x": (lambda lib: lambda x: 2 / x, (_X,)),
    "3/x": (lambda lib: lambda x: 3 / x, (_X,)),
    "x**2": (lambda lib: lambda x: x ** 2, (_X,)),
    "2**x": (lambda lib: lambda x: 2 ** x, (_X,)),
    "2%x": (lambda lib: lambda x: 2 % x, (_X,)),
    "2&i": (lambda lib: lambda i: 2 & i, (_I,)),
    "2|i": (lambda lib: lambda i: 2 | i, (_I,)),
    "2^i": (lambda lib: lambda i: 2 ^ i, (_I,)),
    "x*2-1": (lambda lib: lambda x: x * 2 - 1, (_X,)),
}


@pytest.mark.parametrize("name", list(REFLECTED))
def test_reflected_operators_record_what_pytorch_records(name):
    make, arrays = REFLECTED[name]
    tk, th = _both(make(toolkit), make(torch), *arrays)
    assert tk == th


@pytest.mark.parametrize("name", list(REFLECTED))
def test_reflected_operators_compute_what_pytorch_computes(name):
    make, arrays = REFLECTED[name]
    out = make(toolkit)(*(toolkit.tensor(a) for a in arrays))
    ref = make(torch)(*(torch.tensor(a) for a in arrays))
    assert str(out.dtype) == str(ref.dtype).replace("torch.", "toolkit.")
    if name == "2**x":  # numpy's float32 pow and PyTorch's may differ in the last bit
        np.testing.assert_array_max_ulp(out.numpy(), ref.numpy(), maxulp=1)
    else:
        np.testing.assert_array_equal(out.numpy(), ref.numpy())  # bit for bit: 2 / x is reciprocal(x) * 2


_A4 = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
_A3 = _A4[0]
_A2 = _A4[0, 0]


def _dropouts(f):
    return {
        "dropout": (lambda x: f.dropout(x, 0.3), _A4),
        "dropout_eval": (lambda x: f.dropout(x, 0.3, False), _A4),
        "dropout_p0": (lambda x: f.dropout(x, 0.0), _A4),
        "dropout_inplace": (lambda x: f.dropout(x * 1, 0.3, inplace=True), _A4),
        "alpha_dropout": (lambda x: f.alpha_dropout(x, 0.2, True), _A4),
        "feature_alpha_dropout": (lambda x: f.feature_alpha_dropout(x, 0.2, True), _A4),
        "dropout1d": (lambda x: f.dropout1d(x, 0.2), _A3),
        "dropout1d_unbatched": (lambda x: f.dropout1d(x, 0.2), _A2),
        "dropout2d": (lambda x: f.dropout2d(x, 0.2), _A4),
        "dropout2d_eval": (lambda x: f.dropout2d(x, 0.2, False), _A4),
        "dropout3d_unbatched": (lambda x: f.dropout3d(x, 0.2), _A4),
        "max_pool2d": (lambda x: f.max_pool2d(x, 2), _A4),
        "max_pool2d_args": (lambda x: f.max_pool2d(x, (3, 2), stride=1, padding=1, ceil_mode=True), _A4),
        "max_pool2d_indices": (lambda x: f.max_pool2d(x, 2, return_indices=True), _A4),
        "max_pool1d": (lambda x: f.max_pool1d(x, 2), _A3),
        "max_pool1d_indices": (lambda x: f.max_pool1d(x, 3, 2, 1, return_indices=True), _A3),
    }


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(_dropouts(F)))
def test_dropout_and_pooling_record_what_pytorch_records(name, requires_grad):
    fn_tk, a = _dropouts(F)[name]
    fn_th, _ = _dropouts(TF)[name]
    tk, th = _both(fn_tk, fn_th, a, requires_grad=requires_grad)
    if name.endswith("_unbatched"):
        # toolkit's one squeeze op takes ``int[]? dim`` (records ``[0]``), PyTorch's squeeze.dim an int.
        assert [k for k, _ in tk] == [k for k, _ in th] == ["aten::unsqueeze", "aten::feature_dropout", "aten::squeeze"]
        tk, th = tk[:2], th[:2]
    assert tk == th


def test_traced_dropout_in_training_mode_draws_what_eager_draws():
    x = toolkit.rand(4, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = toolkit.jit.trace(lambda x: F.dropout(x, 0.4), x, check_trace=False)
    toolkit.manual_seed(3)
    traced = t(x)
    toolkit.manual_seed(3)
    torch.manual_seed(3)
    eager = F.dropout(x, 0.4)
    np.testing.assert_array_equal(traced.numpy(), eager.numpy())
    np.testing.assert_array_equal(traced.numpy(), TF.dropout(torch.tensor(x.numpy()), 0.4).numpy())


def test_eval_mode_dropout_is_recorded_and_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = toolkit.jit.trace(lambda x: F.dropout(x, 0.5, training=False) + 1, toolkit.rand(3))
    kinds = [n.kind for n in t.graph.nodes() if n.kind.startswith("aten::")]
    assert kinds == ["aten::dropout", "aten::add"]
    x = toolkit.rand(3)
    np.testing.assert_array_equal(t(x).numpy(), (x + 1).numpy())


NEW_FACTORIES = {
    "new_zeros": lambda x: x.new_zeros(3) + x.sum(),
    "new_ones": lambda x: x.new_ones((2, 5)) * x.mean(),
    "new_empty": lambda x: x.new_empty(0, 2),
    "new_full": lambda x: x.new_full((4,), 2.5) - x.max(),
}


@pytest.mark.parametrize("name", list(NEW_FACTORIES))
def test_new_factories_record_their_op_and_follow_the_input_dtype(name):
    """``x.new_zeros(n)`` is ``aten::new_zeros`` of ``x``, as PyTorch records it, not a ``zeros`` with the traced
    dtype baked in: the replay on float64 input makes float64 as torch's does."""
    fn = NEW_FACTORIES[name]
    tk, th = _both(fn, fn, _X)
    kinds = [k for k, _ in tk]
    assert kinds[0] == f"aten::{name}" and tk[0][1][:2] == th[0][1][:2]  # of the input, with the same size
    assert kinds == [k for k, _ in th]
    t = toolkit.jit.trace(fn, toolkit.tensor(_X), check_trace=False)
    r = torch.jit.trace(fn, torch.tensor(_X), check_trace=False)
    wide = _X.astype(np.float64)
    assert str(t(toolkit.tensor(wide)).dtype) == str(r(torch.tensor(wide)).dtype).replace("torch.", "toolkit.")
