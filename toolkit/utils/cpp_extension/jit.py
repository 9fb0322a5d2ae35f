"""Build a C++ extension on the fly and import it: ``load`` and ``load_inline``, as torch's.

One plain compiler call builds each extension (no ninja): ``$CXX`` (else ``c++``/``g++``) compiles and links
all the sources into one shared library in a single command, which ``verbose=True`` prints.

The build is cached. Its key is a hash of everything that decides the product: the sources' contents,
the flags, the compiler (its path, size and modification time, read without running it), the versions of
toolkit, Python and pybind11, and ``toolkit/extension.h``. A build leaves ``<name>-<key>.deps`` in the build
folder: the extension's own headers (from the compiler's ``-MMD`` list) with their hashes, and the library's
name, ``<module>-<key>-<headers' hash>.so``, and the module name compiled into it. A load whose record's
headers are unchanged and whose library exists runs no compiler.

A Python process cannot load a second library under a module name it has loaded (pybind11 hands back the
first module), so a rebuild in a process that already imported ``name`` from another library compiles the
module as ``name_v1`` (``name_v2``, ...), as torch versions its rebuilt extensions. A build runs under a file lock on the build folder and its library is renamed into place
only once complete, so processes loading the same extension at once build it once and never see a torn file.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from contextlib import contextmanager
from types import ModuleType

from ... import __version__
from ..._core.files import write_atomic
from .flags import (
    EXTENSION_HEADER,
    common_cflags,
    compiler_identity,
    get_compiler,
    get_default_build_root,
    pybind11_version,
)

__all__ = ["load", "load_inline"]

_DEVICE_SUFFIXES = (".cu", ".cuh", ".sycl")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def load(name: str, sources: str | Sequence[str], extra_cflags: Sequence[str] | None = None,
         extra_cuda_cflags: Sequence[str] | None = None, extra_sycl_cflags: Sequence[str] | None = None,
         extra_ldflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
         build_directory: str | None = None, verbose: bool = False, with_cuda: bool | None = None,
         with_sycl: bool | None = None, is_python_module: bool = True, is_standalone: bool = False,
         keep_intermediates: bool = True) -> ModuleType | str | None:
    """Compile ``sources`` into an extension named ``name`` (or reuse the cached build) and load it.

    Returns the imported module; with ``is_python_module=False`` the library is loaded into the process
    (``RTLD_GLOBAL``) and None is returned; with ``is_standalone=True`` the sources are linked into an
    executable whose path is returned. The arguments are torch's, in its order; ``extra_cuda_cflags``,
    ``extra_sycl_cflags`` and ``keep_intermediates`` are accepted for its signature (toolkit builds no CUDA or
    SYCL code, and keeps no intermediates: one compiler call makes the library); ``with_cuda=True``,
    ``with_sycl=True`` or a ``.cu``/``.sycl`` source is refused.
    As torch's, no optimization flag is added: pass ``extra_cflags=["-O2"]`` for optimized code.

    Raises:
        RuntimeError: ``Error building extension '<name>'``, with the compiler's messages (``file:line: error``).
    """
    if isinstance(sources, str):
        sources = [sources]
    sources = [os.path.abspath(s) for s in sources]
    return _jit_compile(name, sources, list(extra_cflags or []), list(extra_ldflags or []),
                        list(extra_include_paths or []), build_directory, verbose, with_cuda or with_sycl,
                        is_python_module, is_standalone)


def load_inline(name: str, cpp_sources: str | Sequence[str], cuda_sources: str | Sequence[str] | None = None,
                sycl_sources: str | Sequence[str] | None = None,
                functions: str | Sequence[str] | dict[str, str] | None = None,
                extra_cflags: Sequence[str] | None = None, extra_cuda_cflags: Sequence[str] | None = None,
                extra_sycl_cflags: Sequence[str] | None = None, extra_ldflags: Sequence[str] | None = None,
                extra_include_paths: Sequence[str] | None = None, build_directory: str | None = None,
                verbose: bool = False, with_cuda: bool | None = None, with_sycl: bool | None = None,
                is_python_module: bool = True, with_pytorch_error_handling: bool = True,
                keep_intermediates: bool = True, use_pch: bool = False,
                no_implicit_headers: bool = False) -> ModuleType | None:
    """Build an extension from source strings, as ``torch.utils.cpp_extension.load_inline``.

    ``cpp_sources`` is written to ``main.cpp`` in the build folder after ``#include <toolkit/extension.h>``
    (left out with ``no_implicit_headers=True``).
    ``functions`` (a name, a list of names, or a dict of name to docstring) generates the pybind11 module:
    ``m.def("<name>", &<name>, "<doc>")`` for each, so the sources need no ``PYBIND11_MODULE`` of their own.
    ``with_pytorch_error_handling`` is accepted for torch's signature: the header's checks throw the standard
    exceptions that pybind11 already turns into RuntimeError, ValueError and IndexError, so both values bind
    the functions directly. ``use_pch`` is accepted and ignored; CUDA and SYCL sources are refused.
    """
    if cuda_sources or sycl_sources:
        _refuse_device_code(name)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    text = ("" if no_implicit_headers else "#include <toolkit/extension.h>\n") + "\n".join(cpp_sources)
    if functions is not None:
        text += "\n" + _bindings(functions)
    build_directory = build_directory or _default_build_directory(name, verbose)
    os.makedirs(build_directory, exist_ok=True)
    main = os.path.join(build_directory, "main.cpp")  # written by _jit_compile, under its build lock
    return _jit_compile(name, [main], list(extra_cflags or []), list(extra_ldflags or []),
                        list(extra_include_paths or []), build_directory, verbose, with_cuda or with_sycl,
                        is_python_module, False, sources_text={main: text})


def _bindings(functions: str | Sequence[str] | dict[str, str]) -> str:
    if isinstance(functions, str):
        functions = [functions]
    if not isinstance(functions, dict):
        functions = {f: f for f in functions}
    lines = [f'  m.def("{f}", &{f}, {json.dumps(doc)});' for f, doc in functions.items()]
    return "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n" + "\n".join(lines) + "\n}\n"


# ------------------------------------------------------------------------------------------------ build
def _jit_compile(name: str, sources: list[str], cflags: list[str], ldflags: list[str], includes: list[str],
                 build_directory: str | None, verbose: bool, with_cuda: bool | None, is_python_module: bool,
                 is_standalone: bool, sources_text: dict[str, str] | None = None):
    if not _NAME.match(name):
        raise ValueError(f"an extension's name must be a C identifier (it names the module's init function), "
                         f"got {name!r}")
    if with_cuda or (with_cuda is None and any(s.endswith(_DEVICE_SUFFIXES) for s in sources)):
        _refuse_device_code(name)
    build_directory = os.path.abspath(build_directory or _default_build_directory(name, verbose))
    os.makedirs(build_directory, exist_ok=True)
    compiler = get_compiler()
    flags = cflags + [f"-I{os.path.abspath(p)}" for p in includes]
    link = ([] if is_standalone else ["-shared"]) + ldflags
    suffix = "" if is_standalone else (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    key = _cache_key(compiler, common_cflags(name) + flags, link, sources, sources_text, is_standalone)
    record = os.path.join(build_directory, f"{name}-{key}.deps")
    with _build_lock(build_directory):
        for src, text in (sources_text or {}).items():  # written under the lock that compiles them: another
            _write_if_changed(src, text)                 # process's load_inline cannot swap them in between
        built = _up_to_date(record)
        if built and is_python_module and _IMPORTED_NAMES.get(built[1], built[0]) != built[0]:
            built = None  # its module name is taken here by another library: rebuild under a fresh one
        if built:
            if verbose:
                print(f"No modifications detected for re-loaded extension module {name}, skipping build step...",
                      file=sys.stderr)
        else:
            module = _fresh_module_name(name) if is_python_module else name
            built = _build(module, compiler, common_cflags(module) + flags, link, sources, record, key, suffix,
                           verbose)
    product, module = built
    if is_standalone:
        return product
    if verbose:
        print(f"Loading extension module {module}...", file=sys.stderr)
    if not is_python_module:
        ctypes.CDLL(product, mode=ctypes.RTLD_GLOBAL)
        return None
    return _import(module, product)


def _refuse_device_code(name: str) -> None:
    raise RuntimeError(f"Error building extension '{name}': CUDA and SYCL sources cannot be built by toolkit "
                       "(it builds CPU extensions only)")


def _default_build_directory(name: str, verbose: bool) -> str:
    root = get_default_build_root()
    if verbose:
        print(f"Using {root} as toolkit extensions root...", file=sys.stderr)
    return os.path.join(root, name)


def _cache_key(compiler: list[str], flags: list[str], link: list[str], sources: list[str],
               sources_text: dict[str, str] | None, standalone: bool) -> str:
    h = hashlib.sha256()
    parts = [__version__, sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "", pybind11_version(),
             compiler_identity(compiler), repr(flags), repr(link), repr(standalone)]
    for part in parts:
        h.update(part.encode() + b"\0")
    h.update(_file_bytes(str(EXTENSION_HEADER)))
    for src in sources:
        text = (sources_text or {}).get(src)
        h.update(src.encode() + b"\0")
        h.update(text.encode() if text is not None else _file_bytes(src))
    return h.hexdigest()[:16]


def _file_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"extension source not found: {path}") from None


def _digest(path: str) -> str | None:
    try:
        return hashlib.sha256(_file_bytes(path)).hexdigest()
    except FileNotFoundError:
        return None


def _up_to_date(record: str) -> tuple[str, str] | None:
    """The built library's path and module name, where it exists and its own headers are as they were built."""
    try:
        with open(record) as f:
            built = json.load(f)
        product, module, headers = built["product"], built["module"], built["headers"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    product = os.path.join(os.path.dirname(record), product)
    if os.path.exists(product) and all(_digest(p) == d for p, d in headers.items()):
        return product, module
    return None


def _build(name: str, compiler: list[str], flags: list[str], link: list[str], sources: list[str],
           record: str, key: str, suffix: str, verbose: bool) -> tuple[str, str]:
    """Compile and link into a temporary file, rename it into place, write the record.

    Returns the library's path and its module name (``name``, the name its sources were compiled with).
    """
    directory = os.path.dirname(record)
    tmp = os.path.join(directory, f".{name}-{key}.{os.getpid()}.tmp")
    depfile = tmp + ".d"
    command = compiler + flags + ["-MMD", "-MF", depfile] + sources + ["-o", tmp] + link
    if verbose:
        print(f"Building extension module {name}...", file=sys.stderr)
        print(" ".join(command), file=sys.stderr)
    try:
        proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=directory)
        output = proc.stdout
        if verbose and output:
            print(output, file=sys.stderr, end="")
        if proc.returncode != 0:
            raise RuntimeError(f"Error building extension '{name}': {' '.join(command)}\n{output}")
        headers = {p: _digest(p) for p in _depfile_headers(depfile, sources)}
        headers_key = hashlib.sha256(json.dumps(headers, sort_keys=True).encode()).hexdigest()[:8]
        product = os.path.join(directory, f"{name}-{key}-{headers_key}{suffix}")
        os.replace(tmp, product)
        built = {"product": os.path.basename(product), "module": name, "headers": headers}
        write_atomic(record, json.dumps(built, indent=0), durable=False)
        return product, name
    finally:
        for path in (tmp, depfile):
            if os.path.exists(path):
                os.unlink(path)


