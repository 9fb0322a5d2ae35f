"""``toolkit.jit.script`` of ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` (which ``torch.jit.script`` cannot script).

Over a grid of configurations (layers, directions, batch_first, bias, nonlinearity, LSTM projections), the
scripted module must compile with no Python fallback, and its outputs, final states, input (and initial
state) gradients and parameter gradients must equal eager toolkit's and eager torch's (same weights via the
state dict), with and without ``hx``, batched and unbatched. In train mode with dropout between layers it
must draw the same masks as eager toolkit under the same seed. Checks raise eager's errors, and a scripted
LSTM saves and runs after loading.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit

from ....conftest import assert_close
from .helpers import check

pytestmark = [pytest.mark.filterwarnings("ignore:dropout option adds dropout:UserWarning"),
              pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN:UserWarning")]

T_STEPS, BATCH, IN, HID = 3, 2, 4, 5

# (class, constructor keyword arguments); every row runs batched and unbatched, with and without hx
GRID = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True}),
    ("RNN", {"bias": False, "num_layers": 2, "bidirectional": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2}),
    ("LSTM", {"bidirectional": True}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False}),
    ("LSTM", {"proj_size": 3}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "batch_first": True}),
    ("GRU", {"bidirectional": True}),
    ("GRU", {"bias": False, "num_layers": 2, "bidirectional": True}),
]

# each output element sums over inputs, hidden units, time steps and layers
ACCUM = (IN + HID) * T_STEPS * 2


def _ids():
    return [f"{cls}-" + "-".join(f"{k}={v}" for k, v in kw.items()) if kw else cls for cls, kw in GRID]


def _pair(cls: str, kw: dict):
    """(torch module, toolkit module with the same weights)."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(IN, HID, **kw)
    km = getattr(toolkit.nn, cls)(IN, HID, **kw)
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, km


def _arrays(cls: str, kw: dict, batched: bool, with_hx: bool, seed: int = 0) -> list:
    """Input and, when ``with_hx``, the initial state(s) as numpy arrays in the module's layout."""
    rng = np.random.default_rng(seed)
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    seq = (BATCH, T_STEPS, IN) if kw.get("batch_first") else (T_STEPS, BATCH, IN)
    x = rng.standard_normal(seq if batched else (T_STEPS, IN)).astype(np.float32)
    if not with_hx:
        return [x]
    h_size = kw.get("proj_size") or HID
    lead = (n, BATCH) if batched else (n,)
    h = rng.standard_normal((*lead, h_size)).astype(np.float32)
    if cls != "LSTM":
        return [x, h]
    return [x, (h, rng.standard_normal((*lead, HID)).astype(np.float32))]


def _to(lib, a):
    if isinstance(a, tuple):
        return tuple(_to(lib, e) for e in a)
    t = lib.tensor(a.copy()) if lib is toolkit else torch.from_numpy(a.copy())
    return t.requires_grad_(True)


def _flat(x) -> list:
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in _flat(e)]
    return [x]


def _call(lib, module, arrays, seed: int = 0):
    """(outputs, gradients of the inputs and initial states, parameter gradients by name) of one call."""
    module.zero_grad()
    inputs = [_to(lib, a) for a in arrays]
    lib.manual_seed(seed)
    outs = _flat(module(*inputs))
    rng = np.random.default_rng(1)
    loss = None
    for o in outs:
        term = (o * _to(lib, rng.standard_normal(tuple(o.shape)).astype(np.float32)).detach()).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    grads = [t.grad for t in _flat(inputs)]
    params = {k: p.grad for k, p in module.named_parameters()}
    return [o.detach() for o in outs], grads, params


def _compare(got, want, what: str) -> None:
    outs, grads, params = got
    w_outs, w_grads, w_params = want
    assert len(outs) == len(w_outs), f"{what}: number of outputs"
    assert_close(outs, w_outs, accum=ACCUM, msg=f"{what}: outputs")
    assert len(grads) == len(w_grads), f"{what}: number of input gradients"
    assert_close(grads, w_grads, accum=ACCUM, msg=f"{what}: input gradients")
    assert sorted(params) == sorted(w_params), f"{what}: parameters"
    for k in params:
        assert_close(params[k], w_params[k], accum=ACCUM * BATCH, msg=f"{what}: gradient of {k}")


def _python_fallbacks(scripted) -> list:
    return sorted({n["name"] for n in scripted.graph.all_nodes() if n.kind == "prim::PythonOp"})


@pytest.mark.parametrize(("cls", "kw"), GRID, ids=_ids())
def test_scripted_recurrent_module_matches_eager_and_torch(cls, kw):
    tm, km = _pair(cls, kw)
    scripted = toolkit.jit.script(km)
    assert not _python_fallbacks(scripted), f"parts run as Python fallback calls: {_python_fallbacks(scripted)}"
    for batched in (True, False):
        for with_hx in (False, True):
            arrays = _arrays(cls, kw, batched, with_hx)
            what = f"{'batched' if batched else 'unbatched'}, {'with' if with_hx else 'without'} hx"
            eager = _call(toolkit, km, arrays)
            _compare(_call(toolkit, scripted, arrays), eager, f"scripted vs eager toolkit, {what}")
            _compare(_call(toolkit, scripted, arrays), _call(torch, tm, arrays), f"scripted vs torch, {what}")


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_scripted_dropout_between_layers_draws_eager_masks(cls):
    kw = {"num_layers": 2, "dropout": 0.5, "bidirectional": True}
    _, km = _pair(cls, kw)
    km.train()
    scripted = toolkit.jit.script(km)
    assert not _python_fallbacks(scripted)
    for seed in range(3):  # profiling run, then optimized plans
        arrays = _arrays(cls, kw, True, seed % 2 == 1, seed=seed)
        _compare(_call(toolkit, scripted, arrays, seed=seed), _call(toolkit, km, arrays, seed=seed),
                 f"train mode, call {seed}")
    # the masks are real: in eval mode (no dropout) the numbers differ, and match eager eval mode
    arrays = _arrays(cls, kw, True, False)
    train_out = _call(toolkit, scripted, arrays)
    scripted.eval()
    km.eval()
    eval_out = _call(toolkit, scripted, arrays)
    assert not np.allclose(train_out[0][0].numpy(), eval_out[0][0].numpy())
    _compare(eval_out, _call(toolkit, km, arrays), "eval mode")


