"""Golden prints of the seed's traced examples (foo, Net, the LSTM cell, a resnet block), and eager parity.

Each test compares the printed graph (without source locations) with the text
checked in here, then checks that the traced graph's outputs and gradients equal
eager mode's on fresh inputs.
"""

import numpy as np
import pytest

import toolkit
import toolkit.nn.functional as F
from toolkit import nn


def foo(x, y):
    return 2 * x + y


class Net(nn.Module):
    """The seed's MNIST net (log_softmax given dim=1, as PyTorch asks)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def lstm(input, hidden, w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = toolkit.sigmoid(ingate)
    forgetgate = toolkit.sigmoid(forgetgate)
    cellgate = toolkit.tanh(cellgate)
    outgate = toolkit.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * toolkit.tanh(cy)
    return hy, cy


class BasicBlock(nn.Module):
    """conv-bn-relu-conv-bn plus the identity, as in ResNet's BasicBlock."""

    def __init__(self, c: int = 4):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


def _text(traced, graph=None) -> str:
    g = traced.graph if graph is None else graph
    return g.to_string(source_locations=False).replace(__name__, "MOD")


def _leaves(*ts):
    return [t.detach().clone().requires_grad_() for t in ts]


def _assert_close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _assert_module_parity(m, tm, x):
    """Outputs, input grads and parameter grads of ``tm`` equal ``m``'s on a fresh input."""
    xe, xt = _leaves(x, x)
    out_e = m(xe)
    (out_e * out_e.detach().sin()).sum().backward()
    grads_e = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    out_t = tm(xt)
    (out_t * out_t.detach().sin()).sum().backward()
    _assert_close(out_t, out_e)
    _assert_close(xt.grad, xe.grad)
    for p, g in zip(m.parameters(), grads_e):
        _assert_close(p.grad, g)


FOO_GOLDEN = """\
graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %2 : int = prim::Constant[value=2]()
  %3 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %2)
  %4 : int = prim::Constant[value=1]()
  %5 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::add(%3, %y, %4)
  return (%5)
"""


def test_foo_golden_and_parity():
    t = toolkit.jit.trace(foo, (toolkit.rand(3), toolkit.rand(3)))
    assert _text(t) == FOO_GOLDEN
    x, y = _leaves(toolkit.randn(3), toolkit.randn(3))
    xe, ye = _leaves(x, y)
    out = t(x, y)
    ref = foo(xe, ye)
    _assert_close(out, ref)
    out.pow(2).sum().backward()
    ref.pow(2).sum().backward()
    _assert_close(x.grad, xe.grad)
    _assert_close(y.grad, ye.grad)


