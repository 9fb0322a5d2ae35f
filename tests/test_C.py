"""``toolkit._C``: the fusion switches seed code calls, as PyTorch's."""

import toolkit


def _script_fn(x):
    for _ in range(5):
        x = x * x
    return x


def test_override_can_fuse_on_cpu_switches_fusion():
    x = toolkit.full((64,), 1.0001)
    try:
        toolkit._C._jit_override_can_fuse_on_cpu(False)
        assert not toolkit._C._jit_can_fuse_on_cpu()
        off = toolkit.jit.trace(_script_fn, (x,))
        assert "prim::FusionGroup" not in str(off.graph_for(x))
        toolkit._C._jit_override_can_fuse_on_cpu(True)
        assert toolkit._C._jit_can_fuse_on_cpu() and toolkit.jit.fusion_enabled()
        on = toolkit.jit.trace(_script_fn, (x,))
        assert str(on.graph_for(x)).count("prim::FusionGroup_0 = graph") == 1
        assert toolkit.equal(on(x), off(x))
    finally:
        toolkit.jit.set_fusion_enabled(True)


def test_profiling_switches_answer_as_pytorch():
    assert toolkit._C._jit_set_profiling_executor(True) is True
    assert toolkit._C._jit_set_profiling_mode(True) is True
