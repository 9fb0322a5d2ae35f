"""Pieces every HTML view shares: escaping, the CSS and JavaScript shipped in ``static/``, atomic saves.

A view is one ``<div class="tk-root">`` holding its own style and script, so it
renders the same in Jupyter, in VS Code, and in a saved file opened offline.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import secrets
from functools import cache
from pathlib import Path

from .._core import files

STATIC = Path(__file__).with_name("static")
_COUNTER = itertools.count()


def esc(s) -> str:
    return html.escape(str(s), quote=True)


@cache
def static_text(name: str) -> str:
    """A file shipped in ``toolkit/notebook/static``."""
    return (STATIC / name).read_text(encoding="utf-8")


def new_uid(prefix: str = "tk") -> str:
    """An element id unique across outputs of one page (and across kernels restarted into the same page)."""
    return f"{prefix}-{secrets.token_hex(4)}-{next(_COUNTER)}"


def json_script(data, cls: str) -> str:
    """Data for the page's script, safe inside ``<script>`` (no ``</`` can close it early)."""
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/").replace("<!--", "<\\!--")
    return f'<script type="application/json" class="{cls}">{text}</script>'


def root(body: str, uid: str | None = None, script: bool = True, extra: str | None = None) -> str:
    """``body`` in a self-contained root: the stylesheet, and the script that wires it up.

    ``extra``: the stem of a view's own ``static/<extra>.css`` and ``.js`` (graph views), shipped along."""
    uid = uid or new_uid()
    css = static_text("toolkit.css") + (static_text(f"{extra}.css") if extra else "")
    parts = [f'<div class="tk-root{f" tk-{extra}" if extra else ""}" id="{uid}">', "<style>", css, "</style>", body]
    if script:
        parts += ["<script>", static_text("views.js"), static_text(f"{extra}.js") if extra else "",
                  f'window.toolkitViews.init(document.getElementById("{uid}"));', "</script>"]
    parts.append("</div>")
    return "".join(parts)


def document(fragment: str, title: str) -> str:
    """A whole HTML page around a view, for ``save``."""
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title></head>\n<body>{fragment}</body></html>\n")


def write_atomic(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` to ``path`` through a temporary file and a rename, so readers never see half a file;
    the page gets the permissions ``open`` would give it (readable by others unless the umask says no)."""
    path = os.fspath(path)
    files.write_atomic(path, text, mode=0o666, makedirs=True)
    return path


class View:
    """What Jupyter asks of every view: its HTML (``to_html``) and, as plain text, its ``repr``."""

    def to_html(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": repr(self), "text/html": self.to_html()}
