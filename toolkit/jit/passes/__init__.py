"""Graph passes: plain Python functions over the IR, run in order by a ``PassManager``.

Built in: ``dce``, ``cse``, ``constant_propagation``, ``peephole``. Register
your own with ``register_pass`` and run it by name with the others::

    @toolkit.jit.register_pass("my_pass")
    def my_pass(graph):
        ...
        return graph

    toolkit.jit.run_passes(traced.graph, ["constant_propagation", "my_pass", "dce"])
"""

from __future__ import annotations

from . import constant_propagation, cse, dce, peephole  # noqa: F401  (registers the built-in passes)
from ._effects import AliasSets, has_side_effects, is_pure
from .constant_propagation import propagate_constants
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
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

__all__ = [
    "AliasSets", "DEFAULT_PIPELINE", "Pass", "PassManager", "PassRecord", "eliminate_common_subexpressions",
    "eliminate_dead_code", "get_pass", "has_side_effects", "is_pure", "peephole_pass", "propagate_constants",
    "register_pass", "registered_passes", "run_passes",
]
