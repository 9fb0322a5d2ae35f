"""toolkit.library.custom_op against torch.library.custom_op: the same ops, schemas, values, gradients and errors.

Every op here is defined inside a test and removed after it (``defined``), so the registry's generated tests never
meet it. torch's registrations cannot be removed, so each torch op gets a name of its own.
"""

import itertools
import re

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.library import Library, custom_op
from toolkit.ops.schema import parse_schema

_count = itertools.count()


@pytest.fixture
def defined():
    """Collects ops and libraries made by a test, and removes them from the registry afterwards."""
    made: list = []
    yield made
    for m in made:
        m._destroy()


def _name(stem: str) -> str:
    return f"{stem}{next(_count)}"


def _args(schema_text: str) -> list:
    return [(a.name, a.type, a.default, a.kwarg_only) for a in parse_schema(schema_text).args]


def _returns(schema_text: str) -> list:
    return [r.type for r in parse_schema(schema_text).returns]


SIGNATURES = {
    "one": ("x: Tensor) -> Tensor", "return x * 2"),
    "two": ("x: Tensor, y: Tensor, n: int) -> tuple[Tensor, Tensor]", "return x + n, y * n"),
    "kw": ("x: Tensor, *, alpha: float = 2.0) -> Tensor", "return x * alpha"),
    "opt": ("x: Tensor, y: Optional[Tensor] = None, flag: bool = False) -> Tensor",
            "return x.clone() if y is None else x + y"),
    "lst": ("xs: list[Tensor]) -> Tensor", "return xs[0] + xs[1]"),
}


def _make(lib, tensor_type, stem: str):
    sig, body = SIGNATURES[stem]
    scope = {"Tensor": tensor_type, "Optional": __import__("typing").Optional}
    exec(f"def f({sig}:\n    {body}\n", scope)
    fn = scope["f"]
    return lib.custom_op(f"{'tk' if lib is toolkit.library else 'th'}lib::{_name(stem)}", mutates_args=())(fn)


@pytest.mark.parametrize("stem", list(SIGNATURES))
def test_schema_inferred_as_torch_infers_it(defined, stem):
    ours = _make(toolkit.library, toolkit.Tensor, stem)
    defined.append(ours)
    theirs = _make(torch.library, torch.Tensor, stem)
    our_text, their_text = str(ours._schema), str(theirs._opoverload._schema)
    assert _args(our_text) == _args(their_text)
    assert _returns(our_text) == _returns(their_text)


def test_infer_schema_writes_string_defaults_and_unknown_mutation_as_torch():
    def text(lib, tensor_type, mutates):
        scope = {"Tensor": tensor_type}
        exec("def f(x: Tensor, ys: list[Tensor], n: int, mode: str = 'sum') -> Tensor:\n    return x\n", scope)
        # toolkit's schemas name alias sets with one letter (a!, b!), torch's with the argument's index (a0!, a1!)
        return re.sub(r"\(a\d*!\)|\(b!\)", "(!)", lib.infer_schema(scope["f"], mutates_args=mutates))

    for mutates in ((), "unknown"):
        assert text(toolkit.library, toolkit.Tensor, mutates) == text(torch.library, torch.Tensor, mutates)


def test_values_and_gradients_match_torch(defined):
    def backward(ctx, gx, gy):
        x, y = ctx.saved_tensors
        return gx * y + gy, gx * x + 2 * gy * y, None

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])

    ops = []
    for lib, T in ((toolkit.library, toolkit.Tensor), (torch.library, torch.Tensor)):
        def f(x: T, y: T, n: int) -> tuple[T, T]:
            return x * y + n, (x + y * y) * 1.0

        op = lib.custom_op(f"{'tk' if lib is toolkit.library else 'th'}lib::{_name('mix')}", mutates_args=())(f)
        op.register_autograd(backward, setup_context=setup)
        ops.append(op)
    defined.append(ops[0])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    tx, ty = toolkit.tensor(a, requires_grad=True), toolkit.tensor(b, requires_grad=True)
    rx, ry = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    o1, o2 = ops[0](tx, ty, 3)
    r1, r2 = ops[1](rx, ry, 3)
    assert_close(o1, r1)
    assert_close(o2, r2)
    (o1 * 2 + o2).sum().backward()
    (r1 * 2 + r2).sum().backward()
    assert_close(tx.grad, rx.grad)
    assert_close(ty.grad, ry.grad)
    ours, theirs = (type(t.grad_fn).__name__ for t in (o1, r1))
    assert ours.replace(ops[0].__name__, "op").replace("tklib", "lib") == \
        theirs.replace(ops[1]._name, "op").replace("thlib", "lib") == "GeneratedBackwardFor_lib_op_defaultBackward"
    assert toolkit.autograd.gradcheck(lambda x, y: ops[0](x, y, 1), [tx.detach().requires_grad_(),
                                                                    ty.detach().requires_grad_()])


