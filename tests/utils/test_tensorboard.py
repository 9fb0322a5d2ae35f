"""SummaryWriter against PyTorch's: the same calls must write the same records, read back by TensorBoard's reader."""

import glob
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
import torch.utils.tensorboard as ttb
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.summary.writer.record_writer import RecordWriter

import toolkit
from toolkit.utils.tensorboard import SummaryWriter, crc32c, masked_crc32c
from toolkit.utils.tensorboard._crc32c import frame_records

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def events(logdir: str) -> list:
    """Every event of every file directly in ``logdir``, in file-name order, exactly as written."""
    out = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        out += load(path)
    return out


def load(path: str) -> list:
    return [Event.FromString(r) for r in RawEventFileLoader(path).Load()]


def summaries(logdir: str) -> list:
    return [(e.step, e.summary) for e in events(logdir) if e.HasField("summary")]


def test_crc32c_known_values_and_framing_match_tensorboard(tmp_path):
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as reference

    rng = np.random.default_rng(0)
    records = [rng.bytes(n) for n in (0, 1, 7, 40, 300, 5000)]
    assert [masked_crc32c(r) for r in records] == [reference(r) for r in records]
    with open(tmp_path / "ref", "wb") as f:
        w = RecordWriter(f)
        for r in records:
            w.write(r)
    assert frame_records(records) == (tmp_path / "ref").read_bytes()
    assert frame_records([]) == b""


def _log_everything(w, np_or_tk):
    """The same calls for both writers; ``np_or_tk`` turns a numpy array into the writer's tensor type."""
    rng = np.random.default_rng(1)
    for step in range(3):
        w.add_scalar("loss/train", 1.0 / (step + 1), step)
        w.add_scalar("lr", np_or_tk(np.array(0.1 * step, dtype=np.float32)), step, new_style=True)
    w.add_scalar("precise", 1.0 / 3.0, 0, new_style=True, double_precision=True)
    w.add_histogram("weights", np_or_tk(rng.standard_normal(1000).astype(np.float32)), 0)
    w.add_histogram("auto", np_or_tk(rng.standard_normal(100)), 1, bins="auto", max_bins=5)
    w.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                        bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=2)
    w.add_image("chw_float", np_or_tk(rng.random((3, 8, 6), dtype=np.float32)), 0)
    w.add_image("hwc_uint8", np_or_tk(rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)), 0, dataformats="HWC")
    w.add_image("gray", np_or_tk(rng.random((1, 4, 4), dtype=np.float32)), 0)
    w.add_images("batch", np_or_tk(rng.random((5, 3, 4, 4), dtype=np.float32)), 0)
    w.add_images("batch_nhwc", np_or_tk(rng.integers(0, 256, (2, 4, 4, 1)).astype(np.uint8)), 0, dataformats="NHWC")
    w.add_text("notes", "hello **world**", 0)
    w.add_audio("sound", np_or_tk(np.sin(np.linspace(0, 20, 400)).astype(np.float32)), 0, sample_rate=8000)
    labels = rng.integers(0, 2, 50)
    preds = rng.random(50)
    w.add_pr_curve("pr", np_or_tk(labels), np_or_tk(preds), 0, num_thresholds=11)
    w.add_custom_scalars({"Training": {"loss": ["Multiline", ["loss/train"]],
                                       "band": ["Margin", ["loss/train", "lr", "precise"]]}})
    w.add_custom_scalars_multilinechart(["lr"], category="c", title="t")
    w.add_tensor("tensor", np_or_tk(np.arange(6, dtype=np.int64).reshape(2, 3)), 0)


def test_same_records_as_torch(tmp_path):
    import torch

    with SummaryWriter(str(tmp_path / "tk")) as w:
        _log_everything(w, toolkit.from_numpy)
    with ttb.SummaryWriter(str(tmp_path / "pt")) as w:
        _log_everything(w, torch.from_numpy)
    ours, theirs = summaries(str(tmp_path / "tk")), summaries(str(tmp_path / "pt"))
    assert len(ours) == len(theirs) == 21
    for (s1, a), (s2, b) in zip(ours, theirs):
        assert s1 == s2
        assert a == b, (a.value[0].tag, b.value[0].tag)
    first = events(str(tmp_path / "tk"))[0]
    assert first.file_version == "brain.Event:2"


