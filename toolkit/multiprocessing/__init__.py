"""``toolkit.multiprocessing``: the standard library's ``multiprocessing``, where tensors travel as shared memory.

The API is ``multiprocessing``'s own (``Process``, ``Queue``, ``Pool``, ``get_context``...), as in
``torch.multiprocessing``; importing this package registers reductions with ``ForkingPickler`` so that a
tensor put on a queue or passed to a process started with ``spawn``/``forkserver`` arrives as a view of the
same memory (its storage is moved to shared memory first). Under ``fork`` a child simply inherits the mapping
of tensors already shared with ``share_memory_()``. Hogwild training::

    model.share_memory()
    workers = [mp.Process(target=train, args=(model,)) for _ in range(2)]

The memory is released when the last process holding it lets go.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing import *  # noqa: F403

from ._strategy import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from .reductions import init_reductions
from .spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "init_reductions",
           "ProcessContext", "ProcessExitedException", "ProcessRaisedException", "SpawnContext", "spawn",
           "start_processes", *multiprocessing.__all__]

init_reductions()
