"""Shared checks for script-mode tests: scripted result == Python result."""

import numpy as np

import toolkit


def same(a, b, tol: float = 1e-6) -> bool:
    if isinstance(a, toolkit.Tensor):
        return isinstance(b, toolkit.Tensor) and a.shape == b.shape and np.allclose(a.detach().numpy(), b.detach().numpy(), atol=tol,
                                                                                   rtol=tol)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    return a == b


def check(fn, *args, runs: int = 3):
    """Script ``fn``, run it ``runs`` times (profiling and optimized plans) and compare with Python."""
    s = toolkit.jit.script(fn)
    expected = fn(*args)
    for _ in range(runs):
        got = s(*args)
        assert same(got, expected), (got, expected)
    s.graph.verify()
    return s
