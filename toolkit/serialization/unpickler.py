"""Reading ``data.pkl``: a restricted unpickler for weights-only loads, and a full one for trusted files.

:class:`WeightsUnpickler` is toolkit's version of PyTorch's ``_weights_only_unpickler``: it interprets the
pickle itself, opcode by opcode, without ever importing a name. A global resolves only through the allow-list
(:mod:`.allowlist`: tensors, storages, dtypes, devices, ``torch.Size``, ``OrderedDict``, a few builtins, and
what the user added); only those may be called (REDUCE, NEWOBJ) or given state (BUILD), lists only appended
to, dicts only filled. Opcodes that would import or call anything else (INST, OBJ, EXT*) are refused. A refusal
raises :class:`WeightsOnlyError`; a malformed pickle (truncated, an empty stack, a missing memo entry) raises
``_Corrupt``. The work is one pass over the bytes and the objects made are at most linear in them.

:func:`full_unpickler` is Python's unpickler with PyTorch's names mapped onto toolkit's (``weights_only=False``):
it runs whatever the file says, so it is for files from a trusted source only.
"""

from __future__ import annotations

import _compat_pickle
import importlib
import pickle
import struct
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

from ..nn.parameter import Parameter
from ..tensor import Tensor
from .allowlist import DEFAULT_GLOBALS, blocked_module, unsupported_global_message, user_globals
from .format import _check, _Corrupt
from .rebuild import _set_state
from .torch_names import TORCH_GLOBALS, UnsupportedDtype

_MAX_LINE = 1024  # the longest module or name a GLOBAL may give
_DICTS = (dict, OrderedDict, Counter)


class WeightsOnlyError(pickle.UnpicklingError):
    """The pickle asks for something a weights-only load does not allow."""


