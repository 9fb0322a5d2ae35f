"""The op registry: every op is defined here once, and everything else reads it.

An ``OpDef`` carries an op's schema, kind, meta rule, kernels per device, its
derivative (written with registered ops, so double backward works), the scalar
formula the fusion code generator inlines, its test samples and its docstring.
Eager calls, Tensor methods and operators, autograd, tracing, the IR's types
and the profiler all look ops up here; there is no other list of ops.

Example::

    @op("mul(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
        formula="self * other", inplace=True, dunders=("mul", "rmul"))
    def mul(self, other):
        "Multiply elementwise, broadcasting as PyTorch does."
        return np.multiply(self, other)

    @mul.grad
    def _(grad, self, other):
        return grad * other, grad * self
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from .._core import names as _names
from . import runtime as _runtime
from ._meta_rules import elementwise_meta
from .complex_refusal import complex_refusing
from .schema import Schema, parse_schema

# Kinds: passes and tests ask kinds, never names.
ELEMENTWISE = "elementwise"
COMPARISON = "comparison"  # elementwise with a bool result
REDUCTION = "reduction"
VIEW = "view"
SHAPE = "shape"  # reshuffles data into a new buffer
INDEXING = "indexing"
LINALG = "linalg"
FACTORY = "factory"
RANDOM = "random"
CONVERSION = "conversion"
NN = "nn"
INPLACE = "inplace"
COMPOSITE = "composite"

# Type-promotion policies of elementwise ops (PyTorch's ELEMENTWISE_TYPE_PROMOTION_KIND).
PROMOTE_DEFAULT = "default"  # common dtype in, common dtype out
PROMOTE_INT_TO_FLOAT = "int_to_float"  # integers and bool compute in the default float dtype
PROMOTE_BOOL_OUT = "bool_out"  # common dtype in, bool out (comparisons)
PROMOTE_ALWAYS_BOOL = "always_bool"  # inputs as bool, bool out (logical ops)
PROMOTE_NONE = "none"  # the kernel handles dtypes itself
PROMOTE_COMPLEX_TO_FLOAT = "complex_to_float"  # common dtype in, its real dtype out (``abs`` of complex)
PROMOTE_INT_TO_FLOAT_REAL = "int_to_float_real"  # int_to_float in, the real dtype out (``angle``)

# Autocast policies (PyTorch's autocast op lists): what ``toolkit.autocast`` does to an op's floating inputs.
AUTOCAST_POLICIES = ("lower", "fp32", "promote")  # to the autocast dtype, to float32, to the widest of them

# Name inference by kind (``OpDef.name_rule`` where an op declares none): PyTorch's rules for the common families.
_KIND_NAME_RULES = {ELEMENTWISE: _names.UNIFY, COMPARISON: _names.UNIFY, REDUCTION: _names.REDUCE,
                    CONVERSION: _names.KEEP}

_GRAD_EXTRA_PARAMS = ("result", "needs_input_grad")


def _no_samples(rng):
    return iter(())


class OpDef:
    """One op's complete definition. Build it with the ``op`` decorator, not directly."""

    def __init__(
        self,
        schema: Schema,
        *,
        kind: str,
        cpu: Callable | None,
        formula: str | None = None,
        promotion: str = PROMOTE_DEFAULT,
        method: bool | str = True,
        function: bool | str = True,
        namespace: str | None = None,
        dunders: tuple = (),
        inplace: bool = False,
        differentiable: bool = True,
        nondiff_args: tuple = (),
        promote_args: tuple | None = None,
        scalar_self: bool | None = None,
        refuse_grad_args: tuple = (),
        identities: tuple = (),
        self_inverse: bool = False,
        composite: bool = False,
        full_reduction: str | None = None,
        flops: Callable | None = None,
        mode_promotion: tuple | None = None,
        check_dtypes: Callable | None = None,
        numbers_as_tensors: bool = False,
        overlap_ok: tuple = (),
        no_overlap: tuple = (),
        default_device: bool | None = None,
        autocast: str | dict | None = None,
        out: bool | str | None = None,
        doc: str | None = None,
        grad_fn: str | Callable | OpDef | None = None,
        name_rule: str | Callable | None = None,
    ):
        self.schema = schema
        self.name = schema.name
        self.overload = schema.overload
        # A name with a namespace of its own (``quantized::linear``, PyTorch's custom-op libraries) keeps it; the
        # registry files the op under that whole name, so it never meets ``aten::linear``'s overloads.
        self.qualified_name = schema.name if "::" in schema.name else f"aten::{schema.name}"
        self.kind = kind
        self.kernels: dict[str, Callable] = {}
        # A composition of registered ops: the function takes Tensors and runs on every device; autograd
        # records its parts, and the tracer records it as one node (PyTorch's CompositeImplicitAutograd).
        self.composite = cpu if composite else None
        if cpu is not None and not composite:
            self.kernels["cpu"] = cpu
        self.formula = formula
        # FLOP estimate of one call for the profiler: ``flops(bound) -> int`` (None: not counted).
        self.flops = flops
        self.promotion = promotion
        self.method = method
        self.function = function
        self.namespace = namespace
        self.dunders = tuple(dunders)
        self.has_inplace = inplace
        self.differentiable = differentiable
        self.doc = inspect.cleandoc(doc or (cpu.__doc__ if cpu is not None else "") or "")
        self.args = schema.args
        self.arg_names = tuple(a.name for a in schema.args)
        # Keyword-only arguments without a default: a call that leaves one out does not fit this overload
        # (``sort.stable``'s ``stable``), however its other arguments bind.
        self.required_kwargs = tuple(a.name for a in schema.args if a.kwarg_only and not a.has_default)
        self.tensor_args = tuple(i for i, a in enumerate(schema.args) if a.is_tensor)
        self.diff_args = tuple(i for i in self.tensor_args if schema.args[i].name not in nondiff_args)
        # Tensor args PyTorch refuses to see with requires_grad=True while grad mode is on (loss weights).
        self.refuse_grad_args = tuple(refuse_grad_args)
        # Tensor args the op writes in place whose version counter dispatch bumps after each call, so autograd
        # refuses a backward that would read the overwritten values: ops ``toolkit.library`` defines with
        # ``mutates_args`` (their kernels see arrays, not the caller's tensors). Built-in in-place ops bump through
        # their own path, and batch_norm writes its running stats only in training, so neither is listed here.
        self.written_args: tuple = ()
        # Algebraic identities the JIT's peephole pass may use: (kept arg, constant arg, identity value,
        # (other arg, required value) or None), e.g. ``("self", "other", 1, None)`` for ``x * 1 == x``.
        self.identities = tuple(identities)
        # A view that undoes itself: ``op(op(x, *dims), *dims)`` is ``x``, the dims in any order (``t``,
        # ``transpose``); the peephole pass removes such pairs.
        self.self_inverse = self_inverse
        # A reduction the JIT's fused kernels can accumulate over every element: ``"sum"`` (``acc += x``) or
        # ``"mean"`` (the sum divided by the count; nan for no elements).
        self.full_reduction = full_reduction
        # Arguments that take part in type promotion (elementwise kinds): every Tensor argument unless
        # named here; naming lets a bool ``condition`` stay out and a Scalar ``min`` take part.
        self.promote_args = self.tensor_args if promote_args is None else tuple(
            i for i, a in enumerate(schema.args) if a.name in promote_args)
        # ``(argument, policy)``: while that argument is not None the op promotes by ``policy`` instead, as
        # ``div`` with a ``rounding_mode`` keeps integer dtypes (PyTorch's ``div.Tensor_mode``).
        self.mode_promotion = mode_promotion
        self.mode_arg = None if mode_promotion is None else self.arg_names.index(mode_promotion[0])
        # ``check_dtypes(dtypes)``: raises for a combination of input dtypes PyTorch refuses before computing
        # (``sub`` of a bool tensor), with Python numbers as the dtype of their kind. Promotion calls it, and
        # eager dispatch caches promotions, so each combination is checked once and the hot path pays nothing.
        self.check_dtypes = check_dtypes
        # What dispatch's promotion cache is keyed on besides the dtypes: the policy, and the op where it checks.
        self.promotion_tag = promotion if check_dtypes is None else (self.name, promotion)
        # PyTorch turns a Python number passed for one of this op's Tensor arguments into a 0-dim "wrapped
        # number" tensor (its should_allow_numbers_as_tensors: add, sub, mul, div and their aliases). A
        # derivative that reads one saves it as a tensor, so it is freed after backward like any saved tensor.
        self.numbers_as_tensors = numbers_as_tensors
        # Memory overlap of an in-place variant, as PyTorch checks it: the written tensor ``self`` may not
        # have elements sharing memory, nor any tensor argument partially overlap it. ``overlap_ok`` names
        # the exceptions (``self``: ops PyTorch lets write into an expanded tensor, like ``fill_``; a
        # ``value`` read as a number first), ``no_overlap`` the arguments that may not overlap even fully
        # (the source of ``index_put_``, ``scatter_``, ``index_add_``).
        self.overlap_ok = tuple(overlap_ok)
        self.no_overlap = tuple(no_overlap)
        self.self_overlap_ok = "self" in overlap_ok
        self.overlap_args = tuple(
            (i, schema.args[i].name in no_overlap) for i in self.tensor_args
            if i and schema.args[i].name not in overlap_ok and not schema.args[i].is_tensor_list)
        positional = [a for a in schema.args if not a.kwarg_only]
        # A last positional ``Tensor[]`` may also be given as separate tensors (``einsum(eq, a, b)``,
        # ``broadcast_tensors(a, b)``), as PyTorch's Python API takes them: its index, for eager and script binding.
        self.tensor_varargs = len(positional) - 1 if positional and positional[-1].type == "Tensor[]" else None
        self.n_outputs = len(schema.returns)
        self.returns_list = bool(schema.returns) and schema.returns[0].type == "Tensor[]"
        self.returns_tensor = bool(schema.returns) and schema.returns[0].type.startswith("Tensor")
        self.meta = None
        self.specializer = None  # see ``specialize``
        self.derivative = None
        # Whether the derivative is written as for real inputs with complex-analytic factors (``grad * other``
        # for ``mul``): on complex gradients the engine then applies it as ``conj(rule(conj(grad)))``, which
        # is PyTorch's conjugate Wirtinger gradient. ``wirtinger_grad`` attaches a rule that is written in
        # that convention itself (``abs``, ``real``, ``angle``: functions that are not complex-analytic).
        self.holomorphic_rule = True
        # PyTorch runs the op on a sparse tensor value by value (it maps zero to zero): ``runs_on_sparse_values``.
        self.sparse_values_wise = False
        # What the op does with a lazily conjugated input (``dispatch/conj.py``): None (views keep the bit,
        # other ops read the conjugated values), ``"resolve"`` (read the values, even as a view), or the
        # message of PyTorch's refusal.
        self.conj_rule: str | None = None
        self.saved_names: tuple = ()
        self.wants_needs_input_grad = False
        self.samples = None
        # Elementwise ops take Python numbers where a tensor is expected (PyTorch's Scalar overloads);
        # in the first position only where PyTorch has them there too: ops with a reflected operator
        # (``2 - x``) unless said otherwise. ``torch.sin(2.0)`` is a TypeError.
        self.scalar_tensors = kind in (ELEMENTWISE, COMPARISON)
        self.scalar_self = (any(d[0] == "r" and d[1:] in self.dunders for d in self.dunders)
                            if scalar_self is None else scalar_self)
        # The tensor arguments that promote (cast to the compute dtype), and the Scalar ones that take part in
        # the promotion as they are (``clamp``'s bounds).
        self.promote_tensors = tuple(i for i in self.promote_args if i in self.tensor_args)
        self.promote_scalars = tuple(i for i in self.promote_args if i not in self.tensor_args)
        # What dispatch's scan of a call reads: the tensors, then the Scalars whose types key the promotion.
        self.scan_args = self.tensor_args + self.promote_scalars if self.promote_scalars else self.tensor_args
        # Single-output elementwise ops take the dispatcher's fast path, Scalar bounds included.
        self.pointwise = (self.scalar_tensors and promotion != PROMOTE_NONE and self.n_outputs == 1
                          and all(schema.args[i].type in ("Scalar", "Scalar?") for i in self.promote_scalars))
        self._bind_plan = None
        # A CPU kernel with an ``out`` parameter can write an in-place variant's result straight into self.
        self.kernel_out = cpu is not None and "out" in inspect.signature(cpu).parameters
        self.device_arg = self.arg_names.index("device") if "device" in self.arg_names else None
        # Whether a call given no ``device`` makes its tensor on ``set_default_device``'s device: every factory
        # that makes a tensor from sizes and values alone (a composite passes the choice on to the factories
        # it calls), as PyTorch's ``_device_constructors``; ``*_like`` ops keep their input's device.
        self.default_device = (self.device_arg is not None and not self.tensor_args and not composite
                               if default_device is None else default_device)
        self.requires_grad_arg = self.arg_names.index("requires_grad") if "requires_grad" in self.arg_names else None
        # Autocast's policy by device type (``"lower"``, ``"fp32"`` or ``"promote"``; a string: every device), as
        # PyTorch lists the op for CPU and CUDA autocast; None: autocast leaves the op's inputs alone.
        self.autocast = _autocast_policy(self.name, autocast)
        # How the public function takes PyTorch's ``out=``: None (it does not), or the dtype rule for ``out``
        # (``OUT_CAST``, ``OUT_EXACT``, ``OUT_ANY``). Derived from what the op is; ``out=True``/``False`` or a rule
        # where PyTorch's out variants say otherwise. ``toolkit.ops.out_argument`` does the writing.
        self.out = _out_rule(self, out)
        self.inplace_of: OpDef | None = None  # set on the derived in-place variant
        self.inplace_variant: OpDef | None = None
        self.return_type = None  # namedtuple class for named multi-returns
        self._node_class = None
        # PyTorch's name for the class of this op's ``grad_fn`` where it is not the op's own in CamelCase:
        # the derivative formula PyTorch runs (``"ConvolutionBackward0"`` for ``conv2d``, ``"PowBackward1"``
        # for the second formula of a name), a rule ``fn(bound, outputs) -> name`` where the name depends on
        # the call, or another op whose name this one shares (an alias). ``toolkit.autograd.naming`` reads it.
        self.grad_fn = grad_fn
        # How the op names its outputs from named inputs (``toolkit._core.names``): a standard rule (``"keep"``,
        # ``"unify"``, ``"reduce"``, ``"matmul"``) or ``rule(op, bound, out_ndim) -> names``; by default
        # its kind's. None: the op refuses named inputs, as PyTorch's ops without named-tensor support do.
        self.name_rule = name_rule if name_rule is not None else _KIND_NAME_RULES.get(kind)
        # Whether a named tensor's dimension arguments may be given by name (``x.sum('C')``): PyTorch's ops with
        # Dimname overloads, declared by ``takes_dim_names`` beside their definitions.
        self.dim_names = False
        # How ``toolkit.onnx`` writes the op as ONNX nodes: ``fn(g, *args) -> value(s)`` (see ``symbolic``).
        self.onnx_lowering: Callable | None = None

    # -- decorators that complete the definition -------------------------------------------
    def derivative_rule(self, fn: Callable) -> Callable:
        """Attach the vjp: ``fn(grad, <arg names or 'result' it needs>) -> grads per tensor input``.

        The parameter names say what must be saved for backward: an argument by
        name, ``result`` for the output, ``<arg>_shape``/``<arg>_dtype`` for just
        a tensor's metadata. So an in-place change to an input the rule does not
        read is never an error. A parameter with a default may name an argument
        the op lacks (an alias with fewer arguments shares the rule).
        """
        signature = inspect.signature(fn).parameters
        params = list(signature)
        if not params or params[0] != "grad":
            raise ValueError(f"{self.name}: derivative's first parameter must be 'grad'")
        absent = set()  # parameters with a default that this op lacks (an alias with fewer arguments)
        for p in params[1:]:
            base = p.rsplit("_", 1)[0] if p.endswith(("_shape", "_dtype")) and p not in self.arg_names else p
            if base not in self.arg_names and p not in _GRAD_EXTRA_PARAMS:
                if signature[p].default is not inspect.Parameter.empty:
                    absent.add(p)
                    continue
                raise ValueError(f"{self.name}: derivative parameter {p!r} is not an argument of {self.schema}")
        self.derivative = fn
        self.saved_names = tuple(p for p in params[1:] if p != "needs_input_grad" and p not in absent)
        self.wants_needs_input_grad = "needs_input_grad" in params
        if self.inplace_variant is not None:
            self.inplace_variant._copy_autograd_from(self)
        return fn

    def grad(self, fn: Callable) -> Callable:
        return self.derivative_rule(fn)

    def symbolic(self, fn: Callable) -> Callable:
        """Attach the ONNX lowering, beside the op as its derivative is: ``fn(g, *args)`` gets the node's
        arguments in schema order (tensors as ONNX values of the graph builder ``g``, constants as Python
        values) and returns one ONNX value per output, built with ``g.op(...)``. ``toolkit.onnx`` reads it.
        The registry stays the one description of an op, so a second lowering for the same op is an error
        (two lowerings of one op would silently race on import order)."""
        if self.onnx_lowering is not None:
            raise ValueError(f"{self.qualified_name}: an ONNX lowering is already registered")
        self.onnx_lowering = fn
        return fn

    def refuses_complex(self, message: str, error: type = NotImplementedError) -> OpDef:
        """Raise ``error(message)`` for a complex tensor argument, as PyTorch refuses it (``{dtype}`` in the
        message becomes ``ComplexFloat``/``ComplexDouble``); an in-place variant sharing the kernels gets its own."""
        if self.inplace_of is not None and self.kernels is self.inplace_of.kernels:
            self.kernels = dict(self.kernels)
        for device, kernel in list(self.kernels.items()):
            self.kernels[device] = complex_refusing(kernel, message, error)
        if self.composite is not None:
            self.composite = complex_refusing(self.composite, message, error)
        return self

    def wirtinger_grad(self, fn: Callable) -> Callable:
        """Attach a derivative that gives PyTorch's complex gradient itself (the conjugate Wirtinger
        derivative ``dL/dx + i dL/dy``), for ops that are not complex-analytic (``abs``, ``real``, ``conj``)."""
        self.derivative_rule(fn)
        self.holomorphic_rule = False
        if self.inplace_variant is not None:
            self.inplace_variant.holomorphic_rule = False
        return fn

    def meta_rule(self, fn: Callable) -> Callable:
        """Attach the meta rule: from input metadata to output ``TensorMeta`` (no data touched)."""
        self.meta = fn
        if self.inplace_variant is not None:
            self.inplace_variant.meta = fn
        return fn

    def specialize(self, fn: Callable) -> Callable:
        """Attach a specializer: ``fn(*args)`` gets the arguments as a compiled plan knows them (tensors as
        their JIT types, whose dtype holds on every run; constants as values; other values as None) and
        returns a cheaper CPU callable taking the kernel's arguments that gives the kernel's result for every
        input of those types, or None. Errors need not match: a plan runs a failed call again through dispatch.
        """
        self.specializer = fn
        return fn

    def sample_inputs(self, fn: Callable) -> Callable:
        """Attach test samples: ``fn(rng)`` yields ``(args, kwargs)`` with numpy arrays for tensors."""
        self.samples = fn
        return fn

    def tested_elsewhere(self, reason: str) -> OpDef:
        """Give the op no samples: the registry's generated comparisons cannot feed it (it takes quantized or sparse
        tensors, or PyTorch has no CPU kernel to compare with). ``reason`` says why and where it is tested instead."""
        self.samples = _no_samples
        self.tested_in = reason
        return self

    def kernel(self, device: str) -> Callable:
        """Register a kernel for another device: ``@mul.kernel('cuda')``."""

        def deco(fn):
            self.kernels[device] = fn
            return fn

        return deco

    def _copy_autograd_from(self, other: OpDef) -> None:
        self.derivative = other.derivative
        self.holomorphic_rule = other.holomorphic_rule
        self.saved_names = other.saved_names
        self.wants_needs_input_grad = other.wants_needs_input_grad

    def promotion_of(self, bound) -> str:
        """The promotion policy of one call: ``promotion``, or ``mode_promotion``'s while its argument is set."""
        i = self.mode_arg
        if i is None or i >= len(bound) or bound[i] is None:
            return self.promotion
        return self.mode_promotion[1]

    def promotion_key(self, bound):
        """``promotion_tag`` of one call (``mode_promotion`` may switch the policy)."""
        p = self.promotion_of(bound)
        return p if self.check_dtypes is None else (self.name, p)

    def infer(self, *bound):
        """Output metadata from input metadata: the op's meta rule, or its kind's default rule."""
        if self.meta is not None:
            return self.meta(*bound)
        if self.kind in (ELEMENTWISE, COMPARISON):
            return elementwise_meta(self, *bound)
        if self.inplace_of is not None:
            return self.inplace_of.infer(*bound)
        raise NotImplementedError(f"{self.name}: no meta rule")

    def __repr__(self) -> str:
        return f"<OpDef {self.qualified_name}: {self.schema}>"

    def __call__(self, *args, **kwargs):
        return _runtime.DISPATCHER.call_op(self, args, kwargs)