NET_GOLDEN = """\
graph(%self : __torch__.MOD.Net,
      %x.1 : Float(2, 1, 28, 28, strides=[784, 784, 28, 1], requires_grad=0, device=cpu)):
  %conv1 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv1"](%self), scope: __module.conv1
  %weight : Float(10, 1, 5, 5, strides=[25, 25, 5, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%conv1), scope: __module.conv1
  %bias : Float(10, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%conv1), scope: __module.conv1
  %5 : int = prim::Constant[value=1](), scope: __module.conv1
  %6 : int = prim::Constant[value=1](), scope: __module.conv1
  %7 : int[] = prim::ListConstruct(%5, %6), scope: __module.conv1
  %8 : int = prim::Constant[value=0](), scope: __module.conv1
  %9 : int = prim::Constant[value=0](), scope: __module.conv1
  %10 : int[] = prim::ListConstruct(%8, %9), scope: __module.conv1
  %11 : int = prim::Constant[value=1](), scope: __module.conv1
  %12 : int = prim::Constant[value=1](), scope: __module.conv1
  %13 : int[] = prim::ListConstruct(%11, %12), scope: __module.conv1
  %14 : int = prim::Constant[value=1](), scope: __module.conv1
  %input.1 : Float(2, 10, 24, 24, strides=[5760, 576, 24, 1], requires_grad=1, device=cpu) = aten::conv2d(%x.1, %weight, %bias, %7, %10, %13, %14), scope: __module.conv1
  %16 : int = prim::Constant[value=2]()
  %17 : int = prim::Constant[value=2]()
  %18 : int[] = prim::ListConstruct(%16, %17)
  %19 : int[] = prim::ListConstruct()
  %20 : int = prim::Constant[value=0]()
  %21 : int = prim::Constant[value=0]()
  %22 : int[] = prim::ListConstruct(%20, %21)
  %23 : int = prim::Constant[value=1]()
  %24 : int = prim::Constant[value=1]()
  %25 : int[] = prim::ListConstruct(%23, %24)
  %26 : bool = prim::Constant[value=0]()
  %input.3 : Float(2, 10, 12, 12, strides=[1440, 144, 12, 1], requires_grad=1, device=cpu) = aten::max_pool2d(%input.1, %18, %19, %22, %25, %26)
  %input.5 : Float(2, 10, 12, 12, strides=[1440, 144, 12, 1], requires_grad=1, device=cpu) = aten::relu(%input.3)
  %conv2 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv2"](%self), scope: __module.conv2
  %weight.1 : Float(20, 10, 5, 5, strides=[250, 25, 5, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%conv2), scope: __module.conv2
  %bias.1 : Float(20, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%conv2), scope: __module.conv2
  %32 : int = prim::Constant[value=1](), scope: __module.conv2
  %33 : int = prim::Constant[value=1](), scope: __module.conv2
  %34 : int[] = prim::ListConstruct(%32, %33), scope: __module.conv2
  %35 : int = prim::Constant[value=0](), scope: __module.conv2
  %36 : int = prim::Constant[value=0](), scope: __module.conv2
  %37 : int[] = prim::ListConstruct(%35, %36), scope: __module.conv2
  %38 : int = prim::Constant[value=1](), scope: __module.conv2
  %39 : int = prim::Constant[value=1](), scope: __module.conv2
  %40 : int[] = prim::ListConstruct(%38, %39), scope: __module.conv2
  %41 : int = prim::Constant[value=1](), scope: __module.conv2
  %input.7 : Float(2, 20, 8, 8, strides=[1280, 64, 8, 1], requires_grad=1, device=cpu) = aten::conv2d(%input.5, %weight.1, %bias.1, %34, %37, %40, %41), scope: __module.conv2
  %43 : float = prim::Constant[value=0.5](), scope: __module.conv2_drop
  %44 : bool = prim::Constant[value=0](), scope: __module.conv2_drop
  %input.9 : Float(2, 20, 8, 8, strides=[1280, 64, 8, 1], requires_grad=1, device=cpu) = aten::feature_dropout(%input.7, %43, %44), scope: __module.conv2_drop
  %46 : int = prim::Constant[value=2]()
  %47 : int = prim::Constant[value=2]()
  %48 : int[] = prim::ListConstruct(%46, %47)
  %49 : int[] = prim::ListConstruct()
  %50 : int = prim::Constant[value=0]()
  %51 : int = prim::Constant[value=0]()
  %52 : int[] = prim::ListConstruct(%50, %51)
  %53 : int = prim::Constant[value=1]()
  %54 : int = prim::Constant[value=1]()
  %55 : int[] = prim::ListConstruct(%53, %54)
  %56 : bool = prim::Constant[value=0]()
  %input.11 : Float(2, 20, 4, 4, strides=[320, 16, 4, 1], requires_grad=1, device=cpu) = aten::max_pool2d(%input.9, %48, %49, %52, %55, %56)
  %x : Float(2, 20, 4, 4, strides=[320, 16, 4, 1], requires_grad=1, device=cpu) = aten::relu(%input.11)
  %59 : int = prim::Constant[value=-1]()
  %60 : int = prim::Constant[value=320]()
  %61 : int[] = prim::ListConstruct(%59, %60)
  %input.13 : Float(2, 320, strides=[320, 1], requires_grad=1, device=cpu) = aten::view(%x, %61)
  %fc1 : __torch__.toolkit.nn.modules.linear.Linear = prim::GetAttr[name="fc1"](%self), scope: __module.fc1
  %weight.2 : Float(50, 320, strides=[320, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%fc1), scope: __module.fc1
  %bias.2 : Float(50, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%fc1), scope: __module.fc1
  %input.15 : Float(2, 50, strides=[50, 1], requires_grad=1, device=cpu) = aten::linear(%input.13, %weight.2, %bias.2), scope: __module.fc1
  %input.17 : Float(2, 50, strides=[50, 1], requires_grad=1, device=cpu) = aten::relu(%input.15)
  %68 : float = prim::Constant[value=0.5]()
  %69 : bool = prim::Constant[value=0]()
  %input.19 : Float(2, 50, strides=[50, 1], requires_grad=1, device=cpu) = aten::dropout(%input.17, %68, %69)
  %fc2 : __torch__.toolkit.nn.modules.linear.Linear = prim::GetAttr[name="fc2"](%self), scope: __module.fc2
  %weight.3 : Float(10, 50, strides=[50, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%fc2), scope: __module.fc2
  %bias.3 : Float(10, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%fc2), scope: __module.fc2
  %input : Float(2, 10, strides=[10, 1], requires_grad=1, device=cpu) = aten::linear(%input.19, %weight.3, %bias.3), scope: __module.fc2
  %75 : int = prim::Constant[value=1]()
  %76 : NoneType = prim::Constant()
  %77 : Float(2, 10, strides=[10, 1], requires_grad=1, device=cpu) = aten::log_softmax(%input, %75, %76)
  return (%77)
"""

