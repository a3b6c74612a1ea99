"""``referee score --server`` for large files: the file goes to the server as a batch job.
The job id is kept beside the output (``OUT.job``) until the results are written, so a
run that was stopped reattaches to its job with ``--resume`` instead of scoring again."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, BinaryIO

from rich.console import Console
from rich.progress import Progress, TaskID

from referee.service.cli_errors import say
from referee.service.client import Client, RefereeError

FINISHED = ("done", "cancelled")
_JOB_ID = re.compile(r"[0-9A-Za-z_-]{1,128}")


def sidecar(output: Path) -> Path:
    """Where the job id of ``output``'s run is kept while the job runs."""
    return output.with_name(output.name + ".job")


def score_as_job(
    client: Client,
    source: Path,
    output: Path | None,
    sink: BinaryIO,
    progress: Progress,
    console: Console,
    reattach: bool,
) -> str:
    """Submit ``source`` (or, with ``reattach``, find the job ``output``'s sidecar names),
    wait for it, and write its results to ``sink``; the job's id."""
    task = progress.add_task("uploading", total=None)
    job_id = _reattached(client, output, console) if reattach and output else None
    if job_id is None:
        job_id = client.submit_job(source)
        if output is not None:
            keep_job_id(sidecar(output), job_id)
        console.print(f"job {job_id}: uploaded, scored on the server")
    status = _wait(client, job_id, progress, task, console)
    progress.update(task, completed=status["done"], total=status["total"])
    client.job_results(job_id, sink)
    sink.flush()
    if output is not None:
        sidecar(output).unlink(missing_ok=True)
    return job_id


def keep_job_id(path: Path, job_id: str) -> None:
    """Write ``job_id`` to ``path`` whole or not at all (a run killed while writing must not
    leave an empty sidecar behind): a temporary file beside it, then a rename."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(job_id + "\n")
    os.replace(partial, path)


def _reattached(client: Client, output: Path, console: Console) -> str | None:
    kept = sidecar(output)
    if not kept.exists():
        return None
    job_id = kept.read_text(errors="replace").strip()
    if not _JOB_ID.fullmatch(job_id):
        say(console, f"{kept} holds no job id; delete it to score the file again")
    try:
        client.job(job_id)
    except RefereeError as exc:
        if exc.status != 404:
            raise
        say(console, f"job {job_id} is gone from the server (expired or deleted); --overwrite")
    console.print(f"reattached to job {job_id}")
    return job_id


def _wait(
    client: Client, job_id: str, progress: Progress, task: TaskID, console: Console
) -> dict[str, Any]:
    """Poll until the job is finished. A ``failed`` job (its results could not be written
    on the server) retries there: say why once, and keep waiting."""
    warned = False
    progress.update(task, description=f"job {job_id[:8]}")
    while (status := client.job(job_id))["state"] not in FINISHED:
        if status["state"] == "failed" and not warned:
            console.print(f"job {job_id} is failing on the server: {status.get('reason')}")
            warned = True
        progress.update(task, completed=status["done"], total=status["total"])
        time.sleep(0.5)
    return status
