"""The wire format: one message is a list of ZeroMQ frames.

::

    [job token (16 bytes), header (JSON), payload (pickle), tensor 0 bytes, tensor 1 bytes, ...]

- The **token** is the job's random secret from the rendezvous; a message whose token differs is dropped
  before anything in it is read, so only workers of the same job can make this one unpickle.
- The **header** is JSON: the message ``kind`` (``Kind``), its ``id`` (a reply carries the request's), the sender's
  rank ``src``, ``meta`` (small per-kind fields: the function's name, RRef ids) and one ``[dtype, shape, strides]`` entry
  per tensor frame (whether a tensor requires grad travels in the payload's reference to it). JSON, so a header is safe to read before the token is trusted.
- The **payload** pickles the Python values (args, kwargs, results, errors) with every toolkit Tensor replaced by
  a reference to its frame: a tensor's bytes are never pickled, and a dense tensor is sent from its own memory
  (zero copies on the sending side; one copy on receipt, so the receiver owns writable memory).
- Other objects that need their own wire form (RRefs) hook in through ``Codec``'s ``persistent_id`` /
  ``persistent_load`` handlers.

New message kinds (distributed autograd, profiling) are new ``Kind`` values with their own handlers in the agent.
"""

from __future__ import annotations

import enum
import io
import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...factories import from_numpy
from ...tensor import Tensor

__all__ = ["Kind", "Message", "Codec", "encode", "decode", "TOKEN_BYTES"]

TOKEN_BYTES = 16


class Kind(enum.IntEnum):
    """What a message asks for; each has one handler on the receiving agent."""

    JOIN = 1  # rendezvous: a worker's name, rank and endpoint, to rank 0
    DIRECTORY = 2  # rendezvous: every worker's name and endpoint, and the job token, from rank 0
    REJECT = 3  # rendezvous failed (duplicate names): the error, from rank 0
    CALL = 10  # run a function, reply with its value
    REMOTE = 11  # run a function, keep its value in an owner RRef
    RESULT = 12  # the value a request asked for
    ERROR = 13  # the error a request raised
    RREF_FETCH = 20  # an owner RRef's value (to_here)
    RREF_FORK = 21  # a new user of an RRef, from the worker that shares it
    RREF_DELETE = 22  # a user RRef was deleted
    BARRIER_ARRIVE = 30  # shutdown: this worker's outstanding calls are done, to rank 0
    BARRIER_PROCEED = 31  # shutdown: every worker arrived, from rank 0
    BARRIER_LEAVE = 32  # shutdown: this worker got PROCEED and closes, to rank 0


@dataclass
class Message:
    kind: Kind
    id: int = 0
    src: int = -1
    meta: dict = field(default_factory=dict)
    payload: bytes = b""
    tensors: list = field(default_factory=list)  # numpy arrays, as sent or received


class Codec:
    """Pickles values with tensors out of band; ``handlers`` extend it for other objects (RRefs).

    A handler is ``(type, to_wire, from_wire, tag)``: ``to_wire(obj, context) -> plain value`` while pickling
    (``context``: what ``dumps`` was given),
    ``from_wire(value) -> obj`` while unpickling.
    """

    def __init__(self):
        self._handlers: list[tuple[type, Callable, Callable, str]] = []

    def register(self, cls: type, tag: str, to_wire: Callable, from_wire: Callable) -> None:
        self._handlers.append((cls, to_wire, from_wire, tag))

    def dumps(self, obj, to_wire_context=None) -> tuple[bytes, list[np.ndarray]]:
        """``obj`` pickled, and the arrays of the tensors it holds, in frame order."""
        buf = io.BytesIO()
        pickler = _Pickler(buf, self._handlers, to_wire_context)
        pickler.dump(obj)
        return buf.getvalue(), pickler.arrays

    def loads(self, payload: bytes, arrays: list[np.ndarray], adopt: Callable | None = None):
        """The value pickled in ``payload``; ``adopt(tensor)`` gives what stands for each tensor requiring grad
        (distributed autograd's receiving end)."""
        return _Unpickler(io.BytesIO(payload), self._handlers, arrays, adopt).load()


