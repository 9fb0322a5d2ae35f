"""CUDA tests run on a real GPU, or on numba's CUDA simulator in a process started for them.

numba decides between the real CUDA target and the simulator when
``numba.cuda`` is first imported, so the simulator cannot be switched on in
a pytest process that has already used numba for other tests (and switching
it on for the whole session would change what ``toolkit.cuda.is_available()``
says to every other test). ``test_in_simulator.py`` therefore runs this
directory again in a subprocess with ``TOOLKIT_CUDA_SIMULATOR=1``; in that
process the tests here run, and in the parent they are skipped unless a GPU
is present.
"""

from __future__ import annotations

import os
import sys

SIMULATED = os.environ.get("TOOLKIT_CUDA_SIMULATOR") == "1"
if SIMULATED:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    sys.setswitchinterval(1e-5)  # simulated threads meet at barriers: hand the GIL over quickly
