"""A small LSTM language model (embedding, two-layer LSTM, linear decoder) dynamically quantized in toolkit and
in PyTorch from the same float weights: the same logits, next-token choices and hidden states."""

import numpy as np
import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized.dynamic as nnqd
from tests.ao.nn.quantized.dynamic.twins import assert_same_qweight
from tests.conftest import assert_close
from toolkit.ao.quantization.qconfig import default_dynamic_qconfig

pytestmark = [pytest.mark.filterwarnings("ignore:.*quantize"),
              pytest.mark.filterwarnings("ignore:torch.ao.quantization is deprecated")]
VOCAB, EMBED, HIDDEN, LAYERS = 40, 12, 16, 2


def language_model(lib):
    nn = lib.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, EMBED)
            self.rnn = nn.LSTM(EMBED, HIDDEN, LAYERS)
            self.decoder = nn.Linear(HIDDEN, VOCAB)

        def forward(self, tokens, hidden=None):
            out, hidden = self.rnn(self.encoder(tokens), hidden)
            return self.decoder(out), hidden

    return LanguageModel()


def _float_twins():
    torch.manual_seed(0)
    theirs = language_model(torch).eval()
    ours = language_model(toolkit).eval()
    ours.load_state_dict({k: toolkit.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _twins():
    """The model dynamically quantized: by hand through ``from_float`` here, by ``quantize_dynamic`` in torch."""
    ours, theirs = _float_twins()
    t_q = torch.ao.quantization.quantize_dynamic(theirs, {torch.nn.LSTM, torch.nn.Linear}, dtype=torch.qint8)
    for name, kind in (("rnn", nnqd.LSTM), ("decoder", nnqd.Linear)):
        child = getattr(ours, name)
        child.qconfig = default_dynamic_qconfig
        setattr(ours, name, kind.from_float(child))
    return ours, t_q


def test_quantized_language_model_matches_torch():
    ours, theirs = _twins()
    assert repr(ours.rnn) == repr(theirs.rnn) and type(ours.decoder).__name__ == type(theirs.decoder).__name__
    assert_same_qweight(ours.decoder.weight(), theirs.decoder.weight())
    assert_same_qweight(ours.rnn.get_weight()["weight_hh_l1"], theirs.rnn.get_weight()["weight_hh_l1"])
    tokens = np.random.default_rng(0).integers(0, VOCAB, (7, 3))
    logits, (h, c) = ours(toolkit.tensor(tokens))
    t_logits, (th, tc) = theirs(torch.tensor(tokens))
    accum = 7 * LAYERS * (EMBED + HIDDEN) + HIDDEN
    assert_close(logits, t_logits.detach(), accum=accum)
    assert_close((h, c), (th.detach(), tc.detach()), accum=accum)
    np.testing.assert_array_equal(logits.argmax(-1).numpy(), t_logits.argmax(-1).numpy())


def test_generation_feeds_the_hidden_state_back_as_torch():
    ours, theirs = _twins()
    token, t_token = toolkit.tensor([[3]]), torch.tensor([[3]])
    hidden = t_hidden = None
    words, t_words = [], []
    for _ in range(8):
        logits, hidden = ours(token, hidden)
        t_logits, t_hidden = theirs(t_token, t_hidden)
        token, t_token = logits.argmax(-1), t_logits.argmax(-1)
        words.append(int(token.item()))
        t_words.append(int(t_token.item()))
    assert words == t_words
    assert_close(hidden, tuple(t.detach() for t in t_hidden), accum=8 * LAYERS * (EMBED + HIDDEN))


def test_quantize_dynamic_swaps_in_these_modules():
    ours, _ = _twins()
    float_model = _float_twins()[0]
    swapped = toolkit.ao.quantization.quantize_dynamic(float_model, {toolkit.nn.LSTM, toolkit.nn.Linear},
                                                       dtype=toolkit.qint8)
    assert type(swapped.rnn) is nnqd.LSTM and type(swapped.decoder) is nnqd.Linear
    tokens = toolkit.tensor(np.random.default_rng(1).integers(0, VOCAB, (5, 2)))
    assert_close(swapped(tokens)[0], ours(tokens)[0], rtol=0, atol=0)
