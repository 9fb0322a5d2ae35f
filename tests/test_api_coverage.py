"""How much of PyTorch's public API toolkit has, read from PyTorch's own lists at test time.

PyTorch publishes its public functions as ``torch.overrides.get_overridable_functions()``: the ``torch``
functions (with ``torch.functional``'s, which ``torch`` exports), the ``Tensor`` methods and properties and
``torch.nn.functional``. The functions that take no tensor (factories, switches, type queries) are in its other
list, ``torch.overrides.get_ignored_functions()``: those that are attributes of ``torch`` or of ``Tensor`` count
under the ``torch`` and ``Tensor`` namespaces too. The test counts, per namespace, how many of those names
toolkit has, prints the figures and the missing names (``pytest -s``), and fails when a namespace drops below
its floor: the floors only go up, as names are added.

Left out of the count, as the API issue says: private names (dunders count), names that only make sense for a
backend toolkit has no reason to have (``mkldnn``, ``miopen``, ``cudnn``, ``fbgemm``, ``_foreach``), the
quantized internals the quantization work owns (``empty_quantized`` and ``qscheme`` among them), and the
sparse, complex and FFT names the numerics work owns (their namespaces ``linalg``, ``fft`` and ``special``
are printed for information, with floors of their own). From the list of functions without tensors, also:

- PyTorch's autocast internals (names with ``autocast``: ``set_autocast_gpu_dtype``,
  ``autocast_increment_nesting`` ...): the state of its mixed-precision dispatch key, which user code reaches
  through ``torch.autocast``;
- TorchScript's C++ type-parsing internals (``import_ir_module*``, ``parse_ir``, ``parse_schema``,
  ``parse_type_comment``, ``merge_type_from_type_comment``, ``unify_type_list``): bindings of PyTorch's C++
  frontend that its own ``torch.jit`` calls, not an API of their own;
- ``Tensor`` methods PyTorch itself removed (``eig``, ``lstsq``, ``solve``, ``symeig``, ``reinforce``): they
  are still attributes only to raise an error that names their replacement;
- nested tensors (``to_padded_tensor``), a tensor kind toolkit does not have.
"""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import toolkit  # noqa: E402
import toolkit.nn.functional as TF  # noqa: E402

OTHER_BACKEND = re.compile(r"^(fbgemm_|miopen_|mkldnn_|cudnn_|to_mkldnn$|is_mkldnn$)")
QUANTIZED = re.compile(r"^(quantize_|dequantize$|q_|int_repr$|qscheme$|fake_quantize_|fused_moving_avg_obs_fake_quant$"
                       r"|choose_qparams|quantized_|empty_quantized$)")
SPARSE = re.compile(r"^(to_sparse_(csc|bsr|bsc)$|sparse_(?!coo_tensor$|csr_tensor$|dim$)|(c?col|crow|row)_indices$|"
                    r".*indices_copy$|values_copy$|sspaddmm$|saddmm$|hspmm$|dsmm$|hsmm$|"
                    r"resize_as_sparse_$)")
COMPLEX = re.compile(r"^(conj_physical_$|chalf$)")
AUTOCAST = re.compile(r".*autocast")
TORCHSCRIPT_INTERNALS = re.compile(r"^(import_ir_module.*|parse_ir|parse_schema|parse_type_comment|"
                                   r"merge_type_from_type_comment|unify_type_list)$")
REMOVED_TENSOR_METHODS = re.compile(r"^(eig|lstsq|solve|symeig|reinforce)$")
NESTED = re.compile(r"^to_padded_tensor$")


def _owned_elsewhere(name: str, ns: str = "torch") -> bool:
    if ns == "Tensor" and REMOVED_TENSOR_METHODS.match(name):
        return True
    return any(p.match(name) for p in (OTHER_BACKEND, QUANTIZED, SPARSE, COMPLEX, AUTOCAST,
                                       TORCHSCRIPT_INTERNALS, NESTED))


