"""Running graphs: the interpreter, the profiling executor (specialization, plan caches, autodiff), fusion-group
runners and the thread pool of ``fork``.

Importing the package registers the node kinds that need the runtime (``prim::FusionGroup``, ``prim::fork``,
``aten::wait``) in the table of ``kinds.steps``, so every graph that runs finds them.
"""

from . import fork, group_runner  # noqa: F401  (they register their node kinds)
