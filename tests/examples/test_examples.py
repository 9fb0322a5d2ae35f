"""PyTorch's public examples (github.com/pytorch/examples, vendored unchanged in ``programs/``) run with toolkit in
torch's place through ``python -m toolkit.as_torch``.

Each test writes the data its program reads, in the program's own on-disk format (``synthetic_data.py``), into a
temporary folder, runs the program there in a subprocess with its smallest arguments (one epoch, one batch,
``--dry-run`` where it has one), and checks that it exits 0 and prints the line that shows it finished (a test-set
line, a final loss). Nothing is downloaded. A program that fails today is ``xfail(strict=True)`` with its root cause
in toolkit, so its test fails, and says so, once it passes.

Not run: ``gcn`` (its main block downloads cora.tgz unconditionally, with no check for local files, so it cannot
run offline), ``fast_neural_style train`` (needs the pretrained VGG16 weights, a download; ``eval`` is run with a
TransformerNet checkpoint written by PyTorch itself), ``dcgan --dataset lsun`` (needs the lmdb package).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from . import synthetic_data

HERE = Path(__file__).parent
PROGRAMS = HERE / "programs"
TIMEOUT_S = 240


def run_program(script: Path, args: list[str], cwd: Path, *, library: str = "toolkit", env: dict | None = None) -> str:
    """Run ``script args`` in ``cwd`` with toolkit as torch (or, ``library="torch"``, with PyTorch itself, the
    oracle); fail with its output unless it exits 0."""
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1", **(env or {})}
    if library == "torch":
        env["OMP_NUM_THREADS"] = "1"  # PyTorch's thread pool, oversubscribed on a small shared machine, is 40x slower
    runner = ["-m", "toolkit.as_torch"] if library == "toolkit" else []
    proc = subprocess.run([sys.executable, *runner, str(script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    output = proc.stdout + proc.stderr
    shown = script.relative_to(PROGRAMS) if script.is_relative_to(PROGRAMS) else script.name
    assert proc.returncode == 0, (f"{shown} {' '.join(args)} with {library} exited "
                                  f"{proc.returncode}:\n{output[-6000:]}")
    return output


def assert_same_numbers(pattern: str, output: str, torch_output: str) -> None:
    """The numbers in the line matching ``pattern`` agree between toolkit's run and PyTorch's run of a seeded
    program. rtol 1e-3: the printed values come after a whole training step (and are printed to 4 digits)."""
    ours, theirs = re.search(pattern, output, re.MULTILINE), re.search(pattern, torch_output, re.MULTILINE)
    assert ours and theirs, f"no line matching {pattern!r}:\n{output[-2000:]}\n---\n{torch_output[-2000:]}"
    numbers = [np.array([float(v) for v in m.groups()]) for m in (ours, theirs)]
    np.testing.assert_allclose(numbers[0], numbers[1], rtol=1e-3, err_msg=f"{ours.group(0)} vs {theirs.group(0)}")


def expect(output: str, pattern: str) -> None:
    assert re.search(pattern, output, re.MULTILINE), f"no line matching {pattern!r} in the output:\n{output[-4000:]}"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def mnist_workdir(tmp_path: Path, rng) -> Path:
    """``tmp/work`` as the working folder, MNIST in ``tmp/data`` (the examples read ``../data``) and in
    ``tmp/work/data`` (mnist_forward_forward reads ``./data/``)."""
    work = tmp_path / "work"
    work.mkdir()
    synthetic_data.write_mnist(str(tmp_path / "data"), rng)
    synthetic_data.write_mnist(str(work / "data"), rng)
    return work


def xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


def test_mnist(mnist_workdir):
    out = run_program(PROGRAMS / "mnist" / "main.py",
                      ["--epochs", "1", "--dry-run", "--batch-size", "8", "--test-batch-size", "64"], mnist_workdir)
    expect(out, r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/64")


def test_mnist_rnn(mnist_workdir):
    out = run_program(PROGRAMS / "mnist_rnn" / "main.py",
                      ["--epochs", "1", "--dry-run", "--batch-size", "8", "--test-batch-size", "16"], mnist_workdir)
    expect(out, r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/64")


def test_mnist_forward_forward(mnist_workdir):
    out = run_program(PROGRAMS / "mnist_forward_forward" / "main.py",
                      ["--epochs", "1", "--no_accel", "--train_size", "32", "--test_size", "16",
                       "--log-interval", "1"], mnist_workdir)
    expect(out, r"^train error: \d")
    expect(out, r"^test error: \d")


def test_mnist_hogwild(mnist_workdir):
    out = run_program(PROGRAMS / "mnist_hogwild" / "main.py",
                      ["--epochs", "1", "--dry-run", "--num-processes", "2", "--batch-size", "8",
                       "--test-batch-size", "64"], mnist_workdir)
    expect(out, r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/64")


def test_regression(tmp_path):
    out = run_program(PROGRAMS / "regression" / "main.py", ["--epochs", "1"], tmp_path)
    expect(out, r"^Loss: \d+\.\d+ after \d+ batches")
    expect(out, r"^==> Learned function:\s+y = ")


def test_vae(mnist_workdir):
    (mnist_workdir / "results").mkdir()  # in the repository, vae/results/ exists (it holds a .gitignore)
    out = run_program(PROGRAMS / "vae" / "main.py",
                      ["--epochs", "1", "--batch-size", "64", "--no-accel"], mnist_workdir)
    expect(out, r"^====> Test set loss: \d+\.\d+")
    assert (mnist_workdir / "results" / "sample_1.png").is_file()


def test_siamese_network(mnist_workdir):
    out = run_program(PROGRAMS / "siamese_network" / "main.py",
                      ["--epochs", "1", "--dry-run", "--batch-size", "8", "--test-batch-size", "64"],
                      mnist_workdir)
    expect(out, r"^Test set: Average loss: \d+\.\d+, Accuracy: \d+/\d+")


@pytest.mark.parametrize("model", ["LSTM", "GRU", "RNN_TANH", "Transformer"])
def test_word_language_model(tmp_path, rng, model):
    """main.py trains and saves the whole model with ``torch.save``; generate.py loads it back with ``torch.load``,
    which since torch 2.6 needs TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 for a pickled module (in PyTorch as here)."""
    synthetic_data.write_wikitext(str(tmp_path / "data" / "wikitext-2"), rng)
    small = ["--emsize", "16", "--nhid", "16", "--nlayers", "1", "--bptt", "8", "--batch_size", "4"]
    args = ["--model", model, "--epochs", "1", "--dry-run", *small]
    # main.py's --onnx-export calls model.init_hidden, which its TransformerModel lacks (in PyTorch too)
    export = ["--onnx-export", "model.onnx"] if model != "Transformer" else []
    out = run_program(PROGRAMS / "word_language_model" / "main.py", [*args, *export], tmp_path)
    if export:
        _check_word_language_onnx(tmp_path)
    final = r"^\| End of training \| test loss +(\d+\.\d+) \| test ppl +(\d+\.\d+)"
    assert_same_numbers(final, out, run_program(PROGRAMS / "word_language_model" / "main.py", args, tmp_path,
                                                library="torch"))
    out = run_program(PROGRAMS / "word_language_model" / "generate.py", ["--words", "20", "--log-interval", "10"],
                      tmp_path, env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"})
    expect(out, r"Generated 10/20 words")
    assert len((tmp_path / "generated.txt").read_text().split()) == 20


def _check_word_language_onnx(workdir: Path) -> None:
    """The file main.py's ``--onnx-export`` wrote (``torch.onnx.export(model, (input, hidden), path)``) passes
    onnx's checker and gives, in ONNX Runtime, what the saved model gives for the same input (in a program run
    with toolkit as torch, which unpickles the saved model)."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    out = run_program(HERE / "check_word_language_onnx.py", [], workdir,
                      env={"PYTHONPATH": str(PROGRAMS / "word_language_model"),
                           "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"})
    expect(out, r"^ONNX Runtime matches: max difference \S+$")


