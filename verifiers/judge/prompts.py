"""Versioned prompt templates and how they are rendered into chat messages.

Templates are files in ``templates/`` named ``<name>.v<N>.txt``; a changed prompt is a new
file with a new version, never an edit of a shipped one, so the ``template`` recorded in a
result's details (``rubric_explicit.v1`` plus the file's digest) names the exact prompt
that produced the reward. A file holds ``### system`` and ``### user`` sections with
``$placeholders`` (`string.Template`, so JSON braces in the text need no escaping and
substituted values are never re-expanded).

Fences: the blocks holding untrusted text (``[RESPONSE $tag]`` ... ``[/RESPONSE $tag]``)
end in a tag that is random for every call (`seal`), so a response cannot close its
block and write criteria of its own: it cannot know the tag. Rendering leaves a fixed
`TAG` in its place, so identical questions still share a cache key; every untrusted
value is `escape`d first (the `TAG` removed, bracketed block names defused) as a second
line of defence. Values already escaped by a block builder travel as `Safe`.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from string import Template
from typing import Any

from referee.verifiers.judge.rubric import Criterion

EXPLICIT = "rubric_explicit.v2"
IMPLICIT = "rubric_implicit.v2"
PAIRWISE = "pairwise.v2"
REASK = "reask.v1"
CALLER_MESSAGES = "messages"

Messages = list[dict[str, Any]]
"""Chat messages: ``role`` and ``content``, a string, or (caller-written messages only) a
list of chat content parts (``{"type": "text", "text"}``, ``{"type": "image_url", ...}``)."""

TAG = "\u27e6tag\u27e7"
"""Stands for the per-call fence tag in rendered messages until `seal` replaces it."""
_FENCE_LIKE = re.compile(
    r"\[(?=\s*/?\s*(?:PROMPT|RESPONSE|CRITERIA|REFERENCE\s+ANSWER)\b)", re.IGNORECASE
)


class Safe(str):
    """Text already escaped (or written by us): `PromptTemplate.render` inserts it as is."""

    __slots__ = ()


def escape(text: str) -> str:
    """Untrusted ``text`` made inert inside a fenced block: no `TAG`, and no bracket that
    opens something looking like one of our fences (``[/RESPONSE`` becomes ``(/RESPONSE``)."""
    return _FENCE_LIKE.sub("(", text.replace(TAG, ""))


def seal(messages: Messages) -> Messages:
    """``messages`` with every `TAG` replaced by one fresh random tag (one per call)."""
    tag = secrets.token_hex(6)
    return [{**m, "content": _sealed(m["content"], tag)} for m in messages]


def _sealed(content: str | list[dict[str, Any]], tag: str) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content.replace(TAG, tag)
    return [
        {**part, "text": part["text"].replace(TAG, tag)} if part.get("type") == "text" else part
        for part in content
    ]


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes, lone surrogates (which Python strings may hold and UTF-8
    cannot) each as U+FFFD: a response given through the library API may carry them, and
    the judge reads them so, rather than failing the batch."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode()


def content_bytes(message: dict[str, Any]) -> int:
    """What a message's content costs to send: its text, or its parts' texts and URLs."""
    content = message.get("content", "")
    if isinstance(content, str):
        return len(utf8(content))
    return len(utf8(json.dumps(content, ensure_ascii=False)))


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
        """Chat messages with every placeholder filled (a missing value raises KeyError),
        each value `escape`d unless it is `Safe`, and ``$tag`` set to `TAG`."""
        filled = {k: v if isinstance(v, Safe) else escape(v) for k, v in values.items()}
        filled["tag"] = TAG
        messages: Messages = []
        if self.system is not None:
            messages.append({"role": "system", "content": self.system.substitute(filled)})
        messages.append({"role": "user", "content": self.user.substitute(filled)})
        return messages


def messages_version(messages: Messages) -> str:
    """What results report for caller-written messages (messages mode), which have no
    template file: ``messages@<digest of the exact messages sent>``, so a reward still
    names the prompt that produced it."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return f"{CALLER_MESSAGES}@{hashlib.sha256(utf8(canonical)).hexdigest()[:12]}"


@cache
def load_template(template_id: str) -> PromptTemplate:
    """Read ``templates/<template_id>.txt`` once per process."""
    text = (
        files("referee.verifiers.judge.templates").joinpath(f"{template_id}.txt").read_text("utf-8")
    )
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


def describe_criteria(criteria: Sequence[Criterion]) -> Safe:
    """One line per criterion with its id, kind and allowed scores, as the judge sees it."""
    return Safe(escape("\n".join(_describe(c) for c in criteria)))


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


def reference_block(answer: str | None) -> Safe:
    """The optional reference-answer section (empty when there is none), fenced."""
    if answer is None:
        return Safe("")
    return Safe(f"\n[REFERENCE ANSWER {TAG}]\n{escape(answer)}\n[/REFERENCE ANSWER {TAG}]\n")


def guidance_block(criteria: Sequence[Criterion]) -> Safe:
    """Rubric lines shown as guidance in holistic and comparison prompts."""
    if not criteria:
        return Safe("")
    lines = "\n".join(f"- {c.text}" + (" (pitfall)" if c.weight < 0 else "") for c in criteria)
    return Safe(f"\nConsider these points:\n{escape(lines)}\n")
