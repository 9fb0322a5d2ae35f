"""``SummaryWriter``: PyTorch's TensorBoard logging API, writing event files TensorBoard reads."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from google.protobuf import text_format
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

from . import _embedding as E
from . import _summary as S
from ._convert import figure_to_image, make_np
from ._event_file import EventFileWriter
from ._graph import graph
from ._hparams import hparams

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Stamps events with wall time and step and hands them to an ``EventFileWriter`` for one directory."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """A GraphDef event, then its run metadata tagged ``step1`` (what the Graphs tab lists)."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        trm = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


def _default_bins() -> list:
    """TensorFlow's default histogram buckets: ±1e-12 growing by 10% up to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


class SummaryWriter:
    """Writes scalars, histograms, images, text, graphs, embeddings and more to ``log_dir`` for TensorBoard.

    Example::

        >>> with SummaryWriter("runs/exp1") as w:
        ...     for step in range(100):
        ...         w.add_scalar("loss/train", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = ""):
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    # -- scalars ------------------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        summary = S.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """One run per key (``<log_dir>/<main_tag>_<key>``), each with the tag ``main_tag``: one chart, many lines."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(fw_tag, self.max_queue, self.flush_secs,
                                                           self.filename_suffix)
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag: str, tensor, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(S.tensor_proto(tag, tensor), global_step, walltime)

    # -- distributions ------------------------------------------------------------------------
    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(S.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None) -> None:
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = S.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- images, audio, text --------------------------------------------------------------------
    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        self._get_file_writer().add_summary(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        self._get_file_writer().add_summary(S.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_image_with_boxes(self, tag: str, img_tensor, box_tensor, global_step=None, walltime=None, rescale=1,
                             dataformats: str = "CHW", labels=None) -> None:
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None
        summary = S.image_boxes(tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats, labels=labels)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, tiled) rendered to an image."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def add_audio(self, tag: str, snd_tensor, global_step=None, sample_rate: int = 44100, walltime=None) -> None:
        self._get_file_writer().add_summary(S.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(S.text(tag, text_string), global_step, walltime)

    # -- graph ------------------------------------------------------------------------------------
    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """The model's traced graph for the Graphs tab: ops with shapes, module scopes, fusion groups.

        Inputs and outputs may nest tuples, lists, dicts and None; ``use_strict_trace``
        is accepted for PyTorch's signature (containers are always allowed here).
        """
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    # -- embeddings ---------------------------------------------------------------------------------
    @staticmethod
    def _encode(rawstr: str) -> str:
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag: str = "default",
                      metadata_header=None) -> None:
        """Projector files under ``<log_dir>/<step:05d>/<tag>`` and an entry in ``projector_config.pbtxt``."""
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
            else:
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            E.make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            E.make_sprite(label_img, save_path)
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        E.make_mat(mat, save_path)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([E.get_embedding_info(metadata, label_img, subdir, global_step, tag)])
        E.write_pbtxt(self._get_file_writer().get_logdir(), text_format.MessageToString(self._projector_config))

    # -- curves, layouts, hyperparameters, meshes ---------------------------------------------------------
    def add_pr_curve(self, tag: str, labels, predictions, global_step=None, num_thresholds: int = 127, weights=None,
                     walltime=None) -> None:
        labels, predictions = make_np(labels), make_np(predictions)
        summary = S.pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds: int = 127,
                         weights=None, walltime=None) -> None:
        summary = S.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                 false_negative_counts, precision, recall, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category: str = "default", title: str = "untitled") -> None:
        self._get_file_writer().add_summary(S.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category: str = "default", title: str = "untitled") -> None:
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._get_file_writer().add_summary(S.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout: dict) -> None:
        self._get_file_writer().add_summary(S.custom_scalars(layout))

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """One sub-run (``run_name``, default the time) with the hparams summaries and each metric as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, ssi, sei):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_mesh(self, tag: str, vertices, colors=None, faces=None, config_dict=None, global_step=None,
                 walltime=None) -> None:
        self._get_file_writer().add_summary(S.mesh(tag, vertices, colors, faces, config_dict), global_step, walltime)

    # -- lifetime ---------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write everything queued in every run directory to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self) -> None:
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()
