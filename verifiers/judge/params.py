"""The judge's item params, messages mode's reference, and a validated item ready to score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from referee.verifiers.base import Params
from referee.verifiers.judge.allowance import Allowance
from referee.verifiers.judge.prompts import Messages
from referee.verifiers.judge.rubric import MAX_CRITERIA, Rubric
from referee.verifiers.rules.field_error import field_error
from referee.verifiers.types import Item

Mode = Literal["explicit", "implicit", "pairwise", "tournament", "messages", "labels", "embedding"]
MAX_MESSAGES = 64
MAX_LABELS = 64
CALLER_MESSAGES: frozenset[str] = frozenset({"messages", "labels"})
"""Modes whose reference is the caller's own conversation (`Dialogue`)."""


class Sampling(Params):
    """Per-item overrides of the profile's sampling; a field left None keeps the profile's.

    Sent in the request body under the same names; the profile's ``extra_body`` is applied
    after them, so an operator's pinned vendor knob still wins.
    """

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=131_072)

    def overrides(self) -> dict[str, float | int]:
        """The fields that are set, as request-body entries."""
        return self.model_dump(exclude_none=True)


class TextPart(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["text"]
    text: str = Field(max_length=200_000)


class ImageUrl(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(max_length=20_000_000)
    detail: Literal["auto", "low", "high"] | None = None


class ImagePart(BaseModel):
    """An image for a judge that takes them (a URL or a ``data:`` URL, sent as is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["image_url"]
    image_url: ImageUrl


class AudioData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    data: str = Field(max_length=20_000_000)
    format: Literal["wav", "mp3"]


class AudioPart(BaseModel):
    """Audio for a judge that takes it (base64, sent as is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["input_audio"]
    input_audio: AudioData


ChatPart = Annotated[TextPart | ImagePart | AudioPart, Field(discriminator="type")]


class ChatTurn(BaseModel):
    """One message of a caller-written judge conversation: text, or chat content parts
    (text, images, audio) for judge endpoints that take them. Sent as written; an
    endpoint that cannot read a part answers 4xx, which is the item's ``error``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str | Annotated[list[ChatPart], Field(min_length=1, max_length=64)] = Field(
        max_length=200_000
    )


class Dialogue(BaseModel):
    """Messages mode's ``reference``: the judge conversation, already rendered by the
    caller and sent as it is; the judge's reply must be one number in ``params.score_range``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: list[ChatTurn] = Field(min_length=1, max_length=MAX_MESSAGES)

    def as_messages(self) -> Messages:
        return [
            {"role": turn.role, "content": turn.model_dump(exclude_none=True)["content"]}
            for turn in self.messages
        ]


class JudgeParams(Params):
    """Options of one judge item. The rubric and reference answer travel in ``reference``."""

    profile: str = Field(default="default", max_length=128)
    """Name of a configured judge profile (``REFEREE_JUDGE_PROFILES``)."""
    model: str | None = Field(default=None, min_length=1, max_length=256)
    """Pick the profile by model instead of ``profile`` (which is then ignored): the profile
    named ``model``, else the first by name whose configured ``model`` equals it, else
    ``default``; see `verifiers.judge.profiles.profile_for_model`."""
    mode: Mode = "explicit"
    """``explicit``: a verdict per criterion; ``implicit``: one holistic score;
    ``pairwise``: against the reference answer or ``anchor``; ``tournament``: single
    elimination within the item's ``group``; ``messages``: the caller's own conversation
    (``reference`` is a `Dialogue`), rewarded with the number the judge answers;
    ``labels``: the caller's conversation, the judge answers one of ``labels``, and the
    reward is 1 when it is one of ``passing_labels`` (OpenAI's ``label_model``);
    ``embedding``: the cosine similarity of the response's and the reference's embeddings
    from the profile's ``/embeddings`` (``reference``: a text, or several: the best)."""
    score_range: tuple[float, float] = (0.0, 1.0)
    """Messages mode: the judge's answer must lie in ``[low, high]`` and is the reward as
    it is (not normalised); anything else is re-asked, then ``error``, never clamped."""
    labels: list[str] | None = Field(default=None, min_length=1, max_length=MAX_LABELS)
    """Labels mode: the answers the judge may give."""
    passing_labels: list[str] | None = Field(default=None, min_length=1, max_length=MAX_LABELS)
    """Labels mode: the answers that earn a reward of 1 (a subset of ``labels``)."""
    sampling: Sampling = Field(default_factory=Sampling)
    """Overrides of the profile's sampling for this item's calls (any mode)."""
    criteria_per_call: int | None = Field(default=None, ge=1, le=MAX_CRITERIA)
    """Explicit mode: split the rubric over concurrent calls of at most this many criteria."""
    scale_min: int = Field(default=1, ge=0, le=100)
    scale_max: int = Field(default=10, ge=1, le=100)
    """Implicit mode's integer scale; the reward is ``(score - min) / (max - min)``."""
    scoring: Literal["auto", "sample", "logprobs"] = "auto"
    """``auto`` weighs by logprobs when the profile supports them, else uses the sample."""
    samples: int = Field(default=1, ge=1, le=16)
    """Replies per question (the request's ``n``); scores are their mean."""
    max_reasks: int = Field(default=1, ge=0, le=3)
    """Re-asks after an unparsable reply before the item is ``error`` (judge_unparsable)."""
    deadline_s: float | None = Field(default=None, gt=0, le=600)
    """Budget for this item (all calls, retries, re-asks); default from settings."""
    veto_reward: float = Field(default=0.0, ge=-1, le=1)
    """Explicit mode: the reward when a critical criterion fails."""
    seed: int = 0
    """Tournament mode: seeds the bracket (with the group key) and tie breaks."""
    anchor: str | None = Field(default=None, max_length=200_000)
    """Pairwise mode: the response to compare against, instead of the reference answer."""
    cache: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> JudgeParams:
        if self.scale_min >= self.scale_max:
            raise field_error("JudgeParams", "scale_max", "must exceed scale_min", self.scale_max)
        if self.score_range[0] >= self.score_range[1]:
            message = "the low end must be below the high end"
            raise field_error("JudgeParams", "score_range", message, self.score_range)
        if self.mode in (*CALLER_MESSAGES, "embedding") and self.scoring == "logprobs":
            message = f"{self.mode} mode scores the sampled reply; use auto or sample"
            raise field_error("JudgeParams", "scoring", message, self.scoring)
        if self.mode == "labels":
            self._check_labels()
        return self

    def _check_labels(self) -> None:
        if self.samples != 1:
            message = "labels mode takes one reply (a label has no mean)"
            raise field_error("JudgeParams", "samples", message, self.samples)
        if not self.labels:
            raise field_error("JudgeParams", "labels", "labels mode needs labels", self.labels)
        if not self.passing_labels:
            message = "labels mode needs passing_labels"
            raise field_error("JudgeParams", "passing_labels", message, self.passing_labels)
        problem = label_problem(self.labels, self.passing_labels)
        if problem is not None:
            field, message = problem
            raise field_error("JudgeParams", field, message, getattr(self, field))


def label_problem(labels: list[str], passing: list[str]) -> tuple[str, str] | None:
    """What is wrong with a label set, as (field, message), or None: labels must be
    distinct and non-empty (case-insensitively: replies are read so), and the passing
    ones among them. Shared with OpenAI's ``label_model`` grader schema."""
    folded = [label.strip().lower() for label in labels]
    if len(set(folded)) < len(folded) or not all(folded):
        return "labels", "labels must be distinct and non-empty (case-insensitively)"
    unknown = [label for label in passing if label not in labels]
    if unknown:
        return "passing_labels", f"not among labels: {', '.join(map(repr, unknown))}"
    return None


@dataclass(frozen=True)
class JudgedItem:
    """One validated judge item: its position in the call, params (``profile`` already
    resolved from ``model``), rubric (empty in messages mode), the caller's messages
    (messages mode only), deadline (``time.monotonic``) and what it may still spend."""

    index: int
    item: Item
    params: JudgeParams
    rubric: Rubric
    deadline: float
    logprobs: bool
    allowance: Allowance
    messages: Messages | None = None

    @property
    def label(self) -> str:
        """How details name this item: its id, else ``#<position>``."""
        return self.item.id if self.item.id is not None else f"#{self.index}"
