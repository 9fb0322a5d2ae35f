"""Save/load round trips of scripted code with loops and ifs."""

import io

import pytest
import torch

import toolkit

from .helpers import same
from .test_modules import Block
from .test_seed import script_fn


def _roundtrip(m):
    buf = io.BytesIO()
    toolkit.jit.save(m, buf)
    buf.seek(0)
    return toolkit.jit.load(buf)


def test_scripted_function_with_a_loop_round_trips():
    s = toolkit.jit.script(script_fn)
    loaded = _roundtrip(s)
    a = toolkit.rand(5)
    assert same(loaded(a), script_fn(a))
    assert any(n.kind == "prim::Loop" for n in loaded.graph.all_nodes())


def test_scripted_module_with_a_loop_over_modulelist_and_an_if_round_trips():
    toolkit.manual_seed(0)
    m = Block(4)
    loaded = _roundtrip(toolkit.jit.script(m))
    x = toolkit.randn(2, 4)
    assert same(loaded(x), m(x), 1e-5)
    assert "if self.training:" in loaded.code


# -- raise: a loaded module raises what eager raises -------------------------------------------------------
def _raised(fn, *args) -> BaseException:
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


@pytest.mark.parametrize("name,bad", [
    ("LSTMCell", (2, 2, 3)), ("GRUCell", (2, 2, 3)), ("BatchNorm2d", (2, 3)), ("BatchNorm1d", (2, 3, 4, 5)),
])
def test_loaded_module_raises_the_eager_exception_type_and_message_on_bad_input(name, bad):
    make = {"LSTMCell": lambda lib: lib.nn.LSTMCell(3, 4), "GRUCell": lambda lib: lib.nn.GRUCell(3, 4),
            "BatchNorm2d": lambda lib: lib.nn.BatchNorm2d(3), "BatchNorm1d": lambda lib: lib.nn.BatchNorm1d(3)}[name]
    m = make(toolkit).eval()
    scripted = toolkit.jit.script(m)
    loaded = _roundtrip(scripted)
    eager = _raised(m, toolkit.randn(*bad))
    theirs = _raised(make(torch).eval(), torch.randn(*bad))
    assert type(eager) is type(theirs) and str(eager) == str(theirs)
    for e in (_raised(scripted, toolkit.randn(*bad)), _raised(loaded, toolkit.randn(*bad))):
        assert type(e) is type(eager)
        assert str(e).splitlines()[0] == str(eager), str(e)
    # good input still runs, and the check prints as TorchScript prints it
    assert 'ops.prim.RaiseException(' in loaded.code and '"builtins.ValueError")' in loaded.code


class Raising(toolkit.nn.Module):
    def forward(self, x):
        if x.dim() == 3:
            raise KeyError("three")
        if x.dim() == 4:
            raise NotImplementedError
        assert x.dim() != 5, "five"
        return x + 1


@pytest.mark.parametrize("dims,cls,args", [
    (3, KeyError, ("three",)), (4, NotImplementedError, ()), (5, AssertionError, ("five",)),
])
def test_loaded_raise_keeps_class_and_arguments(dims, cls, args):
    m = Raising()
    scripted = toolkit.jit.script(m)
    loaded = _roundtrip(scripted)
    x = toolkit.zeros([1] * dims)
    eager, in_process, got = _raised(m, x), _raised(scripted, x), _raised(loaded, x)
    assert type(eager) is cls and type(in_process) is cls and type(got) is cls
    # (pytest rewrites this file's asserts: the eager AssertionError explains itself after its message)
    assert [a.splitlines()[0] for a in eager.args] == list(args)
    # as in process: the message, then the interpreter's note of the node and its source line
    assert got.args == in_process.args and len(got.args) == 1
    message = repr(args[0]) if cls is KeyError else args[0] if args else ""
    assert got.args[0].startswith(message + "\nwhile executing = prim::RaiseException"), got.args
    assert "test_save_load.py:" in got.args[0]
    assert same(loaded(toolkit.ones(2)), toolkit.ones(2) + 1)


