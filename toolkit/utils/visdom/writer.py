"""``VisdomWriter``: ``add_scalar``/``add_image``/``add_histogram``/``add_text``/``add_figure`` onto visdom windows.

Messages are built with the visdom client (in its ``send=False`` mode, which
only returns the JSON it would post) and posted by one sender thread from a
bounded queue, so logging never blocks or crashes training: a full queue
drops the message, and an unreachable server gives one warning and drops
what cannot be sent (retrying after ``retry_secs``).
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
import urllib.error
import urllib.request
import warnings
from datetime import datetime

import numpy as np

from ..tensorboard._convert import convert_to_HWC, make_np

_STOP = object()
# A small image is scaled up (by a whole factor) until its longer side reaches this many pixels, and its window
# gets room for the caption bar visdom draws above the image, so neither hides the other.
_MIN_IMAGE_SIDE = 256
_CAPTION_ROOM = 40


def _image_window_size(height: int, width: int) -> dict:
    """visdom ``opts`` width/height for an image window: the image (small ones enlarged) plus its caption bar."""
    scale = max(1, -(-_MIN_IMAGE_SIDE // max(height, width, 1)))
    return {"width": width * scale, "height": height * scale + _CAPTION_ROOM}


def markdown_to_html(text: str) -> str:
    """``text`` as HTML from its markdown (tables, fenced code); raw HTML in it is shown as text, not run."""
    import markdown  # optional: markdown

    md = markdown.Markdown(extensions=["tables", "fenced_code"])
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md.convert(text)


class VisdomWriter:
    """Live plots of the ``SummaryWriter`` calls: one visdom environment per run, one window per tag.

    Example::

        >>> w = VisdomWriter(port=8097)            # env "<date>_<host>"
        >>> for step in range(100):
        ...     w.add_scalar("loss", 1.0 / (step + 1), step)
        >>> w.close()
    """

    def __init__(self, env: str | None = None, server: str = "http://localhost", port: int = 8097,
                 base_url: str = "", comment: str = "", max_queue: int = 1000, timeout: float = 5.0,
                 retry_secs: float = 5.0):
        import visdom  # optional: visdom

        if not env:
            env = datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment
        self.env = env
        self.url = f"{server}:{port}{base_url}"
        self.timeout = timeout
        self.retry_secs = retry_secs
        self.dropped = 0
        self._builder = visdom.Visdom(server=server, port=port, base_url=base_url, env=env, send=False,
                                      use_incoming_socket=False)
        self._windows: set = set()
        self._steps: dict = {}
        self._traces: dict = {}
        self._queue: queue.Queue = queue.Queue(max_queue)
        self._warned = False
        self._down_until = 0.0
        self._closed = False
        self._thread = threading.Thread(target=self._send_loop, name="VisdomWriterSender", daemon=True)
        self._thread.start()

    # -- sending -------------------------------------------------------------------------------------
    def _enqueue(self, built) -> None:
        if self._closed:
            return
        msg, endpoint = built
        try:
            self._queue.put_nowait((endpoint, msg))
        except queue.Full:
            self.dropped += 1

    def _post(self, endpoint: str, msg: dict) -> None:
        req = urllib.request.Request(f"{self.url}/{endpoint}", data=json.dumps(msg).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            r.read()

    def _send_loop(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                if time.monotonic() < self._down_until:
                    self.dropped += 1
                    continue
                try:
                    self._post(*item)
                except (OSError, urllib.error.URLError) as e:
                    self.dropped += 1
                    self._down_until = time.monotonic() + self.retry_secs
                    if not self._warned:
                        self._warned = True
                        warnings.warn(f"VisdomWriter: cannot reach the visdom server at {self.url} ({e}); "
                                      "messages that cannot be sent are dropped", RuntimeWarning, stacklevel=1)
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every queued message was sent (or dropped)."""
        if not self._closed:
            self._queue.join()

    def close(self) -> None:
        """Send what is queued, then stop the sender thread."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout=self.timeout + 1)

    def __enter__(self) -> VisdomWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- logging calls ---------------------------------------------------------------------------------
    def _step(self, key: str, global_step) -> float:
        if global_step is None:
            global_step = self._steps.get(key, -1) + 1
        self._steps[key] = global_step
        return float(global_step)

    def _line(self, win: str, name: str, value: float, step: float) -> None:
        X, Y = np.array([step]), np.array([value])
        traces = self._traces.setdefault(win, set())
        if win not in self._windows:
            built = self._builder.line(Y=Y, X=X, win=win, opts={"title": win, "legend": [name], "showlegend": True})
            self._windows.add(win)
        else:
            built = self._builder.line(Y=Y, X=X, win=win, update="append", name=name)
        traces.add(name)
        self._enqueue(built)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None) -> None:
        """Append (step, value) to the line window ``tag``."""
        value = float(make_np(scalar_value).reshape(-1)[0]) if not isinstance(scalar_value, (int, float)) \
            else float(scalar_value)
        self._line(tag, tag, value, self._step(tag, global_step))

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """One window ``main_tag`` with one line per key."""
        step = self._step(main_tag, global_step)
        for tag, v in tag_scalar_dict.items():
            value = float(v) if isinstance(v, (int, float)) else float(make_np(v).reshape(-1)[0])
            self._line(main_tag, tag, value, step)

    def _image(self, tag: str, hwc: np.ndarray, global_step) -> None:
        scale = 1.0 if hwc.dtype == np.uint8 else 255.0
        chw = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8).transpose(2, 0, 1) / 255.0
        step = self._step(tag, global_step)
        self._windows.add(tag)
        opts = {"title": tag, "caption": f"step {int(step)}", **_image_window_size(*hwc.shape[:2])}
        self._enqueue(self._builder.image(chw, win=tag, opts=opts))

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """Show the image in window ``tag`` (uint8 as is, floats in [0, 1] scaled), replacing the last one."""
        self._image(tag, convert_to_HWC(make_np(img_tensor), dataformats), global_step)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """Show a batch tiled into one grid, as ``SummaryWriter.add_images`` does."""
        self._image(tag, convert_to_HWC(make_np(img_tensor), dataformats), global_step)

    def add_histogram(self, tag: str, values, global_step=None, bins=30, walltime=None, max_bins=None) -> None:
        """A histogram window ``tag`` of the values at this step (``bins``: a count; 'tensorflow' means 30)."""
        arr = make_np(values).astype(np.float64).reshape(-1)
        numbins = bins if isinstance(bins, int) else 30
        if max_bins is not None:
            numbins = min(numbins, max_bins)
        step = self._step(tag, global_step)
        self._windows.add(tag)
        opts = {"title": f"{tag} (step {int(step)})", "numbins": max(1, min(numbins, arr.size))}
        self._enqueue(self._builder.histogram(X=arr, win=tag, opts=opts))

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Append the text to the text window ``tag``, its markdown rendered as TensorBoard's Text tab renders it."""
        self._step(tag, global_step)
        append = tag in self._windows
        self._windows.add(tag)
        self._enqueue(self._builder.text(markdown_to_html(text_string), win=tag, opts={"title": tag}, append=append))

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure as a visdom ``matplot`` (SVG) window ``tag``; a list of figures is tiled."""
        import matplotlib.pyplot as plt  # optional: matplotlib

        self._step(tag, global_step)
        self._windows.add(tag)
        if isinstance(figure, list):
            from ..tensorboard._convert import figure_to_image  # optional: needs tensorboard

            self._image(tag, convert_to_HWC(figure_to_image(figure, close), "NCHW"), global_step)
            return
        self._enqueue(self._builder.matplot(figure, win=tag, opts={"title": tag}))
        if close:
            plt.close(figure)