def _depfile_headers(depfile: str, sources: list[str]) -> list[str]:
    """The files a make-style dependency list names, less the sources (already in the cache key)."""
    try:
        with open(depfile) as f:
            text = f.read().replace("\\\n", " ")
    except OSError:
        return []
    deps: list[str] = []
    for line in text.splitlines():
        _, _, rest = line.partition(": ")
        deps += [p.replace("\\ ", " ") for p in re.split(r"(?<!\\) +", rest.strip()) if p]
    srcs = set(sources)
    return [os.path.abspath(p) for p in dict.fromkeys(deps) if os.path.abspath(p) not in srcs]


@contextmanager
def _build_lock(directory: str):
    """An exclusive lock on the build folder for the duration of a check-and-build (``flock``; POSIX only)."""
    try:
        import fcntl  # POSIX only
    except ImportError:  # no flock: builds still never expose a torn library (it is renamed into place)
        yield
        return
    fd = os.open(os.path.join(directory, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_if_changed(path: str, text: str) -> None:
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    write_atomic(path, text, durable=False)


_IMPORTED: dict[str, ModuleType] = {}  # product path -> its module: a library is imported once per process
_IMPORTED_NAMES: dict[str, str] = {}  # module name -> the product path it was imported from


def _fresh_module_name(name: str) -> str:
    """``name``, or ``name_v<n>`` with the smallest n not yet imported in this process."""
    version = 0
    module = name
    while module in _IMPORTED_NAMES:
        version += 1
        module = f"{name}_v{version}"
    return module


def _import(name: str, path: str) -> ModuleType:
    if path in _IMPORTED:
        return _IMPORTED[path]
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _IMPORTED[path] = module
    _IMPORTED_NAMES[name] = path
    return module
