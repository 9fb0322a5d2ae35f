"""The quantized tensor kind: a ``Tensor`` whose ``_data`` holds the stored integers (uint8, int8 or int32) and
which carries its quantization parameters (``toolkit.quantize_per_tensor``, ``toolkit.quantize_per_channel``).

Its ``_sparse_key`` is ``"quantized_cpu"``: the dispatcher's one scan of a call's tensors sends it to the ops'
``"quantized_cpu"`` kernels, registered here, and refuses every other op with PyTorch's ``QuantizedCPU`` error,
so strided kernels never see its integers as numbers. Views of a per-tensor quantized tensor are views of its
integers with the same parameters::

    q = toolkit.quantize_per_tensor(x, 0.1, 10, toolkit.quint8)
    q.t().int_repr()   # the integers, transposed
    q + q              # NotImplementedError: Could not run 'aten::add.Tensor' with arguments from the 'QuantizedCPU' ...
"""

from __future__ import annotations

import numpy as np

from toolkit._core import qscheme as _qs
from toolkit._core.device import CPU as _CPU
from toolkit._core.dtypes import as_dtype, qdtype
from toolkit._core.storage import Storage
from toolkit.ops import quantized as _k
from toolkit.ops import registry as R
from toolkit.printing import repr_with_suffixes
from toolkit.tensor import Tensor, wrap

_new = object.__new__
_NO_HISTORY = (("_requires_grad", False), ("grad_fn", None), ("_grad", None), ("_base", None), ("_view_chain", None),
               ("_output_nr", 0), ("_extra", None))
_PER_TENSOR_ONLY = "Setting strides is possible only on uniformly quantized tensor"
_IMPROVE = "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)"


class QuantizedTensor(Tensor):
    """A quantized tensor (``is_quantized`` is True; ``dtype`` is ``toolkit.quint8``, ``qint8`` or ``qint32``)."""

    __slots__ = ("_qdtype", "_qscheme", "_scale", "_zero_point", "_axis")
    is_quantized = True
    _sparse_key = "quantized_cpu"  # the dispatcher runs ops' "quantized_cpu" kernels for it

    @property
    def dtype(self) -> qdtype:
        return self._qdtype

    def _values(self) -> np.ndarray:
        """The real numbers it stands for (what printing, ``item`` and ``__bool__`` read)."""
        if self._qscheme is _qs.per_tensor_affine:
            return _k.dequantize_per_tensor(self._data, self._scale, self._zero_point)
        return _k.dequantize_per_channel(self._data, self._scale, self._zero_point, self._axis)

    def __repr__(self, *, tensor_contents=None) -> str:
        suffixes = [f"size={tuple(self._data.shape)}", f"dtype={self._qdtype!r}",
                    f"quantization_scheme={self._qscheme!r}"]
        if self._qscheme is _qs.per_tensor_affine:
            suffixes += [f"scale={self._scale}", f"zero_point={self._zero_point}"]
        else:
            suffixes += [f"scale={self.q_per_channel_scales()!r}", f"zero_point={self.q_per_channel_zero_points()!r}",
                         f"axis={self._axis}"]
        return repr_with_suffixes(self._values(), suffixes)

    # PyTorch's answers for conversions a quantized tensor does not offer.
    def numpy(self, *, force: bool = False):
        raise TypeError(f"Got unsupported ScalarType {self._qdtype.title}")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def tolist(self):
        raise RuntimeError("load_scalar: invalid type")

    def to(self, *args, **kwargs):
        """Only what keeps it as it is (its own dtype, the CPU); any other dtype is PyTorch's refusal."""
        for a in (*args, *kwargs.values()):
            if a is not None and a is not self._qdtype and not isinstance(a, (bool, str)) and \
                    not (hasattr(a, "type") and getattr(a, "type", None) == "cpu"):
                raise RuntimeError("Creation of quantized tensor requires quantized dtype like toolkit.quint8")
            if isinstance(a, str) and a != "cpu":
                raise NotImplementedError(f"toolkit keeps quantized tensors on the CPU, not '{a}'")
        return self

    def detach(self) -> QuantizedTensor:
        return _like(self, self._data, self._storage)

    @property
    def data(self) -> QuantizedTensor:
        return self.detach()

    def __deepcopy__(self, memo):
        t = _like(self, self._data.copy())
        memo[id(self)] = t
        return t

    def _assign_sparse(self, other: QuantizedTensor) -> None:
        """Write ``other``'s integers and parameters into this tensor's buffer (the dispatcher's in-place ops on a
        quantized tensor: ``relu_``), so its views see them, as PyTorch's in-place quantized kernels do."""
        if other is self:
            return
        self._data[...] = other._data
        self._storage.version += 1
        self._scale, self._zero_point = other._scale, other._zero_point

    def __reduce_ex__(self, protocol):
        return (_rebuild, (np.ascontiguousarray(self._data), self._qdtype.name, self._qscheme.name, self._scale,
                           self._zero_point, self._axis))


