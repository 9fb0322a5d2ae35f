"""toolkit.nn.attention against torch.nn.attention: the backend enum, sdpa_kernel's bookkeeping and errors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.attention as tattn

import toolkit.nn.attention as attn
from toolkit.nn.attention import SDPBackend, sdpa_kernel


def _both(name):
    return getattr(SDPBackend, name), getattr(tattn.SDPBackend, name)


def test_public_names_and_enum():
    assert attn.__all__ == tattn.__all__
    assert attn.WARN_FOR_UNFUSED_KERNELS is tattn.WARN_FOR_UNFUSED_KERNELS is False
    assert list(SDPBackend.__members__) == list(tattn.SDPBackend.__members__)
    for name in SDPBackend.__members__:
        mine, theirs = _both(name)
        assert (int(mine), mine.name, str(mine), repr(mine)) == (int(theirs), theirs.name, str(theirs), repr(theirs))
        assert SDPBackend(int(mine)) is mine


@pytest.mark.parametrize("chosen", [["MATH"], ["FLASH_ATTENTION"], ["EFFICIENT_ATTENTION", "MATH"], ["CUDNN_ATTENTION"],
                                    [], "MATH", ["MATH", "MATH"]])
def test_sdpa_kernel_enables_and_restores_as_torch(chosen):
    mine = getattr(SDPBackend, chosen) if isinstance(chosen, str) else [getattr(SDPBackend, n) for n in chosen]
    theirs = (getattr(tattn.SDPBackend, chosen) if isinstance(chosen, str)
              else [getattr(tattn.SDPBackend, n) for n in chosen])
    before = attn.enabled_sdpa_backends()
    with sdpa_kernel(mine) as got, tattn.sdpa_kernel(theirs):
        assert got == {}
        names = [b.name for b in attn.enabled_sdpa_backends()]
        assert names == [b.name for b in tattn._cur_sdpa_kernel_backends()]
    assert attn.enabled_sdpa_backends() == before


def test_set_priority_as_torch():
    mine = [SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]
    theirs = [tattn.SDPBackend.CUDNN_ATTENTION, tattn.SDPBackend.MATH]
    before = attn.sdpa_priority_order()
    assert before == torch._C._get_sdp_priority_order()
    with sdpa_kernel(mine, set_priority=True), tattn.sdpa_kernel(theirs, set_priority=True):
        assert attn.sdpa_priority_order() == torch._C._get_sdp_priority_order()
        assert attn.enabled_sdpa_backends(with_priority=True) == mine
    assert attn.sdpa_priority_order() == before


@pytest.mark.parametrize("bad", ["math", (SDPBackend.MATH,), 0])
def test_sdpa_kernel_rejects_non_backends(bad):
    with pytest.raises(AssertionError) as expected, tattn.sdpa_kernel(bad):
        pass
    with pytest.raises(AssertionError) as got, sdpa_kernel(bad):
        pass
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("chosen, ok", [(["MATH"], True), (["FLASH_ATTENTION"], True),
                                        (["EFFICIENT_ATTENTION"], False), (["CUDNN_ATTENTION"], False), ([], False)])
def test_check_sdpa_backends_on_cpu_as_torch(chosen, ok):
    q = torch.randn(1, 2, 3, 4)
    with tattn.sdpa_kernel([getattr(tattn.SDPBackend, n) for n in chosen]):
        if ok:
            torch.nn.functional.scaled_dot_product_attention(q, q, q)
        else:
            with pytest.raises(RuntimeError) as expected:
                torch.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([getattr(SDPBackend, n) for n in chosen]):
        if ok:
            attn.check_sdpa_backends("cpu")
        else:
            with pytest.raises(RuntimeError) as got:
                attn.check_sdpa_backends("cpu")
            assert str(got.value) == str(expected.value)


def test_flash_attention_registry():
    assert attn.current_flash_attention_impl() is None
    removed = []

    class Handle:
        def remove(self):
            removed.append(True)

    attn.register_flash_attention_impl("TestImpl", register_fn=Handle)
    try:
        assert "TestImpl" in attn.list_flash_attention_impls()
        attn.activate_flash_attention_impl("TestImpl")
        assert attn.current_flash_attention_impl() == "TestImpl"
        attn.restore_flash_attention_impl()
        assert removed == [True] and attn.current_flash_attention_impl() is None
        with pytest.raises(ValueError, match="Unknown flash attention impl 'nope'"):
            attn.activate_flash_attention_impl("nope")
    finally:
        attn._registry._IMPLS.pop("TestImpl", None)
