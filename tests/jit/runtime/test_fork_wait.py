"""``toolkit.jit.fork`` / ``wait`` and ``toolkit.futures``: eager runs at once, script mode runs forked
subgraphs in parallel on a thread pool; compared with ``torch.jit`` and ``torch.futures``."""

import ast
import io
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit import Tensor, dispatch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def double_or_raise(x: Tensor, k: int = 2) -> Tensor:
    if bool(x.sum() > 100):
        raise ValueError("too large")
    return x * k


def torch_double_or_raise(x: torch.Tensor, k: int = 2) -> torch.Tensor:
    if bool(x.sum() > 100):
        raise ValueError("too large")
    return x * k


@toolkit.jit.script
def fork_then_add(x):
    fut = toolkit.jit.fork(double_or_raise, x, k=3)
    y = x + 1
    return toolkit.jit.wait(fut) + y


@torch.jit.script
def torch_fork_then_add(x):
    fut = torch.jit.fork(torch_double_or_raise, x, k=3)
    y = x + 1
    return torch.jit.wait(fut) + y


# -- eager --------------------------------------------------------------------------------------------
def test_eager_fork_runs_at_once_and_returns_a_completed_future_like_torch():
    for base in (toolkit, torch):
        fut = base.jit.fork(lambda a, b=1: a + b, 1, b=5)
        assert fut.done() and fut.value() == 6 and base.jit.wait(fut) == 6
    assert isinstance(toolkit.jit.fork(abs, -1), toolkit.jit.Future)


def test_eager_fork_raises_at_fork_like_torch():
    for base, fn in ((toolkit, double_or_raise), (torch, torch_double_or_raise)):
        with pytest.raises(ValueError, match="too large"):
            base.jit.fork(fn, base.full((2,), 100.0))


def test_wait_and_fork_reject_bad_arguments_like_torch():
    for base in (toolkit, torch):
        with pytest.raises(TypeError):
            base.jit.wait(3)
        with pytest.raises(TypeError):
            base.jit.fork(3)


# -- script mode --------------------------------------------------------------------------------------
def test_scripted_fork_is_a_fork_node_with_a_subgraph_and_a_wait():
    g = fork_then_add.graph
    kinds = [n.kind for n in g.nodes()]
    torch_kinds = [n.kind() for n in torch_fork_then_add.graph.nodes()]
    for k in ("prim::fork", "aten::wait"):
        assert kinds.count(k) == torch_kinds.count(k) == 1
    fork = next(n for n in g.nodes() if n.kind == "prim::fork")
    assert str(fork.output().type) == "Future[Tensor]"
    assert isinstance(fork["Subgraph"], toolkit.jit.Graph) and not fork.blocks
    assert "with prim::fork_0 = graph(" in str(g)
    g.verify()


def test_scripted_fork_results_match_eager_and_torch():
    x = np.arange(4, dtype=np.float32)
    expected = torch_fork_then_add(torch.from_numpy(x))
    for _ in range(3):  # past the executor's profiling runs
        assert_close(fork_then_add(toolkit.tensor(x)), expected)
    assert_close(fork_then_add(toolkit.tensor(x)), double_or_raise(toolkit.tensor(x), 3) + toolkit.tensor(x) + 1)


def test_error_in_forked_function_raises_its_own_type_at_wait():
    with pytest.raises(ValueError, match="too large"):
        fork_then_add(toolkit.full((2,), 100.0))
    assert_close(fork_then_add(toolkit.ones(2)), torch_fork_then_add(torch.ones(2)))  # usable afterwards


