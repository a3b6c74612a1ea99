"""The ``code`` verifier: run the response's program against the reference's tests.

Flow per item: parse the tests (`suite`), extract the code (`extraction`), wrap it
(`harness`), compile once and run every case in the sandbox with its own parallelism,
judge each case (`verdicts`, `comparison`, `checker`) and aggregate (`aggregation`).

Status contract: a wrong, crashing, non-compiling or missing program is ``ok`` with reward
0 and says why in ``details``; a reference or params that cannot be used is ``invalid``
naming the field; a sandbox failure is ``error`` (never 0). The item deadline of the
``sandbox`` pool (``REFEREE_ITEM_TIMEOUT_S``) bounds the whole suite: keep
``cases x time_limit_s / REFEREE_SANDBOX_PARALLELISM`` below it.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from typing import Any

from pydantic import Field, field_validator

from referee.sandbox import (
    Case,
    CaseOutcome,
    CompileOutcome,
    CompileStatus,
    Limits,
    RunReport,
    Sandbox,
    languages,
)
from referee.verifiers.base import (
    RUNS_SHARE,
    ItemInvalid,
    ItemTimeout,
    ItemVerifier,
    Outcome,
    Params,
    item_timeout_s,
    runs_end,
)
from referee.verifiers.code.aggregation import Aggregate, aggregate, subtask_scores
from referee.verifiers.code.boundary import assembly
from referee.verifiers.code.boundary.declarations import Refused
from referee.verifiers.code.checker import Checker, Judged
from referee.verifiers.code.comparison import Comparator, Tolerance
from referee.verifiers.code.diagnostics import reference_parse_error, setup_parse_error
from referee.verifiers.code.extraction import Extraction, extract_any, extract_code
from referee.verifiers.code.harness import Plan, build_plan, check_supported
from referee.verifiers.code.runtime import SandboxHandle, handle_of, require_ok
from referee.verifiers.code.suite import Suite, parse_suite
from referee.verifiers.code.verdicts import Rules, Verdict, judge, skipped, summarise
from referee.verifiers.types import Item, Pool

COMPILE_OUTPUT_CHARS = 2000
MAX_CASE_DETAILS = 200


def known_language(name: str) -> str:
    """The sandbox's canonical name for ``name`` (aliases allowed); ValueError if unknown."""
    lang = languages.find(name)
    if lang is None:
        known = ", ".join(sorted(languages.LANGUAGES))
        raise ValueError(f"unknown language {name!r}; known: {known}")
    return lang.name


class CodeParams(Params):
    language: str | None = None
    """Sandbox language (or alias: python, py, c++, golang, js...). Unset: python3 for
    function-call and test-list references; for stdin/stdout tests, the language the
    response's last fenced block is tagged with (python3 when it is untagged)."""
    compare: Comparator = "lines"
    """Output comparator for stdin/stdout tests; see `verifiers.code.comparison`."""
    abs_tol: float = Field(default=1e-6, ge=0)
    rel_tol: float = Field(default=1e-6, ge=0)
    aggregate: Aggregate = "pass_rate"
    early_exit: bool = False
    """Stop at the first failing case; the cases not run score 0 (``skipped``)."""
    extract: bool = True
    """False: the whole response is the program (no fenced-block extraction)."""
    time_limit_s: float = Field(default=2.0, gt=0, le=30)
    """Wall-clock limit of each case (CPU limit: the same)."""
    memory_mb: int = Field(default=256, ge=16, le=4096)
    output_kb: int = Field(default=1024, ge=1, le=65536)
    """Cap on stdout + stderr of each case; past it the case is ``output_limit``."""
    accept_wrapped_output: bool = False
    """Function tests: an expected ``[v]`` also accepts ``v`` (APPS's convention)."""

    @field_validator("language")
    @classmethod
    def _known(cls, value: str | None) -> str | None:
        return None if value is None else known_language(value)

    def limits(self) -> Limits:
        """Per-case sandbox limits from these params."""
        return Limits(
            wall_s=self.time_limit_s,
            cpu_s=self.time_limit_s,
            memory_mb=self.memory_mb,
            output_bytes=self.output_kb * 1024,
        )


def _check_time_limit(language: str, params: CodeParams) -> None:
    """Raise `ItemInvalid` when ``language``'s own start leaves the program no time:
    every answer would time out, a configuration mistake and not the answer's 0."""
    lang = languages.find(language)
    if lang is None or params.time_limit_s >= 2 * lang.start_s:
        return
    raise ItemInvalid(
        "invalid_params",
        f"params.time_limit_s: {language} takes about {lang.start_s:g} CPU seconds to start "
        f"each run (its toolchain compiles the program every time); give at least "
        f"{2 * lang.start_s:g}",
    )