# ``.graph`` calls the submodules, as TorchScript's traced modules do; each callee has its own graph.
NET_CALLS_GOLDEN = """\
graph(%self : __torch__.MOD.Net,
      %x.1 : Float(2, 1, 28, 28, strides=[784, 784, 28, 1], requires_grad=0, device=cpu)):
  %conv1 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv1"](%self), scope: __module.conv1
  %3 : Tensor = prim::CallMethod[name="forward"](%conv1, %x.1)
  %4 : int = prim::Constant[value=2]()
  %5 : int = prim::Constant[value=2]()
  %6 : int[] = prim::ListConstruct(%4, %5)
  %7 : int[] = prim::ListConstruct()
  %8 : int = prim::Constant[value=0]()
  %9 : int = prim::Constant[value=0]()
  %10 : int[] = prim::ListConstruct(%8, %9)
  %11 : int = prim::Constant[value=1]()
  %12 : int = prim::Constant[value=1]()
  %13 : int[] = prim::ListConstruct(%11, %12)
  %14 : bool = prim::Constant[value=0]()
  %input.3 : Float(2, 10, 12, 12, strides=[1440, 144, 12, 1], requires_grad=1, device=cpu) = aten::max_pool2d(%3, %6, %7, %10, %13, %14)
  %input.5 : Float(2, 10, 12, 12, strides=[1440, 144, 12, 1], requires_grad=1, device=cpu) = aten::relu(%input.3)
  %conv2 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv2"](%self), scope: __module.conv2
  %18 : Tensor = prim::CallMethod[name="forward"](%conv2, %input.5)
  %conv2_drop : __torch__.toolkit.nn.modules.dropout.Dropout2d = prim::GetAttr[name="conv2_drop"](%self), scope: __module.conv2_drop
  %20 : Tensor = prim::CallMethod[name="forward"](%conv2_drop, %18)
  %21 : int = prim::Constant[value=2]()
  %22 : int = prim::Constant[value=2]()
  %23 : int[] = prim::ListConstruct(%21, %22)
  %24 : int[] = prim::ListConstruct()
  %25 : int = prim::Constant[value=0]()
  %26 : int = prim::Constant[value=0]()
  %27 : int[] = prim::ListConstruct(%25, %26)
  %28 : int = prim::Constant[value=1]()
  %29 : int = prim::Constant[value=1]()
  %30 : int[] = prim::ListConstruct(%28, %29)
  %31 : bool = prim::Constant[value=0]()
  %input.11 : Float(2, 20, 4, 4, strides=[320, 16, 4, 1], requires_grad=1, device=cpu) = aten::max_pool2d(%20, %23, %24, %27, %30, %31)
  %x : Float(2, 20, 4, 4, strides=[320, 16, 4, 1], requires_grad=1, device=cpu) = aten::relu(%input.11)
  %34 : int = prim::Constant[value=-1]()
  %35 : int = prim::Constant[value=320]()
  %36 : int[] = prim::ListConstruct(%34, %35)
  %input.13 : Float(2, 320, strides=[320, 1], requires_grad=1, device=cpu) = aten::view(%x, %36)
  %fc1 : __torch__.toolkit.nn.modules.linear.Linear = prim::GetAttr[name="fc1"](%self), scope: __module.fc1
  %39 : Tensor = prim::CallMethod[name="forward"](%fc1, %input.13)
  %input.17 : Float(2, 50, strides=[50, 1], requires_grad=1, device=cpu) = aten::relu(%39)
  %41 : float = prim::Constant[value=0.5]()
  %42 : bool = prim::Constant[value=0]()
  %input.19 : Float(2, 50, strides=[50, 1], requires_grad=1, device=cpu) = aten::dropout(%input.17, %41, %42)
  %fc2 : __torch__.toolkit.nn.modules.linear.Linear = prim::GetAttr[name="fc2"](%self), scope: __module.fc2
  %45 : Tensor = prim::CallMethod[name="forward"](%fc2, %input.19)
  %46 : int = prim::Constant[value=1]()
  %47 : NoneType = prim::Constant()
  %48 : Float(2, 10, strides=[10, 1], requires_grad=1, device=cpu) = aten::log_softmax(%45, %46, %47)
  return (%48)
"""

