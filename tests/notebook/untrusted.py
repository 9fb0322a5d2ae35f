"""What JupyterLab 4 shows of an untrusted output's ``text/html``: its sanitizer, reproduced for tests.

JupyterLab picks the first *safe* renderer for an untrusted output (``text/html`` ranks
before any image, ``image/svg+xml`` is not safe) and passes the HTML through
sanitize-html with its own allow-list (``@jupyterlab/apputils`` ``Sanitizer``, 4.x):
tags outside the list are dropped but their text is kept, except for ``script``,
``style``, ``textarea``, ``option`` and ``noscript``, whose content goes too.
Inline ``style`` attributes stay (filtered per property), ``<img>`` keeps only
http(s) sources.
"""

from __future__ import annotations

from html.parser import HTMLParser

ALLOWED_TAGS = frozenset(
    "a abbr acronym address area article aside audio b bdi bdo big blockquote br button canvas caption center "
    "cite code col colgroup colspan command data datalist dd del details dfn dir div dl dt em fieldset "
    "figcaption figure font footer form h1 h2 h3 h4 h5 h6 header hgroup hr i img input ins kbd label legend li "
    "map mark menu meter nav nobr ol optgroup option output p pre progress q rowspan s samp section select "
    "small source span strike strong sub summary sup table tbody td textarea tfoot th thead time tr track tt "
    "u ul var video wbr".split())
NON_TEXT_TAGS = frozenset({"script", "style", "textarea", "option", "noscript"})
VOID = frozenset({"img", "br", "hr", "area", "input", "col", "source", "track", "wbr"})
PAGE_SAFE_MIME = ("text/html", "text/markdown", "text/latex", "image/png", "image/jpeg", "text/plain")


class _Sanitizer(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in NON_TEXT_TAGS:
            self.skip += 1
            return
        if self.skip or tag not in ALLOWED_TAGS:
            return
        kept = [(k, v) for k, v in attrs if k in ("class", "style", "title", "hidden", "open", "colspan", "width", "height")
                or (k == "src" and (v or "").startswith(("http:", "https:")))]
        self.out.append(f"<{tag}" + "".join(f' {k}="{v}"' if v is not None else f" {k}" for k, v in kept) + ">")

    def handle_endtag(self, tag):
        if tag in NON_TEXT_TAGS:
            self.skip = max(0, self.skip - 1)
            return
        if not self.skip and tag in ALLOWED_TAGS and tag not in VOID:
            self.out.append(f"</{tag}>")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)

    def handle_entityref(self, name):
        self.handle_data(f"&{name};")

    def handle_charref(self, name):
        self.handle_data(f"&#{name};")


def sanitize(html: str) -> str:
    """The HTML JupyterLab 4 renders for an untrusted ``text/html`` output."""
    p = _Sanitizer()
    p.feed(html)
    p.close()
    return "".join(p.out)


def untrusted_mime(bundle: dict) -> str:
    """The bundle entry JupyterLab 4 renders when the output is untrusted (the first safe one by rank)."""
    return next(m for m in PAGE_SAFE_MIME if m in bundle)
