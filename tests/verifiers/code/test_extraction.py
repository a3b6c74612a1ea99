from __future__ import annotations

import pytest

from referee.sandbox import languages
from referee.verifiers.code.extraction import extract_any, extract_code, tags_for

CASES: list[tuple[str, str | None, str, str]] = [
    # (response, language, expected code, expected source)
    ("```python\nprint(1)\n```", "python3", "print(1)\n", "fenced"),
    ("```py\na\n```\ntext\n```python\nb\n```", "python3", "b\n", "fenced"),  # last one
    ("```python\na\n```\n```cpp\nb\n```", "python3", "a\n", "fenced"),  # language wins
    ("```python\na\n```\n```cpp\nb\n```", None, "b\n", "fenced"),  # any language
    ("```\nuntagged\n```", "cpp", "untagged\n", "fenced"),
    ("```cpp\nx\n```\n```\ny\n```", "cpp", "x\n", "fenced"),  # tagged beats untagged
    ("```java\nx\n```", "python3", "", "none"),  # only another language
    ("print(2)", "python3", "print(2)", "whole_response"),
    ("   \n", "python3", "", "none"),
    ("```python\n\n```", "python3", "", "none"),
    ("```python\nprint(3)\n", "python3", "print(3)\n", "fenced"),  # unclosed (truncated)
    ("~~~python\nz\n~~~", "python3", "z\n", "fenced"),
    ("````python\n```\ninner\n```\n````", "python3", "```\ninner\n```\n", "fenced"),
    ("```C++\nint main(){}\n```", "cpp", "int main(){}\n", "fenced"),
    ("```python title=x\nq\n```", "python3", "q\n", "fenced"),
    # a fence indented in a list item: its indentation comes off the body, no more
    ("1. Code:\n   ```python\n   def f():\n       return 1\n   ```", "python3",
     "def f():\n    return 1\n", "fenced"),
    ("  ```python\n x = 1\n    y = 2\n  ```", "python3", "x = 1\n  y = 2\n", "fenced"),
]  # fmt: skip


@pytest.mark.parametrize(("response", "language", "code", "source"), CASES)
def test_extract(response: str, language: str | None, code: str, source: str) -> None:
    found = extract_code(response, language)
    assert found.code == code
    assert found.source == source


DETECTED: list[tuple[str, str, str | None, str]] = [
    # (response, expected code, detected language, expected source)
    ("```cpp\nint main(){}\n```", "int main(){}\n", "cpp", "fenced"),
    ("```golang\npackage main\n```", "package main\n", "go", "fenced"),
    ("```cpp\na\n```\n```text\noutput\n```", "a\n", "cpp", "fenced"),  # never the output
    ("```rust\na\n```\n```py3\nb\n```", "b\n", "python3", "fenced"),  # the last one
    ("```\nbare\n```", "bare\n", None, "fenced"),  # untagged: the caller's default
    ("```text\nonly prose\n```", "", None, "none"),
    ("print(1)", "print(1)", None, "whole_response"),
]


@pytest.mark.parametrize(("response", "code", "language", "source"), DETECTED)
def test_extract_any_detects_the_fenced_language(
    response: str, code: str, language: str | None, source: str
) -> None:
    found, detected = extract_any(response)
    assert (found.code, detected, found.source) == (code, language, source)


@pytest.mark.parametrize(
    ("language", "tag"),
    [("go", "golang"), ("cpp", "cxx"), ("bash", "shell"), ("javascript", "nodejs")],
)
def test_one_alias_table_for_params_and_fences(language: str, tag: str) -> None:
    """A fence tag the extractor reads is a name the ``language`` param accepts."""
    assert tag in tags_for(language)
    assert languages.find(tag) is not None and languages.find(tag).name == language  # type: ignore[union-attr]


# (test-runner mode, the fence its programs come in): once "no code found", every answer 0
RUNNER_FENCES = [
    ("pytest", "python"),
    ("go_test", "go"),
    ("junit", "java"),
    ("gtest", "cpp"),
    ("d_unittest", "d"),
    ("jest", "js"),
    ("react", "javascript"),
    ("kotlin_script", "kotlin"),
]


@pytest.mark.parametrize(("mode", "tag"), RUNNER_FENCES)
def test_a_runner_mode_reads_its_languages_fence(mode: str, tag: str) -> None:
    response = f"Here are the tests:\n```{tag}\nbody\n```\n```text\nnot it\n```"
    assert extract_code(response, mode).code == "body\n"
    assert languages.find(tag) is not None and languages.find(tag).name != mode  # type: ignore[union-attr]


def test_a_languages_own_fences_do_not_widen_to_its_runner_modes() -> None:
    assert "pytest" not in tags_for("python3") and "go_test" not in tags_for("go")
    assert extract_code("```pytest\nbody\n```", "python3").source == "none"


SOLUTION = "```python\ndef add(a, b):\n    return a + b\n```\n"
USAGE = "Usage:\n```python\nprint(add(1, 2))\n```\n"
REVISED = "Better:\n```python\ndef add(a, b):\n    return b + a\n```\n"

# (response, what the tests call, expected code): a usage example after the answer
WANTED: list[tuple[str, frozenset[str], str]] = [
    (SOLUTION + USAGE, frozenset({"add"}), "def add(a, b):\n    return a + b\n"),
    (SOLUTION + REVISED + USAGE, frozenset({"add"}), "def add(a, b):\n    return b + a\n"),
    (SOLUTION + REVISED, frozenset({"add"}), "def add(a, b):\n    return b + a\n"),  # the last
    (SOLUTION + USAGE, frozenset({"sub"}), "print(add(1, 2))\n"),  # none defines it: the last
    (SOLUTION + USAGE, frozenset(), "print(add(1, 2))\n"),  # stdin/stdout tests: the last
    (SOLUTION + "```python\nadd = lambda a, b: a + b\n```\n" + USAGE, frozenset({"add"}),
     "add = lambda a, b: a + b\n"),
    (SOLUTION + "```python\nclass Solution:\n    pass\n```\n" + USAGE, frozenset({"Solution"}),
     "class Solution:\n    pass\n"),
    (SOLUTION + USAGE * 8, frozenset({"add"}), "print(add(1, 2))\n"),  # too far back
    # a last block that does not parse is the answer, broken: never an earlier draft
    (SOLUTION + "```python\ndef add(a, b)\n    return a + b\n```\n", frozenset({"add"}),
     "def add(a, b)\n    return a + b\n"),
]  # fmt: skip


@pytest.mark.parametrize(("response", "wanted", "code"), WANTED)
def test_the_block_defining_what_the_tests_call(
    response: str, wanted: frozenset[str], code: str
) -> None:
    assert extract_code(response, "python3", wanted).code == code


def test_only_python_blocks_are_read_for_what_they_define() -> None:
    js = "```javascript\nfunction add(a, b) { return a + b; }\n```\n```javascript\nadd(1, 2);\n```"
    assert extract_code(js, "javascript", frozenset({"add"})).code == "add(1, 2);\n"
