"""``toolkit.fft`` against ``torch.fft``: every function over dtypes, shapes, ``n``/``s``/``dim``/``norm``, ``out=``,
the argument errors, and complex-aware gradchecks of every transform."""

from __future__ import annotations

import math

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck, gradgradcheck

from ..conftest import TORCH_DTYPES, assert_close

torch = pytest.importorskip("torch")

C2C = ("fft", "ifft")
R2C = ("rfft", "ihfft")
C2R = ("irfft", "hfft")
BASES = C2C + R2C + C2R
DTYPES = (toolkit.float32, toolkit.float64, toolkit.complex64, toolkit.complex128, toolkit.int64)


def _data(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is toolkit.int64:
        return rng.integers(-4, 5, shape)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a.astype(dtype.name))


def _pair(shape, dtype, seed=0):
    a = _data(shape, dtype, seed)
    return toolkit.tensor(a), torch.from_numpy(a.copy())


def _compare(name, shape, dtype, **kwargs):
    x, tx = _pair(shape, dtype)
    out = getattr(toolkit.fft, name)(x, **kwargs)
    expected = getattr(torch.fft, name)(tx, **kwargs)
    assert out.is_conj() == expected.is_conj()
    assert_close(out.resolve_conj(), expected.resolve_conj(), accum=max(math.prod(shape), 1))


def _accepts(base, dtype) -> bool:
    return not (base in R2C and dtype.is_complex)


# ----------------------------------------------------------------------------- 1-d transforms
ONE_D_ARGS = [
    ((8,), {}),
    ((7,), {"norm": "ortho"}),
    ((1,), {}),
    ((3, 6), {"n": 9, "norm": "forward"}),
    ((3, 6), {"n": 4, "dim": 0}),
    ((2, 5, 1), {"dim": 1, "norm": "backward"}),
    ((2, 1, 4), {"n": 1}),
    ((2, 3, 4), {"n": 5, "dim": -2, "norm": "ortho"}),
]


def _no_default_length(base, shape, dim, s) -> bool:
    """A c2r transform of one element with no length given: an error (tested below), not a case."""
    return base in C2R and shape[dim] == 1 and (s is None or s[-1] == -1)


ONE_D_CASES = [pytest.param(base, dtype, shape, kwargs, id=f"{base}-{dtype.name}-{shape}-{kwargs}")
               for base in BASES for dtype in DTYPES for shape, kwargs in ONE_D_ARGS
               if _accepts(base, dtype)
               and not _no_default_length(base, shape, kwargs.get("dim", -1), (kwargs["n"],) if "n" in kwargs else None)]


@pytest.mark.parametrize("base,dtype,shape,kwargs", ONE_D_CASES)
def test_one_dim_matches_torch(base, dtype, shape, kwargs):
    _compare(base, shape, dtype, **kwargs)


# ----------------------------------------------------------------------------- 2-d and n-d transforms
ND_ARGS = [
    ((4, 6), {}),
    ((3, 5), {"norm": "ortho"}),
    ((2, 3, 5), {"s": (4, 4)}),
    ((2, 3, 5), {"s": (2, -1), "dim": (2, 0), "norm": "forward"}),
    ((3, 4, 2), {"dim": (0, 2)}),
    ((1, 4, 3), {"s": (5, 1, 6)}),
    ((2, 3, 4), {"dim": (-1,), "norm": "backward"}),
    ((4, 1), {"s": (3, 3), "dim": (1, 0)}),
]


def _fits(form: str, kwargs: dict) -> bool:
    """Whether the arguments describe a transform of ``form`` ("2": exactly two dims)."""
    return form == "n" or all(len(kwargs[k]) == 2 for k in ("s", "dim") if k in kwargs)


ND_CASES = [pytest.param(form, base, dtype, shape, kwargs, id=f"{base}{form}-{dtype.name}-{shape}-{kwargs}")
            for form in ("2", "n") for base in BASES for dtype in DTYPES for shape, kwargs in ND_ARGS
            if _accepts(base, dtype) and _fits(form, kwargs)
            and not _no_default_length(base, shape, kwargs["dim"][-1] if "dim" in kwargs else -1, kwargs.get("s"))]


@pytest.mark.parametrize("form,base,dtype,shape,kwargs", ND_CASES)
def test_multi_dim_matches_torch(form, base, dtype, shape, kwargs):
    _compare(base + form, shape, dtype, **kwargs)


def test_fftn_of_a_scalar_and_of_no_dims():
    _compare("fftn", (), toolkit.float64)
    _compare("fftn", (3, 2), toolkit.complex64, dim=())
    _compare("ifftn", (3, 2), toolkit.float32, dim=[])


