"""``import toolkit`` is fast and compiles nothing (numba is imported lazily)."""

from __future__ import annotations

import subprocess
import sys


def test_import_is_fast_and_does_not_load_numba():
    # CPU time, not wall time: other tests running beside this one must not make it flaky.
    code = (
        "import time, sys; t = time.process_time(); import toolkit; dt = time.process_time() - t; "
        "print(dt); assert 'numba' not in sys.modules, 'numba imported at import time'"
    )
    best = min(float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3))
    assert best < 1.0, f"import toolkit took {best:.2f} s"