def _error(fn, *args) -> tuple[type, str]:
    with pytest.raises(Exception) as info:  # noqa: PT011  (the type itself is compared with eager's)
        fn(*args)
    return info.type, str(info.value)


@pytest.mark.parametrize(("cls", "bad"), [
    ("LSTM", "input-4d"), ("LSTM", "hx-rank"), ("LSTM", "hx-size"), ("LSTM", "cx-size"), ("LSTM", "input-size"),
    ("GRU", "hx-rank"), ("GRU", "hx-size"), ("RNN", "input-1d"),
])
def test_scripted_checks_raise_eager_errors(cls, bad):
    _, km = _pair(cls, {"num_layers": 2})
    scripted = toolkit.jit.script(km)
    x = toolkit.randn(T_STEPS, BATCH, IN)
    h = toolkit.randn(2, BATCH, HID)
    args = {
        "input-4d": (toolkit.randn(1, T_STEPS, BATCH, IN),),
        "input-1d": (toolkit.randn(IN),),
        "input-size": (toolkit.randn(T_STEPS, BATCH, IN + 1),),
        "hx-rank": (x, (h[0], h[0]) if cls == "LSTM" else h[0]),
        "hx-size": (x, (h[:1], h) if cls == "LSTM" else h[:1]),
        "cx-size": (x, (h, h[:, :1])),
    }[bad]
    e_type, e_msg = _error(km, *args)
    s_type, s_msg = _error(scripted, *args)
    assert s_type is e_type
    assert e_msg in s_msg


def test_scripted_lstm_saves_and_loads(tmp_path):
    kw = {"num_layers": 2, "bidirectional": True, "proj_size": 3}
    _, km = _pair("LSTM", kw)
    km.eval()
    path = str(tmp_path / "lstm.pt")
    toolkit.jit.save(toolkit.jit.script(km), path)
    loaded = toolkit.jit.load(path)
    for batched in (True, False):
        for with_hx in (False, True):
            arrays = _arrays("LSTM", kw, batched, with_hx)
            _compare(_call(toolkit, loaded, arrays), _call(toolkit, km, arrays), "loaded vs eager")


class _Tagger(toolkit.nn.Module):
    """Recurrent submodules called with and without states, their outputs used further."""

    def __init__(self):
        super().__init__()
        self.lstm = toolkit.nn.LSTM(IN, HID, num_layers=2, batch_first=True)
        self.gru = toolkit.nn.GRU(HID, 3)
        self.fc = toolkit.nn.Linear(3, 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        _, h2 = self.gru(out, None)
        out3, _ = self.gru(out, h2)
        return self.fc(out3[:, -1]) + c.sum()


def test_model_holding_recurrent_modules_scripts_like_eager():
    toolkit.manual_seed(0)
    m = _Tagger()
    scripted = toolkit.jit.script(m)
    assert not _python_fallbacks(scripted)
    x = np.random.default_rng(0).standard_normal((BATCH, T_STEPS, IN)).astype(np.float32)
    for _ in range(3):
        _compare(_call(toolkit, scripted, [x]), _call(toolkit, m, [x]), "scripted model vs eager")


# -- language features the recurrent modules are written with (torch.jit.script compiles both) -------------------
def _format_message(x: toolkit.Tensor, msg: str = "Expected size {}, got {}") -> str:
    return msg.format((2, x.size(0)), list(x.shape))


def _torch_format_message(x: torch.Tensor, msg: str = "Expected size {}, got {}") -> str:
    return msg.format((2, x.size(0)), list(x.shape))


def _repeat_list(x: toolkit.Tensor, n: int) -> list[toolkit.Tensor]:
    outs = [x] * n
    for i in range(n):
        outs[i] = outs[i] * i
    return outs + 2 * [x + 1]


def _torch_repeat_list(x: torch.Tensor, n: int) -> list[torch.Tensor]:
    outs = [x] * n
    for i in range(n):
        outs[i] = outs[i] * i
    return outs + 2 * [x + 1]


def test_str_format_compiles_like_torchscript():
    x = toolkit.randn(3, 4)
    s = check(_format_message, x)
    assert s(x) == torch.jit.script(_torch_format_message)(torch.randn(3, 4)) == "Expected size (2, 3), got [3, 4]"


def test_list_times_int_repeats_like_torchscript():
    x = toolkit.randn(2)
    got = check(_repeat_list, x, 3)(x, 3)
    want = torch.jit.script(_torch_repeat_list)(torch.from_numpy(x.numpy().copy()), 3)
    assert len(got) == len(want) == 5
    assert_close(list(got), list(want))
