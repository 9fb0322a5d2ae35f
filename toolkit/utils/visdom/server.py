"""Start a visdom server that works with no internet access, web page included.

``python -m toolkit.utils.visdom.server -port 8097 -bind_local [-env_path DIR]``
takes visdom's own command-line options. Unlike ``python -m visdom.server`` it
never runs visdom's first-start CDN download: the page's JavaScript/CSS come
from ``python -m toolkit.utils.visdom.assets`` (run by ``make``), and the HTTP
API (what ``VisdomWriter`` uses) works without them.

It also serves the page under tornado >= 6.6: visdom's ``index.html`` asks for
``static_url("../user/style.css")`` (the per-user stylesheet that visdom's
``/user/style.css`` handler serves), and tornado 6.6 refuses static paths
outside the static directory, so ``/`` answered 403. The launcher gives
tornado a static file handler (tornado's ``static_handler_class`` setting)
that writes such a path as the plain URL it resolves to.
"""

from __future__ import annotations

import posixpath

import tornado.web


class StaticFiles(tornado.web.StaticFileHandler):
    """tornado's static file handler, except that a path leaving ``static/`` becomes its resolved URL."""

    @classmethod
    def make_static_url(cls, settings: dict, path: str, include_version: bool = True) -> str:
        if posixpath.normpath(path).startswith("../"):
            return posixpath.normpath(settings.get("static_url_prefix", "/static/") + path)
        return super().make_static_url(settings, path, include_version)


def main() -> None:
    from visdom.server import app  # optional: visdom
    from visdom.server.run_server import main as run  # optional: visdom

    app.tornado_settings["static_handler_class"] = StaticFiles
    run()


if __name__ == "__main__":
    main()
