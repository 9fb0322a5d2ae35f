"""The slides' OpenCV extension (extensions/warp_perspective): a tensor's memory wrapped in a cv::Mat,
cv::warpPerspective'd, returned as a new tensor; built with ``load`` and with ``setup.py``, and (its twin) the
same extension.cpp built against PyTorch.

The expected image is OpenCV's Python binding's where ``cv2`` is installed, else the example's numpy warp;
an integer translation checks the numpy warp itself against plain slicing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import toolkit
from tests.conftest import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "extensions", "warp_perspective")
FILES = ["extension.cpp", "setup.py", "opencv_flags.py"]


def _missing() -> str | None:
    """What this machine lacks to build the extension, or None."""
    if shutil.which("c++") is None and shutil.which("g++") is None:
        return "no C++ compiler on this machine"
    if importlib.util.find_spec("pybind11") is None:
        return "pybind11 is not installed (pip install toolkit[cpp])"
    sys.path.insert(0, EXAMPLE)
    try:
        from opencv_flags import OpenCVMissing, opencv_flags
    finally:
        sys.path.remove(EXAMPLE)
    try:
        opencv_flags()
    except OpenCVMissing as e:
        return str(e)
    return None


MISSING = _missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.fixture(scope="module")
def warp(tmp_path_factory):
    """The example module (extensions/warp_perspective/warp.py), its extension built in a fresh folder."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLKIT_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
    spec = importlib.util.spec_from_file_location("warp_perspective_example", os.path.join(EXAMPLE, "warp.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build()
    yield module
    mp.undo()


@pytest.fixture(scope="module")
def inputs(warp):
    return toolkit.from_numpy(warp.synthesized_image()), toolkit.from_numpy(warp.homography())


def test_compute_matches_opencv_warp_perspective(warp, inputs):
    image, matrix = inputs
    output = warp.build().compute(image, matrix)
    assert isinstance(output, toolkit.Tensor)
    assert output.shape == (64, 64) and output.dtype == toolkit.float32
    expected, _ = warp.opencv_reference(image.numpy(), matrix.numpy())
    assert_close(output, toolkit.from_numpy(expected), rtol=0, atol=1e-5)
    covered = (expected != 0).mean()
    assert 0.5 < covered < 1.0  # the warp lands inside and outside the source: both paths are compared


def test_numpy_reference_is_a_plain_shift_for_an_integer_translation(warp, inputs):
    image, _ = inputs
    shift = np.array([[1, 0, -10], [0, 1, -20], [0, 0, 1]], dtype=np.float32)  # dst(x, y) = src(x + 10, y + 20)
    expected = image.numpy()[20:84, 10:74]
    assert np.array_equal(warp.reference(image.numpy(), shift), expected)
    assert np.array_equal(warp.build().compute(image, toolkit.from_numpy(shift)).numpy(), expected)


def test_input_is_not_copied_and_output_is_new_memory(warp, inputs):
    ext = warp.build()
    image, matrix = inputs[0].clone(), inputs[1]
    assert ext.data_address(image) == image.data_ptr()
    assert ext.data_address(matrix) == matrix.data_ptr()
    view = image[3:, 5:]
    assert ext.data_address(view) == view.data_ptr()  # a view with an offset arrives as itself too
    before = image.clone()
    output = ext.compute(image, matrix)
    assert output.data_ptr() != image.data_ptr()
    assert toolkit.equal(image, before)  # the input is read, not written
    kept = output.clone()
    image.mul_(2)
    assert toolkit.equal(output, kept)  # the result owns its memory


@pytest.mark.parametrize("image, matrix, message", [
    (np.zeros((8, 8)), np.eye(3, dtype=np.float32), "image must be float32, got Double"),
    (np.zeros((8, 8), np.float32), np.eye(3), "warp must be float32, got Double"),
    (np.zeros((8, 8), np.float32), np.eye(3, dtype=np.int32), "warp must be float32, got Int"),
    (np.zeros((8, 8), np.float32), np.zeros((2, 3), np.float32), "warp must be a 3x3 matrix, got 2x3"),
    (np.zeros((8, 8), np.float32), np.zeros(9, np.float32), "warp must be a 3x3 matrix, got 1-D tensor"),
    (np.zeros((2, 8, 8), np.float32), np.eye(3, dtype=np.float32), "image must be 2-D (height, width), got 3"),
])
def test_bad_input_is_refused_clearly(warp, image, matrix, message):
    with pytest.raises(RuntimeError, match="^" + re.escape(f"compute: {message}")):
        warp.build().compute(toolkit.from_numpy(image), toolkit.from_numpy(matrix))


def test_non_contiguous_image_is_refused(warp, inputs):
    image, matrix = inputs
    with pytest.raises(RuntimeError, match="image must be contiguous"):
        warp.build().compute(image.t(), matrix)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        warp.build().compute(image.numpy(), matrix)  # a numpy array is not a tensor


# ------------------------------------------------------------------------------------------------ subprocesses
RUN = """
import sys
import numpy as np
import {lib} as lib
{build}
image, matrix = (lib.from_numpy(np.load(name)) for name in ("image.npy", "warp.npy"))
assert ext.data_address(image) == image.data_ptr()
np.save("output.npy", ext.compute(image, matrix).numpy())
try:
    ext.compute(image.double(), matrix)
except RuntimeError as e:
    print(str(e).splitlines()[0])
"""


def _run(folder, lib: str, build: str) -> tuple[np.ndarray, str]:
    """Run RUN in ``folder`` (which holds the inputs): the output image and the bad-dtype error's first line."""
    (folder / "run.py").write_text(RUN.format(lib=lib, build=build))
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "run.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return np.load(folder / "output.npy"), proc.stdout.strip().splitlines()[-1]


def _example_copy(folder, inputs) -> None:
    for name in FILES:
        shutil.copy(os.path.join(EXAMPLE, name), folder / name)
    np.save(folder / "image.npy", inputs[0].numpy())
    np.save(folder / "warp.npy", inputs[1].numpy())


def test_setup_py_route_builds_the_same_extension(warp, inputs, tmp_path):
    _example_copy(tmp_path, inputs)
    env = dict(os.environ, PYTHONPATH=ROOT)
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "-I/" in build.stdout + build.stderr and "opencv" in build.stdout + build.stderr
    output, error = _run(tmp_path, "toolkit", "import extension as ext")
    assert np.array_equal(output, warp.build().compute(*inputs).numpy())
    assert error == "compute: image must be float32, got Double"


TORCH_BUILD = """
from torch.utils.cpp_extension import load
sys.path.insert(0, ".")
from opencv_flags import opencv_flags
includes, library_dirs, libraries = opencv_flags()
ext = load(name="extension", sources="extension.cpp", extra_cflags=["-O2"], extra_include_paths=includes,
           extra_ldflags=[f"-L{d}" for d in library_dirs] + [f"-l{l}" for l in libraries],
           build_directory=".")
"""


def test_torch_builds_the_same_source_with_the_same_results(warp, inputs, tmp_path):
    """extension.cpp's torch branch (the slides' code) built by torch.utils.cpp_extension: identical pixels."""
    torch_cpp = pytest.importorskip("torch.utils.cpp_extension")
    if not torch_cpp.is_ninja_available():
        pytest.skip("torch.utils.cpp_extension.load needs ninja, which is not installed")
    _example_copy(tmp_path, inputs)
    output, error = _run(tmp_path, "torch", TORCH_BUILD)
    assert np.array_equal(output, warp.build().compute(*inputs).numpy())
    assert error == "compute: image must be float32, got Double"
