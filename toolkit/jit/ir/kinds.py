"""The JIT's own node kinds, each declared once: ``prim::Constant``, ``prim::If``, ``prim::SetAttr``...

The op registry (``toolkit.ops.registry``) defines every ``aten::`` op; this one defines the kinds the JIT adds
around them, as PyTorch registers its ``prim::`` ops: each with a schema whose alias annotations say what it
reads, aliases and writes, so no pass keeps a list of mutating or aliasing kinds. A kind also carries the facts
that passes, code generation, autodiff and the archive format ask about it, and the handler that runs it::

    SET_ATTR = kind("prim::SetAttr(Any(a!) self, Any value) -> ()", "Sets the attribute ``name``.",
                    attributes=("name",))

    if n.kind == K.SET_ATTR: ...            # a constant is the kind's name (a str, as Node.kind is)
    if K.facts(n.kind).mutating: ...        # the Kind object: its schema and facts (UNKNOWN for ops)

What a kind writes and aliases comes from its schema: an argument annotated ``(a!)`` is written, one annotated
``(a)`` shares memory with the outputs. Whether it is pure depends on how its effects are known, as PyTorch's
``AliasAnalysisKind`` says: ``FROM_SCHEMA`` kinds do nothing but what the annotations say (without ``(a!)``
they are pure); ``CONSERVATIVE`` kinds may also do anything else (print, raise, call Python, or are not yet
known to be pure), so no pass moves, merges or drops them; ``OF_BLOCKS`` kinds (``prim::If``, ``prim::Loop``)
do what their blocks do.

Scripted code's built-in functions (``aten::len``, ``aten::add.int``...) are declared by ``kinds.builtins`` with
the function that runs them; the runtime attaches the handlers that need it (``prim::CallMethod``,
``prim::FusionGroup``, ``prim::fork``) when it is imported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from ...ops.schema import Schema, parse_schema

FROM_SCHEMA = "from_schema"
"""Effects read from the schema's alias annotations: ``(a!)`` written, ``(a)`` aliased, neither pure."""
CONSERVATIVE = "conservative"
"""May do anything when run (print, raise, call Python, block on a future), or is not yet known to be pure:
never moved, merged or dropped."""
OF_BLOCKS = "of_blocks"
"""Does what the nodes of its blocks do (``prim::If``, ``prim::Loop``)."""


