"""Install the visdom web page's JavaScript, CSS, fonts and MathJax from the npm registry, so the page works offline.

visdom 0.2.4 downloads these files from CDNs (unpkg, cdn.plot.ly, d3js.org,
cdnjs) at first start (``visdom.server.build.download_scripts``) and crashes
with no internet. Every one of them is published as an npm package, so
``python -m toolkit.utils.visdom.assets`` (run by ``make``) fetches those
tarballs with ``npm pack`` and writes each file under the name the server
serves it from ``visdom/static``. It then marks the directory as built for
this visdom version, so visdom's own launcher finds every file present and
downloads nothing either. A second run only checks that the files exist.
"""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import tempfile

from ..._core.files import write_atomic

# npm package -> version: the versions pinned in visdom 0.2.4's download list (server/build.py). The
# CDN files without a version in their address are the last releases of their lines: d3js.org's
# d3.v3.min.js is d3 3.5.17 and d3-selection-multi.v1.js is d3-selection-multi 1.0.1; cdn.plot.ly's
# plotly-2.11.1.min.js is the plotly.js-dist-min 2.11.1 bundle; cdnjs's mathjax/2.7.5 is mathjax 2.7.5.
PACKAGES = {
    "jquery": "3.1.1",
    "bootstrap": "3.3.7",
    "react": "16.2.0",
    "react-dom": "16.2.0",
    "react-modal": "3.1.10",
    "plotly.js-dist-min": "2.11.1",
    "sjcl": "1.0.7",
    "layout-bin-packer": "1.4.0",
    "d3": "3.5.17",
    "d3-selection-multi": "1.0.1",
    "save-svg-as-png": "1.4.17",
    "react-resizable": "1.4.6",
    "react-grid-layout": "0.16.3",
    "classnames": "2.2.5",
    "mathjax": "2.7.5",
}

_GLYPHS = "dist/fonts/glyphicons-halflings-regular"

# Path under visdom/static -> (npm package, path inside the package). The names are the ones visdom's
# download list gives each file (including its odd ``fonts/classnames`` and ``...svg#...`` entries, so
# that its own check finds them), plus the plain ``.svg`` font name that bootstrap.min.css asks for.
FILES = {
    "js/jquery.min.js": ("jquery", "dist/jquery.min.js"),
    "js/bootstrap.min.js": ("bootstrap", "dist/js/bootstrap.min.js"),
    "js/react-react.min.js": ("react", "umd/react.production.min.js"),
    "js/react-dom.min.js": ("react-dom", "umd/react-dom.production.min.js"),
    "js/react-modal.min.js": ("react-modal", "dist/react-modal.min.js"),
    "js/plotly-plotly.min.js": ("plotly.js-dist-min", "plotly.min.js"),
    "js/sjcl.js": ("sjcl", "sjcl.js"),
    "js/layout-bin-packer.js.map": ("layout-bin-packer", "dist/layout-bin-packer.js.map"),
    "js/layout_bin_packer.js": ("layout-bin-packer", "dist/layout-bin-packer.js"),
    "js/d3.v3.min.js": ("d3", "d3.min.js"),
    "js/d3-selection-multi.v1.js": ("d3-selection-multi", "build/d3-selection-multi.js"),
    "js/saveSvgAsPng.js": ("save-svg-as-png", "lib/saveSvgAsPng.js"),
    "css/react-resizable-styles.css": ("react-resizable", "css/styles.css"),
    "css/react-grid-layout-styles.css": ("react-grid-layout", "css/styles.css"),
    "css/bootstrap.min.css": ("bootstrap", "dist/css/bootstrap.min.css"),
    "fonts/classnames": ("classnames", "index.js"),
    "fonts/glyphicons-halflings-regular.eot": ("bootstrap", _GLYPHS + ".eot"),
    "fonts/glyphicons-halflings-regular.woff2": ("bootstrap", _GLYPHS + ".woff2"),
    "fonts/glyphicons-halflings-regular.woff": ("bootstrap", _GLYPHS + ".woff"),
    "fonts/glyphicons-halflings-regular.ttf": ("bootstrap", _GLYPHS + ".ttf"),
    "fonts/glyphicons-halflings-regular.svg": ("bootstrap", _GLYPHS + ".svg"),
    "fonts/glyphicons-halflings-regular.svg#glyphicons_halflingsregular": ("bootstrap", _GLYPHS + ".svg"),
}

MATHJAX_DIR = "js/mathjax/2.7.5"
# The MathJax files visdom's list fetches; the page loads MathJax.js and the TeX-AMS-MML_HTMLorMML
# config, which load further input, output and extension files on demand, so the whole combined
# distribution is installed (without its unpacked sources, docs, tests and the non-TeX font sets).
MATHJAX_FILES = (
    "MathJax.js",
    "config/Safe.js",
    "config/TeX-AMS-MML_HTMLorMML.js",
    "extensions/Safe.js",
    "jax/output/SVG/fonts/TeX/fontdata.js",
    "jax/output/SVG/jax.js",
    "jax/output/SVG/fonts/TeX/Size1/Regular/Main.js",
    "jax/output/SVG/config.js",
)
_MATHJAX_SKIP_TOP = {"unpacked", "docs", "test", "fixCopyright", "fixVersion", "getStrings"}