def _extracted(text: str, params: CodeParams, suite: Suite) -> tuple[Extraction | None, str]:
    """The program (None: the whole response, unextracted) and its language: the
    requested one, else detected from the fence for stdin/stdout tests (the only format
    that runs in every language), else python3."""
    wanted = _called_names(suite)
    if params.language is not None:
        found = extract_code(text, params.language, wanted) if params.extract else None
        return found, params.language
    if not params.extract or suite.kind != "stdio":
        found = extract_code(text, "python3", wanted) if params.extract else None
        return found, "python3"
    found, detected = extract_any(text)
    return found, detected or "python3"


def _called_names(suite: Suite) -> frozenset[str]:
    """What a Python program's tests call of it: the function of a function suite, the
    names an assert suite's tests read and never bind (`assembly.program_names`)."""
    if suite.kind == "function":
        return frozenset({re.split(r"[.(]", suite.fn_name, maxsplit=1)[0]})
    if suite.kind == "assert":
        names = {n for case in suite.cases for n in assembly.program_names(case.stdin, suite.setup)}
        return frozenset(names)
    return frozenset()


class CodeVerifier(ItemVerifier[CodeParams]):
    """Reward in [0, 1] from running the response's program on the reference's tests
    (pass rate by default). Untrusted code runs only in the sandbox."""

    name = "code"
    pool = Pool.SANDBOX
    Params = CodeParams
    description = (
        "Run the response's code against tests (stdin/stdout, function calls, asserts, "
        "special-judge checkers) in the sandbox; pass rate, all-or-nothing or IOI subtasks."
    )

    def __init__(self, sandbox: Sandbox | SandboxHandle | None = None) -> None:
        self._sandbox = handle_of(sandbox)

    @property
    def sandbox(self) -> Sandbox:
        """The given sandbox, else this process's shared one (created on first use)."""
        return self._sandbox.get()

    def check(self, item: Item, params: CodeParams) -> Outcome:
        suite = parse_suite(item.reference)
        text = item.response_text()
        found, language = _extracted(text, params, suite)
        check_supported(suite, language)
        _check_time_limit(language, params)
        code = text if found is None else found.code
        details: dict[str, Any] = {
            "language": language,
            "format": suite.kind,
            "extraction": "whole_response" if found is None else found.source,
        }
        if not code.strip():
            return Outcome(0.0, details={**details, "message": "no code found in the response"})
        if not _encodable(code):
            return Outcome(0.0, details={**details, "message": "the code is not valid UTF-8"})
        try:
            plan = build_plan(suite, code, language, secrets.token_hex(8))
        except Refused as exc:
            message = f"the test cannot call the program's function {exc}"
            return Outcome(0.0, details={**details, "flags": [exc.flag], "message": message})
        rules = Rules(
            params.compare,
            Tolerance(params.abs_tol, params.rel_tol),
            params.accept_wrapped_output,
            plan.verdict_key,
        )
        return self._grade(suite, plan, params, rules, details)

    def _grade(
        self, suite: Suite, plan: Plan, params: CodeParams, rules: Rules, details: dict[str, Any]
    ) -> Outcome:
        limits = params.limits()
        began = time.monotonic()
        deadline = _latest_start(limits, CHECKED_RUNS_SHARE if suite.checker else RUNS_SHARE)
        runs, compiled, cut = self._execute(plan, limits, params.early_exit, suite, rules, deadline)
        if compiled is not None:
            status, details["compile_error"], details["message"] = compiled
            if status is CompileStatus.TIMEOUT:
                details["message"] = "the program's build ran out of time"
                details["flags"] = sorted({*details.get("flags", ()), "compile_timeout"})
            return Outcome(0.0, details=details)
        verdicts = [
            judge(case, mine, suite, rules, peer)
            for case, (mine, peer) in zip(suite.cases, runs, strict=False)
        ]
        _require_exercised(verdicts)
        outcomes = [mine for mine, _ in runs]
        if suite.checker is not None:
            end_by = runs_end(began, CHECKER_SHARE)
            self._apply_checker(suite, outcomes, verdicts, limits, end_by)
        flags = sorted({f for v in verdicts for f in v.flags} | set(details.get("flags", ())))
        if flags:
            details["flags"] = flags
        unrun = len(suite.cases) - len(verdicts)
        verdicts += skipped(unrun)
        if cut:
            details["flags"] = sorted({*details.get("flags", ()), "time_budget"})
            details["message"] = (
                f"{unrun} cases were not run: the item's time ran out (they score 0)"
            )
        scores = _scores(verdicts, suite, details)
        reward = aggregate(scores, params.aggregate, suite.subtasks)
        details["passed"] = sum(1 for v in verdicts if v.status == "passed")
        details["total"] = len(verdicts)
        details["counts"] = summarise(verdicts)
        details["cases"] = [v.as_details() for v in verdicts[:MAX_CASE_DETAILS]]
        if suite.subtasks:
            details["subtasks"] = subtask_scores(scores, suite.subtasks)
        return Outcome(reward, components={"pass_rate": sum(scores) / len(scores)}, details=details)

    def _execute(
        self,
        plan: Plan,
        limits: Limits,
        early_exit: bool,
        suite: Suite,
        rules: Rules,
        deadline: float | None,
    ) -> tuple[list[tuple[CaseOutcome, CaseOutcome | None]], _FailedBuild | None, bool]:
        """Run the cases; returns (per case: the program's outcome and the tester's, if
        any; a failed build, or None; whether ``deadline`` left cases unrun). With
        early exit the cases run in chunks that double in size (parallelism, 2x, 4x...),
        so a failure stops the run after few recompiles and a passing suite pays
        O(log n) compiles."""
        cases = plan.cases
        chunk = len(cases) if not early_exit else self.sandbox.settings.parallelism
        outcomes: list[tuple[CaseOutcome, CaseOutcome | None]] = []
        while len(outcomes) < len(cases):
            part = cases[len(outcomes) : len(outcomes) + chunk]
            try:
                report = require_ok(self._sandbox_run(plan, part, limits, deadline))
            except ValueError as exc:
                raise ItemInvalid("invalid_params", f"params.language: {exc}") from None
            failed = _failed_build(report, plan)
            if failed is not None:
                return [], failed, False
            start = len(outcomes)
            peers: list[CaseOutcome | None] = list(report.peers) or [None] * len(report.cases)
            outcomes.extend(zip(report.cases, peers, strict=True))
            if len(report.cases) < len(part):
                return outcomes, None, True  # the deadline: the rest were not started
            if early_exit and _failed(suite, outcomes, start, rules):
                break
            chunk *= 2
        return outcomes, None, False

    def _sandbox_run(
        self, plan: Plan, cases: list[Case], limits: Limits, deadline: float | None
    ) -> RunReport:
        if deadline is not None:
            # The builds must end by the latest start too: one that runs on (a C++
            # constexpr loop compiles for minutes) would otherwise time the item out.
            build_s = min(limits.compile_wall_s, max(deadline - time.monotonic(), 0.1))
            limits = limits.model_copy(update={"compile_wall_s": build_s})
        if plan.tester is None:
            return self.sandbox.run(plan.program, cases, limits, deadline)
        return self.sandbox.run_linked(plan.program, plan.tester, cases, limits, deadline)

    def _apply_checker(
        self,
        suite: Suite,
        outcomes: Sequence[CaseOutcome],
        verdicts: list[Verdict],
        limits: Limits,
        end_by: float | None,
    ) -> None:
        ran = [i for i, o in enumerate(outcomes) if o.status.value == "ok"]
        judged = [
            Judged(suite.cases[i].stdin, suite.cases[i].expected, outcomes[i].stdout) for i in ran
        ]
        checker_limits = Limits(wall_s=max(limits.wall_s, 5.0), cpu_s=max(limits.cpu_s, 5.0))
        checker = Checker(self.sandbox, suite.checker or "", suite.checker_language, checker_limits)
        checked = checker.check(judged, end_by)
        for index, result in zip(ran, checked, strict=True):
            verdict, score = verdicts[index], result.score
            verdict.score = score
            verdict.status = "passed" if score >= 1.0 else "wrong_answer"
            verdict.diff = None if score >= 1.0 else f"checker score {score:g}"
            if result.flag is not None:
                verdict.diff = f"the checker failed on this output: {result.failure}"
                verdict.flags = (*verdict.flags, result.flag)