def test_backward_without_register_autograd_raises_torchs_error(defined):
    errors = []
    for lib, T, mod in ((toolkit.library, toolkit.Tensor, toolkit), (torch.library, torch.Tensor, torch)):
        def f(x: T) -> T:
            return x * 2

        name = f"{'tk' if lib is toolkit.library else 'th'}lib::{_name('nograd')}"
        op = lib.custom_op(name, mutates_args=())(f)
        if lib is toolkit.library:
            defined.append(op)
        y = op(mod.ones(2, requires_grad=True))
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        errors.append(str(e.value).replace(name, "<op>").replace(name.replace("::", ".") + ".default", "<op>"))
    assert errors[0] == errors[1]


def _raises_alike(make, exc=Exception):
    """Run ``make(lib, Tensor)`` for both libraries: both raise the same exception type (returned)."""
    types = []
    for lib, T in ((toolkit.library, toolkit.Tensor), (torch.library, torch.Tensor)):
        with pytest.raises(exc) as e:
            make(lib, T)
        types.append((type(e.value), str(e.value)))
    assert types[0][0] is types[1][0], types
    return types


def test_errors_match_torchs(defined):
    def unannotated(lib, T):
        def f(x):
            return x

        lib.custom_op(f"zz::{_name('u')}", mutates_args=())(f)

    assert "must have a type annotation" in _raises_alike(unannotated, ValueError)[0][1]

    def unknown_mutated(lib, T):
        def f(x: T) -> None:
            pass

        lib.custom_op(f"zz::{_name('m')}", mutates_args=("y",))(f)

    assert "were not found" in _raises_alike(unknown_mutated, ValueError)[0][1]

    def bad_schema(lib, T):
        lib.custom_op(f"zz::{_name('b')}", mutates_args=(), schema="(Tensor x -> Tensor")(lambda x: x)

    assert "zz::b" in _raises_alike(bad_schema, RuntimeError)[0][1]  # ours names the op

    def aliasing_output(lib, T):
        def f(x: T) -> T:
            return x

        op = lib.custom_op(f"{'tk' if lib is toolkit.library else 'th'}lib::{_name('alias')}", mutates_args=())(f)
        if lib is toolkit.library:
            defined.append(op)
        op((toolkit if lib is toolkit.library else torch).ones(2))

    assert "may not alias any inputs" in _raises_alike(aliasing_output, RuntimeError)[0][1]

    def builtin_name(lib, T):
        def f(x: T) -> T:
            return x.clone()

        lib.custom_op("aten::sin", mutates_args=())(f)

    assert "with the same name and overload name multiple times" in _raises_alike(builtin_name, RuntimeError)[0][1]

    with pytest.raises(ValueError, match="namespace::name"):
        custom_op("no_namespace", mutates_args=())


def test_a_second_custom_op_of_a_name_replaces_the_first_as_torchs(defined):
    results = []
    for lib, mod in ((toolkit.library, toolkit), (torch.library, torch)):
        T = mod.Tensor
        name = f"{'tk' if lib is toolkit.library else 'th'}lib::{_name('again')}"

        def first(x: T) -> T:
            return x * 2

        def second(x: T) -> T:
            return x * 3

        lib.custom_op(name, mutates_args=())(first)
        op = lib.custom_op(name, mutates_args=())(second)
        if lib is toolkit.library:
            defined.append(op)
            results.append(getattr(toolkit.ops.tklib, name.split("::")[1])(mod.ones(1)).item())
        else:
            results.append(getattr(torch.ops.thlib, name.split("::")[1])(mod.ones(1)).item())
    assert results == [3.0, 3.0]


def test_library_define_and_impl_match_torchs(defined):
    ns_ours, ns_theirs = _name("tkdef"), _name("thdef")
    ours, theirs = Library(ns_ours, "DEF"), torch.library.Library(ns_theirs, "DEF")
    defined.append(ours)
    for lib in (ours, theirs):
        lib.define("thrice(Tensor x, float s=3.0) -> Tensor")
        lib.impl("thrice", lambda x, s=3.0: x * s, "CPU")
    assert_close(getattr(toolkit.ops, ns_ours).thrice(toolkit.ones(2)), getattr(torch.ops, ns_theirs).thrice(
        torch.ones(2)))
    for lib in (ours, theirs):
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            lib.define("thrice(Tensor x, float s=3.0) -> Tensor")
        with pytest.raises(RuntimeError, match="expected|does not parse"):
            lib.define("bad(Tensor x -> Tensor")
    for mod in (toolkit.library, torch.library):
        with pytest.raises(ValueError, match="Unsupported kind: BAD"):
            mod.Library("foo", "BAD")
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
            mod.Library("aten", "DEF")
    with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
        custom_op(f"{ns_ours}::thrice", mutates_args=(), schema="(Tensor x, float s=3.0) -> Tensor")(lambda x, s: x)
    with pytest.raises(AttributeError, match="no attribute 'nothere'"):
        _ = getattr(toolkit.ops, ns_ours).nothere


