"""The registry hides internal verifiers (what the service itself submits) from clients:
from listings, from lookups and from verifiers that nest others."""

from __future__ import annotations

import pytest

from referee.verifiers import Item, Status, score_items
from referee.verifiers.builtin import default_registry
from referee.verifiers.code.raw_run import RAW_RUN, RawRunVerifier
from referee.verifiers.registry import Registry, UnknownVerifier, ref_of
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


@pytest.mark.parametrize(
    ("ref", "found"),
    [
        ("string", "string"),
        ("string@1", "string"),
        ("reasoning_gym@1", "reasoning_gym"),
        ("string@2", None),
        ("string@1+anything", None),  # a build this verifier does not report
        ("string@x", None),
        ("string@\u00b2", None),  # a digit int() does not read: refused, not a crash
        ("string@", "string"),
    ],
)
def test_versions_resolve_exactly(ref: str, found: str | None) -> None:
    registry = default_registry()
    if found is None:
        with pytest.raises(UnknownVerifier, match="available: string@1"):
            registry.get(ref)
    else:
        assert registry.get(ref).name == found


def test_a_results_full_verifier_ref_resolves_to_that_build_only() -> None:
    """reasoning_gym reports its datasets' package version as build metadata; a client
    echoing a result's ``verifier`` back gets the same build, or a clear refusal."""
    registry = default_registry()
    verifier = registry.get("reasoning_gym")
    [result] = score_items(
        [Item(verifier="reasoning_gym", response="x", reference={"dataset": "no_such"})],
        registry,
    )
    assert result.verifier == ref_of(verifier) == "reasoning_gym@1+reasoning-gym.0.1.25"
    assert registry.get(result.verifier) is verifier
    with pytest.raises(UnknownVerifier, match=r"available: reasoning_gym@1\+reasoning-gym"):
        registry.get("reasoning_gym@1+reasoning-gym.0.1.20")