#: With a special judge the cases end within this share of the item timeout, and the
#: checker's runs within `CHECKER_SHARE`: output on which a checker never ends fails its
#: cases instead of timing the item out.
CHECKED_RUNS_SHARE = 0.7
CHECKER_SHARE = 0.9


def _latest_start(limits: Limits, share: float) -> float | None:
    """The latest a case may start and still end within ``share`` of the executor's
    item timeout; None outside an executor (a library call paces nothing) or when not
    even a case started now would end in time.

    A case that could not end by then is not started: it scores 0, flagged
    ``time_budget`` (the rest of the item timeout is margin for a checker and the
    worker). Without it a program that loops, in a suite of more cases than fit in the
    item timeout, made the item ``timeout`` (no reward, retryable) instead of failing its
    cases. When not even one case fits (the client's limits contradict each other),
    nothing is paced and the item timeout answers: a program is never scored 0 unrun."""
    limit = item_timeout_s.get()
    if limit is None or limits.wall_s >= share * limit:
        return None
    return time.monotonic() + share * limit - limits.wall_s


def _failed(
    suite: Suite, outcomes: list[tuple[CaseOutcome, CaseOutcome | None]], start: int, rules: Rules
) -> bool:
    """True when a case in ``outcomes[start:]`` failed (checker suites: the run failed)."""
    for index in range(start, len(outcomes)):
        mine, peer = outcomes[index]
        if suite.checker is not None:
            if mine.status.value != "ok":
                return True
        elif judge(suite.cases[index], mine, suite, rules, peer).score < 1.0:
            return True
    return False


