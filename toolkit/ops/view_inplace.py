"""In-place view ops: ``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``, ``swapaxes_``, ``swapdims_``, ``as_strided_``.

Each changes ``self``'s shape and strides, not its values: ``self`` becomes
the view that the out-of-place op would return, over the same memory. The
view is made by the registered view op itself, so its meta rule checks the
arguments, autograd records its derivative as ``self``'s new ``grad_fn``, and
when ``self`` is a view its view chain grows by that op (so an in-place
change to it later still reaches its base). As in PyTorch, the version
counter moves, and autograd refuses what it refuses of any in-place op (a
leaf that requires grad, an output of a multi-output view).
"""

from __future__ import annotations

from .._core.state import LOCAL, STATE
from . import api, view, view_order, view_parts  # noqa: F401  (the view ops below register first)
from .registry import INPLACE, get, op


def _become(self, name: str, args: tuple, inplace_op):
    """Turn ``self`` into ``name(self, *args)``: take that view's array, history and place in its base's chain."""
    if LOCAL.grad_enabled and (self._requires_grad or (self._view_chain is not None and self._base._requires_grad)):
        STATE.check_inplace(inplace_op, self)
    result = api.function_for(name)(self, *args)
    self._data = result._data
    if self._view_chain is not None:
        self._view_chain = result._view_chain
    if result.grad_fn is not None:
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
    self._storage.version += 1
    return self


def _define(schema: str, name: str, doc: str, meta_of: str, *, function: bool = False, adapt=None):
    holder: list = []

    def kernel(self, *args):
        return _become(self, name, args, holder[0])

    kernel.__name__ = schema.split("(", 1)[0].split(".")[0]
    kernel.__doc__ = doc
    d = op(schema, kind=INPLACE, method=True, function=function, composite=True)(kernel)
    holder.append(d)
    source = get(meta_of)
    d.meta_rule(source.meta if adapt is None else lambda *a: source.meta(*adapt(*a)))
    return d


squeeze_ = _define("squeeze_(Tensor(a!) self) -> Tensor(a!)", "squeeze",
                   "Remove every dim of size 1 from ``self`` in place (its shape and strides; the values stay).",
                   "squeeze")
squeeze_dim_ = _define("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", "squeeze",
                       "Remove dim ``dim`` from ``self`` in place when its size is 1.", "squeeze",
                       adapt=lambda self, dim: (self, [dim]))
squeeze_dims_ = _define("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", "squeeze",
                        "Remove the dims in ``dim`` that have size 1 from ``self`` in place.", "squeeze")
unsqueeze_ = _define("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", "unsqueeze",
                     "Insert a dim of size 1 at ``dim`` into ``self`` in place.", "unsqueeze")
t_ = _define("t_(Tensor(a!) self) -> Tensor(a!)", "t", "Transpose ``self`` (at most 2-D) in place.", "t")
transpose_ = _define("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "transpose",
                     "Swap dims ``dim0`` and ``dim1`` of ``self`` in place.", "transpose.int")
swapaxes_ = _define("swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)", "swapaxes",
                    "Alias of :meth:`transpose_`, NumPy's name.", "swapaxes")
swapdims_ = _define("swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", "swapdims",
                    "Alias of :meth:`transpose_`.", "swapdims")
as_strided_ = _define(
    "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)",
    "as_strided", "Give ``self`` the geometry ``size``/``stride``/``storage_offset`` over its storage, in place.",
    "as_strided", function=True)