def make(ints: np.ndarray, dtype: qdtype, scheme: str, scale, zero_point, axis, device=None,
         storage: Storage | None = None) -> QuantizedTensor:
    """A quantized tensor over ``ints`` (kept, not copied) with the given parameters and no history; on the CPU
    unless ``device`` says otherwise (``q.device`` is never None: traced graphs print it in their types)."""
    t = _new(QuantizedTensor)
    t._data = ints
    if storage is None:
        base = ints.base
        storage = Storage(base if isinstance(base, np.ndarray) else ints, _CPU if device is None else device)
    t._storage = storage
    for name, value in _NO_HISTORY:
        setattr(t, name, value)
    t._qdtype, t._qscheme, t._scale, t._zero_point, t._axis = dtype, _qs._NAMES[scheme], scale, zero_point, axis
    return t


def _like(q: QuantizedTensor, ints: np.ndarray, storage: Storage | None = None) -> QuantizedTensor:
    return make(ints, q._qdtype, q._qscheme.name, q._scale, q._zero_point, q._axis, q.device, storage)


def _rebuild(ints, dtype_name, scheme, scale, zero_point, axis):
    return make(np.array(ints), as_dtype(dtype_name), scheme, scale, zero_point, axis)


_k.QUANTIZED_KIND["make"] = make


# ------------------------------------------------------------------ the ops' "quantized_cpu" kernels
def _kernel(name: str, overload: str = ""):
    return R.get(name, overload).kernel("quantized_cpu")


def _per_tensor(q: QuantizedTensor) -> None:
    if q._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError(f"Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  {_IMPROVE}")


def _per_channel(q: QuantizedTensor) -> None:
    if q._qscheme is not _qs.per_channel_affine:
        raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                           f"kPerChannelAffineFloatQParams to be true, but got false.  {_IMPROVE}")


@_kernel("int_repr")
def _int_repr(q):
    return wrap(np.array(q._data))


@_kernel("dequantize", "self")
def _dequantize(q):
    return wrap(np.ascontiguousarray(q._values()))


@_kernel("q_scale")
def _q_scale(q):
    _per_tensor(q)
    return q._scale


@_kernel("q_zero_point")
def _q_zero_point(q):
    _per_tensor(q)
    return q._zero_point


@_kernel("q_per_channel_scales")
def _q_per_channel_scales(q):
    _per_channel(q)
    return wrap(np.array(q._scale, dtype=np.float64))


@_kernel("q_per_channel_zero_points")
def _q_per_channel_zero_points(q):
    _per_channel(q)
    return wrap(np.array(q._zero_point, dtype=np.int64))


@_kernel("q_per_channel_axis")
def _q_per_channel_axis(q):
    _per_channel(q)
    return q._axis


@_kernel("qscheme")
def _qscheme(q):
    return q._qscheme


@_kernel("equal")
def _equal(a, b):
    """Equal when both are quantized alike (dtype, scheme, parameters) and store the same integers."""
    if not (isinstance(a, QuantizedTensor) and isinstance(b, QuantizedTensor)):
        return False
    if a._qdtype is not b._qdtype or a._qscheme is not b._qscheme or a._axis != b._axis:
        return False
    if not (np.array_equal(a._scale, b._scale) and np.array_equal(a._zero_point, b._zero_point)):
        return False
    return a._data.shape == b._data.shape and bool(np.array_equal(a._data, b._data))


@_kernel("clone")
def _clone(q, memory_format=None):
    return _like(q, np.array(q._data))


def _on_ints(op: R.OpDef):
    """A view or reshuffle of a per-tensor quantized tensor: the op's CPU kernel on its integers, with the same
    parameters (a view shares the storage). A per-channel tensor's strides stay its own (PyTorch refuses too)."""
    cpu = op.kernels["cpu"]

    def kernel(q, *args, **kwargs):
        if q._qscheme is not _qs.per_tensor_affine:
            raise RuntimeError(_PER_TENSOR_ONLY)
        out = cpu(q._data, *args, **kwargs)
        shares = np.shares_memory(out, q._data) if out.size else False
        return _like(q, out, q._storage if shares else None)

    return kernel


for _name, _overload in (("view", ""), ("reshape", ""), ("permute", ""), ("transpose", "int"), ("t", ""),
                         ("flatten", "using_ints"), ("unsqueeze", ""), ("squeeze", ""), ("expand", ""),
                         ("select", ""), ("narrow", ""), ("slice", ""), ("index", "Tensor")):
    _op = R.get(_name, _overload)
    _op.kernels["quantized_cpu"] = _on_ints(_op)

