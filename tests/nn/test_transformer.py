"""TransformerEncoderLayer and TransformerEncoder against torch.nn: state dicts transfer, outputs and gradients agree."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

# accum of an encoder layer's output (see the rule in tests/conftest.py): the lengths of the sums along its chain,
# whose rounding errors add in variance: self-attention (projections over 8 features, q.k over a head's 4, softmax
# and attn.v over 5 positions, out-projection over 8), LayerNorm (mean and variance over 8), the feed-forward
# block (8, then 16) and LayerNorm again. Gradients go back through the chain and sum over the batch positions.
LAYER = (8 + 4 + 5 + 5 + 8) + 2 * 8 + (8 + 16) + 2 * 8
POSITIONS = 3 * 5


def _copy_state(tm, km) -> None:
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _layer_pair(*args, **kwargs):
    tact, kact = kwargs.pop("tactivation", None), kwargs.pop("kactivation", None)
    tm = torch.nn.TransformerEncoderLayer(*args, **kwargs, **({"activation": tact} if tact else {}))
    km = nn.TransformerEncoderLayer(*args, **kwargs, **({"activation": kact} if kact else {}))
    _copy_state(tm, km)
    tm.eval()
    km.eval()
    return tm, km


def _masks(kind, rng, B, L, lib):
    kw = {}
    if kind in ("kpm", "both"):
        m = rng.random((B, L)) > 0.6
        m[:, 0] = False
        kw["src_key_padding_mask"] = lib.tensor(m)
    if kind in ("attn", "both"):
        kw["src_mask"] = lib.tensor(np.triu(np.ones((L, L), bool), 1))
    if kind == "float":
        kw["src_mask"] = lib.tensor(rng.standard_normal((L, L)).astype(np.float32))
    if kind == "causal":
        kw["src_mask"] = lib.tensor(np.triu(np.full((L, L), -np.inf, np.float32), 1))
        kw["is_causal"] = True
    return kw


def _compare(tm, km, x, tkw, kkw, accum=LAYER):
    tx, kx = torch.tensor(x, requires_grad=True), toolkit.tensor(x, requires_grad=True)
    to, ko = tm(tx, **tkw), km(kx, **kkw)
    assert_close(ko, to, accum=accum)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    to.backward(torch.tensor(g))
    ko.backward(toolkit.tensor(g))
    grad = 2 * accum + POSITIONS
    assert_close(kx.grad, tx.grad, accum=grad)
    kparams = dict(km.named_parameters())
    for name, p in tm.named_parameters():
        assert_close(kparams[name].grad, p.grad, accum=grad)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("mask", [None, "kpm", "attn", "both", "float", "causal"])
def test_encoder_layer_matches_torch(norm_first, batch_first, activation, mask, rng):
    B, L, E = 2, 5, 8
    tm, km = _layer_pair(E, 2, dim_feedforward=16, norm_first=norm_first, batch_first=batch_first,
                         activation=activation)
    x = rng.standard_normal((B, L, E) if batch_first else (L, B, E)).astype(np.float32)
    seed = int(rng.integers(1 << 30))
    _compare(tm, km, x, _masks(mask, np.random.default_rng(seed), B, L, torch),
             _masks(mask, np.random.default_rng(seed), B, L, toolkit))


def test_encoder_layer_no_bias_callable_activation_unbatched(rng):
    tm, km = _layer_pair(8, 4, dim_feedforward=12, bias=False, layer_norm_eps=1e-3, tactivation=torch.tanh,
                         kactivation=toolkit.tanh)
    assert km.activation_relu_or_gelu == tm.activation_relu_or_gelu == 0
    assert [n for n, _ in km.named_parameters()] == [n for n, _ in tm.named_parameters()]
    _compare(tm, km, rng.standard_normal((5, 8)).astype(np.float32), {}, {})


def test_encoder_layer_module_activation(rng):
    tm = torch.nn.TransformerEncoderLayer(8, 2, 16, activation=torch.nn.GELU())
    km = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU())
    _copy_state(tm, km)
    tm.eval()
    km.eval()
    assert km.activation_relu_or_gelu == tm.activation_relu_or_gelu == 2
    _compare(tm, km, rng.standard_normal((3, 2, 8)).astype(np.float32), {}, {})


def test_encoder_layer_names_and_seeded_init():
    toolkit.manual_seed(3)
    km = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    torch.manual_seed(3)
    tm = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    assert list(km.state_dict()) == list(tm.state_dict())
    for (kn, kp), (tn, tp) in zip(km.named_parameters(), tm.named_parameters(), strict=True):
        assert kn == tn and tuple(kp.shape) == tuple(tp.shape)
        assert_close(kp, tp)
    assert [n for n, _ in km.named_children()] == [n for n, _ in tm.named_children()]
    assert km.activation_relu_or_gelu == tm.activation_relu_or_gelu == 1


def test_encoder_layer_dropout_train_vs_eval(rng):
    km = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3)
    x = toolkit.tensor(rng.standard_normal((4, 2, 8)).astype(np.float32))
    km.eval()
    a = km(x)
    assert_close(km(x), a)
    km.train()
    toolkit.manual_seed(0)
    assert not np.allclose(km(x).detach().numpy(), a.detach().numpy())


def test_encoder_layer_bad_activation():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("mask", [None, "kpm", "causal_auto"])
def test_encoder_stack_matches_torch(mask, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl = torch.nn.TransformerEncoderLayer(8, 2, 16)
        tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8))
        kl = nn.TransformerEncoderLayer(8, 2, 16)
        km = nn.TransformerEncoder(kl, 2, norm=nn.LayerNorm(8))
    assert list(km.state_dict()) == list(tm.state_dict())
    _copy_state(tm, km)
    tm.eval()
    km.eval()
    tkw, kkw = {}, {}
    if mask == "kpm":
        m = rng.random((2, 5)) > 0.6
        m[:, 0] = False
        tkw["src_key_padding_mask"], kkw["src_key_padding_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask == "causal_auto":
        tkw["mask"] = torch.nn.Transformer.generate_square_subsequent_mask(5)
        kkw["mask"] = toolkit.tensor(tkw["mask"].numpy())
    _compare(tm, km, rng.standard_normal((5, 2, 8)).astype(np.float32), tkw, kkw, accum=2 * LAYER + 2 * 8)


def test_encoder_nested_tensor_warning():
    with pytest.warns(UserWarning, match="self.use_nested_tensor is False because encoder_layer.self_attn.batch_first"):
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    assert enc.use_nested_tensor is False and enc.enable_nested_tensor is True
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1)
    assert enc.use_nested_tensor is True


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
@pytest.mark.parametrize("left_aligned", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_inference_padding_matches_torch(left_aligned, grad, rng):
    """In inference torch runs nested tensors and returns zeros at padded positions; so do we."""
    tl = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8))
    km = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, norm=nn.LayerNorm(8))
    _copy_state(tm, km)
    tm.eval()
    km.eval()
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    m = np.zeros((3, 5), bool)
    m[0, 3:] = True
    m[1, 4:] = True
    if not left_aligned:
        m[2, 1] = True
    ctx_t = torch.enable_grad() if grad else torch.no_grad()
    ctx_k = toolkit.enable_grad() if grad else toolkit.no_grad()
    with ctx_t:
        to = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(m))
    with ctx_k:
        ko = km(toolkit.tensor(x), src_key_padding_mask=toolkit.tensor(m))
    assert_close(ko, to, accum=2 * LAYER + 2 * 8)


@pytest.mark.parametrize("mask", ["kpm", "attn", None])
def test_encoder_layer_no_grad_fast_path_matches_torch(mask, rng):
    """Under no_grad torch runs its fused encoder-layer kernel; the numbers agree with the reference path."""
    tm, km = _layer_pair(8, 2, dim_feedforward=16, batch_first=True)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    seed = int(rng.integers(1 << 30))
    with torch.no_grad():
        to = tm(torch.tensor(x), **_masks(mask, np.random.default_rng(seed), 2, 5, torch))
    with toolkit.no_grad():
        ko = km(toolkit.tensor(x), **_masks(mask, np.random.default_rng(seed), 2, 5, toolkit))
    assert_close(ko, to, accum=LAYER)
