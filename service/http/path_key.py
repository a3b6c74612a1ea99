"""An API key in the URL path, for clients that cannot send headers.

verl's sandbox client and OpenRLHF's remote reward model take a URL and nothing else, so
``/k/<key>/run_code`` is ``/run_code`` with ``Authorization: Bearer <key>``. The path is
rewritten here, before any other layer sees the request: routes, metrics and logs only
ever see ``/run_code``, and the key is checked exactly as a header key is.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

PREFIX = "/k/"


class PathKey:
    """The outermost middleware; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(PREFIX):
            key, slash, rest = scope["path"][len(PREFIX) :].partition("/")
            if key and slash:
                path = "/" + rest
                headers = [(k, v) for k, v in scope["headers"] if k != b"authorization"]
                # a key no header could carry matches no key: it is sent as a wrong one
                token = key.encode("latin-1", errors="replace")
                headers.append((b"authorization", b"Bearer " + token))
                scope = {**scope, "path": path, "raw_path": path.encode(), "headers": headers}
        await self.app(scope, receive, send)
