"""Scripted TransformerEncoder in inference: padded positions come out as PyTorch's nested-tensor path gives them.

The choice of path is made when the graph runs (grad mode, ``requires_grad``, the mask's left alignment), so one
scripted module takes it under ``no_grad`` with a left-aligned mask and not otherwise, as eager does.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import toolkit
from toolkit import nn

from ....conftest import assert_close

LAYERS = 2 * ((8 + 4 + 5 + 5 + 8) + 2 * 8 + (8 + 16) + 2 * 8) + 2 * 8


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
@pytest.mark.filterwarnings("ignore:.norm. was found in ScriptModule constants")
def test_scripted_encoder_padding_follows_grad_mode_and_alignment():
    tm = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                     norm=torch.nn.LayerNorm(8))
    km = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, norm=nn.LayerNorm(8))
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    tm.eval()
    km.eval()
    scripted = toolkit.jit.script(km)
    assert not [n for n in scripted.graph.all_nodes() if n.kind == "prim::PythonOp"]
    x = np.random.default_rng(0).standard_normal((3, 5, 8)).astype(np.float32)
    aligned = np.zeros((3, 5), bool)
    aligned[0, 3:] = aligned[1, 4:] = True
    ragged = aligned.copy()
    ragged[2, 1] = True
    for m in (aligned, ragged):
        for grad in (False, True):
            with torch.set_grad_enabled(grad):
                expected = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(m))
            with toolkit.set_grad_enabled(grad):
                got = scripted(toolkit.tensor(x), src_key_padding_mask=toolkit.tensor(m))
                eager = km(toolkit.tensor(x), src_key_padding_mask=toolkit.tensor(m))
            assert_close(got, eager, accum=LAYERS)
            assert_close(got, expected.detach(), accum=LAYERS)
            zeros = bool((got.detach().numpy()[0, 3:] == 0).all())
            assert zeros == (m is aligned and not grad)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning")
def test_scripted_attention_modules_save_and_load(tmp_path):
    """Nothing in the compiled attention code is Python-only: the archive loads and gives eager's numbers."""
    rng = np.random.default_rng(1)
    x, y = (toolkit.tensor(rng.standard_normal(s).astype(np.float32)) for s in [(5, 2, 8), (4, 2, 8)])
    kpm = toolkit.tensor(np.array([[False] * 5, [False] * 3 + [True] * 2]))
    cases = [(nn.MultiheadAttention(8, 2, add_bias_kv=True), (y, x, x, kpm)),
             (nn.Transformer(8, 2, 1, 1, 16, dropout=0.0), (x, y, None, nn.Transformer.generate_square_subsequent_mask(4),
                                                            None, kpm))]
    for i, (m, args) in enumerate(cases):
        m.eval()
        path = str(tmp_path / f"m{i}.pt")
        toolkit.jit.save(toolkit.jit.script(m), path)
        got, expected = toolkit.jit.load(path)(*args), m(*args)
        assert_close(got, expected, accum=LAYERS)