def test_time_sequence_prediction_data(tmp_path):
    run_program(PROGRAMS / "time_sequence_prediction" / "generate_sine_wave.py", [], tmp_path)
    assert torch.load(tmp_path / "traindata.pt", weights_only=False).shape == (100, 1000)


def test_time_sequence_prediction(tmp_path):
    """``train.py`` on a smaller sine-wave file than generate_sine_wave.py's 100 x 1000 (written as it writes it,
    by PyTorch: ``torch.save`` of a float64 numpy array), which takes minutes on two cores. The program was written
    for torch<2.6; on later versions it runs with TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, as here."""
    x = np.arange(40) + np.random.default_rng(2).integers(-80, 80, 8).reshape(8, 1)
    torch.save(np.sin(x / 20.0).astype("float64"), tmp_path / "traindata.pt")
    env = {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
    out = run_program(PROGRAMS / "time_sequence_prediction" / "train.py", ["--steps", "1"], tmp_path, env=env)
    assert (tmp_path / "predict0.pdf").is_file()
    torch_out = run_program(PROGRAMS / "time_sequence_prediction" / "train.py", ["--steps", "1"], tmp_path,
                            library="torch", env=env)
    assert_same_numbers(r"^test loss: (\S+)", out, torch_out)


def test_dcgan(tmp_path, rng):
    synthetic_data.write_image_folder(str(tmp_path / "images"), rng, per_class=2)
    out = run_program(PROGRAMS / "dcgan" / "main.py",
                      ["--dataset", "folder", "--dataroot", "images", "--dry-run", "--batchSize", "2",
                       "--workers", "1", "--ngf", "4", "--ndf", "4", "--nz", "8", "--manualSeed", "1"], tmp_path)
    expect(out, r"^\[0/1\]\[0/2\] Loss_D: \d+\.\d+ Loss_G: \d+\.\d+")
    assert (tmp_path / "netG_epoch_0.pth").is_file() and (tmp_path / "fake_samples_epoch_000.png").is_file()


def test_super_resolution(tmp_path, rng):
    synthetic_data.write_bsds300(str(tmp_path), rng)
    folder = PROGRAMS / "super_resolution"
    out = run_program(folder / "main.py", ["--upscale_factor", "3", "--batchSize", "2", "--testBatchSize", "2",
                                           "--nEpochs", "1", "--lr", "0.001", "--threads", "0"], tmp_path)
    expect(out, r"^===> Avg\. PSNR: \d+\.\d+ dB")
    out = run_program(folder / "super_resolve.py",
                      ["--input_image", "dataset/BSDS300/images/test/16077.jpg", "--model", "model_epoch_1.pth",
                       "--output_filename", "out.png"], tmp_path)
    assert (tmp_path / "out.png").is_file()


def test_fast_neural_style_eval(tmp_path, rng):
    """``eval`` with a TransformerNet checkpoint saved by PyTorch itself (the format of the published models)."""
    folder = PROGRAMS / "fast_neural_style" / "neural_style"
    sys.path.insert(0, str(folder))
    try:
        import transformer_net  # the vendored module, with the real torch: it writes a real checkpoint
    finally:
        sys.path.remove(str(folder))
    torch.manual_seed(0)
    torch.save(transformer_net.TransformerNet().state_dict(), tmp_path / "candy.pth")
    synthetic_data.write_jpeg(str(tmp_path / "amber.jpg"), rng, (24, 20))
    run_program(folder / "neural_style.py", ["eval", "--content-image", "amber.jpg", "--model", "candy.pth",
                                             "--output-image", "amber-candy.jpg"], tmp_path)
    assert (tmp_path / "amber-candy.jpg").is_file()


def test_imagenet(tmp_path, rng):
    for split in ("train", "val"):
        synthetic_data.write_image_folder(str(tmp_path / "sample" / split), rng, per_class=1, size=(64, 48))
    out = run_program(PROGRAMS / "imagenet" / "main.py",
                      ["--epochs", "1", "-a", "resnet18", "-b", "2", "-j", "0", "--print-freq", "1", "sample/"],
                      tmp_path)
    expect(out, r"^ \*\s+Acc@1 \d+\.\d+ Acc@5 \d+\.\d+")
    assert (tmp_path / "checkpoint.pth.tar").is_file()


def test_gat(tmp_path, rng):
    synthetic_data.write_cora(str(tmp_path / "cora"), rng)
    args = ["--epochs", "1", "--dry-run", "--hidden-dim", "8", "--num-heads", "2"]
    out = run_program(PROGRAMS / "gat" / "main.py", args, tmp_path)
    assert_same_numbers(r"^Test set results: loss (\d+\.\d+) accuracy (\d+\.\d+)", out,
                        run_program(PROGRAMS / "gat" / "main.py", args, tmp_path, library="torch"))


@pytest.mark.skip(reason="gcn/main.py downloads cora.tgz unconditionally (no check for local files): needs network")
def test_gcn():
    pass
