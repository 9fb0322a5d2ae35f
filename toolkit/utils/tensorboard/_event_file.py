"""Event files: the name TensorBoard globs for, a bounded queue of serialized events, a flush thread.

Each flush frames the queued events and appends them with a single ``os.write``
on an unbuffered descriptor, so a process killed at any moment leaves whole
records behind (and at most the unflushed queue is lost); TensorBoard's reader
also skips a truncated last record, so even a torn write cannot break reading.
"""

from __future__ import annotations

import atexit
import collections
import itertools
import os
import socket
import threading
import time
import weakref

from tensorboard.compat.proto import event_pb2

from ._crc32c import frame_records

_global_uid = itertools.count()
_uid_lock = threading.Lock()
_open_writers: weakref.WeakSet = weakref.WeakSet()


def _next_uid() -> int:
    with _uid_lock:
        return next(_global_uid)


@atexit.register
def _flush_all_at_exit() -> None:
    for w in list(_open_writers):
        try:
            w.close()
        except Exception:  # exiting: a writer whose directory vanished must not hide the others
            pass


class EventFileWriter:
    """Writes serialized ``Event`` protobufs to ``<logdir>/events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``.

    ``add_event`` only queues; the queue is written when it holds ``max_queue``
    events, every ``flush_secs`` by a daemon thread, on ``flush()``, ``close()``
    and at interpreter exit.
    """

    def __init__(self, logdir: str, max_queue_size: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        self._logdir = str(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        name = "events.out.tfevents.%010d.%s.%s.%s%s" % (  # noqa: UP031  (TensorBoard's own spelling)
            time.time(), socket.gethostname(), os.getpid(), _next_uid(), filename_suffix)
        self._path = os.path.join(self._logdir, name)
        self._max_queue = max(1, int(max_queue_size))
        self._flush_secs = flush_secs
        self._queue: collections.deque = collections.deque()  # appended without a lock: deque ops are atomic
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._closed = False
        self._open()
        self.add_event(event_pb2.Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.flush()
        _open_writers.add(self)

    def _open(self) -> None:
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._closed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=_flush_loop, args=(weakref.ref(self), self._stop, self._flush_secs),
                                        name="EventFileWriterFlush", daemon=True)
        self._thread.start()

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def path(self) -> str:
        """The event file this writer appends to."""
        return self._path

    def add_event(self, event) -> None:
        """Queue an ``Event`` (or its serialized bytes)."""
        self.add_record(event if isinstance(event, bytes) else event.SerializeToString())

    def add_record(self, data: bytes) -> None:
        if self._closed:
            return
        q = self._queue
        q.append(data)
        if len(q) >= self._max_queue:
            self.flush()

    def flush(self) -> None:
        """Write every queued event to the file now."""
        with self._lock:
            q = self._queue
            if not q or self._fd is None:
                return
            batch = [q.popleft() for _ in range(len(q))]
            data = frame_records(batch)
            view = memoryview(data)
            while view:  # a regular file takes it in one call; a short write only on a full disk
                n = os.write(self._fd, view)
                view = view[n:]

    def close(self) -> None:
        """Flush, stop the flush thread and close the file; writing after close is ignored."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._stop.set()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
        _open_writers.discard(self)

    def reopen(self) -> None:
        """Append to the same file again after ``close()``."""
        if self._closed:
            self._open()
            _open_writers.add(self)


def _flush_loop(ref, stop: threading.Event, flush_secs: float) -> None:
    """Flush every ``flush_secs`` until the writer closes or is garbage-collected."""
    while not stop.wait(flush_secs):
        w = ref()
        if w is None:
            return
        try:
            w.flush()
        except OSError:
            return
        del w
