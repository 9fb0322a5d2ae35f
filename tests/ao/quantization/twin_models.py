"""Small models built the same way under toolkit and torch (the library passed in), with the torch twin's
weights copied into toolkit's, for the eager-quantization tests."""

import numpy as np
import torch

import toolkit


def quant_api(lib):
    return toolkit.ao.quantization if lib is toolkit else torch.ao.quantization


def conv_net(lib):
    """QuantStub, conv-bn-relu, conv-relu, linear-relu, linear, DeQuantStub (fusable groups named as listed in
    ``CONV_NET_FUSE``)."""
    nn, Q = lib.nn, quant_api(lib)

    class ConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = Q.QuantStub()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(4, 6, 3, stride=2, padding=1)
            self.relu2 = nn.ReLU()
            self.flatten = nn.Flatten()
            self.fc1 = nn.Linear(6 * 3 * 3, 16)
            self.relu3 = nn.ReLU()
            self.fc2 = nn.Linear(16, 5)
            self.dequant = Q.DeQuantStub()

        def forward(self, x):
            x = self.relu1(self.bn1(self.conv1(self.quant(x))))
            x = self.relu2(self.conv2(x))
            x = self.relu3(self.fc1(self.flatten(x)))
            return self.dequant(self.fc2(x))

    return ConvNet()


CONV_NET_FUSE = [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc1", "relu3"]]


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))


def lstm_model(lib):
    nn = lib.nn

    class LSTMModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(6, 8, num_layers=2)
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.fc(out)

    return LSTMModel()


def twins(build, seed: int = 0, bn_stats: bool = True):
    """``(toolkit_model, torch_model)`` from ``build(lib)`` with the same parameters and buffers (random
    BatchNorm statistics when ``bn_stats``, so eval-mode folding has something to fold)."""
    torch.manual_seed(seed)
    theirs = build(torch)
    if bn_stats:
        rng = np.random.default_rng(seed)
        for m in theirs.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(torch.tensor(rng.normal(0, 0.3, m.num_features), dtype=torch.float32))
                m.running_var.copy_(torch.tensor(rng.uniform(0.5, 2.0, m.num_features), dtype=torch.float32))
                m.weight.data.copy_(torch.tensor(rng.uniform(0.5, 1.5, m.num_features), dtype=torch.float32))
                m.bias.data.copy_(torch.tensor(rng.normal(0, 0.2, m.num_features), dtype=torch.float32))
    ours = build(toolkit)
    ours.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def module_layout(model) -> list:
    """``(qualified name, class name)`` of every submodule, for comparing where prepare put observers."""
    return [(name, type(m).__name__) for name, m in model.named_modules()]


def align_bn_sqrt(ours, theirs) -> None:
    """Nudge every BatchNorm's running variance (in both twins alike) to values whose ``sqrt(var + eps)`` torch's
    CPU kernel rounds as numpy does: torch's float32 sqrt (vectorized through MKL) is off by one ulp for some
    inputs, and a folded conv-bn weight scaled by it can then cross a rounding boundary of its fake quantization
    (the extreme weight sits exactly on one)."""
    t_mods = dict(theirs.named_modules())
    for name, m in ours.named_modules():
        t = t_mods[name]
        if not isinstance(t, torch.nn.modules.batchnorm._BatchNorm) or t.running_var is None:
            continue
        var = t.running_var.detach().numpy().copy()
        for _ in range(64):
            shifted = torch.tensor(var) + t.eps
            bad = torch.sqrt(shifted).numpy() != np.sqrt(shifted.numpy())
            if not bad.any():
                break
            var[bad] = np.nextafter(var[bad], np.float32(np.inf))
        with torch.no_grad():
            t.running_var.copy_(torch.tensor(var))
        m.running_var.copy_(toolkit.tensor(var))


def assert_step_matches(ours, theirs, x: np.ndarray, weights=("weight",), atol: float = 1e-4) -> None:
    """One forward and backward of ``sum(y * y)`` through both twins on ``x``: the outputs, the input gradients
    and the gradients of the named parameters (dotted paths) agree with torch's."""
    from tests.conftest import assert_close

    xo, xt = toolkit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    assert_close(yo, yt, atol=1e-5, rtol=1e-5)
    (yo * yo).sum().backward()
    (yt * yt).sum().backward()
    assert_close(xo.grad, xt.grad, atol=atol, rtol=1e-4)
    for path in weights:
        assert_close(ours.get_parameter(path).grad, theirs.get_parameter(path).grad, atol=atol, rtol=1e-4)