# Dtype rules of ``out=`` (see ``OpDef.out``): the result must cast safely to out's dtype (PyTorch's TensorIterator
# ops), out's dtype must be the result's (most other out variants), out's dtype is taken as given, or out's dtype
# is the op's ``dtype`` argument where the call gives none (``sum``, ``cumsum``, ``zeros``), else must be it.
OUT_CAST = "cast"
OUT_EXACT = "exact"
OUT_ANY = "any"
OUT_DTYPE = "dtype"
OUT_RULES = (OUT_CAST, OUT_EXACT, OUT_ANY, OUT_DTYPE)


def _out_rule(d: OpDef, out: bool | str | None) -> str | None:
    """The ``out=`` rule of op ``d``: PyTorch has an out variant for an exported function returning new
    tensors (not a view of its input, not an in-place op, not ``nn.functional``'s, not a ``*_like`` factory)."""
    if out is False:
        return None
    if isinstance(out, str):
        if out not in OUT_RULES:
            raise ValueError(f"{d.name}: out rule {out!r} is not one of {OUT_RULES}")
        return out
    derived = (bool(d.function) and d.namespace in (None, "linalg", "special") and d.kind not in (INPLACE, VIEW, NN)
               and d.returns_tensor and not d.returns_list
               and not (d.kind in (FACTORY, RANDOM) and d.arg_names[:1] == ("self",)))
    if not derived and out is None:
        return None
    if "dtype" in d.arg_names:
        return OUT_DTYPE
    return OUT_CAST if d.kind in (ELEMENTWISE, COMPARISON) else OUT_EXACT


