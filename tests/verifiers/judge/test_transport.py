"""The judge's HTTP/1.1 transport against raw loopback servers: every framing it reads,
connection reuse, the failures it must name, TLS, and the proxy hand-off to httpx."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from referee.verifiers.judge import transport
from referee.verifiers.judge.transport import (
    Origin,
    Pool,
    ProxiedPool,
    TransportError,
    UnsendableRequest,
    open_pool,
    proxied,
)
from tests.conftest import require

from .endpoint import JudgeEndpoint, completion

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    first, *lines = head.strip().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return first, headers, body


class RawServer:
    """A loopback TCP server that answers each request with the next scripted bytes (or
    runs a handler); counts the connections it accepted."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def start(self, tls: ssl.SSLContext | None = None) -> int:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=tls)
        return int(self.server.sockets[0].getsockname()[1])


Serve = Callable[[Handler], Awaitable[tuple[Pool, RawServer]]]


def replies(*raw: bytes, keep_open: bool = True) -> Handler:
    """Answer successive requests on one connection with ``raw`` replies, in order."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for reply in raw:
            await read_request(reader)
            writer.write(reply)
            await writer.drain()
        if keep_open:
            await reader.read()  # until the client closes

    return handler


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start a `RawServer` with a handler; returns a `Pool` for it and the server."""
    servers: list[RawServer] = []
    pools: list[Pool] = []

    async def start(handler: Handler) -> tuple[Pool, RawServer]:
        server = RawServer(handler)
        servers.append(server)
        port = await server.start()
        pool = Pool(f"http://127.0.0.1:{port}/v1/", 1.0, None)
        pools.append(pool)
        return pool, server

    yield start
    for pool in pools:
        await pool.aclose()
    for server in servers:
        assert server.server is not None
        server.server.close()


OK_JSON = b'HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{"ok": true}'


@pytest.mark.parametrize(
    ("raw", "status", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 200, b"{}"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'3;ext=1\r\n{"a\r\n5\r\n": 1}\r\n0\r\nX-Trailer: y\r\n\r\n',
            200,
            b'{"a": 1}',
        ),
        (
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\n[]",
            500,
            b"[]",
        ),
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204, b""),
    ],
    ids=["content-length", "chunked", "100-continue", "no-content"],
)
async def test_framings_are_read_and_the_connection_reused(
    serve: Serve, raw: bytes, status: int, body: bytes
) -> None:
    pool, server = await serve(replies(raw, raw))
    for _ in range(2):
        response = await pool.post("chat/completions", b"{}", {})
        assert (response.status, response.body) == (status, body)
    assert server.connections == 1


async def test_a_body_framed_by_eof_closes_the_connection(
    serve: Serve,
) -> None:
    raw = b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 100_000
    pool, _server = await serve(replies(raw, keep_open=False))
    response = await pool.post("chat/completions", b"{}", {})
    assert response.body == b"x" * 100_000
    assert not pool._idle  # framed by EOF: nothing left to reuse


async def test_the_request_is_what_the_judge_expects(
    serve: Serve,
) -> None:
    seen: list[tuple[str, dict[str, str], bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await read_request(reader))
        writer.write(OK_JSON)
        await reader.read()

    pool, _server = await serve(handler)
    body = json.dumps({"model": "m", "messages": []}).encode()
    await pool.post("chat/completions", body, {"Authorization": "Bearer k"})
    [(first, headers, sent)] = seen
    assert first == "POST /v1/chat/completions HTTP/1.1"
    assert headers["host"] == f"127.0.0.1:{pool.origin.port}"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer k"
    assert headers["user-agent"] == "referee-judge"
    assert sent == body


async def test_a_kept_alive_connection_the_server_closed_is_replaced(
    serve: Serve,
) -> None:
    """The server answers once per connection and then closes it without saying so: the
    next call finds the stale connection, opens a new one and succeeds."""
    pool, server = await serve(replies(OK_JSON, keep_open=False))
    for _ in range(3):
        assert (await pool.post("chat/completions", b"{}", {})).status == 200
    assert server.connections == 3


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "closed the connection without answering"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "in the middle of a response head"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "in the middle of a response body"),
        (b"SMTP ready\r\n\r\n", "not an HTTP/1.x response"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n", "malformed response framing"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", "response head over"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n", "bytes refused"),
        ("HTTP/1.1 2²0 OK\r\nContent-Length: 0\r\n\r\n".encode("latin-1"), "not an HTTP/1.x"),
        (b"HTTP/1.1 999 Nine\r\nContent-Length: 0\r\n\r\n", "out of range"),
        (b"HTTP/1.1 042 Low\r\nContent-Length: 0\r\n\r\n", "out of range"),
        (b"HTTP/1.1 101 Switching\r\nUpgrade: h2c\r\n\r\n", "switched protocols"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n", "chunk"),
    ],
    ids=[
        "closed",
        "cut-head",
        "cut-body",
        "not-http",
        "bad-length",
        "bad-chunk",
        "huge-head",
        "huge-body",
        "superscript-status",
        "status-999",
        "status-042",
        "status-101",
        "chunk-no-crlf",
    ],
)
async def test_broken_replies_raise_a_named_transport_error(
    serve: Serve, raw: bytes, message: str
) -> None:
    pool, _server = await serve(replies(raw, keep_open=False))
    with pytest.raises(TransportError, match=message):
        await pool.post("chat/completions", b"{}", {})
    assert not pool._idle