def static_dir() -> str:
    """visdom's ``static`` directory, where its server looks for the page's files (found without importing
    visdom, which is slow to import)."""
    spec = importlib.util.find_spec("visdom")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("visdom is not installed")
    return os.path.join(os.path.dirname(spec.origin), "static")


def _visdom_version() -> str:
    """``visdom.__version__`` as visdom computes it: its ``VERSION`` file."""
    try:
        with open(os.path.join(os.path.dirname(static_dir()), "VERSION")) as f:
            return f.read().strip()
    except OSError:
        return "no_version_file"


def expected_files() -> list[str]:
    """Every file (relative to ``static``) that visdom's page or its own download check needs."""
    return sorted(FILES) + [f"{MATHJAX_DIR}/{p}" for p in MATHJAX_FILES]


def missing(root: str | None = None) -> list[str]:
    """The expected files absent (or empty) under ``root`` (default: visdom's ``static``)."""
    root = root or static_dir()
    return [p for p in expected_files() if not os.path.isfile(os.path.join(root, p))
            or os.path.getsize(os.path.join(root, p)) == 0]


def _mathjax_member(rel: str) -> bool:
    parts = rel.split("/")
    if parts[0] in _MATHJAX_SKIP_TOP or rel.endswith((".md", ".json")) or len(parts) == 1 and rel != "MathJax.js":
        return False
    if parts[0] == "fonts" and len(parts) > 2 and parts[2] != "TeX":  # fonts/HTML-CSS/<font set>/...
        return False
    if parts[:2] == ["jax", "output"] and len(parts) > 4 and parts[3] == "fonts" and parts[4] != "TeX":
        return False
    return True


def _write(root: str, rel: str, data: bytes) -> None:
    """One asset, atomically (the server never serves half a file); without fsyncs, as an install writes
    hundreds of files that a rerun fetches again."""
    write_atomic(os.path.join(root, rel), data, mode=0o666, makedirs=True, durable=False)


def _unpack(tarball: str, package: str, root: str) -> int:
    """Write this package's files from its npm tarball (members under ``package/``); return the count."""
    wanted: dict[str, list[str]] = {}
    for dest, (pkg, src) in FILES.items():
        if pkg == package:
            wanted.setdefault(src, []).append(dest)
    count = 0
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            rel = posixpath.normpath(member.name.split("/", 1)[1]) if "/" in member.name else ""
            if rel.startswith(".."):
                continue
            if package == "mathjax":
                dests = [f"{MATHJAX_DIR}/{rel}"] if _mathjax_member(rel) else []
            else:
                dests = wanted.get(rel, [])
            if dests:
                data = tar.extractfile(member).read()
                for dest in dests:
                    _write(root, dest, data)
                    count += 1
    return count


def install(root: str | None = None, npm: str | None = None) -> list[str]:
    """Fetch the npm packages and write their files under ``root``; return what is still missing."""
    root = root or static_dir()
    npm = npm or shutil.which("npm")
    if npm is None:
        raise FileNotFoundError("npm")
    specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
    with tempfile.TemporaryDirectory(prefix="visdom-assets-") as tmp:
        out = subprocess.run([npm, "pack", *specs, "--pack-destination", tmp, "--json", "--ignore-scripts",
                              "--loglevel=error"], cwd=tmp, capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(f"npm pack failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
        for entry in json.loads(out.stdout):
            _unpack(os.path.join(tmp, entry["filename"]), entry["name"], root)
    still = missing(root)
    if not still:
        _mark_built(root)
    return still


def _mark_built(root: str) -> None:
    """Write ``version.built`` as visdom's downloader does, so it treats the present files as installed."""
    path = os.path.join(root, "version.built")
    version = _visdom_version()
    try:
        with open(path) as f:
            if f.read().strip() == version:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(version)


def main() -> int:
    """``make``'s step: quick when everything is present; a clear message (and success) without npm."""
    root = static_dir()
    absent = missing(root)
    if not absent:
        _mark_built(root)
        print(f"visdom web assets: present in {root}")
        return 0
    if shutil.which("npm") is None:
        print("visdom web assets: npm was not found, so the visdom web page's JavaScript/CSS are not installed "
              "(the visdom HTTP API and VisdomWriter work without them); install Node.js/npm and run "
              "`make visdom-assets`", file=sys.stderr)
        return 0
    print(f"visdom web assets: installing {len(absent)} missing files from the npm registry into {root}")
    try:
        still = install(root)
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError) as e:
        print(f"visdom web assets: not installed: {e}", file=sys.stderr)
        return 1
    if still:
        print(f"visdom web assets: still missing after the install: {still}", file=sys.stderr)
        return 1
    print("visdom web assets: installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
