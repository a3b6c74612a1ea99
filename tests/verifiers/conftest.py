from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Item, Registry, Result, score_items
from referee.verifiers.builtin import default_registry


@pytest.fixture(scope="session")
def registry() -> Registry:
    return default_registry()


@pytest.fixture(scope="session")
def score(registry: Registry):  # type: ignore[no-untyped-def]
    """Score one item built from keyword arguments; returns its Result."""

    def run(verifier: str, response: Any, reference: Any = None, /, **params: Any) -> Result:
        item = Item(verifier=verifier, response=response, reference=reference, params=params)
        return score_items([item], registry)[0]

    return run