def _scores(verdicts: Sequence[Verdict], suite: Suite, details: dict[str, Any]) -> list[float]:
    """The cases' scores the reward is made of: not those of cases whose test passed
    without calling the program (``{"tests": ["assert f(1) == 2", "import math"]}`` gave
    an empty answer 0.5), which check nothing; they are counted in ``details``. With
    subtasks, which name cases by position, every case's."""
    if suite.subtasks:
        return [v.score for v in verdicts]
    scores = [v.score for v in verdicts if v.exercised]
    if len(scores) < len(verdicts):
        details["unexercised"] = len(verdicts) - len(scores)
    return scores


def _require_exercised(verdicts: Sequence[Verdict]) -> None:
    """Raise `ItemInvalid` when every case passed without its test calling the program
    (``{"tests": ["assert True"]}``, a test of imports): the reference checks nothing,
    and any answer, none included, would score 1."""
    if verdicts and not any(v.exercised for v in verdicts):
        said = "no test calls the program: any answer would pass"
        raise ItemInvalid("invalid_reference", f"reference.test: {said}")


def _encodable(code: str) -> bool:
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_FailedBuild = tuple[CompileStatus, str, str]
"""A build that failed: its status, the compiler's text (its end) and what it means."""


def _failed_build(report: RunReport, plan: Plan) -> _FailedBuild | None:
    """The program's failed build, else the tests' (a linked run's peer, built with the
    program's functions), else None. A tests' build with nothing of the program's in it
    (``tester_alone``) is never the program's 0: its error is the reference's
    (`ItemInvalid`), its running out of time the item's (`ItemTimeout`); nor is one that
    the program's side built for, whose parser stopped in the test's own lines."""
    peer = report.peer_compile
    if plan.tester_alone and peer is not None and peer.status is CompileStatus.ERROR:
        text = peer.output[-COMPILE_OUTPUT_CHARS:]
        raise ItemInvalid("invalid_reference", f"reference: the test does not compile: {text}")
    sides = [(report.compile, "the program does not compile")]
    if not plan.tester_alone:
        sides.append((peer, "the test does not compile with the program's functions"))
    for compiled, meaning in sides:
        if compiled is not None and compiled.status in (CompileStatus.ERROR, CompileStatus.TIMEOUT):
            if compiled is peer:
                _require_test_parses(peer, plan)
            else:
                _require_setup_parses(report, plan)
            text = compiled.output[-COMPILE_OUTPUT_CHARS:] or f"compile {compiled.status.value}"
            return compiled.status, text, meaning
    if peer is not None and peer.status is CompileStatus.TIMEOUT:
        raise ItemTimeout("the tests' build ran out of time")
    return None


def _require_setup_parses(report: RunReport, plan: Plan) -> None:
    """Raise `ItemInvalid` when the program's build failed and a side's build stopped at
    errors in the reference's setup, where nothing of the program's that may not parse
    comes before it (`diagnostics`)."""
    place = plan.setup_place
    compiled = report.compile if place is None or place.side == "program" else report.peer_compile
    if place is None or compiled is None or compiled.status is not CompileStatus.ERROR:
        return
    found = setup_parse_error(plan.program.language, compiled.output, place, plan.program.source)
    if found is not None:
        line = found.line - place.lines.start + 1
        said = f"does not parse (its line {line}: {found.message})"
        raise ItemInvalid("invalid_reference", f"reference.setup: {said}")


def _require_test_parses(peer: CompileOutcome, plan: Plan) -> None:
    """Raise `ItemInvalid` when the tests' failed build (the program's built) stopped at
    errors that are the test's own (`diagnostics`): no program makes that test build."""
    if plan.tester is None or plan.test_lines is None or peer.status is not CompileStatus.ERROR:
        return
    found = reference_parse_error(plan.tester.language, peer.output, plan.test_lines)
    if found is not None:
        lines = plan.test_lines
        if found.anywhere:
            said = f"does not build ({found.message})"
        elif found.line in lines:
            said = f"does not parse (its line {found.line - lines.start + 1}: {found.message})"
        else:
            said = f"does not parse (its end: {found.message})"
        raise ItemInvalid("invalid_reference", f"reference.test: {said}")
