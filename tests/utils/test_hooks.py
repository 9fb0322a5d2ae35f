"""toolkit.utils.hooks against torch.utils.hooks: the handle tensor hooks return, and the serialization warnings."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import pytest
import torch

import toolkit
import toolkit.utils.hooks as hooks


def test_names_match_torch():
    assert hooks.__all__ == torch.utils.hooks.__all__


def test_register_hook_returns_the_handle():
    x = toolkit.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 2)
    assert isinstance(h, hooks.RemovableHandle)
    with h:
        (x * 1).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    (x * 1).sum().backward()  # removed on leaving the block
    assert x.grad.tolist() == [1.0, 1.0]


def _warnings(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("leaf", [True, False])
def test_warn_if_has_hooks_as_torch(leaf):
    def plain(g):
        return g

    @hooks.unserializable_hook
    def marked(g):
        return g

    assert marked.__torch_unserializable__ is True
    for mod, lib in ((hooks, toolkit), (torch.utils.hooks, torch)):
        x = lib.ones(2, requires_grad=True)
        y = x if leaf else x * 2
        assert _warnings(lambda: mod.warn_if_has_hooks(y)) == []  # noqa: B023
        y.register_hook(marked)
        assert _warnings(lambda: mod.warn_if_has_hooks(y)) == []  # noqa: B023
        y.register_hook(plain)
        got = _warnings(lambda: mod.warn_if_has_hooks(y))  # noqa: B023
        assert len(got) == 1 and got[0].startswith(f"backward hook {plain!r} on tensor will not be serialized.")


def test_one_handle_class_constructed_as_pytorchs():
    for lib in (toolkit, torch):
        hooks_dict, flags = OrderedDict(), OrderedDict()  # weakly held, as in PyTorch
        h = lib.utils.hooks.RemovableHandle(hooks_dict, extra_dict=flags)
        hooks_dict[h.id], flags[h.id] = print, True
        h.remove()
        assert hooks_dict == {} and flags == {}
    m = toolkit.nn.Linear(2, 2)
    handles = [m.register_forward_hook(lambda *a: None), toolkit.ones(1, requires_grad=True).register_hook(print),
               toolkit.optim.SGD(m.parameters(), lr=0.1).register_step_pre_hook(lambda *a: None)]
    assert all(isinstance(h, hooks.RemovableHandle) for h in handles)
