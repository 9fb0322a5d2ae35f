"""``toolkit.autograd.functional``: Jacobians, Hessians and vector products of whole functions.

The higher-level face of ``autograd.grad``, as ``torch.autograd.functional``: each function runs ``func`` on
fresh copies of the inputs that require grad (the caller's tensors are never marked), differentiates with
``autograd.grad`` and returns the same structures as PyTorch (a Tensor for a Tensor, tuples for tuples,
``jacobian[i][j]`` for output ``i`` and input ``j``), with PyTorch's errors for strict mode and bad ``v``.

There is no forward-mode AD here: ``jvp`` and ``hvp`` use the double-backward trick, as PyTorch's do, and
``strategy="forward-mode"`` computes each Jacobian column with that trick. ``vectorize=True`` gives the same
result as PyTorch's batched version but loops over the rows (or columns) instead of batching them.

    >>> jacobian(lambda x: x.exp().sum(dim=1), torch.rand(2, 2)).shape
    torch.Size([2, 2, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ops import api
from ..tensor import Tensor
from . import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """``(was_a_tuple, inputs as a tuple)``, with PyTorch's TypeError for anything but Tensors."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Unwrap the one-element tuples of results whose inputs/outputs were single Tensors."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Copies of ``inputs`` to differentiate: views keep an outer graph under ``create_graph``."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph: bool) -> tuple:
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_INDEPENDENT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be "
                "computed in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_INDEPENDENT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph: bool = False, retain_graph=None) -> tuple:
    """``autograd.grad`` over the outputs that require grad; None for inputs nothing reaches."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_FILL_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros for the inputs nothing reached (errors in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_ERRORS[stage].format(i=i))
            g = api.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(func, inputs, v, create_graph: bool, strict: bool, name: str, v_of_outputs: bool):
    """Run ``func`` on differentiable copies and check ``v``: shared opening of vjp, jvp, vhp and hvp."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if not v_of_outputs:
        v = _check_v(v, inputs, is_inputs_tuple, create_graph, name,
                     "input to the user-provided function is a single Tensor")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if v_of_outputs:
        v = _check_v(v, outputs, is_outputs_tuple, create_graph, name,
                     "user-provided function returns a single Tensor")
    return is_inputs_tuple, inputs, is_outputs_tuple, outputs, v


def _check_v(v, refs, is_refs_tuple: bool, create_graph: bool, name: str, when_none: str):
    """``v`` as a tuple, checked against ``refs``; None only where ``refs`` is one one-element Tensor."""
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
    elif len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {when_none} with a single element.")
    return v


def _pull_back(outputs, of, wrt, v, inputs, create_graph: bool, strict: bool, stage: str, unpack: tuple):
    """``(outputs, v^T d of / d wrt)``, postprocessed: the closing step of vjp, vhp and hvp."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(of, wrt, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, stage)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, unpack[0]), _tuple_postprocess(result, unpack[1])


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``, shaped as the inputs.

    ``v`` may be omitted when ``func`` returns a one-element Tensor. Inputs no output depends on get zeros
    (an error with ``strict``).
    """
    with enable_grad():
        is_inputs_tuple, inputs, is_outputs_tuple, outputs, v = _prepare(func, inputs, v, create_graph, strict,
                                                                         "vjp", v_of_outputs=True)
    return _pull_back(outputs, outputs, inputs, v, inputs, create_graph, strict, "back",
                      (is_outputs_tuple, is_inputs_tuple))


