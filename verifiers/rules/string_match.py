"""The ``string`` verifier: exact, substring, prefix and regex checks on normalised text."""

from __future__ import annotations

from typing import Literal

import regex
from pydantic import Field

from referee.verifiers.base import ItemInvalid, ItemTimeout, ItemVerifier, Outcome, Params
from referee.verifiers.rules.normalization import Normalization
from referee.verifiers.rules.references import text_references
from referee.verifiers.types import Item

Op = Literal["eq", "ne", "contains", "icontains", "startswith", "endswith", "regex"]


class StringParams(Params):
    op: Op = "eq"
    """``eq``/``ne`` compare whole strings; ``icontains`` is ``contains`` with case folding;
    ``regex`` searches the response with the reference as pattern."""
    normalize: Normalization = Field(default_factory=Normalization)
    regex_timeout_s: float = Field(default=0.5, gt=0, le=10)
    """Budget for one regex search; a pattern that backtracks past it is ``timeout``."""


class StringVerifier(ItemVerifier[StringParams]):
    """Reward 1.0 when the check holds, else 0.0.

    ``reference`` is a string, or a list of strings meaning "any of" (for ``ne``: "none
    of"). Both sides are normalised the same way, except that a ``regex`` pattern is used
    as given. Regexes run with a time budget, so a catastrophic pattern cannot hang a worker.
    """

    name = "string"
    Params = StringParams
    description = "Exact, substring, prefix/suffix or regex match against the reference."

    def check(self, item: Item, params: StringParams) -> Outcome:
        references = text_references(item.reference)
        norm = params.normalize
        if params.op == "icontains":
            norm = norm.model_copy(update={"casefold": True})
        response = norm.apply(item.response_text())
        if params.op == "regex":
            hits = [_search(ref, response, params.regex_timeout_s) for ref in references]
        else:
            hits = [_compare(params.op, response, norm.apply(ref)) for ref in references]
        passed = all(hits) if params.op == "ne" else any(hits)
        matched = references[hits.index(True)] if True in hits else None
        return Outcome(reward=float(passed), details={"op": params.op, "matched": matched})


def _compare(op: str, response: str, reference: str) -> bool:
    if op == "eq":
        return response == reference
    if op == "ne":
        return response != reference
    if op in ("contains", "icontains"):
        return reference in response
    if op == "startswith":
        return response.startswith(reference)
    return response.endswith(reference)


def _search(pattern: str, response: str, timeout_s: float) -> bool:
    try:
        return regex.search(pattern, response, timeout=timeout_s) is not None
    except regex.error as exc:
        raise ItemInvalid("invalid_reference", f"reference: not a valid regex: {exc}") from None
    except TimeoutError:
        raise ItemTimeout(f"regex search exceeded {timeout_s} s") from None
