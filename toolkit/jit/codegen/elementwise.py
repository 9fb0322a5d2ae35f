"""What the fusion code generator can compile, and how one node's scalar formula becomes loop-body code.

A node is fusible when its op is elementwise with a scalar ``formula`` in the
registry, its tensor types are complete (shape, dtype, CPU), and every
non-tensor argument is a constant (it is baked into the generated source).
Each node then computes exactly as eager dispatch does: promoted inputs are
cast to the node's compute dtype (the same three-tier promotion), Scalar
arguments and the formula's number literals are typed in that dtype (so a
float32 node steps in float32, as numpy and PyTorch do), the formula is
evaluated, and the result is rounded to the node's output dtype, so a fused
chain gives eager's numbers (math functions: libm's, within an ulp or two;
float32 ``exp`` and ``tanh`` on the CPU: float64 helpers that round correctly
and let the loop vectorize).
"""

from __future__ import annotations

import ast

from ..._core import dtypes as _dt
from ...backends.cpu.codegen import FormulaError, check_formula, specialize
from ...ops import registry as R
from ..ir import kinds as K
from ..ir import types as T
from ..ir.graph import Node, Value

FUSIBLE_KINDS = (R.ELEMENTWISE, R.COMPARISON)
_NP_NAMES = {"bool": "np.bool_", "uint8": "np.uint8", "int8": "np.int8", "int16": "np.int16", "int32": "np.int32",
             "int64": "np.int64", "float32": "np.float32", "float64": "np.float64"}
DTYPES = frozenset(_NP_NAMES)
_DIVISIONS = (ast.Div, ast.FloorDiv, ast.Mod)


def tensor_type(v: Value) -> T.TensorType | None:
    """``v``'s type when it is a complete CPU or CUDA tensor type of a dtype the generator handles."""
    t = v.type
    if not isinstance(t, T.TensorType) or not t.is_complete() or t.dtype.name not in DTYPES:
        return None
    if getattr(t.device, "type", t.device) not in ("cpu", "cuda"):
        return None
    return t


def constant_of(v: Value):
    """(True, value) when ``v`` is a ``prim::Constant`` (a 0-dim tensor constant gives its number)."""
    n = v.node
    if n is None or n.kind != K.CONSTANT:
        return False, None
    value = n.attributes.get("value")
    if hasattr(value, "_data"):
        if value.ndim != 0 or value.dtype.name not in DTYPES:
            return False, None
        value = value.item()
    return True, value


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float))


def compute_dtype(n: Node):
    """The dtype ``n`` computes in: PyTorch's promotion over its promoted arguments (as eager dispatch does)."""
    op = n.op
    dims, zeros, scalars = [], [], []
    for i in op.promote_args:
        v = n.inputs[i]
        t = tensor_type(v) if isinstance(v.type, T.TensorType) else None
        if t is not None:
            (zeros if len(t.sizes) == 0 else dims).append(t.dtype)
            continue
        is_const, value = constant_of(v)
        if is_const and value is not None:
            if hasattr(v.node.attributes.get("value"), "_data"):
                zeros.append(v.node.attributes["value"].dtype)
            else:
                scalars.append(value)
    common = _dt.result_type_from(dims, zeros, scalars)
    p = op.promotion
    if p == R.PROMOTE_INT_TO_FLOAT and not common.is_floating_point:
        return _dt.get_default_dtype()
    if p == R.PROMOTE_ALWAYS_BOOL:
        return _dt.bool
    return common


