"""The profiling executor: profile, then specialize per input signature; guards, limits, switches, autograd.

Also the seed's prints: ``graph_for`` on the seed's ``script_fn`` (``x = x * x``
five times) and on the LSTM cell shows exactly one ``prim::FusionGroup_0``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import toolkit
from toolkit.jit.runtime import executor

from ..frontend.test_golden import _lstm_args, lstm
from ..fusion_helpers import assert_close_chain, assert_same, fused_nodes, groups

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fusion_off():
    previous = toolkit.jit.set_fusion_enabled(False)
    yield
    toolkit.jit.set_fusion_enabled(previous)


def f(x, y):
    return toolkit.sigmoid(x * y + 1.5) * toolkit.tanh(x) - y


def script_fn(x):
    for _ in range(5):
        x = x * x
    return x


def _xy(*shape, dtype=toolkit.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (toolkit.tensor(rng.standard_normal(shape)).to(dtype), toolkit.tensor(rng.standard_normal(shape)).to(dtype))


def test_first_call_profiles_second_call_runs_the_plan():
    x, y = _xy(3, 4)
    traced = toolkit.jit.trace(f, (x, y))
    ex = traced._executor
    assert ex.plans == {}
    assert_close_chain(traced(x, y), f(x, y))
    assert ex.plans == {}  # the first call only profiled
    assert_close_chain(traced(x, y), f(x, y))
    [plan] = ex.plans.values()
    assert plan.runs == 1 and plan.fused and len(plan.fusion_groups()) == 1
    traced(x, y)
    assert plan.runs == 2 and len(ex.plans) == 1


def test_graph_for_warms_up_by_itself():
    x, y = _xy(3, 4)
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)  # no call before
    assert len(groups(plan)) == 1 and len(plan.kernels) == 1
    assert str(plan) == str(plan.graph) and "prim::FusionGroup_0" in repr(plan)
    src = plan.kernels[0].source()
    assert "def serial(" in src and "def parallel(" in src and "math.tanh" in src
    assert plan.kernels[0].calls >= 1  # the warm-up ran the kernel


def test_graph_for_source_path_is_the_file_that_ran():
    x, y = _xy(3, 4)
    kernel = toolkit.jit.trace(f, (x, y)).graph_for(x, y).kernels[0]
    ran = {Path(m.__file__) for m in kernel._modules.values()}
    assert kernel.source_path() in ran
    assert kernel.source_path().read_text() == kernel.source()


@pytest.mark.parametrize("change", ["shape", "dtype", "requires_grad", "no_grad"])
def test_a_new_signature_gets_its_own_plan(change):
    x, y = _xy(3, 4)
    traced = toolkit.jit.trace(f, (x, y))
    traced(x, y)
    traced(x, y)
    assert len(traced._executor.plans) == 1
    if change == "shape":
        x2, y2 = _xy(5, 4)
    elif change == "dtype":
        x2, y2 = _xy(3, 4, dtype=toolkit.float64)
    elif change == "requires_grad":
        x2, y2 = x.clone().requires_grad_(), y
    else:
        x2, y2 = x, y
    for _ in range(2):
        if change == "no_grad":
            with toolkit.no_grad():
                out = traced(x2, y2)
        else:
            out = traced(x2, y2)
    assert len(traced._executor.plans) == 2
    assert_close_chain(out, f(x2, y2))
    if change in ("shape", "dtype"):
        plan = traced.graph_for(x2, y2)
        assert plan.kernels[0].shape == tuple(x2.shape)
        assert plan.kernels[0].calls >= 1


def test_kernel_guard_refuses_other_shapes_and_dtypes():
    x, y = _xy(3, 4)
    plan = toolkit.jit.trace(f, (x, y)).graph_for(x, y)
    kernel = plan.kernels[0]
    arrays = [x.numpy(), y.numpy()]
    assert kernel.matches(arrays)
    assert not kernel.matches([np.zeros((4, 3), np.float32), arrays[1]])
    assert not kernel.matches([arrays[0].astype(np.float64), arrays[1]])
    assert not kernel.matches(arrays[:1])
    [out] = kernel.run(arrays)
    assert_close_chain(toolkit.tensor(out), f(x, y))


def test_data_dependent_shape_fails_the_guard_and_falls_back_correctly():
    def g(x):
        return (toolkit.masked_select(x, x > 0) * 2 + 1).tanh().neg()

    x = toolkit.tensor([1.0, -2.0, 3.0, 4.0])
    traced = toolkit.jit.trace(g, (x,), check_trace=False)
    plan = traced.graph_for(x)  # specialized to three positive values
    [kernel] = plan.kernels
    assert kernel.shape == (3,) and kernel.fallbacks == 0
    for other in ([1.0, 2.0, 3.0, -4.0], [-1.0, -2.0, 3.0, -4.0], [-1.0, -1.0, -1.0, -1.0]):
        t = toolkit.tensor(other)
        assert_close_chain(traced(t), g(t))  # same input signature, so the same plan: its kernel's guard fails
    assert kernel.fallbacks == 2  # [1, 2, 3] has the profiled shape and runs the kernel
    assert_close_chain(traced(x), g(x))


def test_more_signatures_than_the_limit_still_run_correctly_with_a_warning():
    traced = toolkit.jit.trace(script_fn, (toolkit.rand(1),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, executor.MAX_SPECIALIZATIONS + 4):
            a = toolkit.rand(n)
            for _ in range(2):
                assert_same(traced(a), script_fn(a))
    assert len(traced._executor.plans) == executor.MAX_SPECIALIZATIONS
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and f"more than {executor.MAX_SPECIALIZATIONS} input signatures" in msgs[0]
    last = toolkit.rand(executor.MAX_SPECIALIZATIONS + 10)
    assert groups(traced.graph_for(last)) == []  # past the limit the plain graph serves


def test_set_fusion_enabled_false_gives_plans_without_groups(fusion_off):
    assert not toolkit.jit.fusion_enabled()
    x, y = _xy(3, 4)
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)
    assert groups(plan) == [] and plan.kernels == []
    assert_close_chain(traced(x, y), f(x, y))
    toolkit.jit.set_fusion_enabled(True)  # switching back: the next call builds a fused plan for the same inputs
    assert len(groups(traced.graph_for(x, y))) == 1


def test_environment_variable_turns_fusion_off_in_a_new_process():
    code = (
        "import toolkit\n"
        "def f(x):\n    return (x * x).sigmoid() + 1\n"
        "x = toolkit.rand(4)\n"
        "t = toolkit.jit.trace(f, (x,))\n"
        "print(toolkit.jit.fusion_enabled(), 'FusionGroup' in str(t.graph_for(x)))\n"
    )
    for value, expected in (("0", "False False"), ("1", "True True")):
        env = dict(os.environ, TOOLKIT_JIT_FUSION=value)
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip().splitlines()[-1] == expected


def test_seed_script_fn_traced_graph_for_prints_one_fusion_group():
    a = toolkit.rand(5)
    traced = toolkit.jit.trace(script_fn, (a,))
    script_fn(a)
    text = str(traced.graph_for(a))
    assert text.count("prim::FusionGroup_0(") == 1
    assert text.count("with prim::FusionGroup_0 = graph(") == 1
    assert "FusionGroup_1" not in text
    body = text.split("with prim::FusionGroup_0 = graph(", 1)[1]
    assert body.count("aten::mul") == 5
    top = text.split("with prim::FusionGroup_0", 1)[0]
    assert "aten::mul" not in top
    assert_same(traced(a), script_fn(a))


def test_seed_scripted_script_fn_graph_for_prints_one_fusion_group():
    scripted = toolkit.jit.script(script_fn)
    a = toolkit.rand(5)
    scripted(a)
    text = str(scripted.graph_for(a))
    assert text.count("prim::FusionGroup_0(") == 1 and "FusionGroup_1" not in text
    assert text.split("with prim::FusionGroup_0 = graph(", 1)[1].count("aten::mul") == 5
    assert_same(scripted(a), script_fn(a))


def test_lstm_cell_graph_for_prints_one_fusion_group():
    toolkit.manual_seed(0)
    args = _lstm_args()
    traced = toolkit.jit.trace(lstm, args)
    text = traced.graph_for(*args).graph.to_string(source_locations=False)
    assert text.count("prim::FusionGroup_0(") == 1 and "FusionGroup_1" not in text
    top, body = text.split("with prim::FusionGroup_0 = graph(", 1)
    assert "aten::sigmoid" not in top and "aten::tanh" not in top
    assert "aten::chunk" in body and "aten::chunk" not in top  # the chunk is read by offset inside the kernel
    assert body.count("aten::sigmoid") == 3 and body.count("aten::tanh") == 2


def _leaves(*ts):
    return [t.detach().clone().requires_grad_() for t in ts]


def test_autograd_through_a_traced_function_gives_eager_gradients():
    x, y = _xy(3, 4, dtype=toolkit.float64)
    traced = toolkit.jit.trace(f, (x, y))
    traced.graph_for(x, y)  # a fused plan exists for no-grad inputs; requires_grad ones get their own
    for _ in range(3):  # profile, specialize, run the plan
        lt, le = _leaves(x, y), _leaves(x, y)
        out_t, out_e = traced(*lt), f(*le)
        assert_close_chain(out_t, out_e)
        (out_t * out_t).sum().backward()
        (out_e * out_e).sum().backward()
        for a, b in zip(lt, le):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_autograd_through_the_traced_lstm_cell():
    toolkit.manual_seed(0)
    args = _lstm_args()
    traced = toolkit.jit.trace(lstm, args)
    inp, (hx, cx), *ws = args
    for _ in range(3):
        lt, le = _leaves(inp, hx, cx, *ws), _leaves(inp, hx, cx, *ws)
        hy, cy = traced(lt[0], (lt[1], lt[2]), *lt[3:])
        ehy, ecy = lstm(le[0], (le[1], le[2]), *le[3:])
        assert_close_chain(hy, ehy)
        assert_close_chain(cy, ecy)
        (hy.sum() + 2 * cy.pow(2).sum()).backward()
        (ehy.sum() + 2 * ecy.pow(2).sum()).backward()
        for a, b in zip(lt, le):
            assert_close_chain(a.grad, b.grad)


def test_grad_mode_off_runs_the_kernel_and_detached_results():
    x, y = _xy(3, 4)
    lx = x.clone().requires_grad_()
    traced = toolkit.jit.trace(f, (x, y))
    with toolkit.no_grad():
        plan = traced.graph_for(lx, y)
        out = traced(lx, y)
    assert not out.requires_grad
    assert len(fused_nodes(plan)) == 6 and plan.kernels[0].fallbacks == 0
    assert_close_chain(out, f(x, y))


def test_large_inputs_run_the_parallel_loop_and_pooled_outputs_are_not_clobbered():
    from toolkit.jit.codegen.fused_kernel import PARALLEL_MIN


    a, b = _xy(PARALLEL_MIN * 2)
    traced = toolkit.jit.trace(f, (a, b))
    plan = traced.graph_for(a, b)
    first = traced(a, b)
    kept = first.numpy().copy()
    for k in range(3):  # later calls may reuse pooled buffers, but never one a live result still holds
        c, d = _xy(PARALLEL_MIN * 2, seed=k + 1)
        assert_close_chain(traced(c, d), f(c, d))
    np.testing.assert_array_equal(first.numpy(), kept)
    assert_close_chain(first, f(a, b))
    assert plan.kernels[0].fallbacks == 0


@pytest.mark.parametrize("shape", [(), (1,), (3, 1, 4)])
def test_zero_dim_and_unit_dim_groups(shape):
    x, y = _xy(*shape)
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)
    assert len(plan.kernels) == 1 and plan.kernels[0].shape == shape
    assert_close_chain(traced(x, y), f(x, y))


def test_expanded_and_transposed_inputs_read_in_place():
    base = _xy(3, 1)[0]
    x = base.expand(3, 4)  # stride 0 along dim 1: not a broadcast input, a view of the full shape
    y = _xy(4, 3)[1].t()
    traced = toolkit.jit.trace(f, (x, y))
    plan = traced.graph_for(x, y)
    assert_close_chain(traced(x, y), f(x, y))
    assert plan.kernels[0].fallbacks == 0
    x2 = _xy(3, 4, seed=3)[0]  # same signature, contiguous this time: another loop layout, same kernel
    assert_close_chain(traced(x2, y), f(x2, y))


@pytest.mark.race_unfused
def test_a_group_runs_whichever_is_faster_and_says_which():
    """The first call with a new layout races the kernel against the ops one by one; the result is the same."""
    a, b = _xy(4, 5)
    traced = toolkit.jit.trace(f, (a, b))
    kernel = traced.graph_for(a, b).kernels[0]
    assert_close_chain(traced(a, b), f(a, b))
    (choice, fused_s, unfused_s), = kernel.decisions.values()
    assert choice == ("fused" if fused_s <= unfused_s else "unfused")
    assert kernel.calls >= 3  # compile, then two timed runs


def _mm_chain(a, b):
    return toolkit.tanh(toolkit.mm(a, b) + 1.0)


def test_no_grad_plans_call_matrix_products_directly_and_profilers_still_see_them():
    a, b = toolkit.randn(3, 4), toolkit.randn(4, 5)
    traced = toolkit.jit.trace(_mm_chain, (a, b))
    with toolkit.no_grad():
        traced(a, b)
        traced(a, b)
        assert_close_chain(traced(a, b), _mm_chain(a, b))
        with toolkit.profiler.profile() as prof:
            traced(a, b)
    assert any(e.name == "aten::mm" for e in prof.events())


def test_plans_that_record_gradients_keep_dispatch_for_matrix_products():
    a = toolkit.randn(3, 4, requires_grad=True)
    b = toolkit.randn(4, 5)
    traced = toolkit.jit.trace(_mm_chain, (a, b))
    for _ in range(3):
        out = traced(a, b)
    (g,) = toolkit.autograd.grad(out.sum(), a)
    (e,) = toolkit.autograd.grad(_mm_chain(a, b).sum(), a)
    assert_close_chain(g, e)


def _mm_branch(a, b):
    y = toolkit.mm(a, b)
    if bool(y.sum() > 0):
        y = y * 2.0
    return y


def test_control_flow_with_gradients_runs_matrix_products_through_autograd():
    """Graphs with blocks get no differentiable plan: their matrix products must still record gradients."""
    a = toolkit.randn(3, 4, requires_grad=True)
    b = toolkit.randn(4, 5)
    scripted = toolkit.jit.script(_mm_branch)
    for _ in range(3):
        out = scripted(a, b)
    (g,) = toolkit.autograd.grad(out.sum(), a)
    (e,) = toolkit.autograd.grad(_mm_branch(a, b).sum(), a)
    assert_close_chain(g, e)


@toolkit.jit.script
def _raises_when_large(x):
    if bool(x.sum() > 100):
        raise ValueError("too large")
    return x * 2


def test_a_profiling_run_that_raised_does_not_break_later_calls():
    with pytest.raises(ValueError, match="too large"):
        _raises_when_large(toolkit.full((2,), 200.0))
    for _ in range(executor.PROFILING_RUNS + 2):
        assert _raises_when_large(toolkit.ones(2)).tolist() == [2.0, 2.0]
