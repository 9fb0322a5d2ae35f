"""The setup.py route: CppExtension + BuildExtension build an extension with ``setup.py build_ext --inplace``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import setuptools

from toolkit.utils.cpp_extension import BuildExtension, CppExtension, include_paths

pytestmark = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                reason="no C++ compiler on this machine")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SOURCE = r"""
#include <toolkit/extension.h>

toolkit::Tensor twice(toolkit::Tensor x) {
    toolkit::Tensor out = toolkit::empty_like(x);
    const float* p = x.data_ptr<float>();
    float* q = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) q[i] = 2 * p[i];
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice); }
"""

SETUP = """
from setuptools import setup
from toolkit.utils.cpp_extension import BuildExtension, CppExtension

setup(name="tk_twice", ext_modules=[CppExtension("tk_twice", ["twice.cpp"], extra_compile_args={"cxx": ["-O1"]})],
      cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)})
"""

CHECK = "import toolkit, tk_twice; print(tk_twice.twice(toolkit.arange(3.0)).tolist(), tk_twice.__file__)"


def test_cpp_extension_is_a_setuptools_extension_with_the_include_paths():
    ext = CppExtension("pkg.mod", ["a.cpp"], include_dirs=["mine"], extra_compile_args=["-O2"])
    assert isinstance(ext, setuptools.Extension) and ext.language == "c++"
    assert ext.include_dirs == ["mine"] + include_paths() and ext.extra_compile_args == ["-O2"]
    cls = BuildExtension.with_options(no_python_abi_suffix=True)
    assert issubclass(cls, BuildExtension)


def test_setup_py_build_ext_inplace(tmp_path):
    (tmp_path / "twice.cpp").write_text(SOURCE)
    (tmp_path / "setup.py").write_text(SETUP)
    env = dict(os.environ, PYTHONPATH=ROOT)
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "-DTORCH_EXTENSION_NAME=tk_twice" in build.stdout + build.stderr
    run = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    values, path = run.stdout.split("] ")
    assert values + "]" == "[0.0, 2.0, 4.0]"
    assert os.path.basename(path.strip()) == "tk_twice.so"  # no_python_abi_suffix