NET_CONV1_GOLDEN = """\
graph(%self : __torch__.toolkit.nn.modules.conv.Conv2d,
      %input : Float(2, 1, 28, 28, strides=[784, 784, 28, 1], requires_grad=0, device=cpu)):
  %weight : Float(10, 1, 5, 5, strides=[25, 25, 5, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%self), scope: __module.conv1
  %bias : Float(10, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%self), scope: __module.conv1
  %4 : int = prim::Constant[value=1](), scope: __module.conv1
  %5 : int = prim::Constant[value=1](), scope: __module.conv1
  %6 : int[] = prim::ListConstruct(%4, %5), scope: __module.conv1
  %7 : int = prim::Constant[value=0](), scope: __module.conv1
  %8 : int = prim::Constant[value=0](), scope: __module.conv1
  %9 : int[] = prim::ListConstruct(%7, %8), scope: __module.conv1
  %10 : int = prim::Constant[value=1](), scope: __module.conv1
  %11 : int = prim::Constant[value=1](), scope: __module.conv1
  %12 : int[] = prim::ListConstruct(%10, %11), scope: __module.conv1
  %13 : int = prim::Constant[value=1](), scope: __module.conv1
  %input.1 : Float(2, 10, 24, 24, strides=[5760, 576, 24, 1], requires_grad=1, device=cpu) = aten::conv2d(%input, %weight, %bias, %6, %9, %12, %13), scope: __module.conv1
  return (%input.1)
"""


def test_net_golden_and_parity_in_eval_mode():
    toolkit.manual_seed(0)
    m = Net().eval()
    tm = toolkit.jit.trace(m, toolkit.randn(2, 1, 28, 28))
    assert _text(tm, tm.inlined_graph) == NET_GOLDEN
    assert _text(tm) == NET_CALLS_GOLDEN
    assert _text(tm, tm.conv1.graph) == NET_CONV1_GOLDEN
    _assert_module_parity(m, tm, toolkit.randn(3, 1, 28, 28))


LSTM_GOLDEN = """\
graph(%input : Float(3, 10, strides=[10, 1], requires_grad=0, device=cpu),
      %hidden : (Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu), Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu)),
      %w_ih : Float(80, 10, strides=[10, 1], requires_grad=0, device=cpu),
      %w_hh : Float(80, 20, strides=[20, 1], requires_grad=0, device=cpu),
      %b_ih : Float(80, strides=[1], requires_grad=0, device=cpu),
      %b_hh : Float(80, strides=[1], requires_grad=0, device=cpu)):
  %hx : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu), %cx : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = prim::TupleUnpack(%hidden)
  %8 : Float(3, 80, strides=[80, 1], requires_grad=0, device=cpu) = aten::linear(%input, %w_ih, %b_ih)
  %9 : Float(3, 80, strides=[80, 1], requires_grad=0, device=cpu) = aten::linear(%hx, %w_hh, %b_hh)
  %10 : int = prim::Constant[value=1]()
  %gates : Float(3, 80, strides=[80, 1], requires_grad=0, device=cpu) = aten::add(%8, %9, %10)
  %12 : int = prim::Constant[value=4]()
  %13 : int = prim::Constant[value=1]()
  %14 : Tensor[] = aten::chunk(%gates, %12, %13)
  %ingate.1 : Float(3, 20, strides=[80, 1], requires_grad=0, device=cpu), %forgetgate.1 : Float(3, 20, strides=[80, 1], requires_grad=0, device=cpu), %cellgate.1 : Float(3, 20, strides=[80, 1], requires_grad=0, device=cpu), %outgate.1 : Float(3, 20, strides=[80, 1], requires_grad=0, device=cpu) = prim::ListUnpack(%14)
  %ingate : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::sigmoid(%ingate.1)
  %forgetgate : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::sigmoid(%forgetgate.1)
  %cellgate : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::tanh(%cellgate.1)
  %outgate : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::sigmoid(%outgate.1)
  %23 : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::mul(%forgetgate, %cx)
  %24 : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::mul(%ingate, %cellgate)
  %25 : int = prim::Constant[value=1]()
  %cy : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::add(%23, %24, %25)
  %27 : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::tanh(%cy)
  %28 : Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu) = aten::mul(%outgate, %27)
  %29 : (Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu), Float(3, 20, strides=[20, 1], requires_grad=0, device=cpu)) = prim::TupleConstruct(%28, %cy)
  return (%29)
"""


