"""Versioned prompt templates and how they are rendered into chat messages.

Templates are files in ``templates/`` named ``<name>.v<N>.txt``; a changed prompt is a new
file with a new version, never an edit of a shipped one, so the ``template`` recorded in a
result's details (``rubric_explicit.v1`` plus the file's digest) names the exact prompt
that produced the reward. A file holds ``### system`` and ``### user`` sections with
``$placeholders`` (`string.Template`, so JSON braces in the text need no escaping and
substituted values are never re-expanded).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from string import Template

from verifiers.judge.rubric import Criterion

EXPLICIT = "rubric_explicit.v1"
IMPLICIT = "rubric_implicit.v1"
PAIRWISE = "pairwise.v1"
REASK = "reask.v1"
CALLER_MESSAGES = "messages"

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded template: ``id`` like ``rubric_explicit.v1`` and a short content digest."""

    id: str
    digest: str
    system: Template | None
    user: Template

    @property
    def version(self) -> str:
        """What results report: ``<id>@<digest>``."""
        return f"{self.id}@{self.digest}"

    def render(self, **values: str) -> Messages:
        """Chat messages with every placeholder filled (a missing value raises KeyError)."""
        messages: Messages = []
        if self.system is not None:
            messages.append({"role": "system", "content": self.system.substitute(values)})
        messages.append({"role": "user", "content": self.user.substitute(values)})
        return messages


def messages_version(messages: Messages) -> str:
    """What results report for caller-written messages (messages mode), which have no
    template file: ``messages@<digest of the exact messages sent>``, so a reward still
    names the prompt that produced it."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return f"{CALLER_MESSAGES}@{hashlib.sha256(canonical.encode()).hexdigest()[:12]}"


@cache
def load_template(template_id: str) -> PromptTemplate:
    """Read ``templates/<template_id>.txt`` once per process."""
    text = files("verifiers.judge.templates").joinpath(f"{template_id}.txt").read_text("utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    system, user = _sections(text)
    return PromptTemplate(
        id=template_id,
        digest=digest,
        system=Template(system) if system is not None else None,
        user=Template(user),
    )


def _sections(text: str) -> tuple[str | None, str]:
    if "### user\n" not in text:
        return None, text.strip()
    head, user = text.split("### user\n", 1)
    system = head.split("### system\n", 1)[1].strip() if "### system\n" in head else None
    return system, user.strip()


def describe_criteria(criteria: Sequence[Criterion]) -> str:
    """One line per criterion with its id, kind and allowed scores, as the judge sees it."""
    return "\n".join(_describe(c) for c in criteria)


def _describe(c: Criterion) -> str:
    role = "pitfall" if c.weight < 0 else "criterion"
    if c.kind == "binary":
        scale = "binary: 1 = holds, 0 = does not"
    elif c.kind == "ordinal":
        levels = ", ".join(f"{i} = {choice}" for i, choice in enumerate(c.choices or []))
        scale = f"ordinal, worst to best: {levels}"
    else:
        scale = f"likert: integer from {c.min} (worst) to {c.max} (best)"
    return f"- id: {c.id} ({role}; {scale})\n  {c.text}"


def reference_block(answer: str | None) -> str:
    """The optional reference-answer section (empty when there is none)."""
    if answer is None:
        return ""
    return f"\n[REFERENCE ANSWER]\n{answer}\n[/REFERENCE ANSWER]\n"


def guidance_block(criteria: Sequence[Criterion]) -> str:
    """Rubric lines shown as guidance in holistic and comparison prompts."""
    if not criteria:
        return ""
    lines = "\n".join(f"- {c.text}" + (" (pitfall)" if c.weight < 0 else "") for c in criteria)
    return f"\nConsider these points:\n{lines}\n"
