"""nn.utils.prune against torch: the same masks (same seed for the random methods), weight_orig / weight_mask
in the state dict, the forward pre-hook, combining prunings, removal and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import toolkit
import toolkit.nn.utils.prune as P
from tests.conftest import assert_close
from toolkit import nn

from .helpers import inputs, raises_like, same_grads, same_state, twins


def _pair():
    return twins(lambda: torch.nn.Conv2d(3, 4, 3), lambda: nn.Conv2d(3, 4, 3))


@pytest.mark.parametrize("method,args", [
    ("identity", ()),
    ("random_unstructured", (0.4,)),
    ("random_unstructured", (7,)),
    ("l1_unstructured", (0.3,)),
    ("random_structured", (2, 0)),
    ("random_structured", (0.5, 1)),
    ("ln_structured", (0.5, 2, 0)),
    ("ln_structured", (1, 1, -1)),
    ("ln_structured", (2, float("inf"), 1)),
])
def test_pruning_matches_torch(rng, method, args):
    tm, km = _pair()
    torch.manual_seed(0)
    getattr(TP, method)(tm, "weight", *args)
    toolkit.manual_seed(0)
    getattr(P, method)(km, "weight", *args)
    assert list(km.state_dict()) == list(tm.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    same_state(km, tm)
    assert P.is_pruned(km)
    tx, kx = inputs(rng, (2, 3, 5, 5))
    tout, kout = tm(tx), km(kx)
    assert_close(kout, tout, accum=27)
    tout.square().sum().backward()
    kout.square().sum().backward()
    same_grads(km, tm, accum=27 * 18)
    # a second pruning on top: a PruningContainer acting on what the first kept
    torch.manual_seed(1)
    TP.l1_unstructured(tm, "weight", amount=5)
    toolkit.manual_seed(1)
    P.l1_unstructured(km, "weight", amount=5)
    assert isinstance(next(iter(km._forward_pre_hooks.values())), P.PruningContainer)
    same_state(km, tm)
    TP.remove(tm, "weight")
    P.remove(km, "weight")
    assert list(km.state_dict()) == list(tm.state_dict())
    same_state(km, tm)
    assert not P.is_pruned(km) and isinstance(km.weight, nn.Parameter)


def test_importance_scores_custom_mask_and_global(rng):
    tm, km = _pair()
    scores = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    TP.l1_unstructured(tm, "weight", 0.5, importance_scores=torch.tensor(scores))
    P.l1_unstructured(km, "weight", 0.5, importance_scores=toolkit.tensor(scores))
    same_state(km, tm)
    mask = (rng.random(4) > 0.5).astype(np.float32)
    TP.custom_from_mask(tm, "bias", torch.tensor(mask))
    P.custom_from_mask(km, "bias", toolkit.tensor(mask))
    same_state(km, tm)
    t2, k2 = twins(lambda: torch.nn.Linear(5, 3), lambda: nn.Linear(5, 3))
    TP.global_unstructured([(tm, "weight"), (t2, "weight"), (t2, "bias")], TP.L1Unstructured, amount=20)
    P.global_unstructured([(km, "weight"), (k2, "weight"), (k2, "bias")], P.L1Unstructured, amount=20)
    same_state(km, tm)
    same_state(k2, t2)


def test_prune_method_on_tensor():
    t = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    out_t = TP.L1Unstructured(amount=0.5).prune(torch.tensor(t))
    out_k = P.L1Unstructured(amount=0.5).prune(toolkit.tensor(t))
    assert_close(out_k, out_t)
    out_t = TP.LnStructured(amount=1, n=1, dim=0).prune(torch.tensor(t))
    out_k = P.LnStructured(amount=1, n=1, dim=0).prune(toolkit.tensor(t))
    assert_close(out_k, out_t)


def test_errors_match_torch():
    raises_like(lambda: P.L1Unstructured(amount=1.5), lambda: TP.L1Unstructured(amount=1.5))
    raises_like(lambda: P.L1Unstructured(amount=-1), lambda: TP.L1Unstructured(amount=-1))
    raises_like(lambda: P.L1Unstructured(amount="a"), lambda: TP.L1Unstructured(amount="a"))
    raises_like(lambda: P.l1_unstructured(nn.Linear(2, 2), "weight", 5),
                lambda: TP.l1_unstructured(torch.nn.Linear(2, 2), "weight", 5))
    raises_like(lambda: P.ln_structured(nn.Linear(2, 2), "bias", 1, 2, 0),
                lambda: TP.ln_structured(torch.nn.Linear(2, 2), "bias", 1, 2, 0))
    raises_like(lambda: P.ln_structured(nn.Linear(2, 2), "weight", 1, 2, 3),
                lambda: TP.ln_structured(torch.nn.Linear(2, 2), "weight", 1, 2, 3))
    raises_like(lambda: P.remove(nn.Linear(2, 2), "weight"), lambda: TP.remove(torch.nn.Linear(2, 2), "weight"))
    raises_like(lambda: P.global_unstructured([(nn.Linear(2, 2), "weight")], P.RandomStructured, amount=1),
                lambda: TP.global_unstructured([(torch.nn.Linear(2, 2), "weight")], TP.RandomStructured, amount=1))
    km = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=4"):
        P.l1_unstructured(km, "weight", 5)
    assert "weight" in km._parameters and "weight_orig" not in km._parameters  # undone after the failure
