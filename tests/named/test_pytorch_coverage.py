"""Which ops take named tensors, judged by PyTorch's own data: every registry op PyTorch lets through with names
has a name rule, and every op PyTorch refuses raises its "not yet supported with named tensors".

PyTorch 2.13 has no named tensors any more, so the oracle is what its last named-tensor releases registered
(``pytorch_named_registrations.txt``) together with the installed torchgen's ``native_functions.yaml``, which
says which ops are compositions (``CompositeImplicitAutograd``): a composition runs its parts, each under its
own rule, so those are not judged here. Ops toolkit files under one name where PyTorch has several overloads
(``add`` for ``add.Tensor`` and ``add.Scalar``) are judged by all of them: supported when one is, refused when
none is and none is a composition.
"""

from __future__ import annotations

import pathlib
import warnings

import pytest
import torchgen

import toolkit
from toolkit.ops import registry as R

from .samples import float_first_samples, named, tensors

_HERE = pathlib.Path(__file__).parent
_YAML = pathlib.Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
_REFUSAL = "is not yet supported with named tensors"


def _registrations() -> set:
    lines = (_HERE / "pytorch_named_registrations.txt").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def _compositions() -> dict:
    """``{"name.overload": whether it is a CompositeImplicitAutograd composition}`` from native_functions.yaml
    (an entry without a dispatch table or a structured delegate is one by default)."""
    out, name, keys, delegate = {}, None, None, False

    def close():
        if name is not None:
            out[name] = (keys is None and not delegate) or any("CompositeImplicitAutograd" in k for k in keys or ())

    for line in _YAML.read_text().splitlines():
        if line.startswith("- func:"):
            close()
            name, keys, delegate = line[len("- func:"):].strip().split("(")[0], None, False
        elif line.startswith("  structured_delegate:"):
            delegate = True
        elif line.startswith("  dispatch:"):
            keys = []
        elif line.startswith("    ") and keys is not None and ":" in line:
            keys.append(line.split(":")[0].strip())
    close()
    return out


REGISTERED = _registrations()
COMPOSITE = _compositions()
_BY_BASE: dict = {}
for _full in COMPOSITE:
    _base, _, _overload = _full.partition(".")
    if "out" not in _overload:
        _BY_BASE.setdefault(_base, []).append(_full)


def verdict(op) -> str | None:
    """``"supported"``, ``"refused"``, or None where PyTorch's data does not decide (a composition, an op
    PyTorch lacks, a sparse kernel: sparse tensors carry no names)."""
    if "::" in op.schema.name or op.name.startswith("_sparse"):
        return None
    full = op.name + (f".{op.overload}" if op.overload else "")
    forms = [full] if full in COMPOSITE else _BY_BASE.get(op.name, [])
    if not forms:
        return None
    if any(f in REGISTERED and not COMPOSITE[f] for f in forms):
        return "supported"
    if any(COMPOSITE[f] for f in forms):
        return None
    return "refused"


def _judged():
    for op in R.all_ops():
        v = verdict(op)
        if v is not None:
            yield pytest.param(op, v, id=op.name + (f".{op.overload}" if op.overload else ""))


def test_the_oracle_is_readable():
    assert len(REGISTERED) > 500 and "add.Tensor" in REGISTERED and "gelu" not in REGISTERED
    assert COMPOSITE["reshape"] and not COMPOSITE["permute"] and not COMPOSITE["add.Tensor"]
    verdicts = [v for _, v in (p.values for p in _judged())]
    assert verdicts.count("supported") > 200 and verdicts.count("refused") > 150


@pytest.mark.parametrize("op,expected", list(_judged()))
def test_name_rule_follows_pytorch(op, expected):
    assert (op.name_rule is not None) == (expected == "supported"), (
        f"{op.qualified_name}: PyTorch {'supports' if expected == 'supported' else 'refuses'} named tensors")


def _runs(op, args, kw) -> Exception | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            op(*args, **kw)
        except Exception as e:
            return e
    return None


@pytest.mark.parametrize("op,expected", [p for p in _judged() if p.values[0].samples is not None])
def test_named_call_raises_where_pytorch_does(op, expected):
    checked = 0
    for args, kw in float_first_samples(op):
        rest = [tensors(a) for a in args[1:]]
        if _runs(op, [tensors(args[0]), *rest], kw) is not None:  # an error case of the op itself
            continue
        raised = _runs(op, [named(args[0]), *rest], kw)
        if expected == "refused":
            assert isinstance(raised, RuntimeError) and _REFUSAL in str(raised), f"{op.name} ran: {raised!r}"
        else:
            assert raised is None or _REFUSAL not in str(raised), f"{op.name} refused names: {raised}"
        checked += 1
    if not checked:
        pytest.skip("no sample with a floating first tensor")


def _dimname_ops() -> set:
    """Ops with a registered overload taking dimension names (``sum.dim_DimnameList``, ``softmax.Dimname``,
    ``cat.names``, ``flatten.using_names``...)."""
    return {f.partition(".")[0] for f in REGISTERED
            if any(w in f.partition(".")[2] for w in ("imname", "names", "named"))}


def _dim_ops():
    from toolkit.dispatch.names import _is_dim_param

    for op in R.all_ops():
        if op.name_rule is not None and any(_is_dim_param(a) for a in op.args) and "::" not in op.schema.name:
            yield pytest.param(op, id=op.name + (f".{op.overload}" if op.overload else ""))


@pytest.mark.parametrize("op", list(_dim_ops()))
def test_dims_by_name_where_pytorch_takes_them(op):
    """Dims by name go to ops PyTorch has Dimname overloads for; the rest take positions, as PyTorch's do."""
    base = op.inplace_of.name if op.inplace_of is not None else op.name
    takes = base in _dimname_ops() and not base.startswith("_sparse")
    assert op.dim_names == takes, f"{op.name}: PyTorch {'takes' if takes else 'refuses'} dims by name"


def test_dims_by_name_refused_with_a_type_error():
    x = toolkit.randn(2, 3, names=("N", "C"))
    assert x.sum("C").names == ("N",) and x.cumsum("C").names == ("N", "C")
    for call in (lambda: x.narrow("C", 0, 2), lambda: x.chunk(2, "C"), lambda: x.split(1, "C")):
        with pytest.raises(TypeError, match="must be int, not str"):
            call()