def _without_tensors() -> dict:
    """``torch.overrides.get_ignored_functions()``: the public functions that take no tensor, under the namespace
    (``torch`` or ``Tensor``) that has them as attributes by that name."""
    found: dict[str, set] = {"torch": set(), "Tensor": set()}
    for f in torch.overrides.get_ignored_functions():
        name = getattr(f, "__name__", None)
        if not isinstance(name, str):
            continue
        if getattr(torch, name, None) is f:
            found["torch"].add(name)
        elif getattr(torch.Tensor, name, None) is f:
            found["Tensor"].add(name)
    return found


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _pytorch_names() -> dict:
    """Each namespace's public names as PyTorch lists them."""
    listed = torch.overrides.get_overridable_functions()
    names: dict[str, set] = {"torch": set(), "Tensor": set(), "torch.nn.functional": set(), "torch.linalg": set(),
                             "torch.fft": set(), "torch.special": set()}
    for owner, functions in listed.items():
        exposed = {}  # a function's name where its owner exposes it (F.logsigmoid's __name__ is log_sigmoid)
        if isinstance(owner, type(torch)) or owner is torch.Tensor:
            for attr in dir(owner):
                exposed.setdefault(id(getattr(owner, attr, None)), attr)
        found = {exposed.get(id(f), getattr(f, "__name__", None)) for f in functions}
        if owner in (torch, torch.functional):
            names["torch"] |= found
        elif owner is torch.Tensor:
            names["Tensor"] |= found
        elif isinstance(owner, (property, type(torch.Tensor.grad_fn))):  # the Tensor's properties
            name = getattr(owner, "__name__", None) or getattr(getattr(owner, "fget", None), "__name__", None)
            names["Tensor"].add(name)
        elif getattr(owner, "__name__", None) in names:
            names[owner.__name__] |= found
    for ns, found in _without_tensors().items():
        names[ns] |= found
    for ns in ("torch.linalg", "torch.fft", "torch.special"):  # their functions are named linalg_norm, fft_fft...
        prefix = ns.split(".")[1] + "_"
        names[ns] = {n[len(prefix):] if n and n.startswith(prefix) else n for n in names[ns]}
    return {ns: {n for n in found if n and _public(n)} for ns, found in names.items()}


def _toolkit_namespace(ns: str):
    return {"torch": toolkit, "Tensor": toolkit.Tensor, "torch.nn.functional": TF, "torch.linalg": toolkit.linalg,
            "torch.fft": getattr(toolkit, "fft", None), "torch.special": getattr(toolkit, "special", None)}[ns]


FLOORS = {  # the share of each namespace's counted names toolkit has; raise a floor when names are added
    "torch": 0.996,
    "Tensor": 0.995,
    "torch.nn.functional": 1.0,
    "this issue's namespaces together": 0.995,
    "torch.linalg": 1.0,
    "torch.fft": 1.0,
    "torch.special": 1.0,
}
API_NAMESPACES = ("torch", "Tensor", "torch.nn.functional")


def coverage() -> dict:
    """``{namespace: (have, counted, missing names)}``, and the three API namespaces together."""
    result = {}
    for ns, names in _pytorch_names().items():
        counted = {n for n in names if not _owned_elsewhere(n, ns)} if ns in API_NAMESPACES else names
        home = _toolkit_namespace(ns)
        have = {n for n in counted if home is not None and hasattr(home, n)}
        result[ns] = (len(have), len(counted), sorted(counted - have))
    together = [result[ns] for ns in API_NAMESPACES]
    result["this issue's namespaces together"] = (sum(h for h, _, _ in together), sum(c for _, c, _ in together),
                                                  [])
    return result


def test_pytorch_lists_the_namespaces_we_count():
    names = _pytorch_names()
    assert {"add", "matmul", "einsum", "meshgrid"} <= names["torch"]
    assert {"add", "__add__", "shape", "grad", "is_leaf"} <= names["Tensor"]
    assert {"relu", "pad", "interpolate"} <= names["torch.nn.functional"]
    assert {"zeros", "hann_window", "tril_indices", "range", "vander"} <= names["torch"]  # no tensor argument
    assert {"new_empty_strided"} <= names["Tensor"]
    assert all(len(v) > 10 for v in names.values())


def test_coverage_does_not_drop_below_its_floor():
    result = coverage()
    lines = []
    for ns, (have, counted, missing) in result.items():
        lines.append(f"{ns:34s} {have:4d} of {counted:4d} = {have / counted:6.1%}")
        if missing:
            lines.append("    missing: " + " ".join(missing))
    print("\n".join(lines))
    low = {ns: f"{have / counted:.1%} < {FLOORS[ns]:.1%}" for ns, (have, counted, _) in result.items()
           if have / counted < FLOORS[ns]}
    assert not low, f"API coverage fell below its floor: {low}"
