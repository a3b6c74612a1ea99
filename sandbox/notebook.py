"""Notebook cells in one sandboxed Python interpreter (SandboxFusion's ``/run_jupyter``).

No Jupyter kernel: a small driver, run as the sandbox's python3 program, executes the
cells one after another in one namespace, as a kernel does. Per cell it keeps what was
printed (stdout, stderr), the value of a last expression (``display``: ``text/plain``,
its ``repr``, as a kernel's ``execute_result``) and an exception (``error``: ``ename``,
``evalue``, ``traceback``); an exception does not stop the cells after it. A cell over
its time limit is stopped by a timer *inside the sandbox* (the cell's own process; the
sandbox's wall limit bounds the whole run). The driver writes its results after a random
marker line: cells can print anything before it, and whatever a cell forges only
changes the caller's own results.
"""

from __future__ import annotations

import json
import secrets

from pydantic import BaseModel, Field

from referee.sandbox.types import Case, Program

CELLS_FILE = ".referee-cells.json"

DRIVER = r"""
import ast, io, json, signal, sys, traceback

def run(source, namespace, limit):
    out, err = io.StringIO(), io.StringIO()
    display, error = [], []
    def expired(signum, frame):
        raise TimeoutError(f"the cell ran longer than {limit:g} s")
    sys.stdout, sys.stderr = out, err
    if limit > 0:
        signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        tree = ast.parse(source, "<cell>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
            if value is not None:
                display.append({"text/plain": repr(value)})
    except BaseException as exc:
        error.append({
            "ename": type(exc).__name__,
            "evalue": str(exc),
            # from the cell's own frames on, as a kernel shows it (not the driver's)
            "traceback": traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next),
        })
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "display": display, "error": error}

def main():
    marker, limit = sys.argv[1], float(sys.argv[2])
    with open(sys.argv[3]) as given:
        cells = json.load(given)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    results = [run(cell, namespace, limit) for cell in cells]
    sys.__stdout__.write("\n" + marker + "\n" + json.dumps(results) + "\n")
    sys.__stdout__.flush()

main()
"""


class CellResult(BaseModel):
    """One cell's outcome, SandboxFusion's ``CellRunResult``."""

    stdout: str = ""
    stderr: str = ""
    display: list[dict[str, str]] = Field(default_factory=list)
    error: list[dict[str, object]] = Field(default_factory=list)


class Notebook:
    """The program and case that run ``cells``, and how to read their results."""

    def __init__(
        self,
        cells: list[str],
        cell_timeout_s: float,
        files: dict[str, str],
        fetch: list[str] | None = None,
    ) -> None:
        self.marker = f"--referee-cells-{secrets.token_hex(8)}--"
        self.program = Program(language="python3", source=DRIVER)
        argv = [self.marker, f"{cell_timeout_s:g}", CELLS_FILE]
        files = {**files, CELLS_FILE: json.dumps(cells)}
        self.case = Case(argv=argv, files=files, fetch=list(fetch or []))

    def results(self, stdout: str) -> tuple[list[CellResult], str] | None:
        """The cells' results and what the driver printed outside any cell, or None when
        the driver never wrote its results (it was killed)."""
        before, found, after = stdout.rpartition("\n" + self.marker + "\n")
        if not found:
            return None
        try:
            cells = [CellResult.model_validate(c) for c in json.loads(after)]
        except ValueError:
            return None
        return cells, before
