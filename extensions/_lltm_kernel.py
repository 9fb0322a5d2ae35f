"""The LLTM core's numba kernel, in its own module so numba can cache it on disk.

Imported only when the kernel first runs, so loading the extension compiles nothing.
"""

import numba
import numpy as np


@numba.njit(cache=True, parallel=True)
def lltm_core(old_cell, candidate, input_gate, output_gate, out):
    flat_out = out.reshape(-1)
    a, b, c, d = old_cell.reshape(-1), candidate.reshape(-1), input_gate.reshape(-1), output_gate.reshape(-1)
    for i in numba.prange(flat_out.size):
        flat_out[i] = np.tanh(a[i] + b[i] * c[i]) * d[i]