class Kind:
    """One node kind of the JIT: its name, schema, effects and the facts passes ask about it."""

    __slots__ = ("name", "schema_text", "doc", "effects", "blocks", "attributes", "leaf_for_autodiff",
                 "opaque_under_grad", "safe_to_rerun", "container_read", "python_only", "printed_inline",
                 "printed_as_syntax", "printed_as", "function", "schema", "written_args", "mutating",
                 "aliasing", "pure", "has_side_effects")

    name: str
    """The kind as nodes spell it (``Node.kind``): ``prim::Constant``."""
    schema_text: str
    """PyTorch-style schema of the node's inputs and outputs, with alias annotations (``Any(a!) self``)."""
    doc: str
    """What a node of this kind does."""
    effects: str
    """How its effects are known: ``FROM_SCHEMA``, ``CONSERVATIVE`` or ``OF_BLOCKS``."""
    blocks: int
    """How many blocks a node of this kind holds (``prim::If`` 2, ``prim::Loop`` 1, others 0)."""
    attributes: tuple
    """The attributes a node of this kind may carry in an archive (``value`` of a constant)."""
    leaf_for_autodiff: bool
    """Symbolic differentiation takes its outputs as given, as it takes graph inputs: it reads a parameter or a
    part of an input, and gradients flow to the value read through autograd, not through the graph's backward."""
    opaque_under_grad: bool
    """Runs Python the plan cannot see into: a compiled plan that records gradients runs the graph in the
    interpreter instead (``codegen.python_plan``)."""
    safe_to_rerun: bool
    """Cheap and without effects, so a compiled plan may compute it again where its value is used."""
    container_read: bool
    """Reads an element out of a list or tuple (its first input): the element's dtype is the container's."""
    python_only: bool
    """Calls Python objects held by the node, so no archive holds it."""
    printed_inline: bool
    """The archive prints it inline where its value is used, not as a statement of its own."""
    printed_as_syntax: bool
    """The archive prints it as Python syntax (a tuple, an unpacking, an ``if``, a method call), not a call."""
    printed_as: str
    """How ``.code`` writes a builtin that TorchScript prints as Python rather than ``torch.<name>(...)``: ``"int()"``
    (a call of the Python builtin ``int``), ``"[]"`` (an index, ``s[0]``); empty for the rest."""
    function: Callable | None
    """A plain Python function of the input values, returning the one output, for kinds that are one
    (scripted code's ``aten::len``): constant propagation folds them where their inputs are constants."""
    schema: Schema
    """The parsed schema (``toolkit.ops.schema``)."""
    written_args: tuple
    """The indices of the inputs a node writes: those annotated ``(a!)``."""
    mutating: bool
    """Whether a node writes one of its inputs (an argument annotated ``(a!)``)."""
    aliasing: bool
    """Whether its outputs may share memory with its inputs (an argument annotated ``(a)``): a write to one is a
    write to the others."""
    pure: bool
    """Same inputs give the same results and nothing else happens (``FROM_SCHEMA`` and writes nothing): safe to
    merge, fold or drop."""
    has_side_effects: bool
    """Whether running it may matter beyond its results (``OF_BLOCKS`` kinds: ask their blocks' nodes)."""

    def __init__(self, schema: str, doc: str = "", *, effects: str = FROM_SCHEMA, blocks: int = 0,
                 attributes: tuple = (), leaf_for_autodiff: bool = False, opaque_under_grad: bool = False,
                 safe_to_rerun: bool = False, container_read: bool = False, python_only: bool = False,
                 printed_inline: bool = False, printed_as_syntax: bool = False, printed_as: str = ""):
        parsed = parse_schema(schema)
        name = parsed.full_name
        if effects not in (FROM_SCHEMA, CONSERVATIVE, OF_BLOCKS):
            raise ValueError(f"{name}: unknown effects {effects!r}")
        if (effects == OF_BLOCKS) != (blocks > 0):
            raise ValueError(f"{name}: a kind with blocks does what its blocks do, and only such a kind")
        self.name = sys.intern(name)
        self.schema_text = schema
        self.doc = doc
        self.effects = effects
        self.blocks = blocks
        self.attributes = tuple(attributes)
        self.leaf_for_autodiff = leaf_for_autodiff
        self.opaque_under_grad = opaque_under_grad
        self.safe_to_rerun = safe_to_rerun
        self.container_read = container_read
        self.python_only = python_only
        self.printed_inline = printed_inline
        self.printed_as_syntax = printed_as_syntax
        self.printed_as = printed_as
        self.function = None
        self.schema = parsed
        args = parsed.args
        self.written_args = tuple(i for i, a in enumerate(args) if a.alias.endswith("!"))
        self.mutating = bool(self.written_args)
        self.aliasing = any(a.alias and not a.alias.endswith("!") for a in args)
        self.pure = effects == FROM_SCHEMA and not self.mutating
        self.has_side_effects = effects == CONSERVATIVE or self.mutating

    @property
    def handler(self) -> Callable | None:
        """``handler(node, env)`` runs a node: reads its inputs from ``env`` and binds its outputs there."""
        return HANDLERS.get(self.name)

    @property
    def onnx_lowering(self) -> Callable | None:
        """``lower(g, node, inputs) -> outputs``: how ``toolkit.onnx`` writes a node of this kind (``set_onnx_lowering``)."""
        return ONNX_LOWERINGS.get(self.name)

    @property
    def step_maker(self) -> Callable | None:
        """``make(node)`` prepares a node's step once per node (a FusionGroup's runner), used before ``handler``."""
        return STEP_MAKERS.get(self.name)

    def __repr__(self) -> str:
        return f"Kind({self.schema_text!r})"


KINDS: dict[str, Kind] = {}
"""Every declared kind by name."""
HANDLERS: dict[str, Callable] = {}
"""``kind -> handler(node, env)``: each declared kind's ``handler``, as one dict for the interpreter's lookups."""
STEP_MAKERS: dict[str, Callable] = {}
"""``kind -> make(node)``: each declared kind's ``step_maker``."""
ONNX_LOWERINGS: dict[str, Callable] = {}
"""``kind -> lower(g, node, inputs)``: each declared kind's ``onnx_lowering``, set by ``toolkit.onnx`` when imported."""


def declare(k: Kind) -> str:
    """Add ``k`` to the registry and return its name (the constant code compares ``Node.kind`` with)."""
    if k.name in KINDS:
        raise ValueError(f"node kind {k.name} is declared twice")
    KINDS[k.name] = k
    return k.name


def kind(schema: str, doc: str = "", **facts) -> str:
    """Declare the kind ``schema`` names (see ``Kind``) and return its name."""
    return declare(Kind(schema, doc, **facts))


def lookup(name: str) -> Kind | None:
    """The declared kind named ``name``, or None (registry ops and undeclared kinds)."""
    return KINDS.get(name)


def get(name: str) -> Kind:
    """The declared kind named ``name``; KeyError names it when it is not declared."""
    k = KINDS.get(name)
    if k is None:
        raise KeyError(f"node kind {name} is not declared in toolkit.jit.ir.kinds")
    return k