class _Stop(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _map_py2_name(module: str, name: str) -> tuple[str, str]:
    """Protocol-2 pickles name some builtins by their Python 2 names (``__builtin__.set``)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


class WeightsUnpickler:
    """Unpickles ``data`` allowing only the globals of the allow-list; see the module docstring.

    ``persistent_load(pid)`` resolves storages; ``encoding`` decodes Python 2 byte strings (``"bytes"`` keeps
    them as bytes).
    """

    def __init__(self, data: bytes | bytearray, persistent_load: Callable[[Any], Any],
                 encoding: str = "utf-8") -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.allowed = {**DEFAULT_GLOBALS, **user_globals()}
        self.allowed_ids = {id(v) for v in self.allowed.values()}

    # ------------------------------------------------------------------------------ reading bytes
    def _read(self, n: int) -> memoryview:
        end = self.pos + n
        _check(0 <= n and end <= len(self.data), "data.pkl is truncated")
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def _readline(self) -> str:
        chunk = bytes(self.data[self.pos:self.pos + _MAX_LINE + 1])
        end = chunk.find(b"\n")
        _check(end >= 0, "data.pkl has a GLOBAL whose name is unterminated or too long")
        self.pos += end + 1
        try:
            return chunk[:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise _Corrupt(f"data.pkl has a GLOBAL name that is not UTF-8 ({e})") from e

    def _unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self._read(size))[0]

    # ------------------------------------------------------------------------------ the stack
    def _pop(self) -> Any:
        _check(bool(self.stack), "data.pkl pops an empty stack")
        return self.stack.pop()

    def _top(self) -> Any:
        _check(bool(self.stack), "data.pkl reads an empty stack")
        return self.stack[-1]

    def _pop_mark(self) -> list[Any]:
        _check(bool(self.metastack), "data.pkl has no MARK to pop to")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    # ------------------------------------------------------------------------------ globals and calls
    def _global(self, module: str, name: str) -> Any:
        module, name = _map_py2_name(module, name)
        full = f"{module}.{name}"
        blocked = blocked_module(module)
        if blocked is not None:
            raise WeightsOnlyError(f"Trying to load unsupported GLOBAL {full} whose module {blocked} is blocked.")
        if full not in self.allowed:
            raise WeightsOnlyError(unsupported_global_message(full))
        obj = self.allowed[full]
        if isinstance(obj, UnsupportedDtype):
            raise obj.refuse()
        return obj

    def _is_allowed(self, obj: Any) -> bool:
        return id(obj) in self.allowed_ids

    def _call(self, func: Callable, args: tuple, kwargs: dict | None = None) -> Any:
        try:
            return func(*args, **(kwargs or {}))
        except (_Corrupt, pickle.UnpicklingError):
            raise
        except (TypeError, ValueError, RuntimeError, OverflowError, KeyError, IndexError, AttributeError) as e:
            name = getattr(func, "__qualname__", repr(func))
            raise _Corrupt(f"data.pkl calls {name} with arguments it refuses ({type(e).__name__}: {e})") from e

    # ------------------------------------------------------------------------------ the opcodes
    def load(self) -> Any:
        ops = self._ops()
        data = self.data
        while True:
            _check(self.pos < len(data), "data.pkl is truncated (no STOP)")
            code = data[self.pos]
            self.pos += 1
            op = ops.get(code)
            if op is None:
                name = _OPCODE_NAMES.get(code)
                if name is not None:
                    raise WeightsOnlyError(f"Unsupported operand {name} ({code})")
                raise _Corrupt(f"data.pkl has an unknown opcode {code} at byte {self.pos - 1}")
            try:
                op()
            except _Stop as stop:
                return stop.value
            except (_Corrupt, pickle.UnpicklingError):
                raise
            except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError,
                    UnicodeDecodeError, struct.error, RecursionError, MemoryError) as e:
                raise _Corrupt(f"data.pkl is malformed at byte {self.pos - 1} ({_OPCODE_NAMES.get(code, code)}: "
                               f"{type(e).__name__}: {e})") from e

    def _ops(self) -> dict[int, Callable[[], None]]:
        P = pickle
        return {
            P.PROTO[0]: self._proto, P.FRAME[0]: lambda: self._read(8), P.STOP[0]: self._stop,
            P.MARK[0]: self._mark, P.POP[0]: self._pop, P.POP_MARK[0]: self._pop_mark,
            P.DUP[0]: lambda: self._push(self._top()),
            P.NONE[0]: lambda: self._push(None), P.NEWTRUE[0]: lambda: self._push(True),
            P.NEWFALSE[0]: lambda: self._push(False),
            P.BININT[0]: lambda: self._push(self._unpack("<i")), P.BININT1[0]: lambda: self._push(self._read(1)[0]),
            P.BININT2[0]: lambda: self._push(self._unpack("<H")),
            P.LONG1[0]: lambda: self._push(P.decode_long(self._read(self._read(1)[0]))),
            P.LONG4[0]: lambda: self._push(P.decode_long(self._read(self._unpack("<i")))),
            P.BINFLOAT[0]: lambda: self._push(self._unpack(">d")),
            P.BINUNICODE[0]: lambda: self._push(self._text(self._unpack("<I"))),
            P.SHORT_BINUNICODE[0]: lambda: self._push(self._text(self._read(1)[0])),
            P.BINUNICODE8[0]: lambda: self._push(self._text(self._unpack("<Q"))),
            P.SHORT_BINSTRING[0]: lambda: self._push(self._py2_string(self._read(1)[0])),
            P.BINSTRING[0]: lambda: self._push(self._py2_string(self._unpack("<i"))),
            P.SHORT_BINBYTES[0]: lambda: self._push(bytes(self._read(self._read(1)[0]))),
            P.BINBYTES[0]: lambda: self._push(bytes(self._read(self._unpack("<I")))),
            P.BINBYTES8[0]: lambda: self._push(bytes(self._read(self._unpack("<Q")))),
            P.BYTEARRAY8[0]: lambda: self._push(bytearray(self._read(self._unpack("<Q")))),
            P.EMPTY_TUPLE[0]: lambda: self._push(()), P.TUPLE[0]: lambda: self._push(tuple(self._pop_mark())),
            P.TUPLE1[0]: lambda: self._tuple(1), P.TUPLE2[0]: lambda: self._tuple(2),
            P.TUPLE3[0]: lambda: self._tuple(3),
            P.EMPTY_LIST[0]: lambda: self._push([]), P.LIST[0]: lambda: self._push(self._pop_mark()),
            P.APPEND[0]: self._append, P.APPENDS[0]: self._appends,
            P.EMPTY_DICT[0]: lambda: self._push({}), P.DICT[0]: self._dict,
            P.SETITEM[0]: self._setitem, P.SETITEMS[0]: self._setitems,
            P.EMPTY_SET[0]: lambda: self._push(set()), P.ADDITEMS[0]: self._additems,
            P.FROZENSET[0]: lambda: self._push(frozenset(self._pop_mark())),
            P.BINGET[0]: lambda: self._get(self._read(1)[0]), P.LONG_BINGET[0]: lambda: self._get(self._unpack("<I")),
            P.BINPUT[0]: lambda: self._put(self._read(1)[0]), P.LONG_BINPUT[0]: lambda: self._put(self._unpack("<I")),
            P.MEMOIZE[0]: lambda: self._put(len(self.memo)),
            P.GLOBAL[0]: self._global_op, P.STACK_GLOBAL[0]: self._stack_global,
            P.REDUCE[0]: self._reduce, P.NEWOBJ[0]: self._newobj, P.NEWOBJ_EX[0]: self._newobj_ex,
            P.BUILD[0]: self._build, P.BINPERSID[0]: self._binpersid,
        }

    def _push(self, value: Any) -> None:
        self.stack.append(value)

    def _proto(self) -> None:
        version = self._read(1)[0]
        _check(version <= pickle.HIGHEST_PROTOCOL, f"data.pkl uses pickle protocol {version}, newer than this "
                                                   f"Python's {pickle.HIGHEST_PROTOCOL}")

    def _stop(self) -> None:
        raise _Stop(self._pop())

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _text(self, n: int) -> str:
        return str(self._read(n), "utf-8", "surrogatepass")

    def _py2_string(self, n: int) -> Any:
        _check(n >= 0, "data.pkl has a string of negative length")
        raw = bytes(self._read(n))
        return raw if self.encoding == "bytes" else raw.decode(self.encoding, "strict")

    def _tuple(self, n: int) -> None:
        _check(len(self.stack) >= n, "data.pkl pops an empty stack")
        items = tuple(self.stack[-n:])
        del self.stack[-n:]
        self.stack.append(items)

    def _append(self) -> None:
        item = self._pop()
        target = self._top()
        if type(target) is not list:
            raise WeightsOnlyError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        target = self._top()
        if type(target) is not list:
            raise WeightsOnlyError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _dict(self) -> None:
        items = self._pop_mark()
        _check(len(items) % 2 == 0, "data.pkl has a DICT of an odd number of items")
        self._push({items[i]: items[i + 1] for i in range(0, len(items), 2)})

    def _dict_target(self, opcode: str) -> dict:
        target = self._top()
        if type(target) not in _DICTS:
            raise WeightsOnlyError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                                   f"but got {type(target)}")
        return target

    def _setitem(self) -> None:
        value = self._pop()
        key = self._pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        _check(len(items) % 2 == 0, "data.pkl has SETITEMS of an odd number of items")
        target = self._dict_target("SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _additems(self) -> None:
        items = self._pop_mark()
        target = self._top()
        if type(target) is not set:
            raise WeightsOnlyError(f"Can only add items to sets, but got {type(target)}")
        target.update(items)

    def _get(self, index: int) -> None:
        _check(index in self.memo, f"data.pkl refers to memo entry {index}, which it never stored")
        self._push(self.memo[index])

    def _put(self, index: int) -> None:
        self.memo[index] = self._top()

    def _global_op(self) -> None:
        module = self._readline()
        name = self._readline()
        self._push(self._global(module, name))

    def _stack_global(self) -> None:
        name = self._pop()
        module = self._pop()
        _check(isinstance(module, str) and isinstance(name, str), "data.pkl has a STACK_GLOBAL of non-strings")
        self._push(self._global(module, name))

    def _reduce(self) -> None:
        args = self._pop()
        func = self._top()
        if not self._is_allowed(func):
            message = f"Trying to call reduce for unrecognized function {func!r:.80}"
            raise WeightsOnlyError(message)
        _check(isinstance(args, tuple), f"data.pkl calls {getattr(func, '__qualname__', func)!r:.80} with "
                                        f"{type(args).__name__} arguments")
        self.stack[-1] = self._call(func, args)

    def _new(self, cls: Any, args: Any, kwargs: dict | None) -> None:
        _check(isinstance(args, tuple) and (kwargs is None or isinstance(kwargs, dict)),
               "data.pkl creates an object with bad arguments")
        if cls is Parameter:
            self._push(self._call(Parameter, args, kwargs))
        elif self._is_allowed(cls) and isinstance(cls, type) and cls is not Tensor:
            self._push(self._call(cls.__new__, (cls, *args), kwargs))
        else:
            raise WeightsOnlyError("Can only create new object for nn.Parameter or classes allowlisted via "
                                   f"`add_safe_globals` but got {cls!r:.80}")

    def _newobj(self) -> None:
        args = self._pop()
        self._new(self._pop(), args, None)

    def _newobj_ex(self) -> None:
        kwargs = self._pop()
        args = self._pop()
        self._new(self._pop(), args, kwargs)

    def _build(self) -> None:
        state = self._pop()
        inst = self._top()
        kind = type(inst)
        if kind is OrderedDict or isinstance(inst, Parameter):
            _check(isinstance(state, dict) or (isinstance(state, tuple) and len(state) == 2),
                   f"data.pkl gives a {kind.__name__} the state {state!r:.80}")
            if kind is OrderedDict:
                _check(isinstance(state, dict) and all(isinstance(k, str) for k in state),
                       f"data.pkl gives an OrderedDict the state {state!r:.80}")
                inst.__dict__.update(state)
            else:
                _set_state(inst, state)
        elif self._is_allowed(kind):
            if hasattr(inst, "__setstate__"):
                self._call(inst.__setstate__, (state,))
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state:
                    _check(isinstance(state, dict), f"data.pkl gives a {kind.__name__} the state {state!r:.80}")
                    inst.__dict__.update(state)
                if slots:
                    _check(isinstance(slots, dict), f"data.pkl gives a {kind.__name__} the slots {slots!r:.80}")
                    for k, v in slots.items():
                        setattr(inst, k, v)
        else:
            raise WeightsOnlyError("Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                   f"`add_safe_globals`, but got {kind}")

    def _binpersid(self) -> None:
        pid = self._pop()
        if type(pid) is not tuple:
            raise WeightsOnlyError(f"persistent_load id must be tuple, but got {type(pid)}")
        self._push(self.persistent_load(pid))


_OPCODE_NAMES = {getattr(pickle, n)[0]: n for n in dir(pickle)
                 if n.isupper() and isinstance(getattr(pickle, n), bytes) and len(getattr(pickle, n)) == 1}


def _toolkit_equivalent(module: str, name: str) -> Any:
    """``toolkit.nn.modules.linear.Linear`` for ``torch.nn.modules.linear.Linear``, or None."""
    try:
        obj: Any = importlib.import_module("toolkit" + module[len("torch"):])
    except ImportError:
        return None
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def full_unpickler(pickle_module: Any) -> type:
    """An unpickler class built on ``pickle_module.Unpickler`` that maps PyTorch's globals onto toolkit's and
    resolves storages through ``persistent_load``. It runs any code the file names: trusted files only."""

    class FullUnpickler(pickle_module.Unpickler):
        def __init__(self, file, persistent_load: Callable[[Any], Any], **kwargs: Any) -> None:
            super().__init__(file, **kwargs)
            self._persistent_load = persistent_load

        def persistent_load(self, pid: Any) -> Any:
            return self._persistent_load(pid)

        def find_class(self, module: str, name: str) -> Any:
            module, name = _map_py2_name(module, name)
            full = f"{module}.{name}"
            mapped = TORCH_GLOBALS.get(full)
            if isinstance(mapped, UnsupportedDtype):
                raise mapped.refuse()
            if mapped is not None:
                return mapped
            if module == "torch" or module.startswith("torch."):
                found = _toolkit_equivalent(module, name)
                if found is None:
                    raise _Corrupt(f"the file names {full}, which toolkit has no equivalent of")
                return found
            return super().find_class(module, name)

    return FullUnpickler
