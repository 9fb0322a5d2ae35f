"""JIT tests check the fused kernels themselves: they always run, instead of racing the ops one by one."""

import pytest


@pytest.fixture(autouse=True)
def _always_run_fused_kernels(request, monkeypatch):
    if request.node.get_closest_marker("race_unfused"):
        return
    from toolkit.jit.codegen import fused_kernel

    monkeypatch.setattr(fused_kernel, "RACE_UNFUSED", False)