class _Pickler(pickle.Pickler):
    def __init__(self, buf, handlers: list, context):
        super().__init__(buf, protocol=pickle.HIGHEST_PROTOCOL)
        self.handlers, self.context, self.arrays = handlers, context, []

    def persistent_id(self, o):
        if isinstance(o, Tensor):
            self.arrays.append(_sendable(o))
            if o.requires_grad and self.context is not None:  # distributed autograd records what was sent
                self.context.requiring_grad.append(o)
            return ("T", len(self.arrays) - 1, bool(o.requires_grad))
        for cls, to_wire, _, tag in self.handlers:
            if isinstance(o, cls):
                return (tag, to_wire(o, self.context))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, buf, handlers: list, arrays: list, adopt: Callable | None):
        super().__init__(buf)
        self.by_tag = {tag: from_wire for _, _, from_wire, tag in handlers}
        self.arrays, self.adopt = arrays, adopt

    def persistent_load(self, pid):
        if pid[0] == "T":
            t = from_numpy(self.arrays[pid[1]])
            if not pid[2]:
                return t
            t.requires_grad_(True)
            return t if self.adopt is None else self.adopt(t)
        return self.by_tag[pid[0]](pid[1])


def _sendable(t: Tensor) -> np.ndarray:
    """The tensor's array in a layout whose memory can be sent as is (a dense array in any axis order)."""
    if t.device.type != "cpu":
        raise RuntimeError(f"toolkit.distributed.rpc sends tensors from host memory; got a tensor on {t.device}: "
                           "call .cpu() before sending it")
    if t.is_conj():
        t = t.resolve_conj()
    arr = t.detach().numpy()
    if arr.flags.c_contiguous or _is_dense(arr):
        return arr
    return np.ascontiguousarray(arr)


def _dense_order(arr: np.ndarray) -> list[int]:
    """The axis order, largest stride first, in which a dense ``arr`` (a transposed one) is C-contiguous."""
    return sorted(range(arr.ndim), key=lambda i: -arr.strides[i])


def _is_dense(arr: np.ndarray) -> bool:
    return arr.transpose(_dense_order(arr)).flags.c_contiguous


def _frame_of(arr: np.ndarray) -> tuple[memoryview, list[int]]:
    """The bytes to send for a dense ``arr`` (``_sendable``'s) and its strides over them, in elements."""
    dense = arr if arr.flags.c_contiguous else arr.transpose(_dense_order(arr))
    return memoryview(dense.reshape(-1)).cast("B"), [s // arr.itemsize for s in arr.strides]


def encode(msg: Message, token: bytes) -> list:
    """The frames of ``msg``: tensors' memory is referenced, not copied."""
    tensor_meta, frames = [], []
    for arr in msg.tensors:
        frame, strides = _frame_of(arr)
        tensor_meta.append([arr.dtype.str, list(arr.shape), strides])
        frames.append(frame)
    header = {"kind": int(msg.kind), "id": msg.id, "src": msg.src, "meta": msg.meta, "tensors": tensor_meta}
    return [token, json.dumps(header, separators=(",", ":")).encode(), msg.payload, *frames]


def read_header(frames: list) -> dict:
    return json.loads(bytes(frames[1].buffer if hasattr(frames[1], "buffer") else frames[1]))


def decode(header: dict, frames: list) -> Message:
    """The message of received ``frames`` (zmq Frames or bytes) whose header was read by ``read_header``."""
    arrays = []
    for (dtype, shape, strides), frame in zip(header["tensors"], frames[3:]):
        buf = frame.buffer if hasattr(frame, "buffer") else frame
        dt = np.dtype(dtype)
        flat = np.frombuffer(buf, dtype=dt).copy() if len(buf) else np.empty(0, dt)
        arrays.append(np.lib.stride_tricks.as_strided(flat, shape, [s * dt.itemsize for s in strides])
                      if flat.size else np.empty(shape, dt))
    payload = frames[2]
    payload = bytes(payload.buffer) if hasattr(payload, "buffer") else bytes(payload)
    return Message(Kind(header["kind"]), header["id"], header["src"], header["meta"], payload, arrays)
