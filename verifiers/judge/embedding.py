"""Embedding mode: the cosine similarity of the response's and the reference's embeddings.

The response and every reference go to the profile's ``/embeddings`` in one call (the
profile's ``model`` is the embedding model); the reward is the best cosine similarity
over the references, in [-1, 1] as OpenAI's ``cosine`` text-similarity grader returns it.
A zero vector has no direction: that is the endpoint's failure (``error``), never 0.
"""

from __future__ import annotations

import math
from typing import Any

from referee.verifiers.base import ItemError
from referee.verifiers.judge.dialogue import Session
from referee.verifiers.judge.params import JudgedItem
from referee.verifiers.rules.references import text_references
from referee.verifiers.types import Result, Status


async def grade_embedding(session: Session, job: JudgedItem) -> Result:
    """Reward: the best cosine similarity between the response and a reference."""
    references = text_references(job.item.reference)
    texts = [job.item.response_text(), *references]
    job.allowance.charge([{"role": "user", "content": text} for text in texts])
    client = session.client(job.params.profile)
    embeddings = await client.embed(texts, job.deadline)
    response, *others = embeddings.vectors
    scores = [cosine(response, other) for other in others]
    best = max(scores)
    details: dict[str, Any] = {
        "mode": "embedding",
        "profile": job.params.profile,
        "model": client.profile.model,
        "scores": scores,
        "usage": {"prompt_tokens": embeddings.prompt_tokens, "completion_tokens": 0},
    }
    return Result(status=Status.OK, reward=best, components={"cosine": best}, details=details)


def cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """The cosine of the angle between ``a`` and ``b``; `ItemError` when either has no
    direction or their sizes differ (a broken endpoint, not a dissimilar text)."""
    if len(a) != len(b) or not a:
        raise ItemError("judge_bad_response", f"embeddings of sizes {len(a)} and {len(b)}")
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norm == 0 or not math.isfinite(norm):
        raise ItemError("judge_bad_response", "an embedding is a zero or non-finite vector")
    value = math.fsum(x * y for x, y in zip(a, b, strict=True)) / norm
    return min(1.0, max(-1.0, value))  # rounding can leave |cos| a hair above 1
