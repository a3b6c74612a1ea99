"""The registry hides internal verifiers (what the service itself submits) from clients:
from listings, from lookups and from verifiers that nest others."""

from __future__ import annotations

import pytest

from referee.verifiers import Item, Status, score_items
from referee.verifiers.builtin import default_registry
from referee.verifiers.code.raw_run import RAW_RUN, RawRunVerifier
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.rules.composite import CompositeVerifier


def test_internal_verifiers_are_unlisted_and_unknown_to_clients() -> None:
    registry = default_registry()
    assert RAW_RUN not in {v.name for v in registry.all()}
    with pytest.raises(UnknownVerifier):
        registry.get(RAW_RUN)
    assert isinstance(registry.get(RAW_RUN, internal=True), RawRunVerifier)


def test_a_composite_cannot_reach_an_internal_verifier() -> None:
    registry = Registry()
    registry.register(RawRunVerifier())
    registry.register(CompositeVerifier())
    spec = {"program": {"language": "bash", "source": "echo hi"}, "cases": [{}]}
    params = {"verifiers": {"a": {"verifier": RAW_RUN, "reference": spec}}}
    [result] = score_items([Item(verifier="composite", response="", params=params)], registry)
    assert result.status is Status.INVALID
    assert result.error is not None and RAW_RUN in result.error.message
