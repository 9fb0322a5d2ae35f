"""``toolkit.futures``: Future, then, collect_all and wait_all, compared with ``torch.futures``."""

import pytest
import torch

import toolkit


def test_futures_module_matches_torch_futures():
    for base in (toolkit, torch):
        f = base.futures.Future()
        g = f.then(lambda fut: fut.wait() + 1)
        assert not f.done()
        f.set_result(3)
        assert g.wait() == 4 and g.done()
        with pytest.raises(RuntimeError, match="completed Future"):
            f.set_result(4)
        h = base.futures.Future()
        h.set_exception(ValueError("x"))
        with pytest.raises(ValueError):
            h.wait()
        with pytest.raises(RuntimeError, match="ValueError: x"):
            h.then(lambda fut: fut.wait()).wait()
        assert base.futures.wait_all([f, g]) == [3, 4]
        assert [x.value() for x in base.futures.collect_all([f, g]).wait()] == [3, 4]
        with pytest.raises(ValueError):
            base.futures.wait_all([f, h])
        seen = []
        f.add_done_callback(lambda fut, seen=seen: seen.append(fut.value()))
        assert seen == [3]
    assert toolkit.jit.Future is toolkit.futures.Future
