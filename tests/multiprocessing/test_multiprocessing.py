"""toolkit.multiprocessing with real processes: shared memory seen across fork, spawn and forkserver, queues,
hogwild training of a parent's model, spawn's error propagation, and no shared memory left behind."""

from __future__ import annotations

import gc
import os

import pytest
import torch
import torch.multiprocessing

import toolkit
import toolkit.multiprocessing as mp
from tests.conftest import assert_close
from toolkit._core.storage import shared_segment
from toolkit.multiprocessing.reductions import shared_copy

from . import workers

METHODS = ["fork", "spawn", "forkserver"]
SHM = "/dev/shm"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _segments() -> set[str]:
    """Named segments this process created, or that a process now gone left behind (not other live tests')."""
    names = {f for f in os.listdir(SHM) if f.startswith("toolkit_")} if os.path.isdir(SHM) else set()
    return {f for f in names if int(f.split("_")[1]) == os.getpid() or not _alive(int(f.split("_")[1]))}


@pytest.fixture(autouse=True)
def no_leaked_segments():
    before = _segments()
    yield
    gc.collect()
    assert _segments() - before == set(), "shared memory segments left in /dev/shm"


# ---------------------------------------------------------------------------------------------- in one process
def test_share_memory_moves_storage_in_place_for_every_view():
    x = toolkit.arange(12.0).reshape(3, 4)
    view = x[1:, ::2]
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and view.is_shared() and x.untyped_storage().is_shared()
    view.fill_(-1.0)
    expected = torch.arange(12.0).reshape(3, 4).share_memory_()
    expected[1:, ::2].fill_(-1.0)
    assert_close(x, expected)
    assert view.storage_offset() == 4 and view.stride() == (4, 2)


def test_share_memory_is_a_no_op_when_shared():
    x = toolkit.ones(5).share_memory_()
    ptr = x.data_ptr()
    assert x.share_memory_() is x and x.data_ptr() == ptr


def test_untyped_storage_share_memory():
    x = toolkit.zeros(4)
    s = x.untyped_storage()
    assert s.share_memory_() is s and s.is_shared() and x.is_shared()
    assert torch.zeros(4).untyped_storage().share_memory_().is_shared()


def test_module_share_memory_covers_parameters_buffers_and_grads():
    model = toolkit.nn.Sequential(toolkit.nn.Linear(3, 4), toolkit.nn.BatchNorm1d(4))
    model(toolkit.randn(5, 3)).sum().backward()
    assert model.share_memory() is model
    tensors = [*model.parameters(), *model.buffers(), *(p.grad for p in model.parameters())]
    assert all(t.is_shared() for t in tensors)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    reference(torch.randn(5, 3)).sum().backward()
    reference.share_memory()
    assert all(t.is_shared() for t in [*reference.parameters(), *reference.buffers()])


# ---------------------------------------------------------------------------------------------- across processes
@pytest.mark.parametrize("method", METHODS)
def test_child_writes_are_seen_by_the_parent(method):
    t = toolkit.zeros(3)
    if method == "fork":
        t.share_memory_()  # a forked child inherits the shared mapping; nothing is pickled
    p = mp.get_context(method).Process(target=workers.add_one, args=(t,))
    p.start()
    p.join()
    assert p.exitcode == 0
    assert t.is_shared()  # spawn and forkserver moved it to shared memory when sending it
    assert_close(t, torch.ones(3))


def test_unshared_tensor_under_fork_is_a_copy_as_in_pytorch():
    t = toolkit.zeros(3)
    p = mp.get_context("fork").Process(target=workers.add_one, args=(t,))
    p.start()
    p.join()
    assert p.exitcode == 0 and not t.is_shared()
    assert_close(t, torch.zeros(3))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_round_trip_shares_memory(method):
    ctx = mp.get_context(method)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    x = toolkit.ones(3)
    p = ctx.Process(target=workers.scale_from_queue, args=(inbox, outbox))
    p.start()
    inbox.put(x)
    back, theirs, shared_there = outbox.get(timeout=120)
    inbox.put(None)
    assert outbox.get(timeout=120) is None
    p.join()
    assert p.exitcode == 0 and shared_there
    assert_close(x, torch.full((3,), 10.0))
    assert back.untyped_storage() is x.untyped_storage()  # one storage per segment in a process
    assert back.data_ptr() == x.data_ptr() + x.element_size()
    back.fill_(7.0)
    assert_close(x, torch.tensor([10.0, 7.0, 7.0]))
    assert theirs.is_shared()
    assert_close(theirs, torch.full((2,), 5.0))