UNKNOWN = Kind("unknown(*Any args) -> (*Any)", "A kind the registry does not declare (a registry op's).",
               effects=CONSERVATIVE)
"""What ``facts`` answers for a name the registry does not declare: may do anything, no fact holds."""


def facts(name: str) -> Kind:
    """The declared kind named ``name``, or ``UNKNOWN``: ``K.facts(n.kind).safe_to_rerun`` asks any node."""
    return KINDS.get(name, UNKNOWN)


def prim(name: str) -> str:
    """The declared kind ``prim::<name>`` (scripted code's ``min``, ``max``, ``abs``)."""
    return get("prim::" + name).name


def set_handler(name: str, handler: Callable, *, replace: bool = True) -> None:
    """Run the declared kind ``name`` with ``handler(node, env)``; ``replace=False`` keeps a handler set before."""
    k = get(name)
    if replace or k.name not in HANDLERS:
        HANDLERS[k.name] = handler


def set_onnx_lowering(name: str, lower: Callable) -> None:
    """Export nodes of the declared kind ``name`` to ONNX with ``lower(g, node, inputs)``; an undeclared kind or a
    second lowering of one kind is an error, so the kinds stay declared here alone."""
    k = get(name)
    if k.name in ONNX_LOWERINGS:
        raise ValueError(f"node kind {k.name} already has an ONNX lowering")
    ONNX_LOWERINGS[k.name] = lower


def set_step_maker(name: str, make: Callable) -> None:
    """Prepare each node of the declared kind ``name`` with ``make(node)`` (see ``Kind.step_maker``)."""
    STEP_MAKERS[get(name).name] = make


def handles(*names: str) -> Callable:
    """Decorator: ``@handles(K.LIST_UNPACK, K.TUPLE_UNPACK)`` runs those kinds with the function."""
    def deco(fn: Callable) -> Callable:
        for n in names:
            set_handler(n, fn)
        return fn

    return deco


# -- values ---------------------------------------------------------------------------------------------------
CONSTANT = kind("prim::Constant() -> Any",
                "A constant: its ``value`` attribute (number, bool, str, None, dtype, device or tensor).",
                attributes=("value",), printed_inline=True)
UNINITIALIZED = kind("prim::Uninitialized() -> Any",
                     "A placeholder for a value set only on some paths (inside a loop), never read where unset.",
                     effects=CONSERVATIVE)  # each marks its own unset slot: never merged with another or folded
UNCHECKED_CAST = kind("prim::unchecked_cast(Any(a) x) -> Any",
                      "Its input, retyped (an Optional narrowed after an ``is not None`` test).")
GET_ATTR = kind("prim::GetAttr(Any self) -> Any",
                "The attribute ``name`` of a module or tensor (a parameter, buffer, submodule or property).",
                attributes=("name",), leaf_for_autodiff=True, safe_to_rerun=True, printed_inline=True)
SET_ATTR = kind("prim::SetAttr(Any(a!) self, Any value) -> ()",
                "Sets the attribute ``name`` of a module.", attributes=("name",), printed_as_syntax=True)
MODULE_CONSTANT = kind("prim::ModuleConstant() -> Any",
                       "A module held by the node (a global module scripted code reads).",
                       effects=CONSERVATIVE, python_only=True)

# -- containers -----------------------------------------------------------------------------------------------
LIST_CONSTRUCT = kind("prim::ListConstruct(*Any(a) elements) -> Any[]",
                      "A list of its inputs.", printed_inline=True)
TUPLE_CONSTRUCT = kind("prim::TupleConstruct(*Any(a) elements) -> Any",
                       "A tuple of its inputs.", printed_as_syntax=True)
NAMED_TUPLE_CONSTRUCT = kind("prim::NamedTupleConstruct(*Any elements) -> Any",
                             "An instance of the NamedTuple class ``cls`` made of its inputs.",
                             effects=CONSERVATIVE, python_only=True)
DICT_CONSTRUCT = kind("prim::DictConstruct(*Any(a) keys_and_values) -> Dict(Any, Any)",
                      "A dict of its inputs, taken as key, value, key, value...", printed_as_syntax=True)
LIST_UNPACK = kind("prim::ListUnpack(Any(a) list) -> (*Any)",
                   "The elements of a list, one output each.", leaf_for_autodiff=True, safe_to_rerun=True,
                   container_read=True, printed_as_syntax=True)
TUPLE_UNPACK = kind("prim::TupleUnpack(Any(a) tuple) -> (*Any)",
                    "The elements of a tuple, one output each.", leaf_for_autodiff=True, safe_to_rerun=True,
                    container_read=True, printed_as_syntax=True)