def fusibility(n: Node) -> str | None:
    """None when the generator can compile ``n``, else why not (kept for the notebook views and tests)."""
    op = n.op
    if op is None or op.kind not in FUSIBLE_KINDS or not op.formula:
        return "not an elementwise op with a scalar formula"
    from ..kinds.effects import is_mutating, is_random  # (passes import this module)

    if is_mutating(n) or is_random(n):  # a group may be raced, so its ops may run more than once
        return "writes a tensor or draws random numbers: it runs once, outside any group"
    if op.promotion == R.PROMOTE_NONE or len(n.outputs) != 1:
        return "computes its own dtypes"
    out = tensor_type(n.outputs[0])
    if out is None:
        return "its output type is not a complete CPU tensor type of a supported dtype"
    used = _formula_names(op.formula)
    for i, a in enumerate(op.args):
        if i >= len(n.inputs):
            break
        v = n.inputs[i]
        if a.type.startswith("Tensor"):
            is_const, value = constant_of(v)
            if is_const and (value is None or _is_scalar(value)):
                continue
            if tensor_type(v) is None:
                return f"input {a.name} is neither a complete CPU tensor type of a supported dtype nor a constant number"
            if v.type.device != out.device:
                return f"input {a.name} is on {v.type.device}, the output on {out.device}"
            continue
        is_const, value = constant_of(v)
        if not is_const:
            return f"argument {a.name} is not a constant"
        if a.name not in used and value != a.default:
            return f"the formula does not cover {a.name}={value!r}"
        if value is not None and not isinstance(value, (bool, int, float, str)):
            return f"argument {a.name} is a {type(value).__name__}"
    compute = compute_dtype(n)
    if compute.name not in DTYPES:
        return f"computes in {compute.name}"
    if not compute.is_floating_point and _integer_unsafe(op.formula):
        return "integer division and math functions stay with the eager kernels (division by zero, precision)"
    return None


def _formula_names(formula: str) -> set:
    return {x.id for x in ast.walk(ast.parse(formula, mode="eval")) if isinstance(x, ast.Name)}


def _integer_unsafe(formula: str) -> bool:
    tree = ast.parse(formula, mode="eval")
    for x in ast.walk(tree):
        if isinstance(x, ast.BinOp) and isinstance(x.op, _DIVISIONS + (ast.Pow,)):
            return True
        if isinstance(x, ast.Attribute) and isinstance(x.value, ast.Name) and x.value.id == "math" and x.attr != "inf":
            return True
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id not in ("min", "max", "abs", "bool"):
            return True
    return False


def np_cast(dtype_name: str, expr: str) -> str:
    """Source that converts ``expr`` to a scalar of ``dtype_name`` inside a numba kernel."""
    if dtype_name == "bool":
        return f"bool({expr})"
    return f"{_NP_NAMES[dtype_name]}({expr})"


def literal(value, dtype_name: str) -> str:
    """A Python number as a typed literal of ``dtype_name`` (weak scalars compute in the node's dtype)."""
    if dtype_name == "bool":
        return "True" if value else "False"
    if isinstance(value, float) and dtype_name not in ("float32", "float64"):
        value = int(value)
    text = repr(float(value)) if dtype_name.startswith("float") else repr(int(value))
    if text in ("inf", "-inf", "nan"):
        text = f"float('{text}')"
    return np_cast(dtype_name, text)


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node: ast.Name):
        if node.id in self.names:
            return ast.copy_location(ast.parse(self.names[node.id], mode="eval").body, node)
        return node


# Formula spellings numba does not compile, and what it compiles instead (same IEEE result).
_NUMBA_SPELLINGS = {("math", "fmod"): "np.fmod"}
# math functions a float32 CPU loop computes with float64 helpers (written into the loop body) instead of libm's
# float32 routine: a call per element keeps the loop scalar (~20 ns an element for tanhf), the helpers are
# arithmetic the loop vectorizes, and rounded to float32 they are as close to the true value as libm's.
_FLOAT32_HELPERS = {("math", "exp"): "exp_f32", ("math", "tanh"): "tanh_f32"}


