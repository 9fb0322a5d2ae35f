"""``toolkit.save``/``toolkit.load`` keep a tensor's names (in the rebuild call's metadata dict), also with
``weights_only=True``. PyTorch refuses to save named tensors, so this goes past it; values are checked against the
unnamed tensor."""

from __future__ import annotations

import io

import numpy as np
import pytest

import toolkit


def _round_trip(obj, weights_only=True):
    buf = io.BytesIO()
    toolkit.save(obj, buf)
    buf.seek(0)
    return toolkit.load(buf, weights_only=weights_only)


@pytest.mark.parametrize("weights_only", [True, False])
def test_plain_tensor_keeps_names(weights_only):
    x = toolkit.randn(2, 3, names=("N", None))
    y = _round_trip(x, weights_only)
    assert y.names == ("N", None)
    np.testing.assert_array_equal(y.rename(None).numpy(), x.rename(None).numpy())


def test_state_dict_and_views_keep_names():
    x = toolkit.randn(4, 3, names=("N", "C"))
    sd = {"w": x, "row": x[1], "t": x.t(), "plain": toolkit.ones(2), "grad": toolkit.randn(2, names=("a",),
                                                                                            requires_grad=True)}
    out = _round_trip(sd)
    assert out["w"].names == ("N", "C") and out["row"].names == ("C",) and out["t"].names == ("C", "N")
    assert not out["plain"].has_names() and out["grad"].names == ("a",) and out["grad"].requires_grad
    np.testing.assert_array_equal(out["t"].rename(None).numpy(), x.rename(None).numpy().T)
    out["w"].rename(None).add_(1)  # views of one saved storage still share it after loading
    np.testing.assert_array_equal(out["row"].rename(None).numpy(), out["w"].rename(None).numpy()[1])


def test_module_state_dict_round_trip():
    m = toolkit.nn.Linear(3, 2)
    sd = {k: v.detach().refine_names("out", *(("in",) if v.ndim == 2 else ())) for k, v in m.state_dict().items()}
    out = _round_trip(sd)
    assert out["weight"].names == ("out", "in") and out["bias"].names == ("out",)


def test_unnamed_files_unchanged():
    """An unnamed tensor's pickle carries no metadata: the bytes are what they were before names existed."""
    buf = io.BytesIO()
    toolkit.save(toolkit.ones(2), buf)
    assert b"names" not in buf.getvalue()
