"""Module constants (``Final``, ``__constants__``), ``toolkit.jit.Attribute`` and ``toolkit.jit.annotate``.

Each behaviour is checked against ``torch.jit.script`` on the same code written with ``torch``: eager values,
outputs of the scripted code, which errors compiling raises, and the scripted module's attributes. Classes are
built by factories taking the library (``toolkit`` or ``torch``) as ``L``.
"""
# ruff: noqa: UP006, UP035, UP045, F841  (TorchScript's typing spellings, and values only annotated, on purpose)

import inspect
import os
import typing
import warnings
from typing import Dict, Final, List, Optional

import pytest
import torch

import toolkit
from toolkit.jit.frontend.script.errors import FrontendError

from ....conftest import assert_close

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

LIBS = pytest.mark.parametrize("L", [toolkit, torch], ids=["toolkit", "torch"])


def _both(build, *args):
    """(toolkit result, torch result) of ``build(L, *args)`` with each library's tensors."""
    return build(toolkit, *args), build(torch, *args)


# -- eager Python: inert, as in PyTorch --------------------------------------------------------------------------
def test_eager_attribute_annotate_and_final_match_torch():
    a = toolkit.jit.Attribute([], List[str])
    t = torch.jit.Attribute([], List[str])
    assert isinstance(a, tuple) and a._fields == t._fields == ("value", "type")
    assert a == t and a.value == [] and a.type is List[str]
    assert repr(a) == repr(t) == "Attribute(value=[], type=typing.List[str])"
    v = [1]
    assert toolkit.jit.annotate(List[int], v) is v is torch.jit.annotate(List[int], v)
    assert toolkit.jit.Final is typing.Final is torch.jit.Final
    for name in ("Attribute", "annotate", "Final"):
        assert name in toolkit.jit.__all__


