"""toolkit.utils.cpp_extension: load_inline's bindings, the tensor header, the build cache and build errors.

Every build goes to a fresh temporary folder. The cache tests count compiler runs with a ``$CXX`` wrapper
that logs each call before running the real compiler.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.utils import cpp_extension

CXX = shutil.which("c++") or shutil.which("g++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SOURCE = r"""
toolkit::Tensor scale(toolkit::Tensor x, double a) {
    TOOLKIT_CHECK(x.is_contiguous(), "x must be contiguous");
    toolkit::Tensor out = toolkit::empty_like(x);
    TOOLKIT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale", [&] {
        const scalar_t* p = x.data_ptr<scalar_t>();
        scalar_t* q = out.data_ptr<scalar_t>();
        for (int64_t i = 0; i < x.numel(); ++i) q[i] = p[i] * a;
    });
    return out;
}
void fill_(toolkit::Tensor t, double v) {
    TOOLKIT_CHECK_VALUE(t.scalar_type() == toolkit::kDouble, "fill_ wants float64, got ", toString(t.scalar_type()));
    double* p = t.data_ptr<double>();
    for (int64_t i = 0; i < t.size(0); ++i) p[i * t.stride(0)] = v;
}
std::vector<int64_t> sizes(toolkit::Tensor t) { return t.sizes(); }
std::vector<int64_t> strides(toolkit::Tensor t) { return t.strides(); }
int64_t size_at(toolkit::Tensor t, int64_t d) { return t.size(d); }
std::vector<toolkit::Tensor> pair(std::vector<int64_t> shape) {
    return {toolkit::zeros(shape, toolkit::kLong), toolkit::empty(shape, toolkit::kFloat)};
}
"""
FUNCTIONS = {"scale": "x times a", "fill_": "fill the first dimension", "sizes": "", "strides": "",
             "size_at": "", "pair": ""}


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    return cpp_extension.load_inline("tk_inline_ops", SOURCE, functions=FUNCTIONS,
                                     build_directory=str(tmp_path_factory.mktemp("inline")))


def _counting_compiler(folder) -> tuple[str, str]:
    """A ``$CXX`` that appends a line to a log on every run, then runs the real compiler."""
    log = os.path.join(folder, "compiler.log")
    path = os.path.join(folder, "counting-c++")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\necho run >> "{log}"\nexec "{CXX}" "$@"\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path, log


def _runs(log: str) -> int:
    if not os.path.exists(log):
        return 0
    with open(log) as f:
        return len(f.read().splitlines())


# ------------------------------------------------------------------------------------------------ load_inline
def test_load_inline_functions_take_and_return_tensors(ext):
    x = toolkit.arange(6, dtype=toolkit.float32).reshape(2, 3)
    y = ext.scale(x, 2.5)
    assert isinstance(y, toolkit.Tensor) and y.dtype == toolkit.float32
    assert_close(y, x * 2.5)
    assert_close(ext.scale(x.double(), -1.0), -x.double())
    assert ext.scale.__doc__.strip().endswith("x times a")


def test_tensor_view_is_zero_copy_with_strides_in_elements(ext):
    base = toolkit.zeros(4, 3, dtype=toolkit.float64)
    column = base[:, 1]  # a strided view: stride 3 elements
    ext.fill_(column, 7.0)
    expected = np.zeros((4, 3))
    expected[:, 1] = 7.0
    assert_close(base, expected)
    t = toolkit.zeros(3, 4).t()
    assert ext.sizes(t) == [4, 3] and ext.strides(t) == list(t.stride())
    assert ext.size_at(t, -1) == 3
    w = toolkit.ones(3, dtype=toolkit.float64, requires_grad=True)  # autograd is the Python side's
    assert_close(ext.scale(w, 2.0), np.full(3, 2.0))


def test_an_empty_tensor_is_contiguous_whatever_its_strides(ext):
    # torch calls every tensor without elements contiguous, so an extension's contiguity check lets it through
    for make in (lambda lib: lib.zeros(3, 0).t(), lambda lib: lib.zeros(2, 0, 3)[:, :, ::2]):
        assert make(torch).is_contiguous()
        assert tuple(ext.scale(make(toolkit), 2.0).shape) == tuple(make(torch).shape)


def test_new_tensors_and_lists_of_tensors(ext):
    a, b = ext.pair([2, 3])
    assert a.dtype == toolkit.int64 and b.dtype == toolkit.float32 and a.shape == (2, 3) == b.shape
    assert_close(a, np.zeros((2, 3), np.int64))


def test_checks_raise_python_errors(ext):
    with pytest.raises(RuntimeError, match="x must be contiguous"):
        ext.scale(toolkit.zeros(3, 4).t(), 1.0)
    with pytest.raises(RuntimeError, match="\"scale\" not implemented for 'Long'"):
        ext.scale(toolkit.arange(3), 1.0)
    with pytest.raises(ValueError, match="fill_ wants float64, got Float"):
        ext.fill_(toolkit.zeros(3), 1.0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ext.size_at(toolkit.zeros(3), 1)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        ext.scale(np.zeros(3), 1.0)


# ------------------------------------------------------------------------------------------------ cache
def test_second_load_runs_no_compiler_and_changes_rebuild(tmp_path, monkeypatch, capfd):
    cxx, log = _counting_compiler(tmp_path)
    monkeypatch.setenv("CXX", cxx)
    src, header = tmp_path / "ext.cpp", tmp_path / "k.h"
    header.write_text("constexpr int K = 2;\n")
    src.write_text('#include <toolkit/extension.h>\n#include "k.h"\n'
                   "int k() { return K; }\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"k\", &k); }\n")
    build = str(tmp_path / "build")

    def load(**kw):
        return cpp_extension.load("tk_cached", [str(src)], build_directory=build, **kw)

    assert load().k() == 2 and _runs(log) == 1
    capfd.readouterr()
    assert load(verbose=True).k() == 2 and _runs(log) == 1  # same inputs: no compiler run
    assert "skipping build step" in capfd.readouterr().err
    header.write_text("constexpr int K = 3;\n")  # an included header changed: rebuilt
    rebuilt = load()
    assert rebuilt.k() == 3 and _runs(log) == 2
    assert rebuilt.__name__ == "tk_cached_v1"  # this process holds tk_cached already: a fresh module name
    src.write_text(src.read_text().replace("return K;", "return K * 10;"))  # the source changed
    assert load(verbose=True).k() == 30 and _runs(log) == 3
    err = capfd.readouterr().err
    assert "Building extension module tk_cached" in err and f"{cxx} -DTOOLKIT_EXTENSION_NAME=tk_cached" in err
    assert load(extra_cflags=["-DUNUSED=1"]).k() == 30 and _runs(log) == 4  # the flags changed


CONCURRENT = r"""
import sys
from toolkit.utils.cpp_extension import load_inline
ext = load_inline("tk_race", "int answer() { return 42; }", functions=["answer"], build_directory=sys.argv[1])
print(ext.answer())
"""


def test_concurrent_loads_build_once(tmp_path):
    cxx, log = _counting_compiler(tmp_path)
    env = dict(os.environ, CXX=cxx, PYTHONPATH=ROOT)
    build = str(tmp_path / "build")
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, build], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert out.strip() == "42"
    assert _runs(log) == 1
    assert not [f for f in os.listdir(build) if f.endswith(".tmp")]


# ------------------------------------------------------------------------------------------------ errors
def test_compile_error_names_file_and_line(tmp_path):
    src = tmp_path / "broken.cpp"
    src.write_text("#include <toolkit/extension.h>\n\nint f() { return undefined_name; }\n")
    with pytest.raises(RuntimeError, match="Error building extension 'tk_broken'") as info:
        cpp_extension.load("tk_broken", [str(src)], build_directory=str(tmp_path / "build"))
    message = str(info.value)
    assert f"{src}:3:" in message and "error:" in message and "undefined_name" in message
    assert not [f for f in os.listdir(tmp_path / "build") if f.endswith((".so", ".tmp"))]


def test_load_inline_error_points_into_main_cpp(tmp_path):
    with pytest.raises(RuntimeError, match="Error building extension 'tk_bad_inline'") as info:
        cpp_extension.load_inline("tk_bad_inline", "int f() { return 1 }", functions=["f"],
                                  build_directory=str(tmp_path))
    assert f"{tmp_path / 'main.cpp'}:2:" in str(info.value)


def test_cuda_and_bad_names_are_refused(tmp_path):
    with pytest.raises(RuntimeError, match="CUDA and SYCL sources cannot be built"):
        cpp_extension.load_inline("tk_cuda", "", cuda_sources="__global__ void k() {}", build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="CUDA and SYCL sources cannot be built"):
        cpp_extension.load("tk_cuda", [str(tmp_path / "k.cu")], build_directory=str(tmp_path))
    with pytest.raises(ValueError, match="C identifier"):
        cpp_extension.load("not-a-name", [str(tmp_path / "x.cpp")], build_directory=str(tmp_path))


# ------------------------------------------------------------------------------------------------ other products
def test_standalone_executable_and_plain_library(tmp_path):
    src = tmp_path / "main.cpp"
    src.write_text('#include <cstdio>\nint main() { std::puts("hello"); return 0; }\n')
    exe = cpp_extension.load("tk_exe", [str(src)], build_directory=str(tmp_path / "exe"), is_standalone=True)
    assert subprocess.run([exe], capture_output=True, text=True).stdout == "hello\n"
    lib = tmp_path / "lib.cpp"
    lib.write_text('extern "C" __attribute__((visibility("default"))) int tk_seven() { return 7; }\n')
    assert cpp_extension.load("tk_plain", [str(lib)], build_directory=str(tmp_path / "lib"),
                              is_python_module=False) is None
    import ctypes

    assert ctypes.CDLL(None).tk_seven() == 7  # loaded with RTLD_GLOBAL


# ------------------------------------------------------------------------------------------------ paths
def test_default_build_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("TOOLKIT_EXTENSIONS_DIR", raising=False)
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    tag = f"py{sys.version_info.major}{sys.version_info.minor}_cpu"
    assert cpp_extension.get_default_build_root() == os.path.realpath(tmp_path / "cache" / "extensions" / tag)
    monkeypatch.setenv("TOOLKIT_EXTENSIONS_DIR", str(tmp_path / "ext"))
    assert cpp_extension.get_default_build_root() == os.path.realpath(tmp_path / "ext")


def test_include_paths_hold_the_header_and_pybind11(monkeypatch):
    paths = cpp_extension.include_paths()
    assert os.path.exists(os.path.join(paths[0], "toolkit", "extension.h"))
    import pybind11

    assert pybind11.get_include() in paths
    monkeypatch.setitem(sys.modules, "pybind11", None)  # as where pybind11 is not installed
    with pytest.raises(RuntimeError, match=r"toolkit\[cpp\]"):
        cpp_extension.include_paths()
    assert cpp_extension.is_ninja_available() == (shutil.which("ninja") is not None)


def test_public_names_are_torchs():
    import inspect

    import torch.utils.cpp_extension as theirs

    for name in cpp_extension.__all__:
        if name != "get_compiler":
            assert hasattr(theirs, name), name
    for name in ("load", "load_inline"):
        ours = list(inspect.signature(getattr(cpp_extension, name)).parameters)
        assert ours == list(inspect.signature(getattr(theirs, name)).parameters)[: len(ours)], name