def _autocast_policy(name: str, autocast: str | dict | None) -> dict | None:
    if autocast is None:
        return None
    policy = {"cpu": autocast, "cuda": autocast} if isinstance(autocast, str) else dict(autocast)
    for p in policy.values():
        if p not in AUTOCAST_POLICIES:
            raise ValueError(f"{name}: autocast policy {p!r} is not one of {AUTOCAST_POLICIES}")
    return policy


# name -> overloads in the order calls try them (``sort_overloads``; the first whose arguments fit wins).
_REGISTRY: dict[str, list[OpDef]] = {}

# The order in which a call tries an op's overloads is PyTorch's (its Python argument parser's): derived
# from the schemas alone, so which module registers first never decides which overload a call gets.
# ``(t1, t2)``: where two overloads differ only by arguments typed t1 in one and t2 in the other (or
# equal), the one with t2 is more specific and tried first. A Tensor would also bind as a Scalar or an
# int, and an int as a one-element int list, so the overload taking it as it is must come first.
_LESS_SPECIFIC = frozenset((
    ("Scalar", "Tensor"),
    ("Scalar?", "Tensor?"),
    ("int[]", "int"),
    ("int[]", "int?"),
    ("SymInt[]", "int[]"),
    ("int", "Tensor"),
    ("SymInt", "Tensor"),
))