def test_bool_input_computes_in_the_default_dtype():
    x = toolkit.tensor([True, False, True])
    assert toolkit.fft.fft(x).dtype is toolkit.complex64
    assert toolkit.fft.irfft(x).dtype is toolkit.float32
    assert_close(toolkit.fft.rfft(x), torch.fft.rfft(torch.tensor([True, False, True])))


def test_roundtrips():
    x = toolkit.randn(4, 6, dtype=toolkit.float64)
    assert_close(toolkit.fft.irfftn(toolkit.fft.rfftn(x), s=x.shape), x.numpy())
    assert_close(toolkit.fft.ifft2(toolkit.fft.fft2(x)).real, x.numpy())
    assert_close(toolkit.fft.hfft(toolkit.fft.ihfft(x[0]), n=6), x[0].numpy())


# ----------------------------------------------------------------------------- frequencies and shifts
@pytest.mark.parametrize("name", ("fftfreq", "rfftfreq"))
@pytest.mark.parametrize("n,d", [(0, 1.0), (1, 1.0), (5, 1.0), (8, 0.1), (7, 2.5), (4, 0.0)])
@pytest.mark.parametrize("dtype", (None, toolkit.float64, toolkit.complex64), ids=str)
def test_frequencies_match_torch(name, n, d, dtype):
    torch_dtype = None if dtype is None else TORCH_DTYPES[dtype]
    if dtype is toolkit.complex64:  # allowed by the check, refused by the range it is built from
        with pytest.raises(NotImplementedError) as expected:
            getattr(torch.fft, name)(n, d, dtype=torch_dtype)
        with pytest.raises(NotImplementedError, match=str(expected.value)):
            getattr(toolkit.fft, name)(n, d, dtype=dtype)
        return
    assert_close(getattr(toolkit.fft, name)(n, d, dtype=dtype), getattr(torch.fft, name)(n, d, dtype=torch_dtype))


