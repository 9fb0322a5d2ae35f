"""The CPU random generator: PyTorch's 32-bit Mersenne Twister, bit for bit.

``Generator`` keeps the same state as ``at::CPUGeneratorImpl`` (the mt19937
words, the read position, the seed and the cached second Box-Muller sample),
so a seed gives the same stream as ``torch.manual_seed`` does, and
``get_state`` produces the same 5056-byte layout as ``torch.get_rng_state``.

Raw 32-bit words come from a numpy implementation for short draws and from a
numba kernel (compiled on first use, cached on disk) for long ones, or for any
but the shortest once numba is loaded anyway; both produce the same words.
"""

from __future__ import annotations

import sys

import numpy as np

from .._core.device import CPU, as_device
from . import runtime as _runtime

DEFAULT_SEED = 67280421310721
_N, _M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UMASK = np.uint32(0x80000000)
_LMASK = np.uint32(0x7FFFFFFF)
_NUMBA_MIN = 4096  # draws at least this long go through the compiled kernel (loading numba for them)
# Once numba is loaded (by any compiled kernel) draws from this long go through it too: 2560 words (a dropout
# mask of 64x20) took 58 us in numpy, with four twists, against 2 us compiled.
_NUMBA_LOADED_MIN = 64

# Byte layout of PyTorch's CPUGeneratorImplState (see get_state).
_STATE_DTYPE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float", "next_float_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056,
})
STATE_SIZE = _STATE_DTYPE.itemsize


def _seed_words(seed: int) -> np.ndarray:
    mt = np.empty(_N, dtype=np.uint32)
    x = seed & 0xFFFFFFFF
    mt[0] = x
    for j in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        mt[j] = x
    return mt


def twist(mt: np.ndarray) -> None:
    """Regenerate all 624 words in place (mt19937's ``next_state``), in four vector steps."""
    a = mt[0:227]
    mt[0:227] = mt[397:624] ^ (((a & _UMASK) | (mt[1:228] & _LMASK)) >> 1) ^ ((mt[1:228] & 1) * _MATRIX_A)
    for lo, hi in ((227, 454), (454, 623)):
        mt[lo:hi] = mt[lo - 227:hi - 227] ^ (((mt[lo:hi] & _UMASK) | (mt[lo + 1:hi + 1] & _LMASK)) >> 1) ^ (
            (mt[lo + 1:hi + 1] & 1) * _MATRIX_A)
    y = (mt[623] & _UMASK) | (mt[0] & _LMASK)
    mt[623] = mt[396] ^ (y >> 1) ^ (_MATRIX_A if mt[0] & 1 else np.uint32(0))


def temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> 11)
    y ^= (y << 7) & np.uint32(0x9D2C5680)
    y ^= (y << 15) & np.uint32(0xEFC60000)
    y ^= y >> 18
    return y