def _less_specific_type(t1: str, t2: str) -> bool:
    # A tensor list is tried after every other list type; a named dimension after any other type.
    return ((t1, t2) in _LESS_SPECIFIC or (t1 == "Tensor[]" and "[]" in t2)
            or ("Dimname" in t1 and "Dimname" not in t2))


def tried_after(a: Schema, b: Schema) -> bool:
    """Whether overload ``a`` is tried after ``b``: as many arguments, each typed as in ``b`` or less
    specifically, and at least one differently. Overloads with different argument counts are unordered."""
    if len(a.args) != len(b.args):
        return False
    pairs = [(x.type, y.type) for x, y in zip(a.args, b.args)]
    return (any(t1 != t2 for t1, t2 in pairs)
            and all(t1 == t2 or _less_specific_type(t1, t2) for t1, t2 in pairs))


def _signature_key(d: OpDef) -> tuple:
    # The arguments as written (names, types, defaults), then the overload name: a stable order for
    # overloads the partial order leaves unordered, as PyTorch sorts them by signature text first.
    text = str(d.schema)
    return text[len(d.schema.full_name):], d.overload


def sort_overloads(ops) -> list[OpDef]:
    """Overloads of one name in the order calls try them: a topological order of ``tried_after``,
    ties taken by signature text. The result depends on the set of schemas, not on their order."""
    pending = sorted(ops, key=_signature_key)
    ordered = []
    while pending:
        for i, o in enumerate(pending):
            if not any(tried_after(o.schema, p.schema) for p in pending if p is not o):
                ordered.append(pending.pop(i))
                break
        else:  # pragma: no cover - the type relation has no cycles
            raise ValueError(f"overloads of {pending[0].name} have no consistent order")
    return ordered


