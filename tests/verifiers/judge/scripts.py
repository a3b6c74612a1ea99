"""Scripted judges for the tests: replies computed from the rendered prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tests.verifiers.judge.endpoint import Reply, block, completion, user_text


def criterion_ids(request: dict[str, Any]) -> list[str]:
    """The criterion ids listed in an explicit-mode prompt, in order."""
    return re.findall(r"^- id: (\S+) \(", user_text(request), flags=re.MULTILINE)


def rubric_judge(scores: dict[str, int], **reply: Any) -> Callable[[dict[str, Any]], Reply]:
    """Answers explicit prompts with ``scores`` for the criteria each prompt lists."""

    def answer(request: dict[str, Any]) -> Reply:
        entries = [
            {"id": c, "reason": f"{c} judged", "score": scores[c]} for c in criterion_ids(request)
        ]
        return completion(json.dumps({"criteria": entries}), **reply)

    return answer


def quality(text: str) -> int:
    """Test responses carry their quality as ``q=<n>``."""
    match = re.search(r"q=(\d+)", text)
    return int(match.group(1)) if match else 0


def fair_pairwise_judge(request: dict[str, Any]) -> Reply:
    """Prefers the response with the higher ``q=<n>``; ties are "tie"."""
    text = user_text(request)
    a, b = quality(block(text, "RESPONSE A")), quality(block(text, "RESPONSE B"))
    winner = "A" if a > b else "B" if b > a else "tie"
    return completion(json.dumps({"reason": "compared", "winner": winner}))


def position_biased_judge(request: dict[str, Any]) -> Reply:
    """Always says A, whatever it is shown."""
    return completion('{"reason": "first is best", "winner": "A"}')
