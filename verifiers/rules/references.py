"""Text references as the rule verifiers accept them: one string, or any of several."""

from __future__ import annotations

from referee.verifiers.base import ItemInvalid


def text_references(reference: object) -> list[str]:
    """``reference`` as a non-empty list of strings; `ItemInvalid` naming it otherwise."""
    if isinstance(reference, str):
        return [reference]
    if isinstance(reference, list) and reference and all(isinstance(r, str) for r in reference):
        return reference
    raise ItemInvalid(
        "invalid_reference", "reference: expected a string or a non-empty list of strings"
    )
