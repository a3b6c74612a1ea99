"""The ``string`` verifier: exact, substring, prefix and regex checks on normalised text."""

from __future__ import annotations

from typing import Literal

import regex
from pydantic import Field

from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params
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
    """Budget for one regex search. A search that backtracks past it reads as no match,
    flagged ``pattern_timeout``: catastrophic backtracking happens on texts that almost
    match, and a response must not buy a ``timeout`` (a status trainers mask) with one."""


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
        slow = False
        if params.op == "regex":
            found = [_search(ref, response, params.regex_timeout_s) for ref in references]
            hits, slow = [hit is True for hit in found], None in found
        else:
            hits = [_compare(params.op, response, norm.apply(ref)) for ref in references]
        passed = all(hits) if params.op == "ne" else any(hits)
        matched = references[hits.index(True)] if True in hits else None
        details: dict[str, object] = {"op": params.op, "matched": matched}
        if slow and not passed:
            reason = f"a search ran past {params.regex_timeout_s:g} s: read as no match"
            details.update(flags=["pattern_timeout"], reason=reason)
        return Outcome(reward=float(passed), details=details)


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


def _search(pattern: str, response: str, timeout_s: float) -> bool | None:
    """Whether ``pattern`` is found in ``response``; None when the search ran out of time."""
    try:
        return regex.search(pattern, response, timeout=timeout_s) is not None
    except regex.error as exc:
        raise ItemInvalid("invalid_reference", f"reference: not a valid regex: {exc}") from None
    except TimeoutError:
        return None