def test_parameter_keeps_its_type_and_requires_grad():
    ctx = mp.get_context("spawn")
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=workers.report_parameter, args=(inbox, outbox))
    p.start()
    inbox.put(toolkit.nn.Parameter(toolkit.zeros(2)))
    assert outbox.get(timeout=120) == ("Parameter", True, True)
    p.join()


def test_non_leaf_requiring_grad_is_refused_as_in_pytorch():
    q = mp.SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor") as ours:
        q.put(toolkit.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as theirs:
        torch.multiprocessing.SimpleQueue().put(torch.ones(2, requires_grad=True) * 2)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild_trains_the_parents_model(method):
    toolkit.manual_seed(0)
    model = workers.Net()
    model.share_memory()
    x, y = workers.synthetic_data()
    before = [p.detach().clone() for p in model.parameters()]
    with toolkit.no_grad():
        loss_before = toolkit.nn.functional.cross_entropy(model(x), y).item()
    ctx = mp.get_context(method)
    procs = [ctx.Process(target=workers.hogwild_train, args=(rank, model, 40)) for rank in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert [p.exitcode for p in procs] == [0, 0]
    assert all(not toolkit.equal(b, p) for b, p in zip(before, model.parameters()))
    with toolkit.no_grad():
        loss_after = toolkit.nn.functional.cross_entropy(model(x), y).item()
    assert loss_after < 0.7 * loss_before


# ---------------------------------------------------------------------------------------------- spawn
def test_spawn_runs_every_rank():
    out = toolkit.zeros(3)
    assert mp.spawn(workers.write_rank, args=(out,), nprocs=3) is None
    assert_close(out, torch.tensor([1.0, 2.0, 3.0]))


def test_spawn_raises_the_childs_exception_with_its_traceback():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(workers.fail_on_rank_one, args=("boom from the child",), nprocs=2)
    message = str(info.value)
    assert message.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback")
    assert "in fail_on_rank_one" in message and "ValueError: boom from the child" in message
    assert info.value.error_index == 1 and info.value.error_pid > 0


def test_spawn_reports_an_exit_code():
    context = mp.spawn(workers.exit_with, args=(3,), nprocs=1, join=False)
    assert isinstance(context, mp.ProcessContext) and len(context.pids()) == 1
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
        while not context.join():
            pass
    assert info.value.exit_code == 3


def test_spawn_warns_for_another_start_method_as_pytorch():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(workers.write_rank, args=(toolkit.zeros(1),), nprocs=1, start_method="fork")


# ---------------------------------------------------------------------------------------------- strategies, names
def test_sharing_strategies_as_pytorch():
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy() == "file_descriptor"
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("carrier_pigeon")


def test_file_system_strategy_sends_names_and_unlinks_them():
    mp.set_sharing_strategy("file_system")
    try:
        t = toolkit.zeros(3)
        p = mp.get_context("spawn").Process(target=workers.add_one, args=(t,))
        p.start()
        assert len(_segments()) >= 1  # the segment has a name while its creator holds it
        p.join()
        assert p.exitcode == 0
        assert_close(t, torch.ones(3))
    finally:
        mp.set_sharing_strategy("file_descriptor")
    del t  # the fixture checks the name went with the storage


def test_public_names_match_torch_multiprocessing():
    ours = {n for n in dir(mp) if not n.startswith("_")}
    theirs = {n for n in dir(torch.multiprocessing) if not n.startswith("_")}
    missing = theirs - ours - {"torch", "sys", "ENV_VAR_PARALLEL_START"}
    assert not missing


def test_shared_copy_puts_a_fresh_tensor_in_shared_memory_once():
    t = toolkit.arange(12.0).reshape(3, 4).t()  # a non-contiguous view: the copy has the same values
    c = shared_copy(t)
    assert shared_segment(c._storage.base) is not None and c is not t
    assert_close(c, t)
    assert shared_copy(c) is c  # already shared: itself
    p = toolkit.nn.Parameter(toolkit.ones(2))
    assert shared_copy(p) is p  # parameters (and tensors requiring grad) keep their identity


def test_dataloader_workers_send_batches_through_shared_memory():
    ds = toolkit.utils.data.TensorDataset(toolkit.arange(40.0).reshape(20, 2), toolkit.arange(20))
    loader = toolkit.utils.data.DataLoader(ds, batch_size=5, num_workers=2)
    batches = list(loader)
    assert all(shared_segment(x._storage.base) is not None for b in batches for x in b)
    assert_close(toolkit.cat([b[0] for b in batches]), ds.tensors[0])
    assert toolkit.cat([b[1] for b in batches]).tolist() == list(range(20))