# Called after an op is registered or unregistered: caches of which overloads a call may fit start again.
overload_listeners: list = []


def register(d: OpDef) -> OpDef:
    key = d.name
    overloads = _REGISTRY.setdefault(key, [])
    for o in overloads:
        if o.overload == d.overload:
            raise ValueError(f"op {d.schema.full_name} is registered twice")
    overloads.append(d)
    overloads[:] = sort_overloads(overloads)
    for listener in overload_listeners:
        listener()
    return d


def unregister(d: OpDef) -> None:
    """Remove op ``d`` again: ``toolkit.library`` undoing a definition it made (``Library._destroy``, a
    ``custom_op`` of the same name replacing an earlier one). Nothing removes built-in ops."""
    overloads = _REGISTRY.get(d.name, [])
    if any(o is d for o in overloads):
        overloads[:] = [o for o in overloads if o is not d]
        if not overloads:
            del _REGISTRY[d.name]
        for listener in overload_listeners:
            listener()


def op(schema: str, *, kind: str, **options) -> Callable[[Callable], OpDef]:
    """Define an op: the decorated function is its CPU kernel, and the result is its ``OpDef``."""

    def deco(fn: Callable) -> OpDef:
        d = OpDef(parse_schema(schema), kind=kind, cpu=fn, **options)
        register(d)
        if d.has_inplace:
            register(_make_inplace(d))
        return d

    return deco


