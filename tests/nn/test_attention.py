"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import toolkit
import toolkit.nn.functional as F
from tests.conftest import assert_close
from toolkit import nn

# Attention chains several sums (projections, q.k, the softmax's, attn.v, the output projection); their rounding
# errors add in variance, so a value's accum is the sum of the lengths along its chain. Gradients go back through
# the same chain and parameter gradients also sum over the batch positions.
SDPA_OUT = 8 + 5 + 5  # q.k over 8 features, softmax and attn.v over 5 keys
SDPA_GRAD = SDPA_OUT + 6 + 4  # and back over 6 value features and 4 queries


def _leaf(a):
    return torch.tensor(a, requires_grad=True), toolkit.tensor(a, requires_grad=True)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# scaled_dot_product_attention
# ---------------------------------------------------------------------------------------------
SDPA_CASES = [
    ({}, None),
    ({"is_causal": True}, None),
    ({"scale": 0.3}, None),
    ({}, "bool"),
    ({}, "float"),
    ({}, "bool_broadcast"),
    ({}, "bool_dead_row"),
]


@pytest.mark.parametrize("kw,mask", SDPA_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sdpa_matches_torch(kw, mask, dtype, rng):
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)))
    (tq, kq), (tk, kk), (tv, kv) = _leaf(q), _leaf(k), _leaf(v)
    tkw, kkw = dict(kw), dict(kw)
    if mask is not None:
        if mask == "float":
            m = rng.standard_normal((4, 5)).astype(dtype)
        elif mask == "bool_broadcast":
            m = rng.random((2, 1, 4, 5)) > 0.3
            m[..., 0] = True
        else:
            m = rng.random((4, 5)) > 0.4
            m[:, 1] = True
            if mask == "bool_dead_row":
                m[2] = False
        tkw["attn_mask"], kkw["attn_mask"] = torch.tensor(m), toolkit.tensor(m)
    to = TF.scaled_dot_product_attention(tq, tk, tv, **tkw)
    ko = F.scaled_dot_product_attention(kq, kk, kv, **kkw)
    assert_close(ko, to, accum=SDPA_OUT)
    g = rng.standard_normal(to.shape).astype(dtype)
    to.backward(torch.tensor(g))
    ko.backward(toolkit.tensor(g))
    for t, k_ in ((tq, kq), (tk, kk), (tv, kv)):
        assert_close(k_.grad, t.grad, accum=SDPA_GRAD)


def test_sdpa_3d_and_gqa(rng):
    q, k, v = _f32(rng, 3, 4), _f32(rng, 5, 4), _f32(rng, 5, 2)
    assert_close(F.scaled_dot_product_attention(*map(toolkit.tensor, (q, k, v))),
                 TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v))), accum=4 + 5 + 5)
    q, k, v = _f32(rng, 1, 4, 3, 8), _f32(rng, 1, 2, 5, 8), _f32(rng, 1, 2, 5, 8)
    assert_close(F.scaled_dot_product_attention(*map(toolkit.tensor, (q, k, v)), enable_gqa=True),
                 TF.scaled_dot_product_attention(*map(torch.tensor, (q, k, v)), enable_gqa=True), accum=8 + 5 + 5)


def test_sdpa_dropout_and_errors(rng):
    q = toolkit.tensor(_f32(rng, 2, 6, 4))
    toolkit.manual_seed(0)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F.scaled_dot_product_attention(q, q, q)
    assert a.shape == b.shape and not np.allclose(a.numpy(), b.numpy())
    assert_close(F.scaled_dot_product_attention(q, q, q, dropout_p=1.0), toolkit.zeros(2, 6, 4))
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=toolkit.ones(6, 6, dtype=toolkit.bool), is_causal=True)


# ---------------------------------------------------------------------------------------------
# MultiheadAttention
# ---------------------------------------------------------------------------------------------
def _pair(*args, **kwargs):
    tm = torch.nn.MultiheadAttention(*args, **kwargs)
    km = nn.MultiheadAttention(*args, **kwargs)
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    return tm, km


