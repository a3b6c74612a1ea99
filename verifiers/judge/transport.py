"""A small keep-alive HTTP/1.1 client for one judge endpoint: JSON POSTs, nothing else.

Why not httpx here: at a few hundred calls per second on two cores the judge's client CPU
decides how close a concurrency limit gets to its ideal throughput, and httpx + httpcore +
h11 + anyio spent most of it (a cProfile of ``bench/judge.py``: connection-pool scans per
request, anyio lock wrappers, h11's event machinery). This module does only what a judge
call needs: a LIFO pool of idle connections, one request per connection at a time, bodies
framed by ``Content-Length`` or chunked encoding (or read to EOF), TLS through the
process's shared context. Proxies are not spoken here: `open_pool` gives an endpoint
that the environment routes through a proxy (``HTTP(S)_PROXY``, ``NO_PROXY``) to httpx,
behind the same interface.

Failures raise `TransportError` (connecting, a closed or garbled connection); time limits
belong to the caller, whose cancellation closes the connection in use, so a connection is
only ever reused after a complete response.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
import urllib.request
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

import httpx

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
IDLE_EXPIRY_S = 5.0
"""An idle connection older than this is closed rather than reused (as httpx does): a NAT
or load balancer may have dropped it without telling either side."""
_FORBIDDEN_IN_HEADERS = frozenset("\r\n\0")


class TransportError(Exception):
    """The request could not be completed over HTTP (the endpoint's fault or the network's)."""


class UnsendableRequest(Exception):
    """The request itself cannot be written (a header value with a line break, say): a
    configuration problem that no retry fixes."""


@dataclass(frozen=True)
class Response:
    """A complete response. Header names are lower case; a repeated header keeps its last
    value (enough for the headers a judge call reads)."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Origin:
    """Where requests go: scheme, host, port and the path prefix of the base URL."""

    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> Origin:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(f"a judge base URL takes no query, fragment or credentials: {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class JsonPoster(Protocol):
    """What the judge client needs from a transport."""

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """POST JSON ``body`` to the base URL + ``path``; raises `TransportError`."""
        ...

    async def aclose(self) -> None:
        """Close the pooled connections."""
        ...


def open_pool(base_url: str, connect_timeout_s: float, connections: int) -> JsonPoster:
    """Connections to the judge at ``base_url``: direct (`Pool`), or through httpx when the
    environment routes the URL through a proxy."""
    if proxied(base_url):
        return ProxiedPool(base_url, connect_timeout_s, connections)
    return Pool(base_url, connect_timeout_s, tls_context())


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context for judge endpoints: httpx's default verification (the
    certifi bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as set when first called). One
    per process: building one loads the CA bundle (30-100 ms), and judge clients are built
    per event loop, so per sync ``score`` call."""
    return httpx.create_ssl_context()


def proxied(url: str) -> bool:
    """True when the environment (``HTTP(S)_PROXY``, ``NO_PROXY``) routes ``url`` through a
    proxy, which this module does not speak."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if parts.scheme not in proxies and "all" not in proxies:
        return False
    host = parts.hostname or ""
    # With the port too, so that a NO_PROXY entry naming host:port matches.
    return not urllib.request.proxy_bypass(f"{host}:{parts.port}" if parts.port else host)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        """Open, not idle too long, and nothing unread: bytes that arrived while idle (a
        408, a close notice, a stray body) must never be read as the next reply."""
        return not (
            self.writer.is_closing()
            or self.reader.at_eof()
            or _unread(self.reader)
            or now - self.idle_since > IDLE_EXPIRY_S
        )

    def close(self) -> None:
        self.writer.transport.abort()


