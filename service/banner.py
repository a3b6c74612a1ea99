"""The start-up banner of `referee serve`: where it listens, how it executes, and what
the start-up check found (`service.preflight`), before the first log line."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from referee.service.preflight import Problem
from referee.service.settings import Settings


def print_banner(
    console: Console, settings: Settings, executor: str, problems: list[Problem]
) -> None:
    """Print the banner to ``console``; problems one per line, the blocking ones in red."""
    workers = (
        f"{settings.cpu_workers} cpu + {settings.sandbox_workers} sandbox worker processes"
        if executor == "embedded"
        else "workers behind the broker"
    )
    url = f"http://{settings.host}:{settings.port}"
    console.print(f"[bold]referee[/] on {escape(url)}: {executor} executor, {workers}")
    if not problems:
        console.print("start-up check: [green]every pool and verifier can work[/]")
        return
    for problem in problems:
        colour = "red" if problem.blocking else "yellow"
        effect = _effect(problem)
        console.print(
            f"[{colour}]! {escape(problem.component)}[/]: {escape(problem.message)}{effect}"
        )


def _effect(problem: Problem) -> str:
    if problem.pool is not None:
        return " [dim](its items are answered not_configured)[/]"
    if problem.verifier is not None:
        return f" [dim]({escape(problem.verifier)} items are answered not_configured)[/]"
    return ""
