"""OpenAI-style graders on referee's verifiers: parse, template, plan, combine.

A grader JSON (``string_check``, ``text_similarity``, ``python``, ``score_model``,
``multi``) becomes one referee item per leaf grader; the leaves are scored together
through the dispatcher and a ``multi`` grader's ``calculate_output`` is evaluated by the
safe formula parser. Templates ``{{sample.output_text}}``, ``{{sample.output_json.x}}``
and ``{{item.a.b}}`` are filled from the request. A failure sets the matching flag in
``metadata.errors`` and the reward is null: a broken grader is never a reward of 0.

A ``score_model`` grader is a ``judge`` item in ``messages`` mode: its rendered ``input``
is sent as it is to the judge profile that ``model`` selects (see
`verifiers.judge.profiles.profile_for_model`), and its reward is the number the judge
answers, within ``range`` and not normalised, as OpenAI returns it.
"""

from __future__ import annotations

from referee.service.adapters.graders.schemas import (
    GraderRequest,
    GraderRunRequest,
    GraderRunResponse,
)
from referee.service.adapters.graders.scoring import leaf_items, report, template_failure
from referee.service.adapters.graders.templates import (
    Expansion,
    GraderTooLarge,
    TemplateError,
    render,
)

__all__ = [
    "Expansion",
    "GraderRequest",
    "GraderRunRequest",
    "GraderRunResponse",
    "GraderTooLarge",
    "TemplateError",
    "leaf_items",
    "render",
    "report",
    "template_failure",
]
