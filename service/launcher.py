"""The ``referee`` command's entry point.

A command that runs worker pools (`serve` and `worker` on their own machine, `score`
without ``--server``) forks them from a fork server that imports every verifier, about
2.5 s; the command's own modules take as long again. Started here, before those load,
the fork server imports on the other core at the same time: such a command is ready in
about 3.5 s instead of 6 (`referee serve` on the 2-core CI machine). A wrong guess costs
nothing but that time, or an idle fork server.
"""

from __future__ import annotations

import sys

from pydantic import ValidationError

from referee.service.execution import forkserver
from referee.service.settings import Settings

POOLED_WORKERS = ("cpu", "sandbox")


def main() -> None:
    """Run the ``referee`` command line, the pools' fork server started first when the
    command will run pools."""
    if runs_pools(sys.argv[1:]):
        forkserver.start()
    # Imported after the fork server started, on purpose: these imports are what it
    # overlaps with.
    from referee.service.cli import app  # noqa: PLC0415

    app()


def runs_pools(args: list[str]) -> bool:
    """True when the command line ``args`` will start local worker pools."""
    command, options = (args[0], args[1:]) if args else ("", [])
    if command == "score":
        return not any(arg == "--server" or arg.startswith("--server=") for arg in options)
    if command not in ("serve", "worker"):
        return False
    try:
        broker = Settings().broker_url
    except ValidationError:
        return False  # the command itself says what is wrong
    if command == "serve":
        return not broker
    return bool(broker) and _option(options, "--pool", "cpu") in POOLED_WORKERS


def _option(args: list[str], name: str, default: str) -> str:
    """The value of option ``name`` in ``args`` (``--name value`` or ``--name=value``)."""
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return default