MHA_CONFIGS = [
    {},
    {"batch_first": True},
    {"bias": False},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"add_bias_kv": True, "add_zero_attn": True},
    {"kdim": 3, "vdim": 5},
    {"kdim": 3, "vdim": 5, "batch_first": True},
]
MASKS = [None, "kpm", "kpm_float", "attn_bool", "attn_float", "attn_3d", "both", "causal"]


@pytest.mark.parametrize("cfg", MHA_CONFIGS)
@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_matches_torch(cfg, mask, need_weights, rng):
    _compare_mha(cfg, mask, need_weights, True, rng)


@pytest.mark.parametrize("cfg", [{}, {"add_bias_kv": True, "add_zero_attn": True}])
@pytest.mark.parametrize("mask", [None, "both", "attn_3d"])
def test_mha_per_head_weights(cfg, mask, rng):
    _compare_mha(cfg, mask, True, False, rng)


def _compare_mha(cfg, mask, need_weights, average, rng):
    E, H, L, S, B = 8, 2, 4, 5, 3
    if mask == "causal":
        S = L
    tm, km = _pair(E, H, **cfg)
    kd, vd = cfg.get("kdim", E), cfg.get("vdim", E)
    bf = cfg.get("batch_first", False)
    shp = (lambda n, d: (B, n, d)) if bf else (lambda n, d: (n, B, d))
    q, k, v = _f32(rng, *shp(L, E)), _f32(rng, *shp(S, kd)), _f32(rng, *shp(S, vd))
    tkw, kkw = {}, {}
    if mask in ("kpm", "both"):
        m = rng.random((B, S)) > 0.6
        m[:, 0] = False
        tkw["key_padding_mask"], kkw["key_padding_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask == "kpm_float":
        m = _f32(rng, B, S)
        tkw["key_padding_mask"], kkw["key_padding_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask in ("attn_bool", "both"):
        m = np.triu(np.ones((L, S), bool), 2)
        tkw["attn_mask"], kkw["attn_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask == "attn_float":
        m = _f32(rng, L, S)
        tkw["attn_mask"], kkw["attn_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask == "attn_3d":
        m = _f32(rng, B * H, L, S)
        tkw["attn_mask"], kkw["attn_mask"] = torch.tensor(m), toolkit.tensor(m)
    if mask == "causal":
        m = np.triu(np.full((L, S), -np.inf, np.float32), 1)
        tkw["attn_mask"], kkw["attn_mask"] = torch.tensor(m), toolkit.tensor(m)
        tkw["is_causal"] = kkw["is_causal"] = True
    (tq, kq), (tk, kk), (tv, kv) = _leaf(q), _leaf(k), _leaf(v)
    to, tw = tm(tq, tk, tv, need_weights=need_weights, average_attn_weights=average, **tkw)
    ko, kw_ = km(kq, kk, kv, need_weights=need_weights, average_attn_weights=average, **kkw)
    # in-projections over <= 8 features, q.k over a head's 4, softmax and attn.v over <= S + 2 keys (bias_kv,
    # zero_attn), the out-projection over 8
    out = 8 + 4 + 2 * (S + 2) + 8
    grad = 2 * out + B * max(L, S)
    assert_close(ko, to, accum=out)
    if need_weights:
        assert_close(kw_, tw, accum=out)
        loss_t, loss_k = (to * to).sum() + (tw * tw).sum() * 3, (ko * ko).sum() + (kw_ * kw_).sum() * 3
    else:
        assert kw_ is None
        loss_t, loss_k = (to * to).sum(), (ko * ko).sum()
    loss_t.backward()
    loss_k.backward()
    for t, k_ in ((tq, kq), (tk, kk), (tv, kv)):
        assert_close(k_.grad, t.grad, accum=grad)
    kparams = dict(km.named_parameters())
    for name, p in tm.named_parameters():
        assert_close(kparams[name].grad, p.grad, accum=grad)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_self_attention_unbatched(need_weights, rng):
    tm, km = _pair(8, 4)
    x = _f32(rng, 5, 8)
    m = rng.random(5) > 0.6
    m[0] = False
    (tx, kx) = _leaf(x)
    to, tw = tm(tx, tx, tx, key_padding_mask=torch.tensor(m), need_weights=need_weights)
    ko, kw_ = km(kx, kx, kx, key_padding_mask=toolkit.tensor(m), need_weights=need_weights)
    out = 8 + 2 + 5 + 5 + 8  # projections over 8 features, q.k over a head's 2, softmax and attn.v over 5 keys
    assert_close(ko, to, accum=out)
    if need_weights:
        assert_close(kw_, tw, accum=out)
    to.sum().backward()
    ko.sum().backward()
    assert_close(kx.grad, tx.grad, accum=2 * out)


def test_mha_eval_no_grad_matches_torch_fast_path(rng):
    """Under no_grad torch takes its native fast path; the numbers agree with ours."""
    tm, km = _pair(8, 2, batch_first=True)
    tm.eval()
    km.eval()
    x = _f32(rng, 3, 4, 8)
    with torch.no_grad():
        to, tw = tm(*(torch.tensor(x),) * 3)
    with toolkit.no_grad():
        ko, kw_ = km(*(toolkit.tensor(x),) * 3)
    out = 8 + 4 + 4 + 4 + 8  # projections over 8 features, q.k over a head's 4, softmax and attn.v over 4 keys
    assert_close(ko, to, accum=out)
    assert_close(kw_, tw, accum=out)


@pytest.mark.parametrize("cfg", [{}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True}, {"bias": False}])
def test_mha_names_shapes_and_seeded_init(cfg):
    toolkit.manual_seed(5)
    km = nn.MultiheadAttention(8, 2, **cfg)
    torch.manual_seed(5)
    tm = torch.nn.MultiheadAttention(8, 2, **cfg)
    for (kn, kp), (tn, tp) in zip(km.named_parameters(), tm.named_parameters(), strict=True):
        assert kn == tn and tuple(kp.shape) == tuple(tp.shape)
        assert_close(kp, tp)
    assert list(km.state_dict()) == list(tm.state_dict())
    assert repr(km) == repr(tm)
    assert km.head_dim == tm.head_dim and km._qkv_same_embed_dim == tm._qkv_same_embed_dim


def test_mha_dropout_train_vs_eval(rng):
    km = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = toolkit.tensor(_f32(rng, 4, 2, 8))
    km.eval()
    a = km(x, x, x)[0]
    assert_close(km(x, x, x)[0], a)
    km.train()
    toolkit.manual_seed(1)
    assert not np.allclose(km(x, x, x)[0].detach().numpy(), a.detach().numpy())


def test_mha_errors(rng):
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)
    km = nn.MultiheadAttention(8, 2)
    x = toolkit.zeros(4, 2, 8)
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        km(x, toolkit.zeros(4, 8), toolkit.zeros(4, 8))
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*, but should be \(4, 4\)"):
        km(x, x, x, attn_mask=toolkit.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        km(x, x, x, key_padding_mask=toolkit.zeros(2, 4, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        km(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        km(toolkit.zeros(4, 2, 6), x, x)


def test_functional_mha_with_separate_weights(rng):
    """F.multi_head_attention_forward directly, with separate q/k/v projection weights and static keys."""
    E, H = 4, 2
    q, k, v = _f32(rng, 3, 2, E), _f32(rng, 5, 2, 3), _f32(rng, 5, 2, 6)
    wq, wk, wv, b, wo, bo = _f32(rng, E, E), _f32(rng, E, 3), _f32(rng, E, 6), _f32(rng, 3 * E), _f32(rng, E, E), _f32(rng, E)
    args = [q, k, v, E, H, None, b, None, None, False, 0.0, wo, bo]
    kwargs = dict(training=False, use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk, v_proj_weight=wv)

    def conv(lib, x):
        return lib.tensor(x) if isinstance(x, np.ndarray) else x

    to = TF.multi_head_attention_forward(*[conv(torch, a) for a in args], **{k_: conv(torch, a) for k_, a in kwargs.items()})
    ko = F.multi_head_attention_forward(*[conv(toolkit, a) for a in args], **{k_: conv(toolkit, a) for k_, a in kwargs.items()})
    assert_close(ko, to, accum=6 + 2 + 5 + 5 + 4)  # projections over <= 6, q.k over 2, 5 keys, out over 4
