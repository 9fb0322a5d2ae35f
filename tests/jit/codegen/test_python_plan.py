"""Plans that record no gradients run as one generated Python function: same results, errors and
tensors as the interpreter, with kernels called on arrays and loops kept as Python loops."""

# ruff: noqa: UP045  (Optional[...] as TorchScript code writes it)

from __future__ import annotations

import traceback
from typing import Optional

import numpy as np
import pytest

import toolkit
from toolkit.jit.codegen.python_plan import CompiledPlan
from toolkit.jit.runtime import executor


def _plan(fn, *args):
    for _ in range(2):
        fn(*args)
    plans = list(fn._executor.plans.values())
    assert len(plans) == 1
    return plans[0]


def _eager(fn):
    return getattr(fn, "__wrapped__", None) or fn


def cell(x, hidden: Optional[toolkit.Tensor], w_ih, w_hh, b):
    if hidden is None:
        hidden = toolkit.zeros(x.size(0), w_hh.size(0))
    h = toolkit.tanh(x @ w_ih + hidden @ w_hh + b)
    return h, h


def rnn_loop(x, w_ih, w_hh, b):
    hidden: Optional[toolkit.Tensor] = None
    out = x[0]
    for x_t in x.split(1):
        out, hidden = cell(x_t.squeeze(0), hidden, w_ih, w_hh, b)
    return out


def _rnn_inputs(steps=7):
    toolkit.manual_seed(0)
    return toolkit.randn(steps, 3, 5), toolkit.randn(5, 5) * 0.3, toolkit.randn(5, 5) * 0.3, toolkit.randn(5)


def test_the_seed_rnn_loop_compiles_its_loop_body_to_kernel_calls():
    f = toolkit.jit.script(rnn_loop)
    args = _rnn_inputs()
    plan = _plan(f, *args)
    assert isinstance(plan.compiled, CompiledPlan)
    src = plan.compiled.source
    assert "for " in src and "_e = {" not in src, src  # every node, loop body included, is a line of its own
    np.testing.assert_allclose(f(*args).numpy(), rnn_loop(*args).numpy(), rtol=1e-6, atol=1e-6)
    short = _rnn_inputs(1)  # another signature: another plan, same code
    np.testing.assert_allclose(f(*short).numpy(), rnn_loop(*short).numpy(), rtol=1e-6, atol=1e-6)


def test_loop_body_values_are_profiled_so_the_loop_body_fuses():
    f = toolkit.jit.script(rnn_loop)
    args = _rnn_inputs()
    g = f.graph_for(*args)
    loop = next(n for n in g.nodes() if n.kind == "prim::Loop")
    assert any(n.kind == "prim::FusionGroup" for n in loop.blocks[0].nodes), str(g)


def dtype_changes_on_a_path_never_profiled(x, n: int):
    y = x
    for i in range(n):
        if i == 3:
            y = y.double()
        y = y * 2 + 1
    return y


def test_a_dtype_seen_on_one_path_only_is_not_assumed():
    f = toolkit.jit.script(dtype_changes_on_a_path_never_profiled)
    x = toolkit.arange(4, dtype=toolkit.float32)
    _plan(f, x, 2)  # profiled: i never reaches 3
    for n in (2, 5):
        expected = dtype_changes_on_a_path_never_profiled(x, n)
        got = f(x, n)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected.numpy())


def while_with_scalars(x, limit: float):
    k = 0
    total = x * 0.5
    while float(total.sum()) < limit:
        total = total + x * 2 - 1
        k += 1
    m, i = total.max(0)
    return total, k, m, i


def test_while_loops_scalar_arguments_and_multiple_outputs():
    f = toolkit.jit.script(while_with_scalars)
    x = toolkit.tensor([[1.0, 2.0], [3.0, 0.5]])
    plan = _plan(f, x, 30.0)
    assert plan.compiled is not None
    for limit in (30.0, 100.0, -1.0):
        got, want = f(x, limit), while_with_scalars(x, limit)
        for a, b in zip(got, want):
            if isinstance(a, toolkit.Tensor):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_allclose(a.numpy(), b.numpy())
            else:
                assert a == b


def view_of_input(x):
    return x[0], x.t()


def test_results_that_view_an_input_share_its_storage():
    f = toolkit.jit.script(view_of_input)
    x = toolkit.zeros(2, 3)
    _plan(f, x)
    a, b = f(x)
    a.add_(1)
    assert x[0].tolist() == [1.0, 1.0, 1.0]
    assert a._storage is x._storage and b._storage is x._storage


def sliced_matmul(x, w):
    k = int(x.sum())
    return x[:, :k] @ w


