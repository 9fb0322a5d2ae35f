"""Names old code, tutorials and examples use, checked against PyTorch: ``Variable``, the legacy typed
tensors and storages, ``toolkit.accelerator``, the ``toolkit.backends`` flags, the default device,
deterministic algorithms, matmul precision, ``compile`` and ``toolkit.testing``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch
import torch.testing
from torch.utils._device import _device_constructors

import toolkit
from toolkit.autograd import Variable
from toolkit.ops import registry

from .conftest import assert_close

CUDA = toolkit.cuda.is_available()


def _same_error(torch_call, toolkit_call, kind=Exception) -> None:
    """Both calls raise the same exception type, with the same message once library names are aligned."""
    with pytest.raises(kind) as expected:
        torch_call()
    with pytest.raises(type(expected.value)) as got:
        toolkit_call()
    assert str(got.value).replace("toolkit.tensor.Tensor", "torch.Tensor").replace("toolkit", "torch") == \
        str(expected.value)


# ---------------------------------------------------------------------------------------------- Variable
def test_variable_returns_a_tensor_with_the_requires_grad_asked():
    data = np.arange(3, dtype=np.float32)
    t, r = Variable(toolkit.tensor(data), requires_grad=True), torch.autograd.Variable(torch.tensor(data),
                                                                                      requires_grad=True)
    assert type(t) is toolkit.Tensor and type(r) is torch.Tensor
    assert t.requires_grad == r.requires_grad and t.is_leaf == r.is_leaf
    (t * t).sum().backward()
    (r * r).sum().backward()
    assert_close(t.grad, r.grad)


def test_variable_of_a_result_is_a_detached_alias():
    base_t = toolkit.ones(2, requires_grad=True) * 2
    base_r = torch.ones(2, requires_grad=True) * 2
    t, r = Variable(base_t), torch.autograd.Variable(base_r)
    assert (t.grad_fn is None) == (r.grad_fn is None) and t.requires_grad == r.requires_grad
    assert t.data_ptr() == base_t.data_ptr()
    assert_close(Variable(), torch.autograd.Variable())


def test_every_tensor_is_a_variable():
    assert isinstance(toolkit.ones(1), Variable) == isinstance(torch.ones(1), torch.autograd.Variable) is True
    assert not isinstance(np.ones(1), Variable)
    assert toolkit.autograd.Variable is Variable


def test_variable_rejects_non_tensors_and_warns_on_volatile():
    _same_error(lambda: torch.autograd.Variable([1.0]), lambda: Variable([1.0]), TypeError)
    with pytest.warns(UserWarning, match="volatile"):
        Variable(toolkit.ones(1), volatile=True)


# ---------------------------------------------------------------------------------------------- legacy types
LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
          "ByteTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_cuda_legacy_type_isinstance(name):
    t_cls, r_cls = getattr(toolkit.cuda, name), getattr(torch.cuda, name)
    cpu_t, cpu_r = getattr(toolkit, name)(2), getattr(torch, name)(2)
    assert isinstance(cpu_t, t_cls) == isinstance(cpu_r, r_cls) is False
    assert isinstance(cpu_t, getattr(toolkit, name))
    assert repr(t_cls) == repr(r_cls).replace("torch", "toolkit")


@pytest.mark.skipif(CUDA, reason="the error of a machine without CUDA")
@pytest.mark.parametrize("name", LEGACY)
def test_cuda_legacy_type_without_cuda_raises_a_type_error(name):
    with pytest.raises(TypeError) as expected:
        getattr(torch.cuda, name)(2)
    with pytest.raises(TypeError) as got:
        getattr(toolkit.cuda, name)(2)
    # PyTorch: "type torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled."
    assert str(got.value).split(". ")[0] == str(expected.value).split(". ")[0].replace("torch", "toolkit")


def test_cuda_legacy_types_on_the_simulated_gpu():
    code = textwrap.dedent("""
        import json, toolkit
        x = toolkit.cuda.FloatTensor(2, 3)
        y = toolkit.cuda.LongTensor([1, 2])
        print(json.dumps({"x": [str(x.device), str(x.dtype), list(x.shape)], "y": y.tolist(),
                          "isinstance": [isinstance(x, toolkit.cuda.FloatTensor), isinstance(x, toolkit.FloatTensor),
                                         isinstance(y, toolkit.cuda.FloatTensor)]}))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found == {"x": ["cuda:0", "toolkit.float32", [2, 3]], "y": [1, 2], "isinstance": [True, False, False]}


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_storage_classes(name):
    storage = name.replace("Tensor", "Storage")
    t_cls, r_cls = getattr(toolkit, storage), getattr(torch, storage)
    assert issubclass(t_cls, toolkit.TypedStorage) and issubclass(r_cls, torch.TypedStorage)
    assert t_cls.__name__ == r_cls.__name__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both libraries call TypedStorage deprecated
        assert getattr(toolkit, name)(2).storage_type() is t_cls
        assert getattr(torch, name)(2).storage_type() is r_cls


