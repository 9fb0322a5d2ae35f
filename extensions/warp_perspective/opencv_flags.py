"""OpenCV's compiler and linker flags for the warp extension, from ``pkg-config opencv4``.

The include folders come from ``pkg-config --cflags``. Of the libraries ``pkg-config --libs`` lists (every
OpenCV module, some pulling in Qt or HDF5 when loaded), only the two that ``cv::warpPerspective`` needs are
linked, ``opencv_imgproc`` and ``opencv_core``, from the folders pkg-config names.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess

__all__ = ["OpenCVMissing", "opencv_flags"]

#: The OpenCV libraries cv::warpPerspective lives in.
LIBRARIES = ["opencv_imgproc", "opencv_core"]


class OpenCVMissing(RuntimeError):
    """pkg-config or OpenCV's development files (Debian's libopencv-dev) are not installed."""


def _pkg_config(*args: str) -> list[str]:
    if shutil.which("pkg-config") is None:
        raise OpenCVMissing("pkg-config is not installed (Debian: apt-get install pkg-config libopencv-dev)")
    proc = subprocess.run(["pkg-config", *args, "opencv4"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OpenCVMissing("OpenCV's development files are not installed: `pkg-config opencv4` failed "
                            f"({(proc.stderr.strip().splitlines() or ['no output'])[-1]}); Debian: apt-get install libopencv-dev")
    return shlex.split(proc.stdout)


def opencv_flags() -> tuple[list[str], list[str], list[str]]:
    """(include folders, library folders, library names) for building against OpenCV 4."""
    includes = [f[2:] for f in _pkg_config("--cflags-only-I") if f.startswith("-I")]
    library_dirs = [f[2:] for f in _pkg_config("--libs-only-L") if f.startswith("-L")]
    return includes, library_dirs, list(LIBRARIES)