def _make_inplace(d: OpDef) -> OpDef:
    """Derive ``add_`` from ``add``: same kernel and derivative, result written into ``self``."""
    s = d.schema
    schema = Schema(s.name + "_", s.overload, s.args, s.returns)
    v = OpDef(
        schema,
        kind=INPLACE,
        cpu=None,
        formula=d.formula,
        promotion=d.promotion,
        method=True,
        function=False,
        namespace=d.namespace,
        differentiable=d.differentiable,
        mode_promotion=d.mode_promotion,
        check_dtypes=d.check_dtypes,
        numbers_as_tensors=d.numbers_as_tensors,
        overlap_ok=d.overlap_ok,
        no_overlap=d.no_overlap,
        doc=f"In-place version of :func:`{d.name}`.",
    )
    v.scalar_tensors = d.scalar_tensors
    v.scalar_self = d.scalar_self
    v.kernel_out = d.kernel_out
    v.pointwise = False
    v.kernels = d.kernels  # shared dict: a CUDA kernel added later serves both
    v.diff_args = d.diff_args
    v.promote_args = d.promote_args
    v.promote_tensors, v.promote_scalars, v.scan_args = d.promote_tensors, d.promote_scalars, d.scan_args
    v.meta = d.meta
    v.samples = None
    v.inplace_of = d
    v.name_rule = d.name_rule
    d.inplace_variant = v
    return v


