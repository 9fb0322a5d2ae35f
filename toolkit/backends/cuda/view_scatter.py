"""Views over any geometry on the device, and the scatters that write through them.

- ``slice_inverse``: ``self`` seen with ``src``'s geometry (a view of self's buffer), read from the device
  array's own shape, strides and offset;
- ``as_strided_scatter`` and ``diagonal_scatter``: a copy of ``self`` with a window replaced by ``src``. The
  window of ``as_strided_scatter`` is mapped to the copy's elements on the host from the geometry alone
  (the CPU op's :func:`window_elements`: row-major indices of self's elements), then written by
  :func:`.scatter.write_rows`;
- ``unbind``: the slices along a dim as views, 0-d ones included;
- the unsafe splits (``unsafe_split``, ``unsafe_chunk``, ``unsafe_split_with_sizes``): views of the input
  that autograd does not track as views; their CPU kernels decide the parts on a stand-in host array, as
  :mod:`.views` does for the view ops.
"""

from __future__ import annotations

import numpy as np

from ..._core.shape import wrap_dim
from ...ops import registry as R
from ...ops.view_strided import check_geometry, dense_strides, window_elements
from .array import CudaArray, copy_into, copy_strided
from .registration import meta_of, register_table
from .scatter import write_rows
from .views import make_kernel


def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    meta_of(R.get("slice_inverse"), [self, src, dim, start, end, step])
    check_geometry(src.shape, src.estrides, src.offset, self.itemsize, self.root().size)
    return self.view_of(src.shape, tuple(e * self.itemsize for e in src.estrides), src.offset)


def as_strided_scatter(self, src, size, stride, storage_offset=None):
    meta_of(R.get("as_strided_scatter"), [self, src, size, stride, storage_offset])
    check_geometry(size, stride, 0 if storage_offset is None else storage_offset, self.itemsize, self.size)
    out = copy_strided(self)
    layout = dense_strides(self.shape, self.estrides)
    k = window_elements(self.shape, layout, 0, tuple(size), tuple(stride),
                        0 if storage_offset is None else storage_offset)
    if k.size:  # row-major indices of self's elements, as the CPU op writes its row-major copy
        pos = CudaArray.from_host(np.where(k < 0, k + max(self.size, 1), k))
        write_rows(out.reshape((-1,)), pos, copy_strided(src, self.dtype).reshape((-1,)), "set")
    return out


def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    meta_of(R.get("diagonal_scatter"), [self, src, offset, dim1, dim2])
    out = copy_strided(self)
    view = R.get("diagonal").kernels["cuda"](out, offset, dim1, dim2)
    if view.size:
        copy_into(view, src)
    return out


def unbind(self, dim=0):
    """The slices along ``dim`` as views (also of 0-d parts, which a host stand-in would give as copies)."""
    meta_of(R.get("unbind", "int"), [self, dim])
    d = wrap_dim(dim, self.ndim)
    shape, strides = self.shape[:d] + self.shape[d + 1:], self.strides[:d] + self.strides[d + 1:]
    return [self.view_of(shape, strides, self.offset + i * self.estrides[d]) for i in range(self.shape[d])]


def register() -> list:
    table = {"slice_inverse": slice_inverse, "as_strided_scatter": as_strided_scatter,
             "diagonal_scatter": diagonal_scatter, ("unbind", "int"): unbind}
    for key in (("unsafe_split", "Tensor"), ("unsafe_split_with_sizes", ""), ("unsafe_chunk", "")):
        table[key] = make_kernel(R.get(*key))
    return register_table(table)
