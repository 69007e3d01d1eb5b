"""A tiny static server for lumo's fixture pages (``fixtures/`` at the repo root).

Serves on 127.0.0.1 on a free port, in a background thread. Any request may
carry ``?delay=MS`` to be answered that much later (at most 10 s), so pages can
make slow requests. POST is answered like GET (the body is read and dropped).
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time
import urllib.parse
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # keep test output quiet

    def _delay(self) -> None:
        query = urllib.parse.urlparse(self.path).query
        delay = urllib.parse.parse_qs(query).get("delay", ["0"])[0]
        try:
            ms = min(int(delay), 10_000)
        except ValueError:
            ms = 0
        if ms > 0:
            time.sleep(ms / 1000)

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        self._delay()
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._delay()
        super().do_GET()


class FixtureServer:
    """Serves ``fixtures/``; use as a context manager. ``url(name)`` gives a page's URL."""

    def __init__(self, root: Path = FIXTURES) -> None:
        handler = functools.partial(_Handler, directory=os.fspath(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fixture-server", daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def __enter__(self) -> FixtureServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
