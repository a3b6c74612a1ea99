"""Connections that trickle their request in are closed; the connection count is capped."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import start_server, stop_server


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    env = {
        "REFEREE_HEADER_TIMEOUT_S": "1",
        "REFEREE_BODY_TIMEOUT_S": "1",
        "REFEREE_MIN_BODY_BYTES_PER_S": "1000",
        "REFEREE_MAX_CONNECTIONS": "8",
        "REFEREE_CPU_WORKERS": "1",
    }
    proc, url = start_server(env)
    yield url
    stop_server(proc)


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    return sock


def _closed_within(sock: socket.socket, seconds: float, trickle: bytes = b"") -> bool:
    """Whether the server closes ``sock`` within ``seconds`` while we send ``trickle`` one
    byte every 0.2 s."""
    deadline = time.monotonic() + seconds
    sock.settimeout(0.2)
    position = 0
    while time.monotonic() < deadline:
        try:
            if position < len(trickle):
                sock.send(trickle[position : position + 1])
                position += 1
            if sock.recv(4096) == b"":
                return True
        except TimeoutError:
            continue
        except OSError:
            return True
    return False


def test_a_connection_that_sends_nothing_is_closed(server: str) -> None:
    with _connect(server) as sock:
        assert _closed_within(sock, 3.0)


def test_headers_trickling_in_are_cut_off(server: str) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 100
    with _connect(server) as sock:
        assert _closed_within(sock, 3.0, trickle=head)


def test_a_body_trickling_in_is_cut_off(server: str) -> None:
    head = b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    head += b"Content-Length: 100000\r\n\r\n"
    with _connect(server) as sock:
        sock.sendall(head)
        assert _closed_within(sock, 4.0, trickle=b"{" + b" " * 100)


def test_normal_requests_are_unaffected(server: str) -> None:
    body = {"items": [{"verifier": "string", "response": "a", "reference": "a"}]}
    assert httpx.post(f"{server}/v1/score", json=body, timeout=10).status_code == 200


def test_connections_beyond_the_cap_are_refused(server: str) -> None:
    held = [_connect(server) for _ in range(8)]
    try:
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never end
        time.sleep(0.2)
        response = httpx.get(f"{server}/healthz", timeout=5)
        assert response.status_code == 503
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.2)
    assert httpx.get(f"{server}/healthz", timeout=5).status_code == 200