class _Typed(ast.NodeTransformer):
    """Number literals of a formula as typed constants of a float compute dtype; numba spellings.

    numba computes ``float32 + 1.0`` (or ``+ 1``) in float64, where eager mode,
    numpy and PyTorch stay in float32 at every step: typing the literals keeps
    each intermediate in the compute dtype, so results round as eager's do.
    """

    def __init__(self, compute: str, hoist, statements=None):
        self.compute = compute
        self.hoist = hoist
        # a CPU loop's LoopStatements, where the kernel expands its float32 math (see fused_kernel)
        self.statements = statements if compute == "float32" and statements is not None and statements.expand \
            else None

    def visit_Constant(self, node: ast.Constant):
        value = node.value
        if self.compute.startswith("float") and isinstance(value, (int, float)) and not isinstance(value, bool):
            return ast.copy_location(ast.Name(self.hoist(literal(value, self.compute)), ast.Load()), node)
        return node

    def visit_Call(self, node: ast.Call):
        f = node.func
        if self.statements is not None and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and (f.value.id, f.attr) in _FLOAT32_HELPERS:
            node = self.generic_visit(node)
            result = self.statements.inline(_FLOAT32_HELPERS[f.value.id, f.attr], [ast.unparse(a) for a in node.args])
            return ast.copy_location(ast.parse(f"np.float32({result})", mode="eval").body, node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute):
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in _NUMBA_SPELLINGS:
            return ast.copy_location(ast.parse(_NUMBA_SPELLINGS[node.value.id, node.attr], mode="eval").body, node)
        return self.generic_visit(node)


def node_expression(n: Node, local_of, hoist, statements=None) -> str:
    """The loop-body expression computing ``n``'s output.

    ``local_of(value)`` names the scalar holding a tensor input inside the loop;
    ``hoist(source)`` returns a name for a loop-invariant typed constant;
    ``statements`` (a CPU loop's :class:`.loop_statements.LoopStatements`) takes
    the statements float32 ``exp``/``tanh`` expand to, which must run first.
    """
    op = n.op
    compute = compute_dtype(n).name
    out = n.outputs[0].type.dtype.name
    promoted = set(op.promote_args)
    names: dict[str, str] = {}
    constants: dict = {}
    for i, a in enumerate(op.args):
        if i >= len(n.inputs):
            constants[a.name] = a.default
            continue
        v = n.inputs[i]
        if a.type.startswith("Tensor"):
            is_const, value = constant_of(v)
            if is_const and (value is None or _is_scalar(value)):
                if value is None:
                    constants[a.name] = None
                else:
                    names[a.name] = hoist(literal(value, compute if i in promoted else _dt_name_of_scalar(value)))
                continue
            src = local_of(v)
            vt = v.type.dtype.name
            if i in promoted and vt != compute:
                src = np_cast(compute, src)
            names[a.name] = src
        else:
            _, value = constant_of(v)
            if a.type.startswith("Scalar") and _is_scalar(value) and not isinstance(value, bool):
                # As eager kernels (and PyTorch): a Scalar argument is converted to the compute dtype first,
                # so addcmul(int, ..., value=0.5) multiplies by 0 and clamp(uint8, min=-1) compares with 255.
                names[a.name] = hoist(literal(value, compute))
            else:
                constants[a.name] = value
    for i in range(len(n.inputs), len(op.args)):
        constants.setdefault(op.args[i].name, op.args[i].default)
    expr = specialize(op.formula, {k: v for k, v in constants.items()})
    try:
        check_formula(expr, tuple(a for a in names), ())
    except FormulaError:
        pass  # constants substituted away may leave fewer names; unknown names fail at compile time with the node
    tree = _Rename(names).visit(ast.parse(expr, mode="eval"))
    tree = _Typed(compute, hoist, statements).visit(tree)
    return np_cast(out, ast.unparse(ast.fix_missing_locations(tree)))


def float32_math_sites(n: Node) -> int:
    """How many float32 ``exp``/``tanh`` calls node ``n``'s formula makes (each expands to ~35 loop statements)."""
    if n.op is None or not n.op.formula or compute_dtype(n).name != "float32":
        return 0
    tree = ast.parse(n.op.formula, mode="eval")
    return sum(1 for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
               and isinstance(c.func.value, ast.Name) and (c.func.value.id, c.func.attr) in _FLOAT32_HELPERS)