def test_raise_in_code_names_its_class_as_torchscript_does():
    code = toolkit.jit.script(Raising()).save_to_buffer()
    import zipfile

    text = zipfile.ZipFile(io.BytesIO(code)).read("archive/code/forward.py").decode()
    assert 'ops.prim.RaiseException("three", "builtins.KeyError")' in text.replace("'", '"')
    assert 'ops.prim.RaiseException(None, "builtins.NotImplementedError")' in text
    assert '"builtins.AssertionError")' in text


class MyError(ValueError):
    pass


class RaisesOwnError(toolkit.nn.Module):
    def forward(self, x):
        if x.dim() == 3:
            raise MyError("mine")
        return x


def test_saving_a_raise_of_a_class_of_ones_own_is_refused_naming_it():
    s = toolkit.jit.script(RaisesOwnError())
    with pytest.raises(MyError):
        s(toolkit.zeros(1, 1, 1))  # in process it raises the class itself
    with pytest.raises(TypeError, match=r"cannot save 'raise tests\.jit\.frontend\.script\.test_save_load\.MyError' at .*"
                                        r"test_save_load\.py:\d+: archives raise only Python's builtin errors"):
        toolkit.jit.save(s, io.BytesIO())


# -- save methods, defaults ------------------------------------------------------------------------------
def test_script_module_and_function_save_like_torch(tmp_path):
    assert {"save", "save_to_buffer"} <= set(dir(torch.jit.ScriptModule)) & set(dir(torch.jit.ScriptFunction))
    toolkit.manual_seed(0)
    m = toolkit.jit.script(toolkit.nn.LSTMCell(3, 4))
    m.save(tmp_path / "m.pt", _extra_files={"meta.txt": "seed"})
    m.save(str(tmp_path / "m2.pt"))
    fn = toolkit.jit.script(script_fn)
    fn.save(tmp_path / "f.pt")
    extra = {"meta.txt": ""}
    loaded = toolkit.jit.load(tmp_path / "m.pt", _extra_files=extra)
    assert extra["meta.txt"] == b"seed"
    x = toolkit.randn(2, 3)
    assert same(loaded(x), m(x), 0) and same(toolkit.jit.load(str(tmp_path / "m2.pt"))(x), m(x), 0)
    assert same(toolkit.jit.load(io.BytesIO(m.save_to_buffer()))(x), m(x), 0)
    a = toolkit.rand(5)
    assert same(toolkit.jit.load(tmp_path / "f.pt")(a), script_fn(a))
    assert same(toolkit.jit.load(io.BytesIO(fn.save_to_buffer()))(a), script_fn(a))


def test_defaults_are_saved_in_the_code_and_used_by_loaded_calls():
    toolkit.manual_seed(0)
    m = toolkit.jit.script(toolkit.nn.LSTMCell(3, 4))
    loaded = _roundtrip(m)
    theirs = torch.jit.script(torch.nn.LSTMCell(3, 4)).code
    assert "hx: Optional[Tuple[Tensor, Tensor]]=None) -> Tuple[Tensor, Tensor]:" in theirs
    assert "hx: Optional[Tuple[Tensor, Tensor]]=None) -> Tuple[Tensor, Tensor]:" in loaded.code
    x = toolkit.randn(2, 3)
    assert same(loaded(x), m(x), 0)
    h = (toolkit.randn(2, 4), toolkit.randn(2, 4))
    assert same(loaded(x, h), m(x, h), 0) and same(loaded(x, hx=h), m(x, h), 0)
    again = _roundtrip(loaded)  # a loaded module saves its defaults again
    assert same(again(x), m(x), 0)


def scaled(x, k: int = 2, name: str = "a", dims: list[int] = [0]):  # noqa: B006 (a literal default, on purpose)
    return x * k + len(name) + len(dims)


def test_function_defaults_round_trip():
    loaded = _roundtrip(toolkit.jit.script(scaled))
    x = toolkit.ones(2)
    assert 'k: int=2, name: str="a", dims: List[int]=[0]' in loaded.code.replace(",\n    ", ", ")  # as TorchScript
    assert same(loaded(x), scaled(x)) and same(loaded(x, 3, "abc"), scaled(x, 3, "abc"))
    with pytest.raises(RuntimeError, match="missing value for argument 'x'"):
        loaded()
