"""``import toolkit`` is fast and compiles nothing (numba is imported lazily)."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_fast_and_does_not_load_numba():
    code = (
        "import time, sys; t = time.perf_counter(); import toolkit; dt = time.perf_counter() - t; "
        "print(dt); assert 'numba' not in sys.modules, 'numba imported at import time'"
    )
    best = min(float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3))
    assert best < 1.0, f"import toolkit took {best:.2f} s"