def test_storage_names():
    x, r = toolkit.arange(4.0), torch.arange(4.0)
    assert isinstance(x.untyped_storage(), toolkit.UntypedStorage)
    assert isinstance(x.storage(), toolkit.TypedStorage)
    assert x.untyped_storage().size() == r.untyped_storage().size()


# ---------------------------------------------------------------------------------------------- accelerator
@pytest.mark.skipif(CUDA, reason="answers of a machine without an accelerator")
def test_accelerator_without_a_device():
    assert toolkit.accelerator.is_available() == torch.accelerator.is_available() is False
    assert toolkit.accelerator.current_accelerator() is None is torch.accelerator.current_accelerator()
    assert toolkit.accelerator.device_count() == torch.accelerator.device_count() == 0
    for name, args in [("current_device_index", ()), ("set_device_index", (0,)), ("synchronize", ()),
                       ("empty_cache", ())]:
        _same_error(lambda n=name, a=args: getattr(torch.accelerator, n)(*a),
                    lambda n=name, a=args: getattr(toolkit.accelerator, n)(*a), RuntimeError)


def test_accelerator_on_the_simulated_gpu():
    code = textwrap.dedent("""
        import json, toolkit
        a = toolkit.accelerator
        a.set_device_index(0)
        a.synchronize()
        print(json.dumps([a.is_available(), str(a.current_accelerator()), a.device_count(), a.current_device_index()]))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found == [True, "cuda", 1, 0]


# ---------------------------------------------------------------------------------------------- backends
def test_cudnn_flags():
    c, tc = toolkit.backends.cudnn, torch.backends.cudnn
    for flag in ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"):
        assert getattr(c, flag) == getattr(tc, flag), flag
    assert c.is_available() is False and c.version() is None
    c.benchmark = True
    try:
        assert toolkit.backends.cudnn.benchmark is True
        with c.flags(enabled=False, deterministic=True):
            assert c.enabled is False and c.deterministic is True and c.benchmark is False
        assert c.enabled is True and c.deterministic is False and c.benchmark is True
    finally:
        c.benchmark = False


def test_mkldnn_mps_opt_einsum_flags():
    m = toolkit.backends.mkldnn
    assert m.enabled == torch.backends.mkldnn.enabled and m.deterministic == torch.backends.mkldnn.deterministic
    with m.flags(enabled=False):
        assert m.enabled is False
    assert m.enabled is True
    assert toolkit.backends.mps.is_available() is False and toolkit.backends.mps.is_built() is False
    o, to = toolkit.backends.opt_einsum, torch.backends.opt_einsum
    assert o.is_available() == to.is_available() and o.enabled == to.enabled and o.strategy == to.strategy
    with o.flags(enabled=False):
        assert o.enabled is False
    assert o.enabled == to.enabled


def test_cuda_matmul_flags_follow_the_matmul_precision():
    matmul = toolkit.backends.cuda.matmul
    assert matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32 is False
    assert matmul.allow_fp16_reduced_precision_reduction == \
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    try:
        toolkit.set_float32_matmul_precision("high")
        assert matmul.allow_tf32 is True
        matmul.allow_tf32 = False
        assert toolkit.get_float32_matmul_precision() == "highest"
        matmul.allow_fp16_reduced_precision_reduction = False
        assert matmul.allow_fp16_reduced_precision_reduction is False
    finally:
        toolkit.set_float32_matmul_precision("highest")
        matmul.allow_fp16_reduced_precision_reduction = True
    _same_error(lambda: torch.backends.cuda.matmul.no_such_flag, lambda: matmul.no_such_flag, AttributeError)


def test_float32_matmul_precision():
    assert toolkit.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"
    try:
        toolkit.set_float32_matmul_precision("medium")
        assert toolkit.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="bad is not one of"):
            toolkit.set_float32_matmul_precision("bad")
        assert toolkit.get_float32_matmul_precision() == "medium"
    finally:
        toolkit.set_float32_matmul_precision("highest")


# ---------------------------------------------------------------------------------------------- determinism
def test_deterministic_algorithms_switch():
    assert toolkit.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled() is False
    try:
        for lib in (torch, toolkit):
            lib.use_deterministic_algorithms(True, warn_only=True)
        assert toolkit.are_deterministic_algorithms_enabled() and toolkit.is_deterministic_algorithms_warn_only_enabled()
        assert toolkit.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode() == 1
        for lib in (torch, toolkit):
            lib.set_deterministic_debug_mode("error")
        assert toolkit.is_deterministic_algorithms_warn_only_enabled() == \
            torch.is_deterministic_algorithms_warn_only_enabled() is False
        assert toolkit.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode() == 2
    finally:
        torch.use_deterministic_algorithms(False)
        toolkit.use_deterministic_algorithms(False)
    _same_error(lambda: torch.use_deterministic_algorithms(1), lambda: toolkit.use_deterministic_algorithms(1),
                TypeError)


# ---------------------------------------------------------------------------------------------- default device
def test_default_device_cpu():
    assert toolkit.get_default_device() == toolkit.device("cpu")
    assert str(toolkit.get_default_device()) == str(torch.get_default_device())
    toolkit.set_default_device("cpu")
    try:
        assert toolkit.zeros(2).device == toolkit.device("cpu")
    finally:
        toolkit.set_default_device(None)


@pytest.mark.skipif(CUDA, reason="the failure of a machine without CUDA")
def test_default_device_reaches_factories():
    toolkit.set_default_device("cuda")
    try:
        assert toolkit.get_default_device().type == "cuda"
        for make in (lambda: toolkit.zeros(2), lambda: toolkit.tensor([1.0]), lambda: toolkit.arange(3),
                     lambda: toolkit.full((2,), 1.0), lambda: toolkit.rand(2)):
            with pytest.raises(RuntimeError, match="CUDA"):
                make()
        x = toolkit.from_numpy(np.ones(2, np.float32))  # from_numpy shares memory: always the CPU, as in PyTorch
        assert toolkit.zeros_like(x).device.type == "cpu"  # *_like keep their input's device
        assert toolkit.zeros(2, device="cpu").device.type == "cpu"
    finally:
        toolkit.set_default_device(None)
    assert toolkit.zeros(2).device.type == "cpu"


@pytest.mark.skipif(CUDA, reason="the failure of a machine without CUDA")
def test_device_context_sets_the_default_inside_the_block():
    with toolkit.device("cuda"):
        assert toolkit.get_default_device().type == "cuda"
        with pytest.raises(RuntimeError, match="CUDA"):
            toolkit.zeros(2)
        with toolkit.device("cpu"):  # the innermost block decides, as with torch.device
            assert toolkit.zeros(2).device.type == "cpu"
        assert toolkit.get_default_device().type == "cuda"
    assert toolkit.get_default_device() == toolkit.device("cpu") and toolkit.zeros(2).device.type == "cpu"
    with torch.device("cpu") as d:
        assert d == torch.device("cpu")  # PyTorch's device context returns the device itself too
    with toolkit.device("cpu") as d:
        assert d == toolkit.device("cpu")


def test_the_registry_says_which_factories_take_the_default_device():
    """Each registry op's ``default_device`` agrees with PyTorch's own list of such factories."""
    theirs = {f.__name__ for f in _device_constructors()}
    for d in registry.all_ops():
        if d.default_device:
            assert d.name in theirs, d.name
        elif d.device_arg is not None and not d.tensor_args and d.composite is None:
            assert d.name not in theirs, d.name
    assert not registry.get("normal", "float_float").default_device  # torch.normal ignores the default device


def test_default_device_on_the_simulated_gpu():
    code = textwrap.dedent("""
        import json, toolkit
        toolkit.set_default_device("cuda")
        made = [toolkit.zeros(2), toolkit.tensor([1.0]), toolkit.arange(3), toolkit.as_tensor([1, 2]),
                toolkit.scalar_tensor(1.0), toolkit.eye(2)]
        cpu = toolkit.zeros(1, device="cpu")
        toolkit.set_default_device(None)
        print(json.dumps([str(t.device) for t in made] + [str(cpu.device), str(toolkit.zeros(1).device)]))
    """)
    env = {**os.environ, "TOOLKIT_CUDA_SIMULATOR": "1"}
    found = json.loads(subprocess.check_output([sys.executable, "-c", code], env=env, text=True).splitlines()[-1])
    assert found == ["cuda:0"] * 6 + ["cpu", "cpu"]


# ---------------------------------------------------------------------------------------------- compile
def test_compile_runs_eagerly_and_returns_the_model():
    model = toolkit.nn.Linear(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = toolkit.compile(model)
        assert compiled is model

        @toolkit.compile(mode="max-autotune")
        def double(x):
            return x * 2

    assert_close(double(toolkit.ones(2)), torch.ones(2) * 2)
    assert toolkit.compile(model, disable=True) is model


# ---------------------------------------------------------------------------------------------- testing
CASES = [
    ([1., 2., 3.], [1., 2.5, 3.], {}),
    ([1, 2], [1, 3], {}),
    ([1.], ("float64", [1.]), {}),
    ([0., 0.], [0., 0., 0.], {}),
    ([float("nan")], [float("nan")], {}),
    ([float("nan")], [float("nan")], {"equal_nan": True}),
    ([1., float("inf")], [1., 2.], {}),
    ([[0., 0.], [0., 0.]], [[1., 1.], [1., 1.]], {}),
    ([1., 2.], [1., 3.], {"rtol": 0, "atol": 0}),
    ([1., 2.], [1., 2.05], {"rtol": 0.1, "atol": 0}),
    ([1., 2.], [1., 3.], {"msg": "custom"}),
    (1.5, 1.0, "0d"),
    (True, False, "0d"),
    ([1., 2.], ("float64", [1., 2.]), {"check_dtype": False}),
    ([1.], [1.], {"rtol": 1e-3}),
]


def _make(lib, spec, zero_dim=False):
    dtype, values = spec if isinstance(spec, tuple) else (None, spec)
    kw = {} if dtype is None else {"dtype": getattr(lib, dtype)}
    return lib.tensor(values, **kw)


@pytest.mark.parametrize("actual,expected,kwargs", CASES)
def test_assert_close_matches_torch(actual, expected, kwargs):
    if kwargs == "0d":
        kwargs = {}
    call_r = lambda: torch.testing.assert_close(_make(torch, actual), _make(torch, expected), **kwargs)  # noqa: E731
    call_t = lambda: toolkit.testing.assert_close(_make(toolkit, actual), _make(toolkit, expected), **kwargs)  # noqa: E731
    try:
        call_r()
    except (AssertionError, ValueError) as e:
        with pytest.raises(type(e)) as got:
            call_t()
        assert str(got.value).replace("toolkit", "torch") == str(e)
    else:
        call_t()


@pytest.mark.parametrize("actual,expected", [
    (1, 2), (1.0, 1.5), (1, 1.0), (True, False), ([1, 2], [1, 2, 3]), ({"a": 1}, {"b": 1}),
    ("a", "b"), ([[1.0]], [[2.0]]), ({"a": [1.0]}, {"a": [1.5]}),
])
def test_assert_close_of_numbers_and_containers(actual, expected):
    with pytest.raises(Exception) as e:
        torch.testing.assert_close(actual, expected)
    with pytest.raises(type(e.value)) as got:
        toolkit.testing.assert_close(actual, expected)
    assert str(got.value) == str(e.value)


def test_assert_close_nested_tensors_and_callable_msg():
    nests = [(lambda lib: [lib.zeros(1)], lambda lib: [lib.ones(1)]),
             (lambda lib: {"w": lib.zeros(1)}, lambda lib: {"w": lib.ones(1)}),
             (lambda lib: [[lib.zeros(1)]], lambda lib: [[lib.ones(1)]])]
    for actual, expected in nests:
        _same_error(lambda a=actual, e=expected: torch.testing.assert_close(a(torch), e(torch)),
                    lambda a=actual, e=expected: toolkit.testing.assert_close(a(toolkit), e(toolkit)), AssertionError)
    _same_error(lambda: torch.testing.assert_close(torch.zeros(3), torch.arange(3.0), msg=lambda m: "X" + m[:10]),
                lambda: toolkit.testing.assert_close(toolkit.zeros(3), toolkit.arange(3.0), msg=lambda m: "X" + m[:10]),
                AssertionError)
    _same_error(lambda: torch.testing.assert_close(torch.zeros(1), 0.0),
                lambda: toolkit.testing.assert_close(toolkit.zeros(1), 0.0), TypeError)


def test_assert_close_checks_strides_when_asked():
    _same_error(lambda: torch.testing.assert_close(torch.zeros(2, 2), torch.zeros(2, 2).t(), check_stride=True),
                lambda: toolkit.testing.assert_close(toolkit.zeros(2, 2), toolkit.zeros(2, 2).t(), check_stride=True),
                AssertionError)
    toolkit.testing.assert_close(toolkit.zeros(2, 2), toolkit.zeros(2, 2).t())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "uint8", "int8", "bool"])
def test_make_tensor_ranges(dtype):
    toolkit.manual_seed(0)
    x = toolkit.testing.make_tensor(200, dtype=getattr(toolkit, dtype), device="cpu")
    r = torch.testing.make_tensor(200, dtype=getattr(torch, dtype), device="cpu")
    assert x.dtype is getattr(toolkit, dtype) and x.shape == r.shape
    values = x.numpy()
    if dtype == "bool":
        assert set(values.tolist()) <= {False, True}
    else:
        low, high = (0, 10) if dtype == "uint8" else (-9, 9 if values.dtype.kind == "f" else 10)
        assert values.min() >= low and values.max() < high
    toolkit.manual_seed(0)
    assert_close(toolkit.testing.make_tensor(200, dtype=getattr(toolkit, dtype), device="cpu"), x)


def test_make_tensor_options():
    kw = {"dtype": toolkit.float32, "device": "cpu"}
    assert toolkit.testing.make_tensor((2, 3), noncontiguous=True, **kw).stride() == \
        torch.testing.make_tensor((2, 3), dtype=torch.float32, device="cpu", noncontiguous=True).stride()
    assert toolkit.testing.make_tensor(2, 3, 4, 5, memory_format=toolkit.channels_last, **kw).stride() == (60, 1, 15, 3)
    assert toolkit.testing.make_tensor(3, requires_grad=True, **kw).requires_grad
    assert (toolkit.testing.make_tensor(100, low=0, high=1e-6, exclude_zero=True, **kw).numpy() != 0).all()
    assert (toolkit.testing.make_tensor(100, dtype=toolkit.int64, device="cpu", low=-1, high=1,
                                        exclude_zero=True).numpy() != 0).all()
    assert toolkit.testing.make_tensor(**kw).shape == ()
    for bad in ({"low": 5, "high": 2}, {"low": float("nan")}):
        _same_error(lambda b=bad: torch.testing.make_tensor(3, dtype=torch.float32, device="cpu", **b),
                    lambda b=bad: toolkit.testing.make_tensor(3, **kw, **b), ValueError)
    _same_error(lambda: torch.testing.make_tensor(3, dtype=torch.int64, device="cpu", requires_grad=True),
                lambda: toolkit.testing.make_tensor(3, dtype=toolkit.int64, device="cpu", requires_grad=True),
                ValueError)


def test_compat_modules_keep_import_light():
    code = "import sys, toolkit; print(sorted(m for m in ('numba', 'threadpoolctl', 'opt_einsum') if m in sys.modules))"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "[]"
    assert re.fullmatch(r"\d+", str(toolkit.get_num_threads()))


def test_legacy_storage_classes_construct_as_in_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make in (lambda L: L.FloatStorage(3).size(), lambda L: L.DoubleStorage([1, 2.5]).tolist(),
                     lambda L: L.LongStorage().size(), lambda L: L.ByteStorage([1, 2]).tolist()):
            assert make(toolkit) == make(torch)
        assert toolkit.FloatStorage([1, 2]).dtype is toolkit.float32
        assert isinstance(toolkit.zeros(2).storage(), toolkit.FloatStorage) == isinstance(
            torch.zeros(2).storage(), torch.FloatStorage)