def test_add_scalars_hparams_and_embedding_layout_match_torch(tmp_path):
    import torch

    def log(w, conv):
        w.add_scalars("run/acc", {"train": 0.5, "val": 0.25}, 3)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "flag": True, "bs": 32}, {"hp/acc": 0.9}, run_name="hp",
                      hparam_domain_discrete={"opt": ["sgd", "adam"]})
        mat = np.arange(12, dtype=np.float32).reshape(4, 3)
        imgs = np.random.default_rng(0).random((4, 3, 2, 2), dtype=np.float32)
        w.add_embedding(conv(mat), metadata=["a", "b", "c", "d"], label_img=conv(imgs), global_step=1, tag="emb/x")
        w.add_embedding(conv(mat), metadata=[[1, "x"], [2, "y"], [3, "z"], [4, "w"]], metadata_header=["n", "s"])

    with SummaryWriter(str(tmp_path / "tk")) as w:
        log(w, toolkit.from_numpy)
    with ttb.SummaryWriter(str(tmp_path / "pt")) as w:
        log(w, torch.from_numpy)
    for sub in ("run_acc_train", "run_acc_val", "hp"):
        assert sorted(os.listdir(tmp_path / "tk" / sub)) != []
        assert summaries(str(tmp_path / "tk" / sub)) == summaries(str(tmp_path / "pt" / sub)), sub
    tk_files = sorted(p.relative_to(tmp_path / "tk").as_posix() for p in (tmp_path / "tk").rglob("*")
                      if p.is_file() and "tfevents" not in p.name)
    pt_files = sorted(p.relative_to(tmp_path / "pt").as_posix() for p in (tmp_path / "pt").rglob("*")
                      if p.is_file() and "tfevents" not in p.name)
    assert tk_files == pt_files
    assert "00001/emb%2fx/sprite.png" in tk_files
    for f in tk_files:
        assert (tmp_path / "tk" / f).read_bytes() == (tmp_path / "pt" / f).read_bytes(), f


def test_errors_match_torch(tmp_path):
    w = SummaryWriter(str(tmp_path))
    with pytest.raises(AssertionError, match="Tensor should contain one element"):
        w.add_scalar("x", np.ones(3))
    with pytest.raises(ValueError, match="len\\(bucket_limits\\) != len\\(bucket_counts\\)"):
        w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1.0], [1, 2])
    with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
        w.add_hparams([], {})
    with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
        w.add_image("i", np.zeros((2, 2)), dataformats="CHW")
    with pytest.raises(ValueError, match="The input has no element"):
        w.add_histogram("e", np.zeros(0))
    w.close()
    w.close()  # a second close is ignored, as in PyTorch


def test_default_log_dir_file_name_suffix_and_purge_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp", filename_suffix=".v2", purge_step=5)
    w.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_" + socket.gethostname() + "_exp")
    assert w.get_logdir() == os.path.join("runs", run)
    (name,) = os.listdir(tmp_path / "runs" / run)
    parts = name.split(".")
    assert parts[:3] == ["events", "out", "tfevents"] and name.endswith(".v2")
    assert len(parts[3]) == 10 and abs(int(parts[3]) - time.time()) < 60
    assert f".{socket.gethostname()}.{os.getpid()}." in name
    evs = events(str(tmp_path / "runs" / run))
    assert evs[0].file_version == "brain.Event:2"
    assert evs[1].step == 5 and evs[1].file_version == "brain.Event:2"
    assert evs[2].step == 5 and evs[2].session_log.status == evs[2].session_log.START