def _lstm_args(batch: int = 3):
    return (toolkit.randn(batch, 10), (toolkit.randn(batch, 20), toolkit.randn(batch, 20)),
            toolkit.randn(80, 10), toolkit.randn(80, 20), toolkit.randn(80), toolkit.randn(80))


def test_lstm_cell_golden_and_parity():
    toolkit.manual_seed(0)
    t = toolkit.jit.trace(lstm, _lstm_args())
    assert _text(t) == LSTM_GOLDEN
    inp, (hx, cx), *ws = _lstm_args()
    leaves_t = _leaves(inp, hx, cx, *ws)
    leaves_e = _leaves(inp, hx, cx, *ws)
    hy, cy = t(leaves_t[0], (leaves_t[1], leaves_t[2]), *leaves_t[3:])
    ehy, ecy = lstm(leaves_e[0], (leaves_e[1], leaves_e[2]), *leaves_e[3:])
    _assert_close(hy, ehy)
    _assert_close(cy, ecy)
    (hy.sum() + 2 * cy.pow(2).sum()).backward()
    (ehy.sum() + 2 * ecy.pow(2).sum()).backward()
    for a, b in zip(leaves_t, leaves_e):
        _assert_close(a.grad, b.grad)


BLOCK_GOLDEN = """\
graph(%self : __torch__.MOD.BasicBlock,
      %x : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=0, device=cpu)):
  %conv1 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv1"](%self), scope: __module.conv1
  %weight : Float(4, 4, 3, 3, strides=[36, 9, 3, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%conv1), scope: __module.conv1
  %4 : NoneType = prim::Constant(), scope: __module.conv1
  %5 : int = prim::Constant[value=1](), scope: __module.conv1
  %6 : int = prim::Constant[value=1](), scope: __module.conv1
  %7 : int[] = prim::ListConstruct(%5, %6), scope: __module.conv1
  %8 : int = prim::Constant[value=1](), scope: __module.conv1
  %9 : int = prim::Constant[value=1](), scope: __module.conv1
  %10 : int[] = prim::ListConstruct(%8, %9), scope: __module.conv1
  %11 : int = prim::Constant[value=1](), scope: __module.conv1
  %12 : int = prim::Constant[value=1](), scope: __module.conv1
  %13 : int[] = prim::ListConstruct(%11, %12), scope: __module.conv1
  %14 : int = prim::Constant[value=1](), scope: __module.conv1
  %input.1 : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::conv2d(%x, %weight, %4, %7, %10, %13, %14), scope: __module.conv1
  %bn1 : __torch__.toolkit.nn.modules.normalization.BatchNorm2d = prim::GetAttr[name="bn1"](%self), scope: __module.bn1
  %running_mean : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::GetAttr[name="running_mean"](%bn1), scope: __module.bn1
  %running_var : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::GetAttr[name="running_var"](%bn1), scope: __module.bn1
  %weight.1 : Float(4, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%bn1), scope: __module.bn1
  %bias : Float(4, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%bn1), scope: __module.bn1
  %21 : bool = prim::Constant[value=0](), scope: __module.bn1
  %22 : float = prim::Constant[value=0.1](), scope: __module.bn1
  %23 : float = prim::Constant[value=1e-05](), scope: __module.bn1
  %input.3 : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::batch_norm(%input.1, %running_mean, %running_var, %weight.1, %bias, %21, %22, %23), scope: __module.bn1
  %input.5 : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::relu_(%input.3), scope: __module.relu
  %conv2 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv2"](%self), scope: __module.conv2
  %weight.2 : Float(4, 4, 3, 3, strides=[36, 9, 3, 1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%conv2), scope: __module.conv2
  %28 : NoneType = prim::Constant(), scope: __module.conv2
  %29 : int = prim::Constant[value=1](), scope: __module.conv2
  %30 : int = prim::Constant[value=1](), scope: __module.conv2
  %31 : int[] = prim::ListConstruct(%29, %30), scope: __module.conv2
  %32 : int = prim::Constant[value=1](), scope: __module.conv2
  %33 : int = prim::Constant[value=1](), scope: __module.conv2
  %34 : int[] = prim::ListConstruct(%32, %33), scope: __module.conv2
  %35 : int = prim::Constant[value=1](), scope: __module.conv2
  %36 : int = prim::Constant[value=1](), scope: __module.conv2
  %37 : int[] = prim::ListConstruct(%35, %36), scope: __module.conv2
  %38 : int = prim::Constant[value=1](), scope: __module.conv2
  %input.7 : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::conv2d(%input.5, %weight.2, %28, %31, %34, %37, %38), scope: __module.conv2
  %bn2 : __torch__.toolkit.nn.modules.normalization.BatchNorm2d = prim::GetAttr[name="bn2"](%self), scope: __module.bn2
  %running_mean.1 : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::GetAttr[name="running_mean"](%bn2), scope: __module.bn2
  %running_var.1 : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::GetAttr[name="running_var"](%bn2), scope: __module.bn2
  %weight.3 : Float(4, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="weight"](%bn2), scope: __module.bn2
  %bias.1 : Float(4, strides=[1], requires_grad=1, device=cpu) = prim::GetAttr[name="bias"](%bn2), scope: __module.bn2
  %45 : bool = prim::Constant[value=0](), scope: __module.bn2
  %46 : float = prim::Constant[value=0.1](), scope: __module.bn2
  %47 : float = prim::Constant[value=1e-05](), scope: __module.bn2
  %out : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::batch_norm(%input.7, %running_mean.1, %running_var.1, %weight.3, %bias.1, %45, %46, %47), scope: __module.bn2
  %49 : int = prim::Constant[value=1]()
  %input : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::add_(%out, %x, %49)
  %51 : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::relu_(%input), scope: __module.relu
  return (%51)
"""

