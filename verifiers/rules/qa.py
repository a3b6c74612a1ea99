"""The ``qa`` verifier: short-answer question answering, scored as SQuAD, Natural Questions,
TriviaQA, HotpotQA and Search-R1 score it.

The answer is read from the response (``extract``): the last ``<answer>...</answer>``
block (Search-R1's format, the default), the last ``\\boxed{...}``, or the whole response.
Both sides are normalised as SQuAD's evaluation script does (lower case, ASCII
punctuation removed, the articles a/an/the removed, whitespace collapsed), then compared
with each gold answer: ``em`` is 1 when they are equal, ``f1`` the token-overlap F1 (the
best over the golds).

``reference``: a string, a list of strings (any of them), or Search-R1's ``{"target":
[...]}`` (also as JSON text, as verl stores it). A gold answer that normalises to nothing
("The", "!") could be matched by an empty answer, so it is left out; a reference with no
usable gold is ``invalid``. An empty answer never scores.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Literal

from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params, object_reference
from referee.verifiers.math.extraction import boxed_contents
from referee.verifiers.math.normalization import unwrap_text
from referee.verifiers.rules.references import text_references
from referee.verifiers.tags import blocks
from referee.verifiers.types import Item

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
SHOWN = 200
"""Characters of the answer kept in ``details`` (with ``extract: none`` it is the whole
response, which a result must not carry a second copy of)."""


class QAParams(Params):
    metric: Literal["em", "f1"] = "em"
    """``em``: 1 when the normalised answer equals a normalised gold; ``f1``: SQuAD's
    token F1, the best over the golds (listing extra words lowers its precision)."""
    extract: Literal["answer_tag", "boxed", "none"] = "answer_tag"
    """Where the answer is: the last ``<answer>`` block, the last ``\\boxed{}``, or the
    whole response."""


class QAVerifier(ItemVerifier[QAParams]):
    """See the module docstring."""

    name = "qa"
    Params = QAParams
    description = (
        "Short-answer QA: SQuAD-normalised exact match or token F1 against any gold answer, "
        "read from <answer> tags, \\boxed{} or the whole response."
    )

    def check(self, item: Item, params: QAParams) -> Outcome:
        golds = usable_golds(item.reference)
        answer = extract_answer(item.response_text(), params.extract)
        if answer is None:
            return Outcome(0.0, details={"reason": f"no answer ({params.extract})"})
        normalized = normalize_answer(answer)
        if not normalized:
            return Outcome(0.0, details={"answer": answer[:SHOWN], "reason": "empty answer"})
        scores = [_score(params.metric, normalized, gold) for gold in golds.values()]
        best = max(range(len(scores)), key=scores.__getitem__)
        matched = list(golds)[best] if scores[best] > 0 else None
        return Outcome(scores[best], details={"answer": answer[:SHOWN], "matched": matched})


def usable_golds(reference: object) -> dict[str, str]:
    """Gold answer -> its normalised form, without golds that normalise to nothing;
    `ItemInvalid` when none is left."""
    raw = object_reference(reference)
    if isinstance(raw, dict):
        if "target" not in raw:
            raise ItemInvalid("invalid_reference", "reference: an object needs 'target'")
        raw = raw["target"]
    golds = {gold: normalize_answer(gold) for gold in text_references(raw)}
    usable = {gold: norm for gold, norm in golds.items() if norm}
    if not usable:
        message = "reference: every gold answer normalises to nothing (articles, punctuation)"
        raise ItemInvalid("invalid_reference", message)
    return usable


def extract_answer(text: str, where: Literal["answer_tag", "boxed", "none"]) -> str | None:
    """The answer in ``text`` (see `QAParams.extract`), or None when there is none."""
    if where == "answer_tag":
        found = blocks(text, "<answer>", "</answer>")
        return found[-1] if found else None
    if where == "boxed":
        boxes, truncated = boxed_contents(text)
        if truncated or not boxes:  # an unclosed last box holds no answer
            return None
        return unwrap_text(boxes[-1]).strip()  # \boxed{\text{Paris}}
    return text


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no ASCII punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _score(metric: str, answer: str, gold: str) -> float:
    if metric == "em":
        return float(answer == gold)
    return token_f1(answer.split(), gold.split())


def token_f1(answer: list[str], gold: list[str]) -> float:
    """SQuAD's token-overlap F1 of two non-empty token lists."""
    same = sum((Counter(answer) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(answer), same / len(gold)
    return 2 * precision * recall / (precision + recall)
