"""Graph passes: plain Python functions over the IR, run in order by a ``PassManager``.

Built in: ``dce``, ``trace_dce``, ``cse``, ``constant_propagation``, ``peephole``, ``unroll_loops``,
``canonicalize``, ``inline_subgraphs``, ``inline_calls``, ``fuse``, and for frozen graphs ``remove_dropout``,
``fold_conv_bn``, ``fold_conv_arith``. Register
your own with ``register_pass`` and run it by name with the others::

    @toolkit.jit.register_pass("my_pass")
    def my_pass(graph):
        ...
        return graph

    toolkit.jit.run_passes(traced.graph, ["constant_propagation", "my_pass", "dce"])
"""

from __future__ import annotations

from ..kinds.effects import AliasSets, has_side_effects, is_pure
from . import (  # noqa: F401  (registers the built-in passes)
                      canonicalize,
                      constant_propagation,
                      cse,
                      dce,
                      fold_conv_arith,
                      fold_conv_bn,
                      fuse,
                      inline,
                      peephole,
                      remove_dropout,
                      unroll,
)
from .canonicalize import canonicalize as canonicalize_graph
from .constant_propagation import propagate_constants
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code, eliminate_dead_trace_code
from .fuse import fuse as fuse_elementwise
from .fuse import fusion_groups
from .inline import inline_subgraph, inline_subgraphs
from .inline_calls import inline_call, inline_calls
from .manager import (
                      DEFAULT_PIPELINE,
                      Pass,
                      PassManager,
                      PassRecord,
                      get_pass,
                      register_pass,
                      registered_passes,
                      run_passes,
)
from .peephole import peephole as peephole_pass
from .unroll import unroll_loop, unroll_loops

__all__ = [
    "AliasSets", "DEFAULT_PIPELINE", "Pass", "PassManager", "PassRecord", "eliminate_common_subexpressions",
    "eliminate_dead_code", "eliminate_dead_trace_code", "fuse_elementwise", "fusion_groups", "get_pass", "has_side_effects", "is_pure", "peephole_pass", "propagate_constants",
    "register_pass", "registered_passes", "run_passes", "canonicalize_graph", "inline_call", "inline_calls", "inline_subgraph",
    "inline_subgraphs",
    "unroll_loop", "unroll_loops",
]