# ``relu`` is called twice: its second call is ``forward1``, as TorchScript names it.
BLOCK_CALLS_GOLDEN = """\
graph(%self : __torch__.MOD.BasicBlock,
      %x : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=0, device=cpu)):
  %conv1 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv1"](%self), scope: __module.conv1
  %3 : Tensor = prim::CallMethod[name="forward"](%conv1, %x)
  %bn1 : __torch__.toolkit.nn.modules.normalization.BatchNorm2d = prim::GetAttr[name="bn1"](%self), scope: __module.bn1
  %5 : Tensor = prim::CallMethod[name="forward"](%bn1, %3)
  %relu : __torch__.toolkit.nn.modules.activation.ReLU = prim::GetAttr[name="relu"](%self), scope: __module.relu
  %7 : Tensor = prim::CallMethod[name="forward"](%relu, %5)
  %conv2 : __torch__.toolkit.nn.modules.conv.Conv2d = prim::GetAttr[name="conv2"](%self), scope: __module.conv2
  %9 : Tensor = prim::CallMethod[name="forward"](%conv2, %7)
  %bn2 : __torch__.toolkit.nn.modules.normalization.BatchNorm2d = prim::GetAttr[name="bn2"](%self), scope: __module.bn2
  %11 : Tensor = prim::CallMethod[name="forward"](%bn2, %9)
  %12 : int = prim::Constant[value=1]()
  %input : Float(1, 4, 5, 5, strides=[100, 25, 5, 1], requires_grad=1, device=cpu) = aten::add_(%11, %x, %12)
  %14 : Tensor = prim::CallMethod[name="forward1"](%relu, %input)
  return (%14)
"""


@pytest.mark.parametrize("train", [False, True])
def test_resnet_block_golden_and_parity(train):
    toolkit.manual_seed(0)
    m = BasicBlock().train(train)
    tm = toolkit.jit.trace(m, toolkit.randn(1, 4, 5, 5), check_trace=False)
    if not train:  # training mode adds the num_batches_tracked updates
        assert _text(tm, tm.inlined_graph) == BLOCK_GOLDEN
        assert _text(tm) == BLOCK_CALLS_GOLDEN
    else:
        assert [n.kind for n in tm.inlined_graph.nodes()].count("aten::add_") == 3
    _assert_module_parity(m, tm, toolkit.randn(2, 4, 5, 5))