TUPLE_INDEX = kind("prim::TupleIndex(Any tuple, int index) -> Any",
                   "One element of a tuple.", safe_to_rerun=True, container_read=True)
GETITEM = kind("aten::__getitem__(Any(a) container, Any index) -> Any",
               "``container[index]`` on a list, tuple or dict (no registry op: it acts on Python values).",
               leaf_for_autodiff=True, safe_to_rerun=True, container_read=True, printed_as="[]")
LEN = kind("aten::len(Any a) -> int", "``len(a)`` of a list, dict, str or tensor.", safe_to_rerun=True)

# -- sizes: a traced ``x.size(0)`` is ``aten::size`` made a tensor by ``prim::NumToTensor``, ``aten::Int`` where an
# op takes it as an int (run by the functions in kinds.builtins) ----------------------------------------------
SIZE = kind("aten::size(Tensor self, *int dim) -> Any", "``self.size()``, or ``self.size(dim)`` with ``dim`` given.")
NUMEL = kind("aten::numel(Tensor self) -> int", "``self.numel()``.")
INT = kind("aten::Int(Any a) -> int", "``int(a)`` of a number, a str or a one-element tensor.", printed_as="int()")
NUM_TO_TENSOR = kind("prim::NumToTensor(Scalar a) -> Tensor", "A 0-dim tensor holding the number ``a``.")

# -- control flow ---------------------------------------------------------------------------------------------
IF = kind("prim::If(bool cond) -> (*Any)",
          "Runs its first block when ``cond`` holds, else its second; its outputs are the block's.",
          effects=OF_BLOCKS, blocks=2, printed_as_syntax=True)
LOOP = kind("prim::Loop(int? max_trip_count, bool cond, *Any carried) -> (*Any)",
            "Runs its block while ``cond`` holds and fewer than ``max_trip_count`` times; the block takes the "
            "counter and the carried values and returns the next condition and carried values.",
            effects=OF_BLOCKS, blocks=1, printed_as_syntax=True)
RAISE_EXCEPTION = kind("prim::RaiseException(str? message) -> ()",
                       "Raises the ``exception`` class (RuntimeError without one) with the message.",
                       effects=CONSERVATIVE, attributes=("exception",))
PRINT = kind("prim::Print(*Any args) -> ()", "``print(*args)``.", effects=CONSERVATIVE, printed_as="print()")

# -- calls ------------------------------------------------------------------------------------------------------
CALL_METHOD = kind("prim::CallMethod(Any self, *Any args) -> (*Any)",
                   "Calls the compiled method ``name`` of a submodule (its ``graph``).",
                   effects=CONSERVATIVE, opaque_under_grad=True, printed_as_syntax=True)
CALL_MODULE = kind("prim::CallModule(Any self, *Any args) -> Any",
                   "Calls a submodule that is not compiled (``@ignore``d forward) in Python.",
                   effects=CONSERVATIVE, opaque_under_grad=True, python_only=True)
PYTHON_OP = kind("prim::PythonOp(*Any args) -> (*Any)",
                 "Calls the Python ``callable`` it holds (a fallback or an ``@ignore``d function).",
                 effects=CONSERVATIVE, opaque_under_grad=True, python_only=True)
TENSOR_METHOD = kind("prim::TensorMethod(Tensor self, *Any args) -> Any",
                     "Calls the Tensor method ``name`` that has no registry op (``tolist``...) as Python does.",
                     effects=CONSERVATIVE, opaque_under_grad=True, python_only=True)
FUSION_GROUP = kind("prim::FusionGroup(*Any inputs) -> (*Tensor)",
                    "Runs its ``Subgraph`` of elementwise ops as one generated kernel.", effects=CONSERVATIVE)
FORK = kind("prim::fork(*Any args) -> Future",
            "Starts its ``Subgraph`` on the inputs on the runtime's thread pool; ``aten::wait`` takes the result.",
            effects=CONSERVATIVE, attributes=("Subgraph",))
WAIT = kind("aten::wait(Future future) -> Any", "The result of a ``prim::fork``, once it is done.",
            effects=CONSERVATIVE)

# -- scripted builtins spelled prim:: (run by the functions in kinds.builtins) -----------------------------------
MIN = kind("prim::min(Any a, *Any rest) -> Any", "``min(...)`` of numbers or of a list.")
MAX = kind("prim::max(Any a, *Any rest) -> Any", "``max(...)`` of numbers or of a list.")
ABS = kind("prim::abs(Any a) -> Any", "``abs(a)`` of a number.")
SLICE = kind("prim::slice(int? start, int? stop, int? step) -> Any",
             "A Python ``slice`` (an index of ``aten::__getitem__``).")
ELLIPSIS = kind("prim::Ellipsis() -> Any", "Python's ``...`` (an index).")
