"""grad_fn class names as PyTorch spells them: the op's name in CamelCase, a letter after a digit
capitalized too (``Log1PBackward0``, ``Rad2DegBackward0``, ``MaxPool2DWithIndicesBackward0``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import toolkit  # noqa: E402

CASES = [
    ("log1p", lambda m, x: m.log1p(x)),
    ("expm1", lambda m, x: m.expm1(x)),
    ("exp2", lambda m, x: m.exp2(x)),
    ("log2", lambda m, x: m.log2(x)),
    ("rad2deg", lambda m, x: m.rad2deg(x)),
    ("deg2rad", lambda m, x: m.deg2rad(x)),
    ("atan2", lambda m, x: m.atan2(x, x + 1)),
    ("logaddexp2", lambda m, x: m.logaddexp2(x, x)),
    ("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x.reshape(1, 1, 2, 2), 2, return_indices=True)[0]),
    ("mul", lambda m, x: x * 2),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_grad_fn_names_match_torch(name, fn):
    ours = fn(toolkit, toolkit.rand(4, requires_grad=True))
    theirs = fn(torch, torch.rand(4, requires_grad=True))
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
