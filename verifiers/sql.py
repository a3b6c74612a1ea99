"""The ``sql`` verifier: execution accuracy on SQLite, run inside the sandbox.

``reference``: ``{"query": gold SQL, "schema": SQL script (DDL and inserts)?,
"rows": {table: [[...], ...]}?, "fixture": name?}``. A fixture is a ``.sql`` script of
that name in the ``fixtures`` directory (``REFEREE_SQL_FIXTURES``), run before ``schema``. The
database is built fresh for each item in an in-memory SQLite inside the sandbox; the
gold query and the response's query (the last ```sql block, else the whole response)
run against it, and their result sets are compared: as ordered lists when the gold
query has a top-level ORDER BY (``params.order="auto"``) or ``"ordered"``, as multisets
otherwise. Column names never matter, their number does; floats compare within
``params.float_tol``. The database is read-only once built, so a prediction that writes
(``DELETE ... RETURNING``) or returns no columns (``PRAGMA``, ``VACUUM``) is wrong. A gold
query returning no rows flags the item ``empty_gold``: any query selecting nothing
matches it.

A predicted query that errors is ``ok`` with reward 0 and the error in details; a
reference whose schema or gold query fails is ``invalid`` (the client's fault).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.sandbox import CaseOutcome, CaseStatus, Sandbox
from referee.verifiers.base import (
    ItemError,
    ItemInvalid,
    ItemTimeout,
    ItemVerifier,
    Outcome,
    Params,
    parse_reference,
    run_limit,
)
from referee.verifiers.code.runtime import SandboxHandle, handle_of
from referee.verifiers.sandboxed_python import run_python
from referee.verifiers.types import Item, Pool

_FENCE = re.compile(r"```[ \t]*(?:sql|sqlite)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_ORDER_BY = re.compile(r"ORDER\s+BY\b", re.IGNORECASE)

HARNESS = """
import json, sqlite3, sys
job = json.loads(sys.stdin.read())
db = sqlite3.connect(":memory:")
def run(sql, most=None):
    try:
        cursor = db.execute(sql)
        if cursor.description is None:
            return {"error": "not a query: the statement returns no columns"}
        rows = cursor.fetchall() if most is None else cursor.fetchmany(most)
        return {"rows": [list(r) for r in rows], "columns": len(cursor.description)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
def emit(key, value):
    print(json.dumps({key: value}, default=repr), flush=True)
try:
    db.executescript(job["setup"])
    for table, rows in job["rows"].items():
        for row in rows:
            marks = ",".join("?" * len(row))
            db.execute(f'INSERT INTO "{table}" VALUES ({marks})', row)
except Exception as exc:
    emit("setup_error", f"{type(exc).__name__}: {exc}")
else:
    # Read only from here: a prediction that writes (DELETE ... RETURNING) is an error,
    # and a single statement cannot both lift this and write.
    db.execute("PRAGMA query_only = ON")
    gold = run(job["gold"])
    emit("gold", gold)  # first, so a run that ends after it ended in the prediction
    # One row more than the gold's already makes the prediction wrong: no more is read.
    emit("pred", run(job["pred"], len(gold.get("rows", ())) + 1))
"""


class SqlParams(Params):
    order: Literal["auto", "ordered", "unordered"] = "auto"
    float_tol: float = Field(default=1e-6, ge=0)
    timeout_s: float = Field(default=5.0, gt=0, le=60)


class SqlReference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1)
    schema_: str = Field(default="", alias="schema")
    rows: dict[str, list[list[Any]]] = Field(default_factory=dict)
    fixture: str | None = Field(default=None, pattern=_NAME.pattern)


class SqlVerifier(ItemVerifier[SqlParams]):
    name = "sql"
    pool = Pool.SANDBOX
    Params = SqlParams
    description = "SQLite execution accuracy: the predicted query's result set vs the gold one's."

    def __init__(
        self, sandbox: Sandbox | SandboxHandle | None = None, fixtures: Path | None = None
    ) -> None:
        self._sandbox = handle_of(sandbox)
        self._fixtures = fixtures

    def check(self, item: Item, params: SqlParams) -> Outcome:
        reference = parse_reference(SqlReference, item.reference)
        predicted = extract_sql(item.response_text())
        if not predicted.strip():
            return Outcome(reward=0.0, details={"reason": "no SQL in the response"})
        job = {
            "setup": _fixture(self._fixtures, reference.fixture) + reference.schema_,
            "rows": reference.rows,
            "gold": reference.query,
            "pred": predicted,
        }
        # within the item timeout: a prediction that never ends fails (0), not the item
        out = _execute(self._sandbox.get(), job, run_limit(params.timeout_s))
        if "setup_error" in out:
            raise ItemInvalid("invalid_reference", f"reference.schema: {out['setup_error']}")
        if "error" in out["gold"]:
            raise ItemInvalid("invalid_reference", f"reference.query: {out['gold']['error']}")
        details: dict[str, Any] = {"query": predicted}
        if "error" in out["pred"]:
            return Outcome(reward=0.0, details={**details, "error": out["pred"]["error"]})
        ordered = params.order == "ordered" or (
            params.order == "auto" and has_order_by(reference.query)
        )
        gold, pred = out["gold"], out["pred"]
        same = gold["columns"] == pred["columns"] and same_results(
            gold["rows"], pred["rows"], ordered, params.float_tol
        )
        details |= {
            "ordered": ordered,
            "gold_rows": len(gold["rows"]),
            "predicted_rows": len(pred["rows"]),
            "gold_columns": gold["columns"],
            "predicted_columns": pred["columns"],
        }
        if not gold["rows"]:
            # Any query selecting nothing with as many columns matches an empty gold: the
            # reward cannot tell a right query from a degenerate one, so the item says so.
            details["flags"] = ["empty_gold"]
        return Outcome(reward=float(same), details=details)


def extract_sql(text: str) -> str:
    """The last ```sql (or unlabelled) fenced block, else the whole response."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


def has_order_by(query: str) -> bool:
    """True when ORDER BY appears outside parentheses and quotes (a top-level ordering)."""
    depth, quote = 0, ""
    for index, char in enumerate(query):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        else:
            depth += (char == "(") - (char == ")")
            if depth == 0 and _ORDER_BY.match(query, index):
                return True
    return False


def same_results(gold: list[list[Any]], pred: list[list[Any]], ordered: bool, tol: float) -> bool:
    """Equal result sets: row by row when ``ordered``, as multisets otherwise."""
    g, p = [_normal(row, tol) for row in gold], [_normal(row, tol) for row in pred]
    return g == p if ordered else Counter(g) == Counter(p)


def _normal(row: list[Any], tol: float) -> tuple[Any, ...]:
    def cell(value: Any) -> Any:
        if isinstance(value, float) and math.isfinite(value) and tol > 0:
            return round(value / tol) * tol if abs(value) < 1e15 else value
        return value

    return tuple(cell(v) for v in row)


def _fixture(directory: Path | None, name: str | None) -> str:
    if name is None:
        return ""
    path = directory / f"{name}.sql" if directory else None
    if path is None or not path.is_file():
        raise ItemInvalid("invalid_reference", f"reference.fixture: no fixture {name!r}")
    return path.read_text() + "\n"


def _execute(sandbox: Sandbox, job: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    outcome = run_python(sandbox, HARNESS, json.dumps(job), timeout_s, memory_mb=512)
    out: dict[str, Any] = {}
    for line in outcome.stdout.splitlines():
        try:
            out.update(json.loads(line))
        except ValueError:
            continue
    if "setup_error" in out or {"gold", "pred"} <= set(out):
        return out
    if "gold" in out and "error" not in out["gold"]:
        # The run ended in the prediction (time, memory, a result too big to print): the
        # query's doing, a wrong answer; never a status a response could buy.
        return {**out, "pred": {"error": _ended(outcome, timeout_s)}}
    if outcome.status == CaseStatus.TIMEOUT:
        raise ItemTimeout(f"building the database or the gold query took over {timeout_s:g} s")
    if outcome.status == CaseStatus.OUTPUT_LIMIT:
        message = "reference.query: its result is too big to compare (over 1 MiB as JSON)"
        raise ItemInvalid("invalid_reference", message)
    raise ItemError("sql_harness_failed", outcome.stderr[-500:] or outcome.status.value)


def _ended(outcome: CaseOutcome, timeout_s: float) -> str:
    if outcome.status == CaseStatus.TIMEOUT:
        return f"the query ran longer than {timeout_s:g} s"
    if outcome.status == CaseStatus.OUTPUT_LIMIT:
        return "the query's result is too big to compare (over 1 MiB as JSON)"
    return f"the query's run ended without a result: {outcome.status.value}"
