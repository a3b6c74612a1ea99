"""One-line answers for the command line: a failure the user can fix is printed as one
line naming the fix, never as a traceback (a bug still gets its traceback)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import httpx
import typer
from rich.console import Console
from rich.markup import escape

from referee.service.client import RefereeError

HINTS = {
    401: "pass --api-key or set REFEREE_API_KEY",
    403: "this API key may not do that",
    404: "check --server: is it the referee server's base URL?",
    413: "the server caps request sizes (REFEREE_MAX_BODY_BYTES, REFEREE_MAX_JOB_BYTES)",
    429: "the server is full or rate-limited; retry later",
    503: "the server is not ready; its /readyz says why",
}


@contextmanager
def answered(console: Console, server: str | None) -> Iterator[None]:
    """Turn what a user can fix (the server's error answers, an unreachable server, a
    file that cannot be written) into one red line and exit status 1."""
    try:
        yield
    except RefereeError as exc:
        hint = HINTS.get(exc.status)
        tail = f" ({hint})" if hint else ""
        say(console, f"the server answered {exc.status} {exc.code}: {exc.message}{tail}")
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        say(console, f"cannot reach {server}: {reason} (is `referee serve` running there?)")
    except OSError as exc:
        say(console, f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))


def say(console: Console, message: str) -> NoReturn:
    """Print ``message`` as the one line of a failed command and exit with status 1."""
    console.print(f"[red]referee:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(1)