def test_frequencies_options_and_out():
    f = toolkit.fft.fftfreq(4, requires_grad=True)
    assert f.requires_grad and f.is_leaf
    o = toolkit.empty(0, dtype=toolkit.float64)
    assert toolkit.fft.rfftfreq(6, 0.5, out=o) is o
    assert_close(o, torch.fft.rfftfreq(6, 0.5, out=torch.empty(0, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match="fftfreq requires a floating point or complex dtype"):
        toolkit.fft.fftfreq(4, dtype=toolkit.int64)
    with pytest.raises(RuntimeError, match="rfftfreq requires a floating point or complex dtype"):
        toolkit.fft.rfftfreq(4, out=toolkit.empty(0, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match=r"negative dimension -1"):
        toolkit.fft.fftfreq(-1)


@pytest.mark.parametrize("name", ("fftshift", "ifftshift"))
@pytest.mark.parametrize("shape,dim", [((5,), None), ((4, 7), None), ((4, 7), 1), ((3, 4, 5), (0, 2)),
                                       ((3, 4), (-1,)), ((2, 3), (0, 0))])
@pytest.mark.parametrize("dtype", (toolkit.float32, toolkit.complex128, toolkit.int64), ids=str)
def test_shifts_match_torch(name, shape, dim, dtype):
    x, tx = _pair(shape, dtype)
    assert_close(getattr(toolkit.fft, name)(x, dim=dim), getattr(torch.fft, name)(tx, dim=dim))


def test_shifts_undo_each_other_and_differentiate():
    x = toolkit.randn(5, 6, dtype=toolkit.float64, requires_grad=True)
    assert_close(toolkit.fft.ifftshift(toolkit.fft.fftshift(x)), x.detach().numpy())
    assert gradcheck(lambda t: toolkit.fft.fftshift(t, dim=0), (x,))
    assert gradcheck(lambda t: toolkit.fft.ifftshift(t), (x,))


# ----------------------------------------------------------------------------- out=
def test_out_writes_and_returns_out():
    x, tx = _pair((3, 5), toolkit.float32)
    o = toolkit.empty(0, dtype=toolkit.complex128)
    assert toolkit.fft.fft(x, out=o) is o
    assert_close(o, torch.fft.fft(tx, out=torch.empty(0, dtype=torch.complex128)))
    o = toolkit.empty(0, dtype=toolkit.float32)
    z, tz = _pair((3, 5), toolkit.complex64)
    assert toolkit.fft.irfftn(z, s=(3, 6), out=o) is o
    assert_close(o, torch.fft.irfftn(tz, s=(3, 6)))
    o = toolkit.empty(0, dtype=toolkit.complex64)
    assert toolkit.fft.rfft2(x, out=o) is o and tuple(o.shape) == (3, 3)


@pytest.mark.parametrize("name", ("fft", "rfft", "ifftn", "ihfft2"))
def test_out_of_a_real_dtype_is_refused_for_complex_results(name):
    x, tx = _pair((3, 4), toolkit.float32)
    with pytest.raises(RuntimeError):
        getattr(torch.fft, name)(tx, out=torch.empty(0))
    with pytest.raises(RuntimeError):
        getattr(toolkit.fft, name)(x, out=toolkit.empty(0))


def test_out_refuses_inputs_that_require_grad():
    x = toolkit.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        toolkit.fft.fft(x, out=toolkit.empty(0, dtype=toolkit.complex64))


# ----------------------------------------------------------------------------- errors, as PyTorch raises them
ERRORS = [
    ("fft", (4, 5), toolkit.float32, {"n": 0}),
    ("fft", (4, 5), toolkit.float32, {"n": -1}),
    ("fft", (4, 5), toolkit.float32, {"dim": 2}),
    ("ifft", (4, 5), toolkit.float32, {"dim": -3}),
    ("fft", (), toolkit.float32, {}),
    ("fft", (4, 5), toolkit.float32, {"norm": "bad"}),
    ("fftn", (4, 5), toolkit.float32, {"norm": "sideways"}),
    ("rfft", (4, 5), toolkit.complex64, {}),
    ("ihfft", (4, 5), toolkit.complex128, {}),
    ("rfftn", (4, 5), toolkit.complex64, {}),
    ("rfft2", (4, 5), toolkit.complex64, {}),
    ("ihfftn", (4, 5), toolkit.complex64, {}),
    ("ihfft2", (4, 5), toolkit.complex128, {}),
    ("fftn", (4, 5), toolkit.float32, {"s": (3,), "dim": (0, 1)}),
    ("fftn", (4, 5), toolkit.float32, {"s": (3, 3, 3)}),
    ("fftn", (4, 5), toolkit.float32, {"dim": (0, 0)}),
    ("fftn", (4, 5), toolkit.float32, {"dim": (-1, 1)}),
    ("fftn", (4, 5), toolkit.float32, {"s": (0, 3)}),
    ("fftn", (4, 5), toolkit.float32, {"s": (-2, 3)}),
    ("fftn", (4, 5), toolkit.float32, {"s": (3,), "dim": (5,)}),
    ("fft2", (3,), toolkit.float32, {}),
    ("irfft", (4, 5), toolkit.complex64, {"n": 0}),
    ("irfft", (1,), toolkit.complex64, {}),
    ("hfft", (3, 1), toolkit.complex64, {}),
    ("irfftn", (3, 1), toolkit.complex64, {}),
    ("hfftn", (3, 1), toolkit.complex64, {"s": (2, -1)}),
    ("rfftn", (), toolkit.float32, {}),
    ("rfftn", (4, 5), toolkit.float32, {"dim": ()}),
    ("hfftn", (4, 5), toolkit.complex64, {"dim": []}),
    ("irfftn", (4, 5), toolkit.complex64, {"dim": []}),
    ("ihfftn", (4, 5), toolkit.float64, {"dim": []}),
    ("fftshift", (4, 5), toolkit.float32, {"dim": 5}),
    ("ifftshift", (), toolkit.float32, {}),
]


@pytest.mark.parametrize("name,shape,dtype,kwargs", ERRORS)
def test_errors_match_torch(name, shape, dtype, kwargs):
    x, tx = _pair(shape, dtype)
    with pytest.raises(Exception) as expected:
        getattr(torch.fft, name)(tx, **kwargs)
    with pytest.raises(expected.type) as got:
        getattr(toolkit.fft, name)(x, **kwargs)
    assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]


def test_half_precision_is_unsupported_as_in_torch():
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        toolkit.fft.fft(toolkit.randn(4).half())


# ----------------------------------------------------------------------------- gradients
GRAD_CASES = [
    ((6,), {}),
    ((5,), {"n": 8, "norm": "ortho"}),
    ((3, 4), {"n": 3, "dim": 0, "norm": "forward"}),
]
GRAD_ND_CASES = [
    ((3, 4), {}),
    ((2, 3, 4), {"s": (4, 3), "norm": "ortho"}),
    ((3, 2, 4), {"dim": (0,)}),
    ((3, 5), {"s": (2, 6), "dim": (1, 0), "norm": "forward"}),
]


def _grad_dtypes(base):
    return (toolkit.float64,) if base in R2C else (toolkit.float64, toolkit.complex128)


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("shape,kwargs", GRAD_CASES)
def test_gradcheck_one_dim(base, shape, kwargs):
    for dtype in _grad_dtypes(base):
        x = toolkit.tensor(_data(shape, dtype)).requires_grad_()
        fn = getattr(toolkit.fft, base)
        assert gradcheck(lambda t, fn=fn: fn(t, **kwargs).resolve_conj(), (x,))


@pytest.mark.parametrize("form,base,shape,kwargs", [
    (form, base, shape, kwargs) for form in ("2", "n") for base in BASES for shape, kwargs in GRAD_ND_CASES
    if _fits(form, kwargs) and (form == "n" or len(shape) >= 2)])
def test_gradcheck_multi_dim(form, base, shape, kwargs):
    for dtype in _grad_dtypes(base):
        x = toolkit.tensor(_data(shape, dtype)).requires_grad_()
        fn = getattr(toolkit.fft, base + form)
        assert gradcheck(lambda t, fn=fn: fn(t, **kwargs).resolve_conj(), (x,))


@pytest.mark.parametrize("name", ("fft", "rfft", "irfft", "hfftn", "ihfftn", "ifft2"))
def test_gradgradcheck(name):
    dtype = toolkit.float64 if name in ("rfft", "ihfftn") else toolkit.complex128
    x = toolkit.tensor(_data((3, 4), dtype)).requires_grad_()
    assert gradgradcheck(lambda t: getattr(toolkit.fft, name)(t).resolve_conj(), (x,))


def test_gradients_match_torch():
    a = _data((3, 5), toolkit.complex128)
    x, tx = toolkit.tensor(a).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    w = _data((3, 8), toolkit.float64)
    (toolkit.fft.irfft(x, n=8, norm="ortho") * toolkit.tensor(w)).sum().backward()
    (torch.fft.irfft(tx, n=8, norm="ortho") * torch.from_numpy(w)).sum().backward()
    assert_close(x.grad, tx.grad, accum=8)
    r = _data((4, 6), toolkit.float64)
    y, ty = toolkit.tensor(r).requires_grad_(), torch.from_numpy(r.copy()).requires_grad_()
    out, expected = toolkit.fft.rfftn(y, s=(5, 5)), torch.fft.rfftn(ty, s=(5, 5))
    (out.real.sum() + (out.imag ** 2).sum()).backward()
    (expected.real.sum() + (expected.imag ** 2).sum()).backward()
    assert_close(y.grad, ty.grad, accum=25)


# ----------------------------------------------------------------------------- stft / istft
def _tensors(kwargs, lib):
    make = toolkit.tensor if lib is toolkit else (lambda a: torch.from_numpy(a.copy()))
    return {k: make(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}


STFT_CASES = [
    ((64,), 16, {"hop_length": 4, "window": np.hanning(16), "return_complex": True}),
    ((2, 50), 12, {"window": np.hamming(12).astype(np.float32), "normalized": True, "return_complex": True}),
    ((40,), 10, {"hop_length": 3, "win_length": 6, "window": np.hanning(6), "center": False,
                 "return_complex": True, "align_to_window": True}),
    ((40,), 10, {"hop_length": 3, "win_length": 6, "center": False, "return_complex": True}),
    ((33,), 8, {"pad_mode": "constant", "onesided": False, "return_complex": True}),
    ((2, 33), 8, {"pad_mode": "replicate", "return_complex": False}),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape,n_fft,kwargs", STFT_CASES)
@pytest.mark.parametrize("dtype", (toolkit.float64, toolkit.complex128), ids=str)
def test_stft_matches_torch(shape, n_fft, kwargs, dtype):
    if dtype.is_complex and kwargs.get("onesided") is not False:
        kwargs = {**kwargs, "onesided": False}
    x, tx = _pair(shape, dtype)
    out = toolkit.stft(x, n_fft, **_tensors(kwargs, toolkit))
    assert_close(out, torch.stft(tx, n_fft, **_tensors(kwargs, torch)), accum=n_fft)


ISTFT_CASES = [
    (16, {"hop_length": 4}),
    (16, {"hop_length": 4, "length": 45}),
    (16, {"hop_length": 4, "length": 70}),
    (16, {"hop_length": 4, "center": False, "normalized": True}),
    (16, {"hop_length": 5, "win_length": 12}),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("n_fft,kwargs", ISTFT_CASES)
def test_istft_matches_torch_and_inverts_stft(n_fft, kwargs):
    x = _data((2, 50), toolkit.float64)
    win = kwargs.get("win_length", n_fft)
    w = np.hanning(win) + 0.1
    args = {"hop_length": kwargs["hop_length"], "win_length": win, "center": kwargs.get("center", True),
            "normalized": kwargs.get("normalized", False)}
    spec = torch.stft(torch.from_numpy(x), n_fft, window=torch.from_numpy(w), return_complex=True, **args)
    expected = torch.istft(spec, n_fft, window=torch.from_numpy(w), **kwargs)
    out = toolkit.istft(toolkit.tensor(spec.numpy()), n_fft, window=toolkit.tensor(w), **kwargs)
    assert_close(out, expected, accum=n_fft)
    if args["center"] and "length" not in kwargs:
        assert_close(out, x[:, :out.shape[1]], accum=n_fft)


def test_istft_of_a_two_sided_complex_spectrum():
    z = _data((16, 7), toolkit.complex128)
    w = np.hanning(16) + 0.1
    kwargs = {"hop_length": 4, "return_complex": True, "center": False}
    expected = torch.istft(torch.from_numpy(z), 16, window=torch.from_numpy(w), **kwargs)
    assert_close(toolkit.istft(toolkit.tensor(z), 16, window=toolkit.tensor(w), **kwargs), expected, accum=16)


STFT_ERRORS = [
    ((40,), 10, {}),  # real input without return_complex
    ((40,), 10, {"return_complex": True, "align_to_window": True}),
    ((40,), 0, {"return_complex": True}),
    ((40,), 60, {"return_complex": True, "center": False}),
    ((40,), 10, {"hop_length": 0, "return_complex": True}),
    ((40,), 10, {"win_length": 11, "return_complex": True}),
    ((40,), 10, {"window": np.ones(9), "return_complex": True}),
    ((2, 2, 14), 4, {"return_complex": True}),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape,n_fft,kwargs", STFT_ERRORS)
def test_stft_errors_match_torch(shape, n_fft, kwargs):
    x, tx = _pair(shape, toolkit.float64)
    with pytest.raises(Exception) as expected:
        torch.stft(tx, n_fft, **_tensors(kwargs, torch))
    with pytest.raises(expected.type) as got:
        toolkit.stft(x, n_fft, **_tensors(kwargs, toolkit))
    assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]


ISTFT_ERRORS = [
    ((9, 5), toolkit.float64, {}),
    ((9, 5), toolkit.complex128, {"hop_length": 20}),
    ((9, 5), toolkit.complex128, {"win_length": 20}),
    ((9, 5), toolkit.complex128, {"window": np.ones(3)}),
    ((9, 5), toolkit.complex128, {"onesided": False}),
    ((9, 5), toolkit.complex128, {"window": np.zeros(16)}),
    ((9, 5), toolkit.complex128, {"return_complex": True}),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape,dtype,kwargs", ISTFT_ERRORS)
def test_istft_errors_match_torch(shape, dtype, kwargs):
    x, tx = _pair(shape, dtype)
    with pytest.raises(Exception) as expected:
        torch.istft(tx, 16, **_tensors(kwargs, torch))
    with pytest.raises(expected.type) as got:
        toolkit.istft(x, 16, **_tensors(kwargs, toolkit))
    assert str(got.value).splitlines()[0] == str(expected.value).splitlines()[0]


def test_stft_and_istft_gradients():
    x = toolkit.tensor(_data((30,), toolkit.float64)).requires_grad_()
    w = toolkit.tensor(np.hanning(8) + 0.1)
    assert gradcheck(lambda t: toolkit.stft(t, 8, hop_length=2, window=w, return_complex=True), (x,))
    z = toolkit.tensor(_data((5, 9), toolkit.complex128)).requires_grad_()
    assert gradcheck(lambda t: toolkit.istft(t, 8, hop_length=2, window=w), (z,))


def test_strided_and_conjugated_inputs():
    a = _data((4, 6), toolkit.complex128)
    x, tx = toolkit.tensor(a), torch.from_numpy(a.copy())
    assert_close(toolkit.fft.fft2(x.t()), torch.fft.fft2(tx.t()), accum=24)
    assert_close(toolkit.fft.ifft(x[:, ::2], dim=0), torch.fft.ifft(tx[:, ::2], dim=0), accum=4)
    assert_close(toolkit.fft.hfft(x.conj()), torch.fft.hfft(tx.conj()), accum=10)
    assert_close(toolkit.fft.fftn(x.conj(), s=(3, 7)), torch.fft.fftn(tx.conj(), s=(3, 7)), accum=21)
