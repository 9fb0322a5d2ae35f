"""``quantized::conv2d_prepack``/``conv2d``/``conv2d_relu`` against PyTorch: integer for integer with its fbgemm
engine (whose requantization toolkit follows) and with the default x86 engine where that runs fbgemm too (weights
with a zero point).

The x86 engine runs symmetric weights through oneDNN on CPUs with VNNI. There (torch 2.13) an output whose scaled
value lies within a float32 step of a half may round the other way (about one output in 50,000 here), and
``conv2d_relu`` returns the plain convolution, values below the zero point included: toolkit applies the ReLU, as
fbgemm does. Both differences are pinned below."""

import numpy as np
import pytest
import torch

import toolkit
from toolkit.ops import registry as R

from .torch_twins import tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

prepack = R.get("quantized::conv2d_prepack")
GEOMETRIES = [  # stride, padding, dilation, groups, kernel
    ([1, 1], [0, 0], [1, 1], 1, (3, 3)),
    ([2, 1], [1, 2], [1, 1], 2, (3, 2)),
    ([1, 2], [1, 0], [2, 1], 1, (2, 3)),
    ([2, 2], [2, 2], [2, 2], 4, (1, 3)),
    ([1, 1], [1, 1], [1, 1], 1, (1, 1)),
]


def _weight(o, cg, kernel, per_channel, zp, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(o, cg, *kernel, generator=g)
    if per_channel:
        scales = torch.rand(o, generator=g, dtype=torch.float64) * 0.05 + 0.01
        return torch.quantize_per_channel(w, scales, torch.full((o,), zp, dtype=torch.long), 0, torch.qint8)
    return torch.quantize_per_tensor(w, 0.04, zp, torch.qint8)


@pytest.fixture
def engine():
    def use(name):
        torch.backends.quantized.engine = name

    before = torch.backends.quantized.engine
    yield use
    torch.backends.quantized.engine = before


@pytest.mark.parametrize("geometry", range(len(GEOMETRIES)))
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("relu,eng,w_zp", [(False, "fbgemm", 0), (False, "x86", 2), (True, "fbgemm", 0),
                                           (True, "x86", 2), (False, "x86", 0)])
def test_conv2d_int_repr_equals_torch(engine, geometry, per_channel, bias, relu, eng, w_zp):
    engine(eng)
    stride, padding, dilation, groups, kernel = GEOMETRIES[geometry]
    c, o = 4, 8
    w = _weight(o, c // groups, kernel, per_channel, w_zp, geometry)
    b = torch.randn(o, generator=torch.Generator().manual_seed(3)) if bias else None
    p = torch.ops.quantized.conv2d_prepack(w, b, stride, padding, dilation, groups)
    tp = prepack(tk(w), None if b is None else tk(b), stride, padding, dilation, groups)
    name = "conv2d_relu" if relu else "conv2d"
    g = torch.Generator().manual_seed(geometry)
    for x in (torch.quantize_per_tensor(torch.randn(2, c, 9, 8, generator=g) * 2, 0.05, 110, torch.quint8),
              torch.quantize_per_tensor(torch.rand(1, c, 5, 7, generator=g), 0.01, 0, torch.quint8)):
        for scale, zp in ((0.3, 50), (0.05, 0)):
            y = getattr(torch.ops.quantized, name)(x, p, scale, zp)
            ty = R.get(f"quantized::{name}")(tk(x), tp, scale, zp)
            assert tuple(ty.shape) == tuple(y.shape) and ty.dtype is toolkit.quint8
            ours, theirs = ty.int_repr().numpy().astype(int), y.int_repr().numpy().astype(int)
            if eng == "x86" and w_zp == 0:  # oneDNN: a rare tie the other way (module docstring)
                assert np.abs(ours - theirs).max() <= 1 and (ours != theirs).mean() < 1e-3
            else:
                np.testing.assert_array_equal(ours, theirs)
            assert ty.q_scale() == y.q_scale() and ty.q_zero_point() == y.q_zero_point()


def test_x86_onednn_conv2d_relu_skips_the_relu(engine):
    """Pins PyTorch's x86 behaviour the comparison above avoids: with a symmetric weight on this CPU,
    ``conv2d_relu`` gives ``conv2d``'s integers (when oneDNN runs it), where toolkit clamps at the zero point."""
    engine("x86")
    w = _weight(4, 3, (3, 3), False, 0, 0)
    p = torch.ops.quantized.conv2d_prepack(w, None, [1, 1], [1, 1], [1, 1], 1)
    x = torch.quantize_per_tensor(torch.randn(1, 3, 6, 6), 0.05, 110, torch.quint8)
    theirs = torch.ops.quantized.conv2d_relu(x, p, 0.3, 50).int_repr().numpy()
    plain = torch.ops.quantized.conv2d(x, p, 0.3, 50).int_repr().numpy()
    ours = R.get("quantized::conv2d_relu")(tk(x), prepack(tk(w), None, [1, 1], [1, 1], [1, 1], 1), 0.3, 50)
    np.testing.assert_array_equal(ours.int_repr().numpy(), np.maximum(plain, 50))
    if np.array_equal(theirs, plain) and (plain < 50).any():
        assert not np.array_equal(ours.int_repr().numpy(), theirs)


def test_packed_conv_reports_its_geometry_and_unpacks():
    w = _weight(4, 2, (3, 3), True, 0, 0)
    b = torch.randn(4)
    tp = prepack(tk(w), tk(b), [2, 1], [1, 0], [1, 2], 2)
    assert (tp.stride(), tp.padding(), tp.dilation(), tp.groups()) == ([2, 1], [1, 0], [1, 2], 2)
    tw, tb = R.get("quantized::conv2d_unpack")(tp)
    np.testing.assert_array_equal(tw.int_repr().numpy(), w.int_repr().numpy())
    np.testing.assert_array_equal(tb.numpy(), b.numpy())


def test_conv_errors():
    w = _weight(4, 3, (3, 3), False, 0, 0)
    tp = prepack(tk(w), None, [1, 1], [1, 1], [1, 1], 1)
    conv = R.get("quantized::conv2d")
    with pytest.raises(RuntimeError, match="stride should contain 2 elements"):
        prepack(tk(w), None, [1], [0], [1], 1)
    with pytest.raises(RuntimeError, match="Weights are expected to have 4 dimensions"):
        prepack(toolkit.quantize_per_tensor(toolkit.randn(4, 3, 3), 0.05, 0, toolkit.qint8), None, [1, 1], [0, 0],
                [1, 1], 1)
    with pytest.raises(RuntimeError, match="Expected activation tensor to have 4 dimensions, got 3"):
        conv(toolkit.quantize_per_tensor(toolkit.randn(3, 5, 5), 0.1, 100, toolkit.quint8), tp, 0.3, 50)
    with pytest.raises(RuntimeError, match="data type of input should be QUint8"):
        conv(toolkit.quantize_per_tensor(toolkit.randn(1, 3, 5, 5), 0.1, 0, toolkit.qint8), tp, 0.3, 50)
    with pytest.raises(RuntimeError, match="quantized::conv2d: the input has 4 channels"):
        conv(toolkit.quantize_per_tensor(toolkit.randn(1, 4, 5, 5), 0.1, 0, toolkit.quint8), tp, 0.3, 50)
    with pytest.raises(NotImplementedError, match="quantized::conv2d.new' with arguments from the 'CPU'"):
        conv(toolkit.randn(1, 3, 5, 5), tp, 0.3, 50)


def test_prepack_bias_must_be_a_vector_and_keeps_its_dtype():
    w = _weight(4, 3, (3, 3), False, 0, 0)
    with pytest.raises(RuntimeError, match="bias should be a vector"):
        torch.ops.quantized.conv2d_prepack(w, torch.zeros(4, 1), [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(RuntimeError, match="bias should be a vector"):
        prepack(tk(w), toolkit.zeros(4, 1), [1, 1], [0, 0], [1, 1], 1)
    b = torch.randn(4, dtype=torch.float64)
    _, tb = R.get("quantized::conv2d_unpack")(prepack(tk(w), tk(b), [1, 1], [0, 0], [1, 1], 1))
    assert tb.dtype is toolkit.float64
    assert torch.ops.quantized.conv2d_unpack(
        torch.ops.quantized.conv2d_prepack(w, b, [1, 1], [0, 0], [1, 1], 1))[1].dtype is torch.float64


def test_prepack_refuses_geometry_that_cannot_run():
    """Where PyTorch's prepack or its oneDNN run refuses a stride, padding or dilation, the prepack refuses it (they
    used to reach numpy as ZeroDivisionError or ValueError at the first call)."""
    w = tk(_weight(3, 2, (3, 3), False, 0, 0))
    with pytest.raises(RuntimeError, match="quantized::conv_prepack: stride should be positive."):
        torch.ops.quantized.conv2d_prepack(_weight(3, 2, (3, 3), False, 0, 0), None, [0, 1], [0, 0], [1, 1], 1)
    for stride, padding, dilation, message in (([0, 1], [0, 0], [1, 1], "stride should be positive"),
                                               ([1, -1], [0, 0], [1, 1], "stride should be positive"),
                                               ([1, 1], [-1, 0], [1, 1], "padding should be non-negative"),
                                               ([1, 1], [0, 0], [0, 1], "dilation should be positive")):
        with pytest.raises(RuntimeError, match=f"quantized::conv_prepack: {message}"):
            prepack(w, None, stride, padding, dilation, 1)