class Generator:
    """A random number generator with its own state, as ``torch.Generator``.

    Every random op takes it as ``generator=``; without one they use
    ``toolkit.default_generator``. Example::

        g = toolkit.Generator().manual_seed(42)
        toolkit.rand(3, generator=g)   # the same numbers as torch with torch.Generator().manual_seed(42)
    """

    __slots__ = ("_mt", "_pos", "_seed", "_next_double", "_next_float", "_device")

    def __init__(self, device="cpu"):
        dev = as_device(device)
        if dev.type != "cpu":
            raise RuntimeError(f"Generator: only 'cpu' generators are supported, got device '{dev}'")
        self._device = CPU
        self._set_seed(DEFAULT_SEED)

    # ------------------------------------------------------------------------------- seeding
    def _set_seed(self, seed: int) -> None:
        self._mt = _seed_words(seed)
        self._pos = np.array([1, 0], dtype=np.int64)  # mt19937's ``left`` and ``next``
        self._seed = seed
        self._next_double = None
        self._next_float = None

    def manual_seed(self, seed) -> Generator:
        """Seed the generator; negative seeds wrap modulo 2**64 as in PyTorch."""
        seed = _check_seed(seed)
        self._set_seed(seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy and return that seed."""
        s = int.from_bytes(np.random.default_rng().bytes(8), "little") & ((1 << 63) - 1)
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    @property
    def device(self):
        return self._device

    # --------------------------------------------------------------------------------- state
    def get_state(self):
        """The full state as a uint8 tensor, in PyTorch's byte layout (5056 bytes)."""
        return _runtime.DISPATCHER.wrap(self._state_bytes())

    def _state_bytes(self) -> np.ndarray:
        rec = np.zeros((), dtype=_STATE_DTYPE)
        rec["seed"] = self._seed & 0xFFFFFFFFFFFFFFFF
        rec["left"] = int(self._pos[0])
        rec["seeded"] = 1
        rec["next"] = int(self._pos[1])
        rec["state"] = self._mt.astype(np.uint64)
        if self._next_double is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self._next_double
        if self._next_float is not None:
            rec["next_float_valid"] = 1
            rec["next_float"] = self._next_float
        return np.frombuffer(rec.tobytes(), dtype=np.uint8).copy()

    def set_state(self, new_state) -> Generator:
        """Restore a state from ``get_state`` (or from ``torch.get_rng_state().numpy()``)."""
        data = np.asarray(getattr(new_state, "_data", new_state))
        if data.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor, but got a tensor of dtype {data.dtype}")
        if data.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG state size to be "
                f"{data.size}"
            )
        rec = np.frombuffer(np.ascontiguousarray(data).tobytes(), dtype=_STATE_DTYPE)[0]
        left, nxt = int(rec["left"]), int(rec["next"])
        if not (rec["seeded"] and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        self._mt = rec["state"].astype(np.uint32)
        self._pos = np.array([left, nxt], dtype=np.int64)
        self._seed = int(rec["seed"])
        self._next_double = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self._next_float = float(rec["next_float"]) if rec["next_float_valid"] else None
        return self

    def clone_state(self) -> Generator:
        g = Generator.__new__(Generator)
        g._device = self._device
        g._mt = self._mt.copy()
        g._pos = self._pos.copy()
        g._seed = self._seed
        g._next_double = self._next_double
        g._next_float = self._next_float
        return g

    def __repr__(self) -> str:
        return f"<toolkit.Generator object at {hex(id(self))}>"

    # ------------------------------------------------------------------------------- drawing
    def random32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words of the stream (``CPUGeneratorImpl::random``)."""
        if n >= _NUMBA_MIN or (n >= _NUMBA_LOADED_MIN and "numba" in sys.modules):
            from ._rng_numba import mt_fill  # optional: numba, never loaded by import toolkit

            out = np.empty(n, dtype=np.uint32)
            mt_fill(self._mt, self._pos, out)
            return out
        return self._random32_numpy(n)

    def _random32_numpy(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.uint32)
        mt, pos = self._mt, self._pos
        left, nxt = int(pos[0]), int(pos[1])
        filled = 0
        while filled < n:
            avail = left - 1
            if avail == 0:
                twist(mt)
                left, nxt, avail = _N + 1, 0, _N
            k = min(avail, n - filled)
            out[filled:filled + k] = mt[nxt:nxt + k]
            filled += k
            nxt += k
            left -= k
        pos[0], pos[1] = left, nxt
        return temper(out)

    def random64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit values, each from two words, high word first (``random64``)."""
        w = self.random32(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]


def _check_seed(seed) -> int:
    if isinstance(seed, float) or not hasattr(seed, "__index__"):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed.__index__())
    if seed < -(1 << 63) or seed >= (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


default_generator = Generator()


def get_generator(generator) -> Generator:
    """The generator a random op uses: the one given, or the default one."""
    if generator is None:
        return default_generator
    if isinstance(generator, Generator):
        return generator
    raise TypeError(f"generator must be a toolkit.Generator, not {type(generator).__name__}")
