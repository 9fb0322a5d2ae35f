"""Source generation for CPU map kernels: an n-ary scalar formula becomes a numba loop.

The formula language is one Python expression over named scalars, using
``math.*``, the builtins ``min``/``max``/``abs``/``float``/``int``, conditional
expressions and the helpers of :mod:`toolkit.backends.cpu.scalar`. It is the
``formula`` of an elementwise op in the registry, so the same text serves eager
kernels here and the JIT's fused kernels later.

Names in a formula are of three sorts:

- *inputs*: arrays, read one element per loop iteration;
- *params*: scalars passed to the kernel at run time (``beta`` of softplus);
- *constants*: values fixed when the kernel is generated (``approximate='tanh'``
  of gelu); :func:`specialize` substitutes them and folds the conditionals they
  decide, so a generated kernel holds only the branch it needs.

Example::

    >>> print(map_source("self * beta", inputs=("self",), params=("beta",)))  # doctest: +SKIP
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from . import scalar
from .scalar import HELPERS

BUILTINS = frozenset({"min", "max", "abs", "float", "int", "math"})
_RESERVED = BUILTINS | frozenset(HELPERS) | frozenset({"numba", "out", "i", "n"})


class FormulaError(ValueError):
    """A formula that the code generator cannot compile (unknown name, not an expression, ...)."""


def _parse(expr: str) -> ast.Expression:
    try:
        return ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise FormulaError(f"formula {expr!r} is not a Python expression: {e.msg}") from None


class _Specializer(ast.NodeTransformer):
    """Replace constant names by literals and fold the conditionals that become constant."""

    def __init__(self, constants: dict):
        self.constants = constants

    def visit_Name(self, node: ast.Name):
        if node.id in self.constants:
            return ast.copy_location(ast.Constant(self.constants[node.id]), node)
        return node

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        parts = [node.left, *node.comparators]
        if all(isinstance(p, ast.Constant) for p in parts):
            try:
                value = eval(compile(ast.Expression(node), "<formula>", "eval"), {"__builtins__": {}})
            except Exception:  # leave it to the kernel
                return node
            return ast.copy_location(ast.Constant(bool(value)), node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node


def specialize(expr: str, constants: dict | None = None) -> str:
    """``expr`` with ``constants`` (name -> Python literal) substituted and decided branches removed."""
    if not constants:
        return expr
    tree = _Specializer(dict(constants)).visit(_parse(expr))
    return ast.unparse(ast.fix_missing_locations(tree))


class _Renamer(ast.NodeTransformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(self.names.get(node.id, node.id), node.ctx), node)


def rename(expr: str, names: dict) -> str:
    """``expr`` with its names renamed by ``names`` (old -> new): a formula whose arguments are called as the
    kernel generator's own names (``clamp``'s ``min`` and ``max``) is compiled under others."""
    return ast.unparse(ast.fix_missing_locations(_Renamer(names).visit(_parse(expr))))


def free_names(expr: str) -> set[str]:
    """Every bare name the formula reads (arguments, helpers, ``math``, builtins)."""
    return {n.id for n in ast.walk(_parse(expr)) if isinstance(n, ast.Name)}


def helpers_needed(names: set[str]) -> list[str]:
    """Helpers a formula uses, with the helpers they call, dependencies first."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        src = textwrap.dedent(inspect.getsource(HELPERS[name]))
        for dep in sorted(free_names_of_source(src) & set(HELPERS) - {name}):
            visit(dep)
        order.append(name)

    for name in sorted(names & set(HELPERS)):
        visit(name)
    return order


def free_names_of_source(src: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name)}


def check_formula(expr: str, inputs: tuple, params: tuple = ()) -> None:
    """Raise ``FormulaError`` unless every name in ``expr`` is an input, a param, a helper or a builtin."""
    args = (*inputs, *params)
    clash = [a for a in args if a in _RESERVED or not a.isidentifier()]
    if clash:
        raise FormulaError(f"formula argument names {clash} clash with names the kernel generator uses")
    if len(set(args)) != len(args):
        raise FormulaError(f"formula arguments {args} repeat a name")
    unknown = sorted(free_names(expr) - set(args) - BUILTINS - set(HELPERS))
    if unknown:
        raise FormulaError(
            f"formula {expr!r} reads {unknown}, which are neither its arguments {list(args)} nor "
            f"math, min/max/abs or the helpers {sorted(HELPERS)}"
        )


_JIT = 'numba.njit(cache=True, nogil=True, error_model="numpy"{extra})'

_LOOP = '''@{jit}
def {name}(out, {signature}):
    for i in {range}(out.shape[0]):
{loads}        out[i] = {expr}
'''


def map_source(expr: str, inputs: tuple, params: tuple = ()) -> str:
    """The Python source of a module with the numba map kernel ``serial`` for ``expr`` (run on slices of the
    arrays by :mod:`.split` to use several cores).

    It takes ``(out, *input_arrays, *params)`` with 1-d contiguous arrays of
    ``out``'s length and writes ``out[i] = expr`` for every ``i``; the caller
    broadcasts and flattens. Inputs arrive as ``in_<name>`` and are read into
    ``<name>`` so the expression keeps the formula's own names.
    """
    inputs, params = tuple(inputs), tuple(params)
    check_formula(expr, inputs, params)
    expr = ast.unparse(_parse(expr))
    signature = ", ".join([f"in_{a}" for a in inputs] + list(params))
    loads = "".join(f"        {a} = in_{a}[i]\n" for a in inputs)
    helper_src = []
    for h in helpers_needed(free_names(expr)):
        src = textwrap.dedent(inspect.getsource(HELPERS[h]))
        helper_src.append(f"@{_JIT.format(extra='')}\n{src.rstrip()}\n")
    module_consts = [f"{k} = {v!r}\n" for k, v in helper_constants(helper_src).items()]
    header = (
        '"""A toolkit map kernel, generated from a scalar formula; do not edit.\n\n'
        f"formula: {expr}\ninputs: {', '.join(inputs)}\nparams: {', '.join(params) or '-'}\n"
        '"""\n\nimport math\n\nimport numba\n\n\n'
    )
    loops = [_LOOP.format(jit=_JIT.format(extra=""), name="serial", signature=signature, range="range", loads=loads,
                          expr=expr)]
    sections = (["".join(module_consts)] if module_consts else []) + helper_src + loops
    return header + "\n\n".join(sections)


def helper_constants(helper_src: list) -> dict:
    """Module-level constants of :mod:`scalar` that the copied helpers read (``_EXACT``)."""
    used = set().union(*(free_names_of_source(s) for s in helper_src)) if helper_src else set()
    return {k: getattr(scalar, k) for k in sorted(used) if k.startswith("_") and hasattr(scalar, k)}
