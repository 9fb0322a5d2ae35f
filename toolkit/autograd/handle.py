"""The handle every hook registration returns; ``remove()`` unregisters the hook.

One class for tensor, node, module and optimizer hooks, as ``torch.utils.hooks.RemovableHandle`` is: hooks kept in
dicts (modules, optimizers) are keyed by the handle's ``id``, and the handle holds those dicts weakly, so a
handle kept around does not keep a module's hooks alive. Autograd keeps a tensor's or node's hooks in lists, in
the order they run: its handles (:class:`ListHookHandle`) remove the hook from its list.
It sits below the graph nodes (which return it from ``register_hook``), ``toolkit.nn`` and ``toolkit.optim``.
"""

from __future__ import annotations

import itertools
import weakref

_handle_ids = itertools.count()


class RemovableHandle:
    """Returned by ``register_*_hook``: ``remove()`` (or leaving a ``with`` block) takes the hook out again.

    ``hooks_dict`` holds the hook under ``handle.id``; ``extra_dict`` (a dict or a list of dicts) are other
    dicts keyed by the same id (a module's with-kwargs flags), cleaned up together.
    """

    def __init__(self, hooks_dict: dict, *, extra_dict=None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_handle_ids)
        if extra_dict is None:
            extra_dict = []
        elif isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else {})
        self.id = state[1]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2] if d is not None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ListHookHandle(RemovableHandle):
    """The handle of a hook autograd keeps in a list (a tensor's or a node's): ``remove()`` drops it from there."""

    def __init__(self, container: list, fn) -> None:
        self._container = container
        self._fn = fn
        self.id = next(_handle_ids)
        self.hooks_dict_ref = lambda: None
        self.extra_dict_ref = ()

    def remove(self) -> None:
        try:
            self._container.remove(self._fn)
        except ValueError:
            pass

    def __getstate__(self):
        return (self._container, self._fn, self.id)

    def __setstate__(self, state) -> None:
        self._container, self._fn, self.id = state
        self.hooks_dict_ref = lambda: None
        self.extra_dict_ref = ()