def test_an_error_inside_a_compiled_plan_is_the_interpreters_with_the_source_line():
    f = toolkit.jit.script(sliced_matmul)
    w = toolkit.ones(3, 2)
    assert _plan(f, toolkit.ones(2, 3), w).compiled is not None
    bad = toolkit.zeros(2, 3)  # the same signature; its data makes a (2, 0) @ (3, 2) product
    with pytest.raises(RuntimeError) as compiled_err:
        f(bad, w)
    with pytest.raises(RuntimeError) as eager_err:
        sliced_matmul(bad, w)
    msg = str(compiled_err.value)
    assert msg.startswith(str(eager_err.value))
    assert "while executing" in msg and "aten::matmul" in msg and "test_python_plan.py:" in msg


def test_profilers_and_inference_mode_see_what_the_interpreter_gives():
    f = toolkit.jit.script(rnn_loop)
    args = _rnn_inputs(3)
    _plan(f, *args)
    with toolkit.profiler.profile() as prof:
        f(*args)
    names = {e.name for e in prof.events()}
    assert "aten::matmul" in names
    with toolkit.inference_mode():
        assert f(*args).is_inference()
    assert not f(*args).is_inference()


def test_plans_with_gradients_are_not_compiled_and_gradients_flow():
    f = toolkit.jit.script(rnn_loop)
    x, w_ih, w_hh, b = _rnn_inputs(3)
    w_ih.requires_grad_()
    plan = _plan(f, x, w_ih, w_hh, b)
    assert getattr(plan, "compiled", None) is None
    f(x, w_ih, w_hh, b).sum().backward()
    expected = toolkit.autograd.grad(rnn_loop(x, w_ih, w_hh, b).sum(), w_ih)[0]
    np.testing.assert_allclose(w_ih.grad.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def print_every_other(x, n: int):
    for i in range(n):
        x = x + 1
        if i % 2 == 0:
            print("step", i, x.sum())
    return x


def test_nodes_only_the_interpreter_runs_get_tensors(capsys):
    f = toolkit.jit.script(print_every_other)
    x = toolkit.zeros(2)
    _plan(f, x, 3)
    capsys.readouterr()
    out = f(x, 3)
    assert out.tolist() == [3.0, 3.0]
    assert capsys.readouterr().out == "step 0 tensor(2.)\nstep 2 tensor(6.)\n"


def test_the_switch_turns_compilation_off(monkeypatch):
    monkeypatch.setattr(executor.SETTINGS, "compile_plans", False)
    f = toolkit.jit.script(rnn_loop)
    args = _rnn_inputs(2)
    assert _plan(f, *args).compiled is None
    np.testing.assert_allclose(f(*args).numpy(), rnn_loop(*args).numpy(), rtol=1e-6)


def raises_on_data(x):
    if float(x.sum()) > 10.0:
        raise ValueError("the sum is too large")
    return x * 2


def test_traced_functions_compile_too_and_the_generated_source_is_shown_in_tracebacks():
    def fn(x, y):
        return (x * y).relu().sum(0)

    x, y = toolkit.randn(4, 3), toolkit.randn(4, 3)
    t = toolkit.jit.trace(fn, (x, y))
    for _ in range(2):
        t(x, y)
    plan = next(iter(t._executor.plans.values()))
    assert plan.compiled is not None
    np.testing.assert_allclose(t(x, y).numpy(), fn(x, y).numpy(), rtol=1e-6)

    g = toolkit.jit.script(raises_on_data)
    x = toolkit.ones(3)
    _plan(g, x)
    with pytest.raises(ValueError, match="too large") as err:
        g(x * 5)
    shown = "".join(traceback.format_exception(err.value))
    assert "<toolkit plan " in shown and "_e = {" in shown  # the generated line that raised, shown as source
    assert "while executing" in str(err.value) and "test_python_plan.py:" in str(err.value)


def in_place_on_computed_values(x, n: int):
    y = x * 2
    for _ in range(n):
        y.add_(1)
        y[0] = y[0] * 3
    z = x[1]
    z.mul_(10)
    return y, x


def test_in_place_ops_on_values_held_as_arrays_write_where_eager_writes():
    f = toolkit.jit.script(in_place_on_computed_values)
    x = toolkit.arange(6, dtype=toolkit.float32).reshape(3, 2)
    _plan(f, x.clone(), 2)
    for n in (0, 3):
        a, b = x.clone(), x.clone()
        got, want = f(a, n), in_place_on_computed_values(b, n)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # the input was written through its view


def test_graph_for_shows_the_generated_python():
    f = toolkit.jit.script(rnn_loop)
    args = _rnn_inputs(2)
    g = f.graph_for(*args)
    assert g.python_source is not None and "def _plan(" in g.python_source


def test_is_none_of_a_folded_constant_compiles_without_a_syntax_warning():
    """Freezing folds ``self.x is None`` to a constant tested against None: the plan writes the known answer."""
    import warnings

    from toolkit.demo import seed_net

    m = seed_net().eval()
    x = toolkit.randn(2, 1, 28, 28)
    frozen = toolkit.jit.freeze(toolkit.jit.script(m))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        for _ in range(3):  # profiling run, then the compiled plan
            got = frozen(x)
    assert np.allclose(got.numpy(), m(x).detach().numpy(), atol=1e-6)