def _dt_name_of_scalar(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    return "float64"


def reduction_fusibility(n: Node) -> str | None:
    """None when ``n`` is a reduction over every element that can end a fusion group, else why not.

    A group ending in ``sum``/``mean`` accumulates as it goes, so the reduced
    tensor never exists in memory: that is where fusing a reduction pays.
    """
    if n.op is None or n.op.full_reduction is None:
        return "not a reduction the kernel can accumulate (the registry's full_reduction)"
    src = tensor_type(n.inputs[0])
    out = tensor_type(n.outputs[0]) if len(n.outputs) == 1 else None
    if src is None or out is None or out.sizes != ():
        return "not a reduction of a complete tensor type to a 0-dim tensor"
    if getattr(src.device, "type", src.device) != "cpu":
        return "reductions on cuda stay with the eager tree-reduction kernels"
    args = {a.name: i for i, a in enumerate(n.op.args)}
    values = {}
    for name, i in args.items():
        if i == 0:
            continue
        if i >= len(n.inputs):
            values[name] = n.op.args[i].default
            continue
        is_const, value = constant_of(n.inputs[i])
        if not is_const:
            return f"argument {name} is not a constant"
        values[name] = value
    dims = values.get("dim")
    if dims is not None:
        rank = len(src.sizes)
        dims = [dims] if isinstance(dims, int) else list(dims)
        if dims and sorted(d % max(rank, 1) for d in dims) != list(range(rank)):
            return "reduces only some dimensions"
    if values.get("keepdim") or values.get("dtype") is not None:
        return "keepdim or dtype given"
    if out.dtype.name not in DTYPES:
        return f"accumulates in {out.dtype.name}"
    return None


def accumulator(n: Node) -> tuple:
    """(initial value source, final expression template) of a fusible reduction node; ``{acc}``, ``{n}`` fill in."""
    out = n.outputs[0].type.dtype.name
    src = n.inputs[0].type
    count = 1
    for s in src.sizes:
        count *= s
    init = "0.0" if out.startswith("float") else "0"
    if n.op.full_reduction == "mean":
        return init, np_cast(out, f"{{acc}} / {float(count)!r}") if count else np_cast(out, "math.nan")
    return init, np_cast(out, "{acc}")


def is_chunk(n: Node) -> bool:
    """Whether ``n`` is an ``aten::chunk`` (the one place the fuser and the kernel name it: TorchScript's ConstantChunk)."""
    return n.kind == "aten::chunk"


def empty_reduction(n: Node) -> float:
    """A fusible reduction's value over zero elements: 0 for a sum, nan for a mean (as PyTorch)."""
    return float("nan") if n.op.full_reduction == "mean" else 0


def chunk_spec(n: Node) -> tuple | None:
    """(pre-chunk shape, dim, chunks) of an ``aten::chunk`` node a CPU fusion group can read by offset, else None.

    The chunk must cut a complete CPU tensor of a supported dtype into equal,
    non-empty parts along a constant dim (as TorchScript's ConstantChunk) and
    feed exactly one ``prim::ListUnpack`` with one output per part.
    """
    if not is_chunk(n) or len(n.inputs) < 2:
        return None
    src = tensor_type(n.inputs[0])
    if src is None or getattr(src.device, "type", src.device) != "cpu" or not src.sizes:
        return None
    ok_c, chunks = constant_of(n.inputs[1])
    ok_d, dim = constant_of(n.inputs[2]) if len(n.inputs) > 2 else (True, 0)
    if not (ok_c and ok_d) or type(chunks) is not int or type(dim) is not int or chunks < 2:
        return None
    shape = tuple(src.sizes)
    if not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    if shape[dim] == 0 or shape[dim] % chunks:
        return None
    uses = n.outputs[0].uses
    if len(uses) != 1 or uses[0].user.kind != K.LIST_UNPACK or len(uses[0].user.outputs) != chunks:
        return None
    return shape, dim, chunks