def test_event_accumulator_reads_everything(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for i in range(5):
            w.add_scalar("a", i * 2.0, i)
        w.add_histogram("h", np.arange(10.0), 0)
        w.add_image("img", np.zeros((3, 4, 5), np.float32), 0)
        w.add_text("t", "hi", 0)
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    assert [(s.step, s.value) for s in acc.Scalars("a")] == [(i, i * 2.0) for i in range(5)]
    h = acc.Histograms("h")[0].histogram_value
    assert (h.min, h.max, h.num, h.sum) == (0.0, 9.0, 10, 45.0)
    img = acc.Images("img")[0]
    assert (img.width, img.height) == (5, 4)
    assert acc.Tensors("t/text_summary")[0].tensor_proto.string_val == [b"hi"]


def _last_file(d) -> str:
    return sorted(glob.glob(os.path.join(d, "events.out.tfevents.*")))[-1]


def test_truncated_last_record_and_crc_corruption(tmp_path):
    with SummaryWriter(str(tmp_path / "a")) as w:
        for i in range(4):
            w.add_scalar("x", float(i), i)
    path = _last_file(tmp_path / "a")
    data = open(path, "rb").read()
    with open(path, "wb") as f:  # a torn write: the last record cut in the middle
        f.write(data[:-7])
    got = [e.summary.value[0].simple_value for e in load(path) if e.HasField("summary")]
    assert got == [0.0, 1.0, 2.0]
    # flip one byte in the data of the last record: its CRC no longer matches and the reader stops before it
    corrupt = bytearray(data)
    corrupt[-6] ^= 0xFF
    with open(path, "wb") as f:
        f.write(bytes(corrupt))
    loaded = [e for e in load(path) if e.HasField("summary")]
    assert [e.summary.value[0].simple_value for e in loaded] == [0.0, 1.0, 2.0]


def test_flush_thread_and_queue(tmp_path):
    w = SummaryWriter(str(tmp_path), flush_secs=0.2, max_queue=1000)
    w.add_scalar("x", 1.0, 0)
    assert len(summaries(str(tmp_path))) == 0  # still queued
    deadline = time.time() + 5
    while not summaries(str(tmp_path)) and time.time() < deadline:
        time.sleep(0.05)
    assert len(summaries(str(tmp_path))) == 1
    w2 = SummaryWriter(str(tmp_path / "q"), max_queue=3, flush_secs=1000)
    for i in range(7):
        w2.add_scalar("y", float(i), i)
    assert len(summaries(str(tmp_path / "q"))) == 6  # two full queues written, one event waiting
    w2.flush()
    assert len(summaries(str(tmp_path / "q"))) == 7
    w.close()
    w2.close()
    w2.add_scalar("y", 8.0, 8)  # after close: ignored, not an error
    assert len(summaries(str(tmp_path / "q"))) == 7


_CHILD = """
import os, signal, sys, time
sys.path.insert(0, {root!r})
from toolkit.utils.tensorboard import SummaryWriter
w = SummaryWriter({logdir!r}, max_queue=10, flush_secs=1000)
for i in range({n}):
    w.add_scalar("x", float(i), i)
{end}
"""


def _run_child(logdir, n, end):
    code = _CHILD.format(root=ROOT, logdir=str(logdir), n=n, end=end)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)


def test_interpreter_exit_flushes(tmp_path):
    r = _run_child(tmp_path, 25, "")  # no close(): the atexit hook writes the queue
    assert r.returncode == 0, r.stderr.decode()
    assert [s.value[0].simple_value for _, s in summaries(str(tmp_path))] == [float(i) for i in range(25)]


def test_killed_process_leaves_a_readable_file(tmp_path):
    r = _run_child(tmp_path, 25, "w.flush(); w.add_scalar('x', 99.0, 99); os.kill(os.getpid(), signal.SIGKILL)")
    assert r.returncode == -9
    values = [s.value[0].simple_value for _, s in summaries(str(tmp_path))]
    assert values == [float(i) for i in range(25)]  # the flushed ones, whole; the queued one lost


def test_concurrent_writers_to_one_directory(tmp_path):
    import threading

    writers = [SummaryWriter(str(tmp_path), max_queue=5) for _ in range(3)]

    def work(k):
        for i in range(50):
            writers[k].add_scalar(f"w{k}", float(i), i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w in writers:
        w.close()
    assert len(glob.glob(os.path.join(tmp_path, "events.out.tfevents.*"))) == 3
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    for k in range(3):
        assert [s.value for s in acc.Scalars(f"w{k}")] == [float(i) for i in range(50)]


def test_add_figure(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 0)
        w.add_figure("figs", [plt.figure(figsize=(1, 1), dpi=20), plt.figure(figsize=(1, 1), dpi=20)], 1)
    (_, s1), (_, s2) = summaries(str(tmp_path))
    assert (s1.value[0].image.width, s1.value[0].image.height) == (100, 50)
    assert (s2.value[0].image.width, s2.value[0].image.height) == (40, 20)
    assert not plt.get_fignums()  # close=True closed them
