"""The numba kernel behind ``frame_records``; imported on first use so ``import toolkit`` compiles nothing."""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _masked_crc(buf, start, stop, table):
    c = 0xFFFFFFFF
    for i in range(start, stop):
        c = table[(c ^ buf[i]) & 0xFF] ^ (c >> 8)
    c ^= 0xFFFFFFFF
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@numba.njit(cache=True, nogil=True)
def frame(data, lengths, table):
    """``uint64 len | uint32 masked_crc(len) | data | uint32 masked_crc(data)`` for each record, concatenated."""
    out = np.empty(data.size + 16 * lengths.size, np.uint8)
    src = 0
    pos = 0
    for r in range(lengths.size):
        n = lengths[r]
        for j in range(8):
            out[pos + j] = (n >> (8 * j)) & 0xFF
        c = _masked_crc(out, pos, pos + 8, table)
        for j in range(4):
            out[pos + 8 + j] = (c >> (8 * j)) & 0xFF
        out[pos + 12:pos + 12 + n] = data[src:src + n]
        c = _masked_crc(data, src, src + n, table)
        for j in range(4):
            out[pos + 12 + n + j] = (c >> (8 * j)) & 0xFF
        src += n
        pos += 16 + n
    return out