def _ensemble(base):
    class Member(base.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.w = base.nn.Parameter(base.arange(3.0) * k)

        def forward(self, x):
            return base.tanh(x * self.w)

    class Ensemble(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.models = base.nn.ModuleList([Member(k) for k in range(4)])

        def forward(self, x):
            futures = [base.jit.fork(m, x) for m in self.models]
            return base.stack([base.jit.wait(f) for f in futures]).sum(0)

    class LoopEnsemble(Ensemble):
        def forward(self, x):
            futures: list[base.jit.Future[base.Tensor]] = []
            for m in self.models:
                futures.append(base.jit.fork(m, x))
            results: list[base.Tensor] = []
            for fut in futures:
                results.append(base.jit.wait(fut))
            return base.stack(results).sum(0)

    return Ensemble, LoopEnsemble


@pytest.mark.parametrize("which", [0, 1], ids=["comprehension", "loop"])
def test_ensemble_of_forked_submodules_matches_torch_and_backpropagates(which):
    tk = toolkit.jit.script(_ensemble(toolkit)[which]())
    th = torch.jit.script(_ensemble(torch)[which]())
    assert sum(n.kind == "prim::fork" for n in tk.graph.nodes()) == 4
    x = np.linspace(-1, 1, 3).astype(np.float32)
    out_tk, out_th = tk(toolkit.tensor(x)), th(torch.from_numpy(x))
    assert_close(out_tk, out_th)
    out_tk.sum().backward()
    out_th.sum().backward()
    assert_close(tk.models[2].w.grad, th.models[2].w.grad)


def test_forked_work_keeps_the_callers_grad_mode():
    m = toolkit.jit.script(_ensemble(toolkit)[0]())
    with toolkit.no_grad():
        assert not m(toolkit.ones(3)).requires_grad
    assert m(toolkit.ones(3)).requires_grad


# -- parallelism, shown without timing ----------------------------------------------------------------
_barrier = threading.Barrier(2, timeout=10)
_threads: list = []


@toolkit.jit.ignore
def rendezvous(x: Tensor) -> Tensor:
    """Returns only once another task reaches it too: deadlock (a BrokenBarrierError after the timeout) unless two
    run at the same time."""
    _threads.append(threading.get_ident())
    _barrier.wait()
    return x + 1


def meet(x: Tensor) -> Tensor:
    return rendezvous(x) * 2


@toolkit.jit.script
def two_meeting_tasks(x):
    a = toolkit.jit.fork(meet, x)
    b = toolkit.jit.fork(meet, x + 1)
    return toolkit.jit.wait(a) + toolkit.jit.wait(b)


def test_forked_tasks_run_at_the_same_time():
    _barrier.reset()
    _threads.clear()
    for _ in range(3):
        assert two_meeting_tasks(toolkit.zeros(2)).tolist() == [6.0, 6.0]
    assert len(_threads) == 6 and len(set(_threads[:2])) == 2


def test_the_same_rendezvous_fails_when_run_one_after_the_other():
    """The check above can fail: in eager mode fork runs each task at once, so the first waits alone."""
    barrier = threading.Barrier(2, timeout=0.2)

    def alone(x):
        barrier.wait()
        return x

    with pytest.raises(threading.BrokenBarrierError):
        toolkit.jit.fork(alone, toolkit.zeros(2))


def inner_fork(x: Tensor) -> Tensor:
    fut = toolkit.jit.fork(double_or_raise, x)
    return toolkit.jit.wait(fut) + 1


@toolkit.jit.script
def nested(x):
    futs = [toolkit.jit.fork(inner_fork, x) for _ in range(16)]
    return toolkit.stack([toolkit.jit.wait(f) for f in futs]).sum(0)


def test_nested_forks_more_than_the_pool_has_threads_finish():
    assert nested(toolkit.ones(2)).tolist() == [48.0, 48.0]


def test_wait_of_a_non_future_in_script_is_a_located_error():
    from toolkit.jit.frontend.script import FrontendError

    def bad(x):
        return toolkit.jit.wait(x)

    with pytest.raises(FrontendError, match="wait\\(\\) expects a Future"):
        toolkit.jit.script(bad)


def _with_method(base):
    class WithMethod(base.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = base.nn.Parameter(base.full((2,), 3.0))

        def helper(self, x, n: int):
            return x * self.scale + n

        def forward(self, x):
            futs: list[base.jit.Future[base.Tensor]] = []  # an empty list is a Tensor[] otherwise, as in torch
            for i in range(3):
                futs.append(base.jit.fork(self.helper, x, i))
            total = x
            for f in futs:
                total = total + base.jit.wait(f)
            return total

    return WithMethod


def test_forked_method_of_the_module_in_a_loop_matches_torch():
    out_tk = toolkit.jit.script(_with_method(toolkit)())(toolkit.ones(2))
    out_th = torch.jit.script(_with_method(torch)())(torch.ones(2))
    assert_close(out_tk, out_th)


def test_fork_without_a_function_is_a_located_error():
    from toolkit.jit.frontend.script import FrontendError

    def bad(x):
        return toolkit.jit.wait(toolkit.jit.fork())

    with pytest.raises(FrontendError, match="fork\\(\\) takes the function") as info:
        toolkit.jit.script(bad)
    assert "test_fork_wait.py" in str(info.value)


# -- saving and loading -------------------------------------------------------------------------------
def _round_trip(obj):
    buf = io.BytesIO()
    toolkit.jit.save(obj, buf)
    buf.seek(0)
    return toolkit.jit.load(buf)


def _forks(graph) -> list:
    return [n for n in graph.nodes() if n.kind == "prim::fork"]


def test_code_of_a_fork_is_a_nested_function_and_its_fork_call_like_torch():
    code = fork_then_add.code
    assert "  def __forked_function(x: Tensor) -> Tensor:\n" in code
    assert "  fut = fork(__forked_function, x)\n" in code
    assert "  return torch.add(torch.wait(fut), y)\n" in code  # as TorchScript prints it
    assert "ops.prim.RaiseException(\"too large\", \"builtins.ValueError\")" in code  # the forked body, inlined
    torch_code = torch_fork_then_add.code
    assert "def __forked_function():" in torch_code and "fut = fork(__forked_function)" in torch_code
    assert "  y = torch.add(x, 1)\n  return torch.add(torch.wait(fut), y)\n" in code
    assert "  y = torch.add(x, 1)\n  return torch.add(torch.wait(fut), y)\n" in torch_code
    ast.parse(code)


def test_scripted_function_with_fork_saves_and_loads_and_matches_torch():
    loaded = _round_trip(fork_then_add)
    assert loaded.code == fork_then_add.code
    (fork,) = _forks(loaded.graph)
    assert str(fork.output().type) == "Future[Tensor]" and isinstance(fork["Subgraph"], toolkit.jit.Graph)
    assert "with prim::fork_0 = graph(" in str(loaded.graph)
    x = np.arange(4, dtype=np.float32)
    for _ in range(3):  # past the executor's profiling runs
        assert_close(loaded(toolkit.tensor(x)), torch_fork_then_add(torch.from_numpy(x)))
    with pytest.raises(ValueError, match="too large"):
        loaded(toolkit.full((2,), 100.0))


def test_nested_forks_save_and_load():
    loaded = _round_trip(nested)
    inner = _forks(next(n for n in loaded.graph.all_nodes() if n.kind == "prim::fork")["Subgraph"])
    assert len(inner) == 1
    assert loaded(toolkit.ones(2)).tolist() == [48.0, 48.0]


@pytest.mark.parametrize("which", [0, 1], ids=["comprehension", "loop"])
def test_ensemble_of_forked_submodules_saves_and_loads_and_matches_torch(which):
    loaded = _round_trip(toolkit.jit.script(_ensemble(toolkit)[which]()))
    th = torch.jit.script(_ensemble(torch)[which]())
    assert len(_forks(loaded.graph)) == 4
    x = np.linspace(-1, 1, 3).astype(np.float32)
    out_tk, out_th = loaded(toolkit.tensor(x)), th(torch.from_numpy(x))
    assert_close(out_tk, out_th)
    out_tk.sum().backward()
    out_th.sum().backward()
    assert_close(getattr(loaded.models, "2").w.grad, th.models[2].w.grad)


def test_forked_method_of_the_module_saves_and_loads():
    loaded = _round_trip(toolkit.jit.script(_with_method(toolkit)()))
    assert_close(loaded(toolkit.ones(2)), torch.jit.script(_with_method(torch)())(torch.ones(2)))


def test_saved_ensemble_loads_and_runs_in_a_fresh_process(tmp_path):
    path = tmp_path / "ensemble.pt"
    toolkit.jit.save(toolkit.jit.script(_ensemble(toolkit)[1]()), str(path))
    program = ("import sys, toolkit\n"
               "m = toolkit.jit.load(sys.argv[1])\n"
               "assert 'fork(__forked_function' in m.code\n"
               "print(m(toolkit.linspace(-1, 1, 3)).tolist())\n")
    out = subprocess.run([sys.executable, "-c", program, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    expected = torch.jit.script(_ensemble(torch)[1]())(torch.linspace(-1, 1, 3))
    assert_close(torch.tensor(ast.literal_eval(out.stdout.strip())), expected)


class _MeetAtTanh:
    """A dispatch observer (as the profiler is one) holding each ``tanh`` at a barrier of two: the call goes on only
    once another ``tanh`` runs at the same time, so tasks run one after the other deadlock (BrokenBarrierError)."""

    def __init__(self, timeout: float):
        self.barrier = threading.Barrier(2, timeout=timeout)
        self.threads: list = []

    def on_call(self, op, bound, run):
        if op.name == "tanh":
            self.threads.append(threading.get_ident())
            self.barrier.wait()
        return run()

    def __enter__(self):
        dispatch.STATE.observers.append(self)
        return self

    def __exit__(self, *exc) -> None:
        dispatch.STATE.observers.remove(self)


def test_loaded_ensemble_runs_its_forked_members_at_the_same_time():
    loaded = _round_trip(toolkit.jit.script(_ensemble(toolkit)[1]()))
    expected = _ensemble(torch)[1]()(torch.ones(3))
    with _MeetAtTanh(timeout=10) as meet:
        for _ in range(3):
            assert_close(loaded(toolkit.ones(3)), expected)
    assert len(meet.threads) == 12 and len(set(meet.threads)) >= 2


def test_the_same_meeting_fails_for_members_run_one_after_the_other():
    """The check above can fail: the eager module runs its members in turn, so the first meets no one."""
    with _MeetAtTanh(timeout=0.2), pytest.raises(threading.BrokenBarrierError):
        _ensemble(toolkit)[1]()(toolkit.ones(3))


_GLOBAL_LINEAR = toolkit.nn.Linear(3, 3)


def scaled_global(x: Tensor) -> Tensor:
    return _GLOBAL_LINEAR(x) * 2


@toolkit.jit.script
def fork_of_global(x):
    return toolkit.jit.wait(toolkit.jit.fork(scaled_global, x))


def test_forked_function_reading_a_global_module_saves_its_state_as_constants():
    loaded = _round_trip(fork_of_global)
    (fork,) = _forks(loaded.graph)
    assert not any(n.kind == "prim::ModuleConstant" for n in fork["Subgraph"].all_nodes())
    assert any(n.kind == "prim::ModuleConstant" for n in _forks(fork_of_global.graph)[0]["Subgraph"].all_nodes())
    x = toolkit.randn(3)
    assert_close(loaded(x), scaled_global(x))


# -- tracing ------------------------------------------------------------------------------------------------
def _plain_fork(lib):
    def negate_twice(x):
        return x.neg() * 2

    def fork_and_add(x):
        fut = lib.jit.fork(negate_twice, x)
        return lib.jit.wait(fut) + 1

    return fork_and_add


def _torch_kinds(graph) -> list:
    return [n.kind() for n in graph.nodes()]


def test_a_trace_records_fork_and_wait_with_the_forked_call_as_subgraph_like_torch():
    tk = toolkit.jit.trace(_plain_fork(toolkit), toolkit.ones(3))
    th = torch.jit.trace(_plain_fork(torch), torch.ones(3))
    kinds = [n.kind for n in tk.graph.nodes()]
    assert kinds.count("prim::fork") == _torch_kinds(th.graph).count("prim::fork") == 1
    assert kinds.count("aten::wait") == _torch_kinds(th.graph).count("aten::wait") == 1
    (fork,) = _forks(tk.graph)
    assert [n.kind for n in fork["Subgraph"].nodes() if n.op is not None] == ["aten::neg", "aten::mul"]
    x = np.linspace(-1, 1, 3).astype(np.float32)  # other inputs than the example: the graph runs
    assert_close(tk(toolkit.tensor(x)), th(torch.from_numpy(x)))


def test_a_traced_ensemble_forks_each_submodule_trains_and_saves():
    tk_model, th_model = _ensemble(toolkit)[0](), _ensemble(torch)[0]()
    x = np.linspace(-1, 1, 3).astype(np.float32)
    tk = toolkit.jit.trace(tk_model, toolkit.tensor(x))
    th = torch.jit.trace(th_model, torch.from_numpy(x))
    assert len(_forks(tk.graph)) == _torch_kinds(th.graph).count("prim::fork") == 4
    x2 = x * 2
    out_tk, out_th = tk(toolkit.tensor(x2)), th(torch.from_numpy(x2))
    assert_close(out_tk, out_th)
    out_tk.sum().backward()
    out_th.sum().backward()
    assert_close(tk_model.models[2].w.grad, th_model.models[2].w.grad)
    assert_close(_round_trip(tk)(toolkit.tensor(x2)), out_th.detach())