def get(name: str, overload: str = "") -> OpDef:
    """Look an op up by name (``"add"``, ``"aten::add"``, ``"max.dim"``, ``"quantized::linear"``)."""
    if name.startswith("aten::"):
        name = name[6:]
    if "." in name and not overload:
        name, _, overload = name.partition(".")
    for d in _REGISTRY.get(name, ()):
        if d.overload == overload:
            return d
    if name in _REGISTRY and not overload:
        return _REGISTRY[name][0]
    raise KeyError(f"no op named {name!r}" + (f" with overload {overload!r}" if overload else ""))


def overloads(name: str) -> list[OpDef]:
    """The overloads of ``name`` in the order calls try them (``sort_overloads``)."""
    return list(_REGISTRY.get(name, ()))


def runs_on_sparse_values(names) -> None:
    """Declare, beside their definitions, the elementwise ops PyTorch runs on sparse tensors value by value
    (those that map zero to zero): every overload of each named op; ``toolkit.sparse`` gives them that kernel."""
    for name in names:
        found = overloads(name)
        if not found:
            raise KeyError(f"runs_on_sparse_values: no op named {name!r}")
        for o in found:
            o.sparse_values_wise = True


def _declared(names, declaration: str) -> list[OpDef]:
    """The ops a declaration names, in-place variants included: ``"op"`` is every overload of ``op``,
    ``"op.overload"`` one overload, ``"op_"`` an in-place variant alone."""
    out = []
    for name in names:
        found = [get(name)] if "." in name else overloads(name)
        if not found:
            raise KeyError(f"{declaration}: no op named {name!r}")
        for o in found:
            out.append(o)
            if o.inplace_variant is not None and o.inplace_of is None:
                out.append(o.inplace_variant)
    return out


def refuses_names(names) -> None:
    """Declare, beside their definitions, the ops PyTorch never taught names although their kind would give
    them a rule (``gelu``, ``maximum``, ``cumsum_``): a named input raises PyTorch's "not yet supported with
    named tensors"."""
    for o in _declared(names, "refuses_names"):
        o.name_rule = None


def takes_dim_names(names) -> None:
    """Declare, beside their definitions, the ops whose dimension arguments a named tensor may give by name
    (PyTorch's ops with ``Dimname`` overloads: ``sum``, ``softmax``, ``transpose``...). Other ops take
    positions only, as PyTorch's do."""
    for o in _declared(names, "takes_dim_names"):
        o.dim_names = True


def all_ops() -> list[OpDef]:
    """Every registered op, in-place variants included: names in the order they were first registered,
    each name's overloads in the order calls try them (so a group built from this list keeps that order)."""
    return [d for ops in _REGISTRY.values() for d in ops]


def names() -> list[str]:
    return list(_REGISTRY)
