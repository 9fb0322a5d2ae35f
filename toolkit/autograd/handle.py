"""The handle every hook registration returns; ``remove()`` unregisters the hook.

It sits below the graph nodes (which return it from ``register_hook``) and the
tensor hooks (which need the nodes to find where a tensor's gradient flows).
"""

from __future__ import annotations

import itertools

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook`` and friends; ``remove()`` unregisters the hook."""

    def __init__(self, container: list, fn):
        self._container = container
        self._fn = fn
        self.id = next(_handle_ids)

    def remove(self) -> None:
        try:
            self._container.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
