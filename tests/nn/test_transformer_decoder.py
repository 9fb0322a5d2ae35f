"""TransformerDecoderLayer, TransformerDecoder and Transformer against torch.nn: state dicts transfer, outputs and
gradients agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import nn

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")

# accum of a decoder layer's output (see tests/conftest.py): self-attention and cross-attention (projections over 8
# features, q.k over a head's 4, softmax and attn.v over up to 5 positions, out-projection over 8), three LayerNorms
# (mean and variance over 8) and the feed-forward block (8, then 16).
ATTN = 8 + 4 + 5 + 5 + 8
LAYER = 2 * ATTN + 3 * 2 * 8 + (8 + 16)


def _copy_state(tm, km) -> None:
    assert sorted(tm.state_dict()) == sorted(km.state_dict())
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})


def _compare(tm, km, arrays, kwargs_of, accum):
    tin = [torch.tensor(a, requires_grad=True) for a in arrays]
    kin = [toolkit.tensor(a, requires_grad=True) for a in arrays]
    to, ko = tm(*tin, **kwargs_of(torch)), km(*kin, **kwargs_of(toolkit))
    assert_close(ko, to.detach(), accum=accum)
    g = np.random.default_rng(1).standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    ko.backward(toolkit.tensor(g))
    for k, t in zip(kin, tin):
        assert_close(k.grad, t.grad, accum=2 * accum + 10)
    kp = dict(km.named_parameters())
    for name, p in tm.named_parameters():
        assert_close(kp[name].grad, p.grad, accum=2 * accum + 10, msg=name)


def _masks(lib, T, S, N, seed=5):
    """Bool masks (True = masked out) that never mask a whole row: a causal target mask, a random memory mask,
    random key padding masks."""
    rng = np.random.default_rng(seed)
    tgt_kpm, mem_kpm, mem_mask = rng.random((N, T)) > 0.6, rng.random((N, S)) > 0.6, rng.random((T, S)) > 0.7
    tgt_kpm[:, 0] = mem_kpm[:, 0] = mem_mask[:, 0] = False
    return {"tgt_mask": lib.tensor(np.triu(np.ones((T, T), bool), 1)), "memory_mask": lib.tensor(mem_mask),
            "tgt_key_padding_mask": lib.tensor(tgt_kpm), "memory_key_padding_mask": lib.tensor(mem_kpm)}


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", [False, True])
def test_decoder_layer_matches_torch(norm_first, batch_first, masks):
    kw = {"dropout": 0.0, "norm_first": norm_first, "batch_first": batch_first, "activation": "gelu"}
    tm, km = torch.nn.TransformerDecoderLayer(8, 2, 16, **kw), nn.TransformerDecoderLayer(8, 2, 16, **kw)
    _copy_state(tm, km)
    rng = np.random.default_rng(0)
    shape = (lambda L: (2, L, 8)) if batch_first else (lambda L: (L, 2, 8))
    arrays = [rng.standard_normal(shape(4)).astype(np.float32), rng.standard_normal(shape(5)).astype(np.float32)]
    _compare(tm, km, arrays, lambda lib: _masks(lib, 4, 5, 2) if masks else {}, LAYER)


def test_decoder_and_transformer_match_torch():
    tl = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    tm = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(8))
    km = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2, norm=nn.LayerNorm(8))
    _copy_state(tm, km)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((4, 3, 8)).astype(np.float32), rng.standard_normal((5, 3, 8)).astype(np.float32)]
    _compare(tm, km, arrays, lambda lib: {"tgt_mask": lib.nn.Transformer.generate_square_subsequent_mask(4)},
             2 * LAYER + 16)

    tm = torch.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0)
    km = nn.Transformer(8, 2, 2, 1, 16, dropout=0.0)
    _copy_state(tm, km)
    arrays = [rng.standard_normal((5, 3, 8)).astype(np.float32), rng.standard_normal((4, 3, 8)).astype(np.float32)]
    _compare(tm, km, arrays, lambda lib: _masks(lib, 4, 5, 3) | {"src_key_padding_mask": _masks(lib, 5, 5, 3, 6)[
        "tgt_key_padding_mask"]}, 4 * LAYER + 32)


def test_transformer_init_and_errors_match_torch():
    km = nn.Transformer(8, 2, 1, 1, 16)
    assert [type(m).__name__ for m in (km.encoder, km.decoder, km.encoder.norm, km.decoder.norm)] == [
        "TransformerEncoder", "TransformerDecoder", "LayerNorm", "LayerNorm"]
    w = km.encoder.layers[0].linear1.weight.detach().numpy()
    assert 0 < np.abs(w).max() <= np.sqrt(6 / (8 + 16)) + 1e-6  # xavier_uniform_ over every matrix
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert_close(mask, torch.nn.Transformer.generate_square_subsequent_mask(3))
    for bad, msg in [((toolkit.zeros(5, 2, 8), toolkit.zeros(4, 3, 8)), "the batch number of src and tgt must be equal"),
                     ((toolkit.zeros(5, 2, 8), toolkit.zeros(4, 2, 6)),
                      "the feature number of src and tgt must be equal to d_model")]:
        with pytest.raises(RuntimeError, match=msg):
            km(*bad)
        with pytest.raises(RuntimeError, match=msg):
            torch.nn.Transformer(8, 2, 1, 1, 16)(*[torch.zeros(tuple(t.shape)) for t in bad])