def test_composite_implicit_impl_records_its_parts(defined):
    lib = Library(_name("tkcomp"), "DEF")
    defined.append(lib)
    lib.define("sq(Tensor x) -> Tensor")
    lib.impl("sq", lambda x: x * x, "CompositeImplicitAutograd")
    x = toolkit.tensor([1.0, 2.0], requires_grad=True)
    getattr(toolkit.ops, lib.ns).sq(x).sum().backward()
    assert_close(x.grad, np.array([2.0, 4.0], np.float32))


def test_a_fake_of_the_wrong_shape_is_an_error_naming_the_op(defined):
    @custom_op(f"tklib::{_name('fake')}", mutates_args=())
    def op(x: toolkit.Tensor) -> toolkit.Tensor:
        return x + 1

    defined.append(op)
    op.register_fake(lambda x: x.new_empty((2,)))
    with pytest.raises(RuntimeError, match=rf"{op._qualname}: the fake \(register_fake\) and the kernel disagree on "
                                           r"output 0: the fake gives shape \(2,\)"):
        op(toolkit.ones(3))
    op.register_fake(lambda x: toolkit.empty_like(x))
    assert_close(op(toolkit.ones(3)), np.full(3, 2.0, np.float32))


def test_fake_types_the_scripted_graph(defined):
    @custom_op(f"tklib::{_name('typed')}", mutates_args=())
    def op(x: toolkit.Tensor) -> toolkit.Tensor:
        return x.sum(0)

    defined.append(op)

    @op.register_fake
    def _(x):
        return x.new_empty(x.shape[1:])

    def f(x):
        return op(x) * 2

    scripted = toolkit.jit.script(f)
    x = toolkit.ones(4, 3)
    assert_close(scripted(x), np.full(3, 8.0, np.float32))
    assert_close(scripted(x), np.full(3, 8.0, np.float32))
    g = str(scripted.graph_for(x))
    assert f"{op._qualname}(%x)" in g and "Float(3" in g


def test_mutating_op_writes_its_argument(defined):
    @custom_op(f"tklib::{_name('inc')}", mutates_args=("x",))
    def inc(x: toolkit.Tensor) -> None:
        x.add_(1)

    defined.append(inc)
    assert "Tensor(a!) x" in str(inc._schema)
    t = toolkit.zeros(2)
    assert inc(t) is None
    assert_close(t, np.ones(2, np.float32))


def test_kernel_for_one_device_type_only(defined):
    @custom_op(f"tklib::{_name('cudaonly')}", mutates_args=(), device_types="cuda")
    def op(x: toolkit.Tensor) -> toolkit.Tensor:
        return x * 2

    defined.append(op)
    with pytest.raises(NotImplementedError, match="no kernel for device 'cpu'"):
        op(toolkit.ones(2))
    op.register_kernel("cpu", lambda x: x * 5)
    assert_close(op(toolkit.ones(2)), np.full(2, 5.0, np.float32))


def test_script_resolves_toolkit_ops_namespace_calls(defined):
    @custom_op("tkscript::twice", mutates_args=())
    def twice(x: toolkit.Tensor) -> toolkit.Tensor:
        return x * 2

    defined.append(twice)

    def f(x):
        return toolkit.ops.tkscript.twice(x) + 1

    scripted = toolkit.jit.script(f)
    assert "tkscript::twice(%x)" in str(scripted.graph)
    assert_close(scripted(toolkit.ones(2)), np.full(2, 3.0, np.float32))
    traced = toolkit.jit.trace(f, (toolkit.ones(2),))
    assert [n.kind for n in traced.graph.nodes()].count("tkscript::twice") == 1


def _overwriting(lib, tensor_type):
    def scale_(x):
        x.mul_(2)

    scale_.__annotations__ = {"x": tensor_type, "return": None}
    return lib.custom_op(f"{'tk' if lib is toolkit.library else 'th'}lib::{_name('scale_')}",
                         mutates_args=("x",))(scale_)


def test_an_op_that_writes_its_argument_bumps_its_version_so_backward_refuses_as_torch():
    """A value saved for backward and then written by a mutating custom op must fail the backward (torch: 'modified by
    an inplace operation'), never give a gradient computed from the overwritten values."""
    results = []
    for lib, t in ((toolkit, toolkit.Tensor), (torch, torch.Tensor)):
        op = _overwriting(lib.library, t)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        before = y._version
        op(y.detach())
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            y.sum().backward()
        results.append((y._version > before, type(e.value)))
    assert results[0] == results[1]