class Pool:
    """Keep-alive connections to one origin, at most one request on each at a time. The
    caller bounds how many requests run at once (the judge's concurrency slots); the pool
    keeps every connection that finished a response cleanly, most recently used first."""

    def __init__(self, base_url: str, connect_timeout_s: float, tls: ssl.SSLContext | None) -> None:
        self.origin = Origin.parse(base_url)
        self._connect_timeout_s = connect_timeout_s
        self._tls = tls if self.origin.scheme == "https" else None
        self._idle: list[_Connection] = []
        self._closed = False

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        """POST ``body`` (JSON) to the base URL's path + ``path``. A kept-alive connection
        that turns out closed before any byte of the response (the server timed it out) is
        replaced by a new one once; every other failure raises `TransportError`."""
        head = self._head(path, len(body), headers)
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if not conn.usable(now):
                conn.close()
                continue
            try:
                return await self._exchange(conn, head, body)
            except _StaleConnection:
                # The server closes idle connections; the older ones are likely closed too,
                # and a POST is re-sent at most once.
                await self.aclose_idle()
                break
        try:
            return await self._exchange(await self._connect(), head, body)
        except _StaleConnection as exc:
            raise TransportError("the server closed the connection without answering") from exc

    async def aclose(self) -> None:
        """Close every idle connection; connections in use close when their call ends."""
        self._closed = True
        await self.aclose_idle()

    async def aclose_idle(self) -> None:
        """Close the idle connections (the pool stays usable)."""
        while self._idle:
            self._idle.pop().close()

    def _head(self, path: str, length: int, headers: dict[str, str]) -> bytes:
        lines = [
            f"POST {self.origin.path}/{path.lstrip('/')} HTTP/1.1",
            f"Host: {self.origin.host_header}",
            "Content-Type: application/json",
            "Accept: application/json",
            "User-Agent: referee-judge",  # some gateways refuse requests without one
            f"Content-Length: {length}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        for name, value in headers.items():
            if _FORBIDDEN_IN_HEADERS.intersection(name + value):
                raise UnsendableRequest(f"header {name!r} holds a line break or NUL")
        try:
            return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        except UnicodeEncodeError as exc:
            raise UnsendableRequest(f"a header is not Latin-1: {exc}") from None

    async def _connect(self) -> _Connection:
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    self.origin.host,
                    self.origin.port,
                    ssl=self._tls,
                    server_hostname=self.origin.host if self._tls else None,
                    limit=MAX_HEAD_BYTES,
                )
        except TimeoutError as exc:
            raise TransportError(f"connect timed out after {self._connect_timeout_s:g} s") from exc
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(f"cannot connect: {exc}") from exc
        return _Connection(reader, writer)

    async def _exchange(self, conn: _Connection, head: bytes, body: bytes) -> Response:
        """One request and its response on ``conn``; the connection goes back to the pool
        only when the exchange completed and both sides allow reuse."""
        reusable = False
        try:
            try:
                conn.writer.write(head + body)
                await conn.writer.drain()
            except OSError as exc:  # a kept-alive connection the server had closed
                raise _StaleConnection(f"cannot send: {exc}") from exc
            response, reusable = await _read_response(conn.reader)
            return response
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(f"connection failed: {exc}") from exc
        except (ValueError, asyncio.LimitOverrunError) as exc:
            raise TransportError(f"malformed response: {exc}") from exc
        finally:
            if reusable and not self._closed and not _unread(conn.reader):
                conn.idle_since = time.monotonic()
                self._idle.append(conn)
            else:
                conn.close()


def _unread(reader: asyncio.StreamReader) -> int:
    """Bytes received and not yet read (StreamReader has no public way to ask)."""
    return len(getattr(reader, "_buffer", b""))


class _StaleConnection(TransportError):
    """The connection closed before the first byte of a response."""


async def _read_response(reader: asyncio.StreamReader) -> tuple[Response, bool]:
    """Read one final response (skipping 1xx); returns it and whether the connection can
    carry another request."""
    while True:
        status, version, headers = await _read_head(reader)
        if status >= 200:
            break
        if status == 101:
            raise TransportError("the server switched protocols")
    body = await _read_body(reader, status, headers)
    connection = headers.get("connection", "").lower()
    keep = version == "HTTP/1.1" and "close" not in connection
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    if "content-length" not in headers and not chunked:
        keep = keep and status in (204, 304)
    return Response(status, headers, body), keep


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, str, dict[str, str]]:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise _StaleConnection("closed before the response") from None
        raise TransportError("the connection closed in the middle of a response head") from None
    except asyncio.LimitOverrunError:
        raise TransportError(f"response head over {MAX_HEAD_BYTES} bytes") from None
    status_line, *lines = raw.decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    code = rest[:3]
    if code.isascii() and code.isdigit() and not 100 <= int(code) <= 599:
        raise TransportError(f"status {code} out of range")
    if not version.startswith("HTTP/1.") or not (code.isascii() and code.isdigit()):
        raise TransportError(f"not an HTTP/1.x response: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(code), version, headers


async def _read_body(reader: asyncio.StreamReader, status: int, headers: dict[str, str]) -> bytes:
    if status in (204, 304) or 100 <= status < 200:
        return b""
    try:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return await _read_chunked(reader)
        if "content-length" in headers:
            length = int(headers["content-length"])
            if not 0 <= length <= MAX_BODY_BYTES:
                raise TransportError(f"response body of {length} bytes refused")
            return await reader.readexactly(length)
        return await _read_to_eof(reader)
    except asyncio.IncompleteReadError:
        raise TransportError("the connection closed in the middle of a response body") from None
    except (ValueError, asyncio.LimitOverrunError):
        raise TransportError("malformed response framing") from None


async def _read_to_eof(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while chunk := await reader.read(1 << 16):
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise TransportError(f"response body over {MAX_BODY_BYTES} bytes")
    return bytes(body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            break
        if len(body) + size > MAX_BODY_BYTES:
            raise TransportError(f"response body over {MAX_BODY_BYTES} bytes")
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise TransportError("malformed chunk")
    while await reader.readuntil(b"\r\n") != b"\r\n":
        pass  # trailers
    return bytes(body)


class ProxiedPool:
    """`JsonPoster` over httpx, for endpoints reached through a proxy from the environment."""

    def __init__(self, base_url: str, connect_timeout_s: float, connections: int) -> None:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            verify=tls_context(),
            limits=limits,
            # The caller's asyncio timeout is the per-call limit; httpx's is only a backstop.
            timeout=httpx.Timeout(None, connect=connect_timeout_s),
            trust_env=True,
        )

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> Response:
        try:
            reply = await self._client.post(
                path.lstrip("/"),
                content=body,
                headers={"Content-Type": "application/json", **headers},
            )
        except httpx.RequestError as exc:  # transport errors, and bodies it cannot decode
            raise TransportError(f"{type(exc).__name__}: {exc}") from exc
        headers = {name.lower(): value for name, value in reply.headers.items()}
        return Response(reply.status_code, headers, reply.content)

    async def aclose(self) -> None:
        await self._client.aclose()