async def test_an_unreachable_endpoint_is_a_transport_error() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    pool = Pool(f"http://127.0.0.1:{port}", 1.0, None)
    with pytest.raises(TransportError, match="cannot connect"):
        await pool.post("x", b"{}", {})


async def test_a_cancelled_call_does_not_leave_its_connection_in_the_pool(
    serve: Serve,
) -> None:
    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(0.3)
        writer.write(OK_JSON)  # the late reply a reused connection must never deliver
        await reader.read()

    pool, _server = await serve(slow)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await pool.post("x", b"{}", {})
    assert not pool._idle


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    require(shutil.which("openssl") is not None, "openssl not installed")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https_verifies_the_server_and_reuses_the_tls_connection(
    certificate: tuple[Path, Path],
) -> None:
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    server = RawServer(replies(OK_JSON, OK_JSON))
    port = await server.start(server_tls)
    trusting = ssl.create_default_context(cafile=str(cert))
    pool = Pool(f"https://localhost:{port}/v1", 2.0, trusting)
    for _ in range(2):
        assert (await pool.post("chat/completions", b"{}", {})).body == b'{"ok": true}'
    assert server.connections == 1
    await pool.aclose()
    stranger = Pool(f"https://localhost:{port}/v1", 2.0, ssl.create_default_context())
    with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
        await stranger.post("chat/completions", b"{}", {})
    assert server.server is not None
    server.server.close()


def _clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_a_proxy_in_the_environment_hands_the_endpoint_to_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _clear_proxies(monkeypatch)
    assert not proxied("http://judge.example/v1")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert proxied("http://judge.example/v1")
    assert not proxied("https://judge.example/v1")
    assert not proxied("http://localhost:8000/v1")
    assert isinstance(open_pool("http://judge.example/v1", 1.0, 4), ProxiedPool)
    assert isinstance(open_pool("http://localhost:8000/v1", 1.0, 4), Pool)
    monkeypatch.setenv("NO_PROXY", "judge.example:8000")
    assert not proxied("http://judge.example:8000/v1")
    assert proxied("http://judge.example:9000/v1")


async def test_the_proxied_pool_goes_through_the_proxy(
    endpoint: JudgeEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scripted judge doubles as the proxy: httpx sends it the absolute URL of a host
    that does not exist, which only a proxy could reach."""
    _clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{endpoint.port}")
    endpoint.queue(completion("fine"))
    pool = open_pool("http://judge.invalid/v1", 1.0, 4)
    assert isinstance(pool, ProxiedPool)
    response = await pool.post("chat/completions", b'{"model": "m"}', {"Authorization": "x"})
    await pool.aclose()
    assert response.status == 200
    assert json.loads(response.body)["choices"][0]["message"]["content"] == "fine"
    assert endpoint.headers[-1]["host"] == "judge.invalid"


async def test_a_stale_connection_is_replaced_once_not_for_every_idle_one(serve: Serve) -> None:
    """A server that takes the request and closes without answering looks like one that
    timed out an idle connection: the POST is re-sent at most once, on a new connection,
    not once per idle connection."""
    answer = True
    received = 0

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal received
        while True:
            await read_request(reader)
            received += 1
            if not answer:
                return  # took it, never answers
            writer.write(OK_JSON)
            await writer.drain()

    pool, server = await serve(handler)
    await asyncio.gather(*(pool.post("x", b"{}", {}) for _ in range(8)))
    assert server.connections == 8 and len(pool._idle) == 8
    answer, received = False, 0
    with pytest.raises(TransportError, match="without answering"):
        await pool.post("x", b"{}", {})
    assert received == 2
    assert not pool._idle


async def test_bytes_that_arrive_on_an_idle_connection_are_never_a_reply(serve: Serve) -> None:
    """A server that answers, then sends a 408 and closes while the connection is idle:
    the next call must not read that 408 as its own reply."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK_JSON)
        await asyncio.sleep(0.05)
        writer.write(
            b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        )
        await writer.drain()

    pool, server = await serve(handler)
    assert (await pool.post("x", b"{}", {})).status == 200
    await asyncio.sleep(0.1)
    assert (await pool.post("x", b"{}", {})).status == 200
    assert server.connections == 2


async def test_idle_connections_expire(serve: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "IDLE_EXPIRY_S", 0.05)
    pool, server = await serve(replies(OK_JSON, OK_JSON))
    await pool.post("x", b"{}", {})
    await asyncio.sleep(0.1)
    await pool.post("x", b"{}", {})
    assert server.connections == 2


@pytest.mark.parametrize("value", ["key\n", "a\r\nX-Injected: 1", "nul\0", "ключ"])
async def test_header_values_that_would_break_the_request_are_refused(value: str) -> None:
    pool = Pool("http://127.0.0.1:9/v1", 1.0, None)
    with pytest.raises(UnsendableRequest, match="header"):
        await pool.post("x", b"{}", {"Authorization": f"Bearer {value}"})


@pytest.mark.parametrize(
    "url",
    ["ftp://judge/v1", "http:///v1", "http://judge/v1?api-version=1", "http://u:p@judge/v1"],
)
def test_base_urls_the_transport_cannot_honour_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        Origin.parse(url)
