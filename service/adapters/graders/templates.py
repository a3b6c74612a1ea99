"""``{{sample.x}}`` / ``{{item.x}}`` templates, rendered within a request's budget.

A variable is a path of keys and list indices: ``{{item.answers[0]}}``,
``{{sample.output_json.steps[2].result}}``. Anything that looks like a variable but is not
one of these is an error (`TemplateError`), never text compared literally."""

from __future__ import annotations

import json
import re
from typing import Any

_TEMPLATE = re.compile(r"\{\{\s*(sample|item)((?:\.[A-Za-z0-9_]+|\[\d+\])+)\s*\}\}")
_STEP = re.compile(r"\.([A-Za-z0-9_]+)|\[(\d+)\]")
_LOOKS_LIKE = re.compile(r"\{\{\s*(?:sample|item)\b[^{}]*\}\}")


class TemplateError(ValueError):
    """A ``{{...}}`` variable the request does not provide."""


class GraderTooLarge(ValueError):
    """The grader would expand past the request's budget (leaves or rendered text)."""


class Expansion:
    """What one request's grader may expand to: ``leaves`` leaf graders in all, and
    ``chars`` characters of rendered templates in all (a template repeating a large
    ``{{item...}}`` value must not turn a small body into gigabytes)."""

    def __init__(self, leaves: int, chars: int) -> None:
        self.leaves = leaves
        self.chars = chars

    def take_leaf(self) -> None:
        self.leaves -= 1
        if self.leaves < 0:
            raise GraderTooLarge("the grader has more leaf graders than one request may score")

    def take_chars(self, count: int) -> None:
        self.chars -= count
        if self.chars < 0:
            raise GraderTooLarge("the grader's templates expand to more text than allowed")


def render(template: str, sample: dict[str, Any], item: dict[str, Any], budget: Expansion) -> str:
    """Fill ``{{sample.x}}`` / ``{{item.x}}``; strings as they are, other values as JSON.
    Every character rendered is taken from ``budget`` as it is produced."""
    budget.take_chars(len(template))

    def value(match: re.Match[str]) -> str:
        found: Any = {"sample": sample, "item": item}[match.group(1)]
        for key, index in _STEP.findall(match.group(2)):
            if key and isinstance(found, dict) and key in found:
                found = found[key]
            elif index and isinstance(found, list) and int(index) < len(found):
                found = found[int(index)]
            else:
                raise TemplateError(
                    f"{{{{{match.group(1)}{match.group(2)}}}}} is not in the request"
                )
        text = found if isinstance(found, str) else json.dumps(found)
        budget.take_chars(len(text))
        return text

    leftover = _LOOKS_LIKE.search(_TEMPLATE.sub("", template))
    if leftover is not None:
        raise TemplateError(f"{leftover.group(0)} is not a variable referee can fill")
    return _TEMPLATE.sub(value, template)
