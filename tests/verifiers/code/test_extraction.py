from __future__ import annotations

import pytest

from referee.verifiers.code.extraction import extract_code

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
]


@pytest.mark.parametrize(("response", "language", "code", "source"), CASES)
def test_extract(response: str, language: str | None, code: str, source: str) -> None:
    found = extract_code(response, language)
    assert found.code == code
    assert found.source == source
