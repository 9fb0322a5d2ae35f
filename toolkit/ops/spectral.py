"""Short-time Fourier transforms: ``stft`` (a signal as the spectra of its windowed frames) and ``istft``
(the signal back, by overlap-adding the frames' inverse transforms and dividing by the summed squared window).

Both are compositions of registered ops (framing by ``as_strided``, the FFT primitives, ``col2im`` for the
overlap-add), so autograd differentiates them through their parts::

    x = toolkit.randn(400)
    w = toolkit.hann_window(64)
    X = toolkit.stft(x, 64, hop_length=16, window=w, return_complex=True)    # (33, 26)
    toolkit.istft(X, 64, hop_length=16, window=w, length=400)               # x again
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core.meta import TensorMeta
from . import api
from .registry import COMPOSITE, op

_KIND = {"float32": "Float", "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


def _window_text(window) -> str:
    if window is None:
        return "None"
    kind = _KIND.get(window.dtype.name, window.dtype.title)
    return f"torch.{kind}Tensor{{[{', '.join(str(s) for s in window.shape)}]}}"


def _call_text(self, n_fft, hop, win, window, normalized, onesided, return_complex, align) -> str:
    """PyTorch's print of an ``stft`` call, the prefix of its argument errors."""
    shape = ", ".join(str(s) for s in self.shape)
    return (f"stft(torch.{_KIND.get(self.dtype.name, self.dtype.title)}Tensor[{shape}], n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={_window_text(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, align_to_window={_opt(align)}) : ")


def _istft_text(self, n_fft, hop, win, window, center, normalized, onesided, length, return_complex) -> str:
    """PyTorch's print of an ``istft`` call, the prefix of its argument errors."""
    shape = ", ".join(str(s) for s in self.shape)
    return (f"istft(CPU{_KIND.get(self.dtype.name, self.dtype.title)}Type[{shape}], n_fft={n_fft}, "
            f"hop_length={hop}, win_length={win}, window={_window_text(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(return_complex)})")


