"""The LLTM core's numba kernel, in its own module so numba can cache it on disk.

Imported only when the kernel first runs, so loading the extension compiles nothing.
"""

import numba
import numpy as np


@numba.njit(cache=True, parallel=True)
def lltm_core(old_cell, candidate, input_gate, output_gate, new_h, new_cell):
    """``new_cell = old_cell + candidate * input_gate``, ``new_h = tanh(new_cell) * output_gate``, in one pass."""
    flat_h, flat_c = new_h.reshape(-1), new_cell.reshape(-1)
    a, b, c, d = old_cell.reshape(-1), candidate.reshape(-1), input_gate.reshape(-1), output_gate.reshape(-1)
    for i in numba.prange(flat_h.size):
        cell = a[i] + b[i] * c[i]
        flat_c[i] = cell
        flat_h[i] = np.tanh(cell) * d[i]
