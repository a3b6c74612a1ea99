"""The wire shapes of OpenAI-style graders: each grader type, the run request and its
response (validated as OpenAI validates them)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from referee.verifiers.judge.params import label_problem
from referee.verifiers.rules.field_error import field_error
from referee.verifiers.rules.formula import FormulaError, parse

SIMILARITY = {
    "fuzzy_match": "fuzzy",
    "bleu": "bleu",
    "gleu": "gleu",
    "meteor": "meteor",
    **{f"rouge_{n}": f"rouge_{n}" for n in ("1", "2", "3", "4", "5", "l")},
}
"""OpenAI's ``text_similarity`` metrics -> the ``similarity`` verifier's; ``cosine`` is the
judge's embedding mode on the `EMBEDDING_PROFILE` profile."""
COSINE = "cosine"
EMBEDDING_PROFILE = "embeddings"


class _Grader(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = ""


class StringCheck(_Grader):
    type: Literal["string_check"]
    input: str
    reference: str
    operation: Literal["eq", "ne", "like", "ilike"]


class TextSimilarity(_Grader):
    type: Literal["text_similarity"]
    input: str
    reference: str
    evaluation_metric: str
    pass_threshold: float | None = Field(default=None, ge=0, le=1)

    @field_validator("evaluation_metric")
    @classmethod
    def _supported(cls, metric: str) -> str:
        if metric not in SIMILARITY and metric != COSINE:
            raise ValueError(f"unsupported; use one of {', '.join([*SIMILARITY, COSINE])}")
        return metric


class PythonGrader(_Grader):
    type: Literal["python"]
    source: str = Field(min_length=1)
    image_tag: str | None = None


class PromptCacheBreakpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Literal["explicit"]
    ttl: Literal["30m", "12h"] | None = None


class InputText(BaseModel):
    """A text part. ``prompt_cache_breakpoint`` (OpenAI's prompt-cache hint) is accepted
    and not sent: chat-completions endpoints have no such field, and their own prefix
    caches need no hint."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["input_text", "output_text"]
    text: str
    prompt_cache_breakpoint: PromptCacheBreakpoint | None = None


class InputImage(BaseModel):
    """An image (a URL, a ``data:`` URL, or a template giving one); sent to the judge as
    a chat ``image_url`` part, for judge endpoints that take images."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["input_image"]
    image_url: str
    detail: Literal["auto", "low", "high"] | None = None


class AudioInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data: str
    format: Literal["wav", "mp3"]


class InputAudio(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["input_audio"]
    input_audio: AudioInput


ContentPart = Annotated[InputText | InputImage | InputAudio, Field(discriminator="type")]


class ModelInput(BaseModel):
    """One message of a model grader's ``input``: ``content`` is a string, one content
    object, or a list of content objects and strings, as OpenAI's eval items allow; its
    text (and image URLs) may hold templates."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "developer", "user", "assistant"]
    content: str | ContentPart | Annotated[list[str | ContentPart], Field(min_length=1)]
    type: Literal["message"] | None = None

    def parts(self) -> list[str | InputText | InputImage | InputAudio]:
        """The content as a list (a lone string or object is a list of one)."""
        return list(self.content) if isinstance(self.content, list) else [self.content]


class SamplingParams(BaseModel):
    """A model grader's sampling. ``max_completions_tokens`` becomes the request's
    ``max_tokens``; ``reasoning_effort`` is accepted but not sent (chat endpoints that serve
    no reasoning model reject it; put it in the profile's ``extra_body`` where wanted)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None
    max_completions_tokens: int | None = Field(default=None, ge=1, le=131_072)
    reasoning_effort: str | None = None

    def judge_sampling(self) -> dict[str, float | int]:
        """The judge's ``params.sampling`` for these settings."""
        wanted = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_completions_tokens,
        }
        return {name: value for name, value in wanted.items() if value is not None}


class _ModelGrader(_Grader):
    """What OpenAI's model graders share: the model, its input messages, its sampling."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str = Field(min_length=1, max_length=256)
    input: list[ModelInput] = Field(min_length=1, max_length=64)
    sampling_params: SamplingParams | None = None


class ScoreModel(_ModelGrader):
    """OpenAI's ``score_model`` grader. ``pass_threshold`` is accepted and checked to lie
    in ``range`` but does not change the reward (OpenAI reports the raw score too)."""

    type: Literal["score_model"]
    range: tuple[float, float] = (0.0, 1.0)
    pass_threshold: float | None = None

    @field_validator("range")
    @classmethod
    def _ordered(cls, bounds: tuple[float, float]) -> tuple[float, float]:
        if bounds[0] >= bounds[1]:
            raise ValueError("range[0] must be below range[1]")
        return bounds

    @model_validator(mode="after")
    def _threshold_in_range(self) -> ScoreModel:
        low, high = self.range
        if self.pass_threshold is not None and not low <= self.pass_threshold <= high:
            message = f"must lie within range [{low:g}, {high:g}]"
            raise field_error("ScoreModel", "pass_threshold", message, self.pass_threshold)
        return self


class LabelModel(_ModelGrader):
    """OpenAI's ``label_model`` grader: the model answers one of ``labels``; the reward is
    1 when that is one of ``passing_labels``, else 0."""

    type: Literal["label_model"]
    labels: list[str] = Field(min_length=1, max_length=64)
    passing_labels: list[str] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _labels_usable(self) -> LabelModel:
        problem = label_problem(self.labels, self.passing_labels)
        if problem is not None:
            field, message = problem
            raise field_error("LabelModel", field, message, getattr(self, field))
        return self


class Multi(_Grader):
    """OpenAI's ``multi`` grader: ``graders`` maps the names ``calculate_output`` uses to
    graders. One grader object (as the SDK's ``MultiGraderParam`` types it) is taken as a
    map of one, under its ``name``."""

    type: Literal["multi"]
    graders: dict[str, Grader] = Field(min_length=1)
    calculate_output: str

    @model_validator(mode="before")
    @classmethod
    def _one_grader(cls, data: Any) -> Any:
        graders = data.get("graders") if isinstance(data, dict) else None
        # a grader's "type" is a string; a map's entries are objects (even one named "type")
        if isinstance(graders, dict) and isinstance(graders.get("type"), str):
            return {**data, "graders": {str(graders.get("name") or graders["type"]): graders}}
        return data

    @model_validator(mode="after")
    def _formula_names_graders(self) -> Multi:
        try:
            names = parse(self.calculate_output).names()
        except FormulaError as exc:
            raise ValueError(f"calculate_output: {exc}") from None
        unknown = sorted(set(names) - set(self.graders))
        if unknown:
            raise ValueError(f"calculate_output: unknown graders {', '.join(unknown)}")
        return self


Grader = Annotated[
    StringCheck | TextSimilarity | PythonGrader | ScoreModel | LabelModel | Multi,
    Field(discriminator="type"),
]
Multi.model_rebuild()


class GraderRequest(BaseModel):
    """``POST /v1/graders/validate``."""

    grader: Grader


class GraderRunRequest(BaseModel):
    """``POST /v1/graders/run``: the grader, the model's sample, and the dataset item."""

    grader: Grader
    model_sample: str
    item: dict[str, Any] = Field(default_factory=dict)


class GraderRunResponse(BaseModel):
    reward: float | None
    sub_rewards: dict[str, float | None]
    metadata: dict[str, Any]
    model_grader_token_usage_per_model: dict[str, Any] = Field(default_factory=dict)