@LIBS
def test_plain_module_keeps_the_attribute_tuple_in_eager(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.names = L.jit.Attribute([], List[str])

    m = M()
    assert type(m.names).__name__ == "Attribute" and m.names.value == [] and m.names.type is List[str]


# -- annotate in script code ------------------------------------------------------------------------------------
def _annotated_list(L):
    def f(x, n: int):
        y = L.jit.annotate(List[int], [])
        for i in range(n):
            y.append(i * i)
        return x + len(y) + y[-1]
    return f


def _annotated_dict(L):
    def f(x):
        d = L.jit.annotate(Dict[str, L.Tensor], {})
        d["a"] = x
        d["b"] = x * 2
        return d["a"] + d["b"]
    return f


def _annotated_optional(L):
    def f(x, flag: bool):
        y = L.jit.annotate(Optional[L.Tensor], None)
        if flag:
            y = x * 3
        if y is None:
            return x
        return y
    return f


def _annotated_optional_int(L):
    def f(x):
        y = L.jit.annotate(Optional[int], 3)
        return x + y
    return f


@pytest.mark.parametrize("build, args", [
    (_annotated_list, (4,)), (_annotated_dict, ()), (_annotated_optional, (True,)), (_annotated_optional, (False,)),
    (_annotated_optional_int, ()),
], ids=["list", "dict", "optional-set", "optional-none", "optional-int"])
def test_annotate_in_script_matches_torch(build, args):
    x = [1.0, -2.0, 0.5]
    tk_fn, th_fn = _both(build)
    tk = toolkit.jit.script(tk_fn)
    th = torch.jit.script(th_fn)
    assert_close(tk(toolkit.tensor(x), *args), th(torch.tensor(x), *args))
    assert_close(tk_fn(toolkit.tensor(x), *args), th(torch.tensor(x), *args))  # eager: annotate returns the value


def test_annotate_gives_empty_containers_and_none_their_types():
    g = str(toolkit.jit.script(_annotated_optional(toolkit)).graph)
    assert "Tensor? = prim::Constant()" in g, g
    g = str(toolkit.jit.script(_annotated_dict(toolkit)).graph)
    assert "Dict(str, Tensor) = prim::DictConstruct()" in g, g
    g = str(toolkit.jit.script(_annotated_list(toolkit)).graph)
    assert "int[] = prim::ListConstruct()" in g, g
    g = str(toolkit.jit.script(_annotated_optional_int(toolkit)).graph)
    assert "int = prim::Constant[value=3]" in g, g  # a value that fits keeps its own type, as in TorchScript


def _bad_list(L):
    def f(x):
        y = L.jit.annotate(List[int], [1.5])
        return x
    return f, "y = L.jit.annotate(List[int], [1.5])", "List type annotation `List[int]` did not match"


def _bad_int(L):
    def f(x):
        y = L.jit.annotate(int, 2.5)
        return x
    return f, "y = L.jit.annotate(int, 2.5)", "expected an expression of type int but found float"


def _bad_float(L):
    def f(x):
        y = L.jit.annotate(float, 2)
        return x + y
    return f, "y = L.jit.annotate(float, 2)", "expected an expression of type float but found int"


def _one_argument(L):
    def f(x):
        y = L.jit.annotate(List[int])
        return x
    return f, "y = L.jit.annotate(List[int])", "annotate"


@pytest.mark.parametrize("build", [_bad_list, _bad_int, _bad_float, _one_argument])
def test_annotate_type_mismatch_is_a_located_error_as_in_torch(build):
    (tk_fn, line, fragment), (th_fn, _, _) = _both(build)
    with pytest.raises(RuntimeError):
        torch.jit.script(th_fn)
    with pytest.raises(FrontendError) as info:
        toolkit.jit.script(tk_fn)
    msg = str(info.value)
    assert fragment in msg and line in msg and __file__ in msg, msg


# -- module constants: Final and __constants__ -----------------------------------------------------------------
def _constants_module(L):
    class C(L.nn.Module):
        k: Final[int] = 3
        scale: L.jit.Final[float]
        __constants__ = ["sizes", "name", "c"]

        def __init__(self):
            super().__init__()
            self.c = 2
            self.scale = 0.5
            self.sizes = [2, 3]
            self.name = "abc"

        def forward(self, x):
            if self.name == "abc":
                x = x + 1
            for s in self.sizes:
                x = x + s
            return x * self.k * self.c * self.scale + self.sizes[1]

    return C()


def test_constants_fold_into_the_graph_and_match_torch():
    tk, th = _both(_constants_module)
    s, t = toolkit.jit.script(tk), torch.jit.script(th)
    x = [1.0, 2.0]
    assert_close(s(toolkit.tensor(x)), t(torch.tensor(x)))
    assert (s.k, s.c, s.scale, s.sizes, s.name) == (t.k, t.c, t.scale, t.sizes, t.name) == (3, 2, 0.5, (2, 3), "abc")
    g = str(s.graph)
    assert "prim::GetAttr" not in g and "prim::If" not in g, g  # read as constants: the branch is decided
    assert "float = prim::Constant[value=0.5]" in g and "int = prim::Constant[value=3]" in g, g


def test_constants_survive_save_and_load(tmp_path):
    tk, th = _both(_constants_module)
    s, t = toolkit.jit.script(tk), torch.jit.script(th)
    path = os.path.join(tmp_path, "m.pt")
    toolkit.jit.save(s, path)
    loaded = toolkit.jit.load(path)
    assert_close(loaded(toolkit.tensor([1.0, 2.0])), t(torch.tensor([1.0, 2.0])))
    assert str(loaded.graph).count("prim::Constant") == str(s.graph).count("prim::Constant")


def _assigns_final(L):
    class F(L.nn.Module):
        k: Final[int] = 3

        def forward(self, x):
            self.k = 4
            return x
    return F(), "self.k = 4"


def _assigns_instance_final(L):
    class F(L.nn.Module):
        k: Final[int]

        def __init__(self):
            super().__init__()
            self.k = 3

        def forward(self, x):
            self.k = self.k + 1
            return x
    return F(), "self.k = self.k + 1"


def _assigns_listed_constant(L):
    class F(L.nn.Module):
        __constants__ = ["c"]

        def __init__(self):
            super().__init__()
            self.c = 2

        def forward(self, x):
            self.c = 4
            return x * self.c
    return F(), "self.c = 4"


@pytest.mark.parametrize("build", [_assigns_final, _assigns_instance_final, _assigns_listed_constant])
def test_assigning_a_constant_is_a_located_compile_error_as_in_torch(build):
    (tk, line), (th, _) = _both(build)
    with pytest.raises(RuntimeError, match="Tried to set nonexistent attribute"):
        torch.jit.script(th)
    with pytest.raises(FrontendError, match="Tried to set nonexistent attribute") as info:
        toolkit.jit.script(tk)
    msg = str(info.value)
    assert "is a constant" in msg and line in msg and __file__ in msg, msg


def _invalid_constant(L, kind):
    class F(L.nn.Module):
        __constants__ = ["c"]

        def __init__(self):
            super().__init__()
            self.c = {"a": 1} if kind == "dict" else L.ones(1)

        def forward(self, x):
            return x
    return F()


@pytest.mark.parametrize("kind", ["dict", "tensor"])
def test_invalid_constant_value_raises_type_error_as_in_torch(kind):
    tk, th = _both(_invalid_constant, kind)
    with pytest.raises(TypeError, match="is not a valid constant") as t_info:
        torch.jit.script(th)
    with pytest.raises(TypeError, match="is not a valid constant") as k_info:
        toolkit.jit.script(tk)
    assert "'F.c'" in str(t_info.value) and "'F.c'" in str(k_info.value)


def _odd_constants(L):
    class F(L.nn.Module):
        __constants__ = ["missing", "lin"]

        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(2, 2)

        def forward(self, x):
            return self.lin(x)
    return F()


def test_unset_or_submodule_constants_warn_as_in_torch():
    tk, th = _both(_odd_constants)
    messages = {}
    for lib, m in (("toolkit", tk), ("torch", th)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib_mod = toolkit if lib == "toolkit" else torch
            lib_mod.jit.script(m)
        messages[lib] = sorted(str(x.message) for x in w if "ScriptModule constants" in str(x.message))
    assert messages["toolkit"] == messages["torch"] and len(messages["torch"]) == 2, messages


@LIBS
def test_setting_a_constant_on_the_scripted_module_raises(L):
    s = L.jit.script(_constants_module(L))
    with pytest.raises(RuntimeError, match="Can't set constant 'sizes'"):
        s.sizes = [1]


# -- Attribute: declared types of module attributes -------------------------------------------------------------
def _attribute_module(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.names = L.jit.Attribute([], List[str])
            self.table = L.jit.Attribute({}, Dict[str, int])
            self.last = L.jit.Attribute(None, Optional[L.Tensor])
            self.f = L.jit.Attribute(1, float)

        def forward(self, x):
            self.names.append("a")
            self.table["k"] = len(self.names)
            last = self.last
            if last is not None:
                x = x + last
            self.last = x
            return x * self.table["k"] * self.f

    return M()


def test_attribute_declared_module_state_matches_torch():
    tk, th = _both(_attribute_module)
    s, t = toolkit.jit.script(tk), torch.jit.script(th)
    for _ in range(3):
        assert_close(s(toolkit.tensor([1.0, 2.0])), t(torch.tensor([1.0, 2.0])))
    assert s.names == t.names == ["a", "a", "a"]
    assert s.table == t.table == {"k": 3}
    assert type(s.f) is type(t.f) is float
    assert_close(s.last, t.last)


def test_attribute_declared_module_state_survives_save_and_load_like_torch(tmp_path):
    tk, th = _both(_attribute_module)
    s, t = toolkit.jit.script(tk), torch.jit.script(th)
    s(toolkit.tensor([1.0, 2.0]))
    t(torch.tensor([1.0, 2.0]))
    toolkit.jit.save(s, str(tmp_path / "k.pt"))
    t.save(str(tmp_path / "t.pt"))
    ks, ts = toolkit.jit.load(str(tmp_path / "k.pt")), torch.jit.load(str(tmp_path / "t.pt"))
    for _ in range(2):  # the loaded state goes on from where the saved one was
        assert_close(ks(toolkit.tensor([1.0, 2.0])), ts(torch.tensor([1.0, 2.0])))
    assert ks.names == ts.names == ["a", "a", "a"]
    assert ks.table == ts.table == {"k": 3}
    assert_close(ks.last, ts.last)


def _bad_attribute(L):
    class M(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = L.jit.Attribute([1], List[str])

        def forward(self, x):
            return x
    return M()


def test_attribute_value_of_another_type_is_refused_as_in_torch():
    tk, th = _both(_bad_attribute)
    with pytest.raises(RuntimeError, match="Could not cast attribute 'a'"):
        torch.jit.script(th)
    with pytest.raises(RuntimeError, match="Could not cast attribute 'a'"):
        toolkit.jit.script(tk)


def _script_module_subclass(L):
    class AttributeModule(L.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.foo = L.jit.Attribute(0.1, float)
            assert 0.0 < self.foo  # unwrapped when assigned
            self.names_ages = L.jit.Attribute({}, Dict[str, int])
            self.names_ages["someone"] = 20

        @L.jit.script_method
        def forward(self, x):
            self.names_ages["other"] = 1
            return x * self.foo + self.names_ages["someone"] + len(self.names_ages)

    return AttributeModule()


def test_script_module_subclass_unwraps_attribute_in_init_as_in_torch():
    tk, th = _both(_script_module_subclass)
    assert_close(tk(toolkit.tensor([1.0, 3.0])), th(torch.tensor([1.0, 3.0])))
    assert tk.names_ages == th.names_ages == {"someone": 20, "other": 1}
    assert tk.foo == th.foo == 0.1


# -- toolkit.nn modules declare PyTorch's constants ---------------------------------------------------------------
def _nn_module_pairs():
    for name in sorted(dir(torch.nn)):
        th = getattr(torch.nn, name)
        if inspect.isclass(th) and issubclass(th, torch.nn.Module) and hasattr(toolkit.nn, name):
            yield name


def _constants_of(cls, final) -> set:
    names = set(getattr(cls, "__constants__", ()))
    for klass in cls.__mro__:
        for k, ann in klass.__dict__.get("__annotations__", {}).items():
            if final(ann):
                names.add(k)
    return names


@pytest.mark.parametrize("name", list(_nn_module_pairs()))
def test_nn_module_constants_match_torch(name):
    from toolkit.jit.frontend.script.annotations import is_final

    expected = _constants_of(getattr(torch.nn, name), torch._jit_internal.is_final)
    assert _constants_of(getattr(toolkit.nn, name), is_final) == expected
