"""Start a visdom server without its first-start asset download, so it runs with no internet access.

``python -m toolkit.utils.visdom.server -port 8097 -bind_local [-env_path DIR]``
takes visdom's own command-line options. The HTTP API (what ``VisdomWriter``
and the tests use) works without the JavaScript assets; the web page needs them
installed in visdom's ``static`` directory.
"""

from __future__ import annotations


def main() -> None:
    from visdom.server.run_server import main as run

    run()


if __name__ == "__main__":
    main()
