"""ZeroMQ transport: one ROUTER socket receives everything sent to this worker; one DEALER per peer sends.

All sockets live on one IO thread (ZeroMQ sockets are not thread-safe): other threads hand it work through a
queue and wake it through a pipe. It polls the ROUTER, the wake-up pipe and a monitor socket per DEALER. A DEALER
whose TCP connection closes (the peer process died, or stopped answering ZeroMQ's heartbeats) reports the peer
lost, so the agent can fail what waits on it instead of hanging.
"""

from __future__ import annotations

import os
import queue
import threading
import traceback
from collections.abc import Callable

import zmq
from zmq.utils.monitor import recv_monitor_message

__all__ = ["Transport"]

HEARTBEAT_IVL_MS = 1000
HEARTBEAT_TIMEOUT_MS = 10000
LINGER_MS = 2000


class Transport:
    """Sends frames to peers by rank and calls ``on_message(frames)`` for each message received.

    ``on_peer_lost(rank)`` is called once when an established connection to ``rank`` closes; ``tick()`` runs on
    every loop and returns how long (seconds) the loop may sleep before calling it again.
    """

    def __init__(self, on_message: Callable[[list], None], on_peer_lost: Callable[[int], None],
                 tick: Callable[[], float]):
        self._on_message, self._on_peer_lost, self._tick = on_message, on_peer_lost, tick
        self._ctx = zmq.Context()
        self._router = self._ctx.socket(zmq.ROUTER)
        self._router.setsockopt(zmq.LINGER, 0)
        self._dealers: dict[int, zmq.Socket] = {}
        self._monitors: dict[zmq.Socket, int] = {}
        self._connected: set[int] = set()
        self._ops: queue.SimpleQueue = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- set-up (before start) ---------------------------------------------------------------------------
    def bind(self, host: str, port: int = 0) -> str:
        """Bind the ROUTER on ``host:port`` (a free port when 0) and return its endpoint ``tcp://host:port``."""
        if port:
            self._router.bind(f"tcp://{host}:{port}")
        else:
            port = self._router.bind_to_random_port(f"tcp://{host}")
        return f"tcp://{host}:{port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="rpc-io", daemon=True)
        self._thread.start()

    # -- any thread --------------------------------------------------------------------------------------
    def is_io_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def connect(self, rank: int, endpoint: str) -> None:
        """Open the DEALER to ``rank`` at ``endpoint`` (once; later calls are ignored)."""
        self._submit(("connect", rank, endpoint))

    def send(self, rank: int, frames: list) -> None:
        """Queue ``frames`` to ``rank``; messages to one peer leave in the order they were queued."""
        self._submit(("send", rank, frames))

    def close(self) -> None:
        """Send what is queued, then close every socket (waiting up to a linger period for delivery)."""
        if self._thread is None:
            self._router.close(0)
            self._ctx.term()
            return
        if not self._thread.is_alive():
            return  # already stopped (and its sockets closed)
        self._submit(("stop",))
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def _submit(self, op) -> None:
        self._ops.put(op)
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass  # the pipe is full: the IO thread is already due to wake
        except OSError:
            if not self._stopping:
                raise  # else the IO thread has closed the pipe: nothing more is sent

    # -- the IO thread -----------------------------------------------------------------------------------
    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._wake_r, zmq.POLLIN)
        try:
            while not self._stopping:
                try:
                    self._turn(poller)
                except Exception:  # noqa: BLE001 - one failure (a bad message) must not stop the worker's IO
                    traceback.print_exc()
        finally:
            self._shutdown_sockets()

    def _turn(self, poller: zmq.Poller) -> None:
        timeout = self._tick()
        for sock, _ in poller.poll(timeout=max(0, int(timeout * 1000))):
            if sock is self._router:
                self._drain_router()
            elif sock == self._wake_r:
                os.read(self._wake_r, 65536)
                self._drain_ops(poller)
            else:
                self._monitor_event(sock)

    def _drain_router(self) -> None:
        for _ in range(256):  # then let the other sockets have a turn
            try:
                frames = self._router.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            self._on_message(frames[1:])  # frames[0] is the sender's routing id

    def _queued_ops(self):
        while True:
            try:
                yield self._ops.get_nowait()
            except queue.Empty:
                return

    def _drain_ops(self, poller: zmq.Poller) -> None:
        for op in self._queued_ops():
            if op[0] == "send":
                self._send_now(op[1], op[2])
            elif op[0] == "connect":
                self._open_dealer(op[1], op[2], poller)
            elif op[0] == "stop":
                for late in self._queued_ops():  # send what was queued before close(); connect no more
                    if late[0] == "send":
                        self._send_now(late[1], late[2])
                self._stopping = True
                return

    def _send_now(self, rank: int, frames: list) -> None:
        sock = self._dealers.get(rank)
        if sock is not None:  # else the peer was never connected: the agent fails the call by its timeout
            sock.send_multipart(frames, copy=False)

    def _open_dealer(self, rank: int, endpoint: str, poller: zmq.Poller) -> None:
        if rank in self._dealers:
            return
        sock = self._ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, LINGER_MS)
        sock.setsockopt(zmq.SNDHWM, 0)  # never drop or block: the agent bounds work by its timeouts
        sock.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        sock.setsockopt(zmq.IMMEDIATE, 0)
        monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        poller.register(monitor, zmq.POLLIN)
        self._monitors[monitor] = rank
        sock.connect(endpoint)
        self._dealers[rank] = sock

    def _monitor_event(self, monitor: zmq.Socket) -> None:
        rank = self._monitors[monitor]
        while True:
            try:
                event = recv_monitor_message(monitor, zmq.NOBLOCK)["event"]
            except zmq.Again:
                return
            if event == zmq.EVENT_CONNECTED:
                self._connected.add(rank)
            elif event == zmq.EVENT_DISCONNECTED and rank in self._connected:
                self._connected.discard(rank)
                self._on_peer_lost(rank)

    def _shutdown_sockets(self) -> None:
        for sock in self._dealers.values():
            sock.disable_monitor()
        for monitor in self._monitors:
            monitor.close(0)
        for sock in self._dealers.values():
            sock.close()
        self._router.close(0)
        os.close(self._wake_r)
        os.close(self._wake_w)
        self._ctx.term()