def _stft_plan(self, n_fft, hop_length, win_length, window, center, normalized, onesided, return_complex,
               align_to_window):
    """Checks, then ``(hop, win, onesided, padded length)``: what the call computes, from metadata alone."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    complex_in = self.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not complex_in:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    ndim = len(self.shape)
    length = self.shape[-1] + (2 * (n_fft // 2) if center else 0)
    prefix = _call_text(_Shape(self.dtype, tuple(self.shape[:-1]) + (length,)), n_fft, hop, win, window, normalized,
                        onesided, return_complex, align_to_window)
    if ndim not in (1, 2):
        raise RuntimeError(prefix + "expected a 1D or 2D tensor")
    if not 0 < n_fft <= length:
        raise RuntimeError(prefix + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(prefix + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(prefix + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (len(window.shape) != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + f"expected a 1D window tensor of size equal to win_length={win}, but got "
                                    f"window with size {list(window.shape)}")
    sided = (not complex_in) if onesided is None else onesided
    if complex_in and sided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    return hop, win, sided, length


class _Shape:
    """Just a dtype and a shape, for printing a call as PyTorch does (after ``center``'s padding)."""

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape


def _full_window(window, win: int, n_fft: int, like):
    """The window centred in ``n_fft`` points, zeros around it (a rectangle where none is given)."""
    if window is None:
        window = api.ones((win,), dtype=like.dtype.to_real(), device=like.device)
    if win == n_fft:
        return window
    left = (n_fft - win) // 2
    return api.constant_pad_nd(window, [left, n_fft - win - left])


@op("stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
    "bool center=True, str pad_mode=\"reflect\", bool normalized=False, bool? onesided=None, "
    "bool? return_complex=None, bool? align_to_window=None) -> Tensor", kind=COMPOSITE, composite=True,
    differentiable=False, out=False)
def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the (one-sided, for real input) spectrum of each ``n_fft``-point frame,
    frames ``hop_length`` apart, each multiplied by ``window`` (``win_length`` points, centred); ``center`` pads
    ``n_fft // 2`` on both sides by ``pad_mode``. Out: (batch,) frequencies x frames, complex (or its
    ``view_as_real`` for ``return_complex=False``)."""
    hop, win, sided, _ = _stft_plan(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                                    return_complex, align_to_window)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=3)
    x = self if self.ndim == 2 else self.unsqueeze(0)
    if center:
        p = n_fft // 2
        x = api.pad(x.unsqueeze(0), [p, p], pad_mode).squeeze(0)
    w = _full_window(window, win, n_fft, x) if window is not None or win != n_fft else None
    if align_to_window:  # frames line up with the window, not with the n_fft points around it
        left = (n_fft - win) // 2
        x = api.constant_pad_nd(x, [left, n_fft - win - left])
    x = x.contiguous()
    n_frames = 1 + (x.shape[1] - n_fft) // hop
    frames = x.as_strided((x.shape[0], n_frames, n_fft), (x.stride(0), hop * x.stride(1), x.stride(1)))
    if w is not None:
        frames = frames * w
    norm = 1 if normalized else 0
    if frames.is_complex():
        out = api._fft_c2c(frames, [2], norm, True)
    else:
        out = api._fft_r2c(frames, [2], norm, sided)
    out = out.transpose(1, 2)
    if self.ndim == 1:
        out = out.squeeze(0)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=3)
        return api.view_as_real(out)
    return out


@stft.meta_rule
def _(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
      normalized=False, onesided=None, return_complex=None, align_to_window=None):
    hop, win, sided, length = _stft_plan(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                                         return_complex, align_to_window)
    span = win if align_to_window else n_fft
    shape = (n_fft // 2 + 1 if sided else n_fft, 1 + (length - span) // hop)
    if len(self.shape) == 2:
        shape = (self.shape[0], *shape)
    dtype = self.dtype if self.dtype.is_complex else (window.dtype if window is not None and window.dtype.is_complex
                                                      else self.dtype.to_complex())
    if return_complex is False:
        return TensorMeta((*shape, 2), dtype.to_real(), self.device)
    return TensorMeta(shape, dtype, self.device)


@stft.sample_inputs
def _(rng):
    # the window goes by position: the shared samples convert positional arrays to tensors
    yield (rng.standard_normal(32), 8, None, None, np.hanning(8)), {"return_complex": True}
    yield (rng.standard_normal((2, 30)).astype(np.float32), 6, 4, None, np.ones(6, np.float32)), {
        "return_complex": True}
    yield (rng.standard_normal(40), 10, 3, 6, np.hanning(6)), {"center": False, "return_complex": True,
                                                               "align_to_window": True}
    yield (rng.standard_normal(24), 8, None, None, np.hanning(8)), {
        "pad_mode": "constant", "normalized": True, "return_complex": True, "onesided": False}


# ----------------------------------------------------------------------------- istft
def _istft_plan(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex):
    """Checks, then ``(hop, win, onesided, frames, signal length before cutting, start, end)``."""
    if not self.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    shape = tuple(self.shape)
    if not all(shape):
        raise RuntimeError("istft input tensor cannot be empty")
    if len(shape) not in (2, 3):
        raise RuntimeError("Expected a tensor with 3 or 4 dimensions of real, or 2 or 3 dimensions of complex")
    fft_size, n_frames = shape[-2], shape[-1]
    prefix = _istft_text(self, n_fft, hop, win, window, center, normalized, onesided, length, return_complex) + " : "
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(prefix + "expected the frequency dimension (3rd to the last) of the input tensor to "
                                    f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(prefix + "expected the frequency dimension (3rd to the last) of the input tensor to "
                                    f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(prefix + "expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(prefix + "expected 0 < win_length <= n_fft")
    if window is not None and (len(window.shape) != 1 or window.shape[0] != win):
        raise RuntimeError(prefix + "Invalid window shape. window has to be 1D and length of `win_length`")
    if return_complex and sided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window.dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    total = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    return hop, win, sided, n_frames, total, start, end


def _overlap_add(frames, n_fft: int, hop: int, total: int):
    """Sum (batch, frames, n_fft) frames placed ``hop`` apart into (batch, total) signals (``col2im``)."""
    folded = api.col2im(frames.transpose(1, 2), [total, 1], [n_fft, 1], [1, 1], [0, 0], [hop, 1])
    return folded.reshape(frames.shape[0], total)


@op("istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
    "bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) "
    "-> Tensor", kind=COMPOSITE, composite=True, differentiable=False, out=False)
def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of ``stft``: each frame's inverse transform times the window, overlap-added, divided by the
    overlap-added squared window; ``center`` drops the ``n_fft // 2`` padded points at each end, and ``length``
    cuts (or zero-pads) the signal to that many points."""
    hop, win, sided, n_frames, total, start, end = _istft_plan(
        self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)
    w = _full_window(window, win, n_fft, self)
    spec = (self if self.ndim == 3 else self.unsqueeze(0)).transpose(1, 2)  # (batch, frames, frequencies)
    norm = 1 if normalized else 2
    if return_complex:
        frames = api._fft_c2c(spec, [2], norm, False)
    else:
        if not sided:
            spec = spec.narrow(2, 0, n_fft // 2 + 1)
        frames = api._fft_c2r(spec, [2], norm, n_fft)
    y = _overlap_add(frames * w, n_fft, hop, total)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), n_fft, hop, total)
    stop = min(end, total)
    y = y.narrow(1, start, stop - start)
    envelope = envelope.narrow(1, start, stop - start)
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(_istft_text(self, n_fft, hop, win, window, center, normalized, onesided, length,
                                       return_complex) + " window overlap add min: 1")
    y = y / envelope
    if self.ndim == 2:
        y = y.squeeze(0)
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with "
                      "zeros in the tail. Please check your center and hop_length settings.", UserWarning,
                      stacklevel=3)
        y = api.constant_pad_nd(y, [0, end - total])
    return y


@istft.meta_rule
def _(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
      length=None, return_complex=False):
    *_, start, end = _istft_plan(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                                 return_complex)
    shape = (end - start,) if len(self.shape) == 2 else (self.shape[0], end - start)
    dtype = self.dtype if return_complex else self.dtype.to_real()
    return TensorMeta(shape, dtype, self.device)


@istft.sample_inputs
def _(rng):
    def spectrum(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)

    x = rng.standard_normal(40)
    frames = np.lib.stride_tricks.sliding_window_view(np.pad(x, 4, mode="reflect"), 8)[::2] * np.hanning(8)
    yield (np.fft.rfft(frames).T.copy(), 8, 2, None, np.hanning(8)), {"length": 40}
    yield (spectrum(2, 5, 9), 8, None, None, np.hanning(8) + 0.1), {}
    yield (spectrum(8, 7), 8, 3, 6, np.hanning(6) + 0.2), {"return_complex": True, "normalized": True}
