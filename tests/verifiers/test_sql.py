"""The sql verifier: execution accuracy through the real sandbox."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.base import item_timeout_s
from referee.verifiers.sql import SqlVerifier, extract_sql, has_order_by, same_results

SCHEMA = """
CREATE TABLE emp (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary REAL);
INSERT INTO emp VALUES (1, 'ann', 'eng', 100.0), (2, 'bob', 'eng', 80.0),
                       (3, 'cy', 'ops', 80.0), (4, 'di', 'ops', 120.5);
"""
REF = {"schema": SCHEMA, "query": "SELECT name FROM emp WHERE dept = 'eng'"}
ORDERED = {"schema": SCHEMA, "query": "SELECT name FROM emp ORDER BY salary DESC, id"}
EMPTY = {"schema": SCHEMA, "query": "SELECT name, dept FROM emp WHERE salary > 1000"}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], float]] = [
    # (response, reference, params, reward)
    ("SELECT name FROM emp WHERE dept = 'eng'", REF, {}, 1.0),
    ("```sql\nSELECT e.name FROM emp e WHERE e.dept IN ('eng')\n```", REF, {}, 1.0),
    ("SELECT name FROM emp WHERE dept = 'eng' ORDER BY name DESC", REF, {}, 1.0),  # unordered
    ("SELECT name FROM emp WHERE salary >= 100", REF, {}, 0.0),
    ("SELECT name, dept FROM emp WHERE dept = 'eng'", REF, {}, 0.0),  # extra column
    ("SELECT name FROM emp WHERE dept = 'eng' UNION ALL SELECT 'bob'", REF, {}, 0.0),  # multiset
    ("SELECT name FROM emp ORDER BY salary DESC, id", ORDERED, {}, 1.0),
    ("SELECT name FROM emp ORDER BY salary, id", ORDERED, {}, 0.0),  # same set, wrong order
    ("SELECT name FROM emp ORDER BY salary, id", ORDERED, {"order": "unordered"}, 1.0),
    ("SELECT name FROM emp WHERE dept = 'eng' ORDER BY 1 DESC", REF, {"order": "ordered"}, 0.0),
    ("SELECT AVG(salary) FROM emp", {"schema": SCHEMA, "query": "SELECT 95.125"}, {}, 1.0),
    ("SELECT AVG(salary) + 1e-9 FROM emp", {"schema": SCHEMA, "query": "SELECT 95.125"}, {}, 1.0),
    (
        "SELECT COUNT(*) FROM t",
        {"rows": {"t": [[1], [2]]}, "schema": "CREATE TABLE t (x);", "query": "SELECT 2"},
        {},
        1.0,
    ),
    ("SELEC name FROM emp", REF, {}, 0.0),  # a query that errors scores 0
    ("DROP TABLE emp", REF, {}, 0.0),
    # Statements that return no columns, once equal to any gold with no rows.
    ("PRAGMA user_version = 3", EMPTY, {}, 0.0),
    ("PRAGMA foreign_keys = ON", EMPTY, {}, 0.0),
    ("VACUUM", EMPTY, {}, 0.0),
    ("CREATE TABLE t (x)", EMPTY, {}, 0.0),
    ("SELECT 1 WHERE 0", EMPTY, {}, 0.0),  # one column for the gold's two
    ("SELECT name, dept FROM emp WHERE salary < 0", EMPTY, {}, 1.0),
    # Writing returns the same rows as the gold's select, but the database is read-only.
    ("DELETE FROM emp WHERE dept = 'eng' RETURNING name", REF, {}, 0.0),
    ("UPDATE emp SET id = id WHERE dept = 'eng' RETURNING name", REF, {}, 0.0),
    ("INSERT INTO emp SELECT * FROM emp WHERE 0 RETURNING name", EMPTY, {}, 0.0),
    ("", REF, {}, 0.0),
    (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r",
        REF,
        {"timeout_s": 1},
        0.0,
    ),  # runs forever: the prediction's fault
]


@pytest.mark.parametrize(("response", "reference", "params", "reward"), CASES)
def test_sql_cases(score, response, reference, params, reward) -> None:  # type: ignore[no-untyped-def]
    result = score("sql", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == reward, result.details


HUGE_ROWS = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT {})"
# Queries whose results cost the harness what the policy chooses: each once made the item
# error (sql_harness_failed, retryable), a status a response could buy.
COSTLY = {
    "a result over the output cap": HUGE_ROWS.format(100_000)
    + " SELECT printf('%.1000c', 'x') FROM r",
    "a row bigger than the cap": "SELECT printf('%.2000000c', 'x') FROM emp",
    "millions of rows": HUGE_ROWS.format(20_000_000) + " SELECT x FROM r",
}


@pytest.mark.parametrize("query", COSTLY.values(), ids=COSTLY.keys())
def test_a_query_too_costly_to_compare_is_wrong(score, query: str) -> None:  # type: ignore[no-untyped-def]
    result = score("sql", query, REF)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    # Either read only as far as it is already wrong (one row past the gold's), or failed.
    details = result.details
    assert details.get("error") or details["predicted_rows"] == details["gold_rows"] + 1


def test_a_gold_result_too_big_to_compare_is_the_references(score) -> None:  # type: ignore[no-untyped-def]
    reference = {**REF, "query": HUGE_ROWS.format(100_000) + " SELECT printf('%.1000c', x) FROM r"}
    result = score("sql", "SELECT 1", reference)
    assert result.status == Status.INVALID and "reference.query" in result.error.message


def test_errors_are_reported_in_details(score) -> None:  # type: ignore[no-untyped-def]
    result = score("sql", "SELEC 1", REF)
    assert "syntax error" in result.details["error"]
    assert "readonly" in score("sql", "DELETE FROM emp RETURNING name", REF).details["error"]
    assert "not a query" in score("sql", "PRAGMA foreign_keys = ON", REF).details["error"]


def test_a_gold_with_no_rows_is_flagged(score) -> None:  # type: ignore[no-untyped-def]
    """Any query selecting nothing matches it: the reward says nothing, and the item says so."""
    result = score("sql", "SELECT name, dept FROM emp WHERE 0", EMPTY)
    assert (result.reward, result.details["flags"]) == (1.0, ["empty_gold"])
    assert "flags" not in score("sql", REF["query"], REF).details


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ({"schema": SCHEMA}, "reference.query"),
        ({"schema": "CREATE TABL x", "query": "SELECT 1"}, "reference.schema"),
        ({"schema": SCHEMA, "query": "SELECT nope FROM emp"}, "reference.query"),
        ({"schema": SCHEMA, "query": "DELETE FROM emp"}, "reference.query"),
        ({"query": "SELECT 1", "fixture": "../etc/passwd"}, "reference.fixture"),
        ({"query": "SELECT 1", "fixture": "missing"}, "reference.fixture"),
        ("SELECT 1", "reference"),
    ],
)
def test_unusable_references_are_invalid(score, reference, field) -> None:  # type: ignore[no-untyped-def]
    result = score("sql", "SELECT 1", reference)
    assert result.status == Status.INVALID and result.reward is None
    assert field in result.error.message


def test_fixture_files(tmp_path: Path) -> None:
    """Fixtures come from the directory the verifier is given (`EngineSettings`)."""
    (tmp_path / "shop.sql").write_text(
        "CREATE TABLE item (p REAL); INSERT INTO item VALUES (2.5), (4);"
    )
    verifier = SqlVerifier(fixtures=tmp_path)
    reference = {"fixture": "shop", "query": "SELECT 6.5"}
    [result] = verifier.score(
        [Item(verifier="sql", response="SELECT SUM(p) FROM item", reference=reference)]
    )
    assert (result.status, result.reward) == (Status.OK, 1.0)
    [missing] = SqlVerifier().score(
        [
            Item(
                verifier="sql",
                response="SELECT 1",
                reference={"fixture": "shop", "query": "SELECT 1"},
            )
        ]
    )
    assert missing.status == Status.INVALID and "no fixture 'shop'" in missing.error.message  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("query", "ordered"),
    [
        ("SELECT a FROM t ORDER BY a", True),
        ("select a from t order  by a", True),
        ("SELECT a FROM (SELECT a FROM t ORDER BY a)", False),
        ("SELECT 'ORDER BY'", False),
        ("SELECT a FROM t", False),
    ],
)
def test_has_order_by(query: str, ordered: bool) -> None:
    assert has_order_by(query) is ordered


def test_extract_and_compare() -> None:
    assert extract_sql("text\n```sql\nSELECT 1\n```\nmore\n```sql\nSELECT 2\n```") == "SELECT 2\n"
    assert extract_sql("SELECT 3") == "SELECT 3"
    assert same_results([[1, 0.1 + 0.2]], [[1, 0.3]], ordered=True, tol=1e-6)
    assert not same_results([[1], [1]], [[1]], ordered=False, tol=1e-6)


def test_a_query_that_never_ends_fails_within_the_item_timeout(score) -> None:  # type: ignore[no-untyped-def]
    """``timeout_s`` past the executor's item timeout: the run is cut to 0.8 of it, so a
    prediction that never ends scores 0 instead of making the item a timeout."""
    endless = (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
    )
    token = item_timeout_s.set(2.0)
    try:
        start = time.monotonic()
        result = score("sql", endless, REF, timeout_s=30)
        assert time.monotonic() - start < 2.0
    finally:
        item_timeout_s.reset(token)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert "longer than" in result.details["error"]