def _double_back_jvp(outputs, inputs, v, create_graph: bool, strict: bool) -> tuple:
    """``J v`` without forward-mode AD: differentiate ``u -> J^T u`` (linear in ``u``) along ``v``."""
    with enable_grad():
        grad_outputs = tuple(api.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        return _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, shaped as the outputs.

    Computed with the double-backward trick (the backward of the backward), as PyTorch's is: correct, but two
    backward passes; ``toolkit.func.jvp`` is the same trick with pytrees.
    """
    with enable_grad():
        is_inputs_tuple, inputs, is_outputs_tuple, outputs, v = _prepare(func, inputs, v, create_graph, strict,
                                                                         "jvp", v_of_outputs=False)
    result = _double_back_jvp(outputs, inputs, v, create_graph, strict)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_outputs_tuple)


def _basis(refs: tuple, index: int) -> tuple:
    """The ``index``-th vector of the standard basis over the concatenated, flattened ``refs``."""
    out = []
    for r in refs:
        e = api.zeros(r.numel(), dtype=r.dtype, device=r.device)
        if 0 <= index < r.numel():
            e[index] = 1
        index -= r.numel()
        out.append(e.view(r.shape))
    return tuple(out)


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                           'not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with enable_grad():
        diff_inputs = _grad_preprocess(inputs, create_graph=False, need_graph=True)
        out = func(*diff_inputs)
        is_outputs_tuple, outputs = _as_tuple(out, "outputs", "jacobian")
    columns = [_double_back_jvp(outputs, diff_inputs, _basis(inputs, k), False, False)
               for k in range(sum(i.numel() for i in inputs))]
    jac = []
    for o, out_i in enumerate(outputs):
        row = []
        start = 0
        for inp in inputs:
            cols = [columns[start + k][o].detach() for k in range(inp.numel())]
            start += inp.numel()
            stacked = api.stack(cols, dim=-1) if cols else api.zeros((*out_i.shape, 0), dtype=out_i.dtype)
            row.append(stacked.reshape((*out_i.shape, *inp.shape)))
        jac.append(row)  # lists, as PyTorch's forward mode returns them
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` of shape ``output_i.shape + input_j.shape``.

    A Tensor when there is one input and one output, a tuple when one of them is a tuple, a tuple of tuples
    when both are. ``vectorize=True`` gives the same numbers and loops over the rows (PyTorch batches them);
    ``strategy="forward-mode"`` (which, as in PyTorch, needs ``vectorize=True``) builds it column by column.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = tuple(_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(i: int, out: Tensor, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """The Jacobians of output ``i`` with respect to each input: one backward per element of ``out``."""
    rows: tuple[list, ...] = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
            if g is not None:
                if strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                row.append(g)
            else:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {k}. "
                                       "This is not allowed in strict mode.")
                row.append(api.zeros_like(inp))
    return tuple(
        (api.stack(row, dim=0) if row else api.zeros((0, *inp.shape), dtype=inp.dtype, device=inp.device))
        .view(out.size() + inp.size())
        for row, inp in zip(rows, inputs))


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of the scalar function ``func``: the Jacobian of its Jacobian.

    ``H[i][j]`` has shape ``input_i.shape + input_j.shape``; a single Tensor for a single input.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _gradient(func, inputs, v, create_graph: bool, strict: bool, name: str):
    """The opening of vhp and hvp: ``func`` checked to be scalar, and its gradient with a graph."""
    is_inputs_tuple, inputs, is_outputs_tuple, outputs, v = _prepare(func, inputs, v, create_graph, strict, name,
                                                                     v_of_outputs=False)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return (is_outputs_tuple, is_inputs_tuple), inputs, outputs, v, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar ``func``: two backward passes."""
    with enable_grad():
        unpack, inputs, outputs, v, jac = _gradient(func, inputs, v, create_graph, strict, "vhp")
    return _pull_back(outputs, jac, inputs, v, inputs, create_graph, strict, "double_back", unpack)


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar ``func``, by the double-backward trick (three backward passes).

    For a twice continuously differentiable ``func`` this equals ``vhp``, which is cheaper.
    """
    with enable_grad():
        unpack, inputs, outputs, v, jac = _gradient(func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(api.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    return _pull_back(outputs, double_back, grad_jac, v, inputs, create_graph, strict, "double_back_trick", unpack)
