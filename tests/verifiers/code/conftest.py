from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from referee.verifiers import Item, Registry, Result, score_items

ScoreMany = Callable[[Sequence[Item]], list[Result]]


@pytest.fixture(scope="session")
def score_many(registry: Registry) -> ScoreMany:
    """Score items in this process, two at a time (the sandbox is thread-safe): the
    in-process equivalent of two sandbox-pool workers."""

    def run(items: Sequence[Item]) -> list[Result]:
        with ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(lambda item: score_items([item], registry)[0], items))

    return run


def code_item(response: str, reference: Any, **params: Any) -> Item:
    return Item(verifier="code", response=response, reference=reference, params=params)


def fenced(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n\n```{lang}\n{code}\n```\n"
