"""Programs on stdin run under the name they give their entry point: a Scala answer's
`object Solution extends App` (or an object with a `main`) once found no class `Main`
to run and scored 0 (Java's public class: tests/verifiers/code/test_java_source.py);
a Go answer without `package main` did not build; a Kotlin answer with its `main` in an
object found no main to start."""

from __future__ import annotations

import pytest

from referee.sandbox.languages import find
from referee.verifiers import Item, Registry, Status, score_items
from referee.verifiers.code.kotlin_source import with_top_level_main

BODY = (
    '{ val Array(a, b) = scala.io.StdIn.readLine().trim.split(" ").map(_.toInt); println(a + b) }'
)
SCALA = {
    "object Main extends App": "object Main extends App " + BODY,
    "object Solution extends App": "object Solution extends App " + BODY,
    "an object with a main after a helper": "object Helper { val x = 1 }\n"
    "object Solution { def main(args: Array[String]): Unit = " + BODY + " }",
}


@pytest.mark.parametrize(
    ("source", "main"),
    [
        (SCALA["object Solution extends App"], "Solution.scala"),
        (SCALA["an object with a main after a helper"], "Solution.scala"),
        ("object Helper { val x = 1 }", "Main.scala"),
        (
            "// object Fake { def main(a: Array[String]) = () }\nobject Main extends App",
            "Main.scala",
        ),
    ],
)
def test_the_scala_object_that_runs_names_the_file(source: str, main: str) -> None:
    language = find("scala")
    assert language is not None and language.main_for(source) == main


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCALA))
def test_right_scala_programs_run(registry: Registry, name: str) -> None:
    ref = {"inputs": ["2 3\n"], "outputs": ["5\n"]}
    code = SCALA[name]
    wrong_code = code.replace("println(a + b)", "println(a - b)")
    params = {"language": "scala"}
    passed, failed = score_items(
        [
            Item(verifier="code", response=f"```scala\n{c}\n```", reference=ref, params=params)
            for c in (code, wrong_code)
        ],
        registry,
    )
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details


GO = 'import "fmt"\nfunc main() { var a, b int; fmt.Scan(&a, &b); fmt.Println(a + b) }'


@pytest.mark.slow
@pytest.mark.parametrize("clause", ["", "package solution\n"])
def test_a_go_program_without_package_main_runs(registry: Registry, clause: str) -> None:
    """It did not build (expected 'package'; or a package that is no command)."""
    ref = {"inputs": ["2 3\n"], "outputs": ["5\n"]}
    params = {"language": "go"}
    passed, failed = score_items(
        [
            Item(verifier="code", response=f"```go\n{clause}{c}\n```", reference=ref, params=params)
            for c in (GO, GO.replace("a + b", "a - b"))
        ],
        registry,
    )
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details


@pytest.mark.parametrize(
    ("code", "added"),
    [
        (
            "object Solution {\n  @JvmStatic fun main(args: Array<String>) {}\n}",
            "Solution.main(args)",
        ),
        ("class S {\n  companion object {\n    @JvmStatic fun main() {}\n  }\n}", "S.main()"),
        ("fun main() {}\nobject O { fun main(a: Array<String>) {} }", None),  # a top-level one
        ('val s = "fun main()"', None),
    ],
)
def test_kotlin_top_level_main(code: str, added: str | None) -> None:
    result = with_top_level_main(code)
    if added is None:
        assert result == code
    else:
        assert result == f"{code}\n\nfun main(args: Array<String>) = {added}\n"


@pytest.mark.slow
def test_a_kotlin_answer_with_its_main_in_an_object_runs(registry: Registry) -> None:
    code = (
        "object Solution {\n  @JvmStatic fun main(args: Array<String>) {\n"
        '    val (a, b) = readLine()!!.trim().split(" ").map { it.toInt() }\n'
        "    println(a + b)\n  }\n}"
    )
    ref = {"inputs": ["2 3\n"], "outputs": ["5\n"]}
    passed, failed = score_items(
        [
            Item(verifier="code", response=f"```kotlin\n{c}\n```", reference=ref)
            for c in (code, code.replace("a + b", "a - b"))
        ],
        registry,
    )
    assert (passed.status, passed.reward) == (Status.OK, 1.0), passed.details
    assert (failed.status, failed.reward) == (Status.OK, 0.0), failed.details
