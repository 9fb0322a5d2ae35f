"""toolkit.distributed.rpc against torch.distributed.rpc's behaviour, on real worker processes (127.0.0.1)."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import toolkit
import toolkit.distributed.rpc as rpc
from toolkit.distributed.rpc.functions import qualified_name, resolve
from toolkit.distributed.rpc.wire import Codec, Kind, Message, decode, encode, read_header

from ._jobs import ROOT, run_job

needs_zmq = pytest.mark.skipif(not rpc.is_available(), reason="pyzmq is not installed (pip install 'pyzmq>=25')")


def test_api_before_init_rpc_raises_pytorch_error():
    message = "RPC has not been initialized. Call torch.distributed.rpc.init_rpc first."
    for call in (lambda: rpc.rpc_sync("worker1", max, args=([1],)), lambda: rpc.rpc_async("worker1", max),
                 lambda: rpc.remote("worker1", max), rpc.get_worker_info, rpc.shutdown, lambda: rpc.RRef(1)):
        with pytest.raises(RuntimeError, match=message.replace(".", r"\.")):
            call()


def test_names_and_defaults_match_torch():
    torch_rpc = pytest.importorskip("torch.distributed.rpc")
    for name in ("init_rpc", "rpc_sync", "rpc_async", "remote", "shutdown", "get_worker_info"):
        ours, theirs = inspect.signature(getattr(rpc, name)), inspect.signature(getattr(torch_rpc, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        assert [p.default for p in ours.parameters.values()] == [p.default for p in theirs.parameters.values()], name
    ours, theirs = rpc.TensorPipeRpcBackendOptions(), torch_rpc.TensorPipeRpcBackendOptions()
    assert (ours.rpc_timeout, ours.init_method, ours.num_worker_threads) == \
        (theirs.rpc_timeout, theirs.init_method, theirs.num_worker_threads)
    assert [b.name for b in rpc.BackendType] == [b.name for b in torch_rpc.BackendType]
    assert repr(rpc.WorkerInfo("worker1", 1)) == repr(torch_rpc.WorkerInfo("worker1", 1))


def test_functions_travel_by_importable_name():
    assert resolve(*qualified_name(toolkit.add)) is toolkit.add
    assert qualified_name(max) == ("builtins", "max")
    assert resolve(*qualified_name(np.add)) is np.add
    with pytest.raises(AttributeError, match="Can't pickle local object"):
        qualified_name(lambda: 1)
    with pytest.raises(TypeError, match="function should be callable"):
        qualified_name(3)


def test_tensors_travel_as_raw_frames_not_pickled():
    big = toolkit.from_numpy(np.arange(1_000_000, dtype=np.float32))
    small = toolkit.ones(2, 3, dtype=toolkit.float64).t()  # a transposed (non-contiguous) tensor
    payload, arrays = Codec().dumps(((big, {"k": [small, "text"]}), {}))
    frames = encode(Message(Kind.CALL, 7, 0, {"fn": ["builtins", "max"]}, payload, arrays), bytes(16))
    assert len(frames) == 5 and len(frames[2]) < 500  # the payload holds no tensor data
    assert np.shares_memory(np.frombuffer(frames[3], np.float32), big.numpy())  # sent from the tensor's memory
    assert bytes(frames[3]) == big.numpy().tobytes()
    received = decode(read_header([bytes(f) for f in frames]), [bytes(f) for f in frames])
    (big2, rest), kwargs = Codec().loads(received.payload, received.tensors)
    np.testing.assert_array_equal(big2.numpy(), big.numpy())
    assert rest["k"][0].shape == (3, 2) and rest["k"][0].stride() == small.stride() and rest["k"][1] == "text"
    np.testing.assert_array_equal(rest["k"][0].numpy(), small.numpy())
    assert kwargs == {} and received.id == 7 and received.meta["fn"] == ["builtins", "max"]


@needs_zmq
@pytest.mark.timeout(120)
def test_sync_async_and_python_values(tmp_path):
    out, _w1 = run_job("basic", 2, tmp_path)
    assert out["sync"] == out["sync_expected"]
    assert out["async"] == pytest.approx(out["async_expected"])
    assert out["transposed"] and out["nested_values"] and out["requires_grad"]
    assert out["python"] == 6 and out["builtin"] == 9 and out["self"] == 6
    assert out["worker_info"] == ["WorkerInfo(id=0, name=worker0)", "WorkerInfo(id=1, name=worker1)"]
    assert out["big_equal"]  # 10M floats there and back
    assert out["unknown_worker"] == {"type": "RuntimeError", "module": "builtins",
                                     "msg": "name:worker0,rank:0 could not find destination name nobody"}
    assert out["local_function"]["type"] == "AttributeError"
    assert out["late"] == "done"  # graceful shutdown waited for the outstanding call


@needs_zmq
@pytest.mark.timeout(120)
def test_callee_errors_reach_the_caller_with_their_traceback(tmp_path):
    out, _ = run_job("errors", 2, tmp_path)
    err = out["value_error"]
    assert err["type"] == "ValueError"
    assert err["msg"].startswith("On WorkerInfo(id=1, name=worker1):\nValueError('bad value 3')\nTraceback")
    assert err["msg"].startswith("On WorkerInfo(id=1, name=worker1):\nValueError('bad value 3')\nTraceback (most "
                                 "recent call last):\n  File \"" + os.path.join(ROOT, "tests", "distributed", "rpc",
                                                                             "_funcs.py"))
    assert "in raise_value_error" in err["msg"] and 'raise ValueError(f"bad value {x}")' in err["msg"]
    assert err["msg"].endswith("ValueError: bad value 3\n")
    assert (out["custom"]["type"], out["custom"]["module"]) == ("CalleeError", "tests.distributed.rpc._funcs")
    assert out["remote_error"]["type"] == "ValueError" and "bad value 7" in out["remote_error"]["msg"]
    timeout = out["timeout"]
    assert timeout["type"] == "RuntimeError"
    assert timeout["msg"].startswith("RPC ran for more than set timeout (300 ms)")
    assert "sleep_then" in timeout["msg"] and "name=worker1" in timeout["msg"]
    assert out["after_timeout"] == "still up"
    # Waiting on an RPC inside a callback (which runs on the IO thread) fails instead of deadlocking.
    assert "waited on from the RPC IO thread" in out["wait_in_callback"]["msg"]


@needs_zmq
@pytest.mark.timeout(120)
def test_rref_lifetimes_and_proxies(tmp_path):
    out = run_job("rrefs", 3, tmp_path)[0]
    assert out["to_here"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert out["identity"] == [False, "worker1", "WorkerInfo(id=1, name=worker1)", True]
    assert out["local_value"]["type"] == "RuntimeError"
    assert "can't call localValue() on user WorkerInfo(id=0, name=worker0). Call it on owner " \
           "WorkerInfo(id=1, name=worker1)" in out["local_value"]["msg"]
    # The owner counts users: worker0's RRef, then worker2's copy received as an argument.
    assert out["one_user"] == {"num_owner_rrefs": "1", "num_forks": "1"}
    assert out["held_by"] == "worker1"
    assert out["two_users"] == {"num_owner_rrefs": "1", "num_forks": "2"}
    assert out["third_party_sum"] == 10.0 and out["owner_sees_owner"]
    assert out["after_first_drop"] == {"num_owner_rrefs": "1", "num_forks": "1"}
    assert out["alive_before_last"] == [True]
    assert out["dropped"] == 1
    assert out["after_last_drop"] == {"num_owner_rrefs": "0", "num_forks": "0"}
    assert out["alive_after_last"] == [False]  # the owner freed the value
    assert (out["proxy_sync"], out["proxy_async"], out["proxy_remote"]) == (15, 16, 17)
    assert out["local_rref"] == [True, True, [1.0, 1.0], True] and out["sum_of_local"] == 2.0
    assert out["remote_to_self"] == [True, 2, 2]
    for counts in out["end_counts"].values():
        assert counts == {"num_owner_rrefs": "0", "num_forks": "0"}


@needs_zmq
@pytest.mark.timeout(120)
def test_nested_calls_do_not_deadlock(tmp_path):
    out, _ = run_job("nested", 2, tmp_path)
    assert out["path"] == ["start", "worker1", "worker0", "worker1", "worker0", "worker1", "worker0"]
    # More concurrent nested calls than each worker has threads (4).
    assert out["many"] == [[i, "worker1", "worker0", "worker1"] for i in range(8)]


@needs_zmq
@pytest.mark.timeout(120)
def test_a_worker_killed_mid_call_fails_the_callers_future(tmp_path):
    out = run_job("killed", 3, tmp_path, killed=(1,))[0]
    # rpc_timeout is 30 s: the error comes from the lost connection, not from the timeout.
    for key in ("killed", "after"):
        assert out[key]["type"] == "RuntimeError"
        assert "WorkerInfo(id=1, name=worker1)" in out[key]["msg"] and "was lost" in out[key]["msg"]
    assert "kill_self" in out["killed"]["msg"]
    assert out["others_fine"] == ["ok", "alive"]
    assert out["shutdown"]["type"] == "RuntimeError" and "worker1" in out["shutdown"]["msg"]


@needs_zmq
@pytest.mark.timeout(120)
def test_duplicate_names_are_refused_everywhere(tmp_path):
    for result in run_job("duplicate", 2, tmp_path):
        assert result["init"] == {"type": "RuntimeError", "module": "builtins",
                                  "msg": "RPC worker name same is not unique. Workers 0 and 1 share the same name."}


@needs_zmq
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI is not installed (mpirun not found)")
@pytest.mark.timeout(120)
def test_launched_by_toolkit_distributed_run_without_settings():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for var in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-m", "toolkit.distributed.run", "-n", "3",
                           os.path.join(ROOT, "tests", "distributed", "rpc", "_launched.py")],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "RESULT [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]] WorkerInfo(id=2, name=worker2)" in proc.stdout
