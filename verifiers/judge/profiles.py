"""Judge profiles: which OpenAI-compatible endpoint a judge item talks to, and how.

Profiles are named in settings (``REFEREE_JUDGE_PROFILES`` as JSON, or
``REFEREE_JUDGE_PROFILES_FILE`` naming a JSON or YAML file) and chosen per item by
``params.profile``, or by model with ``params.model`` (`profile_for_model`). Settings are
read when a verifier first needs them, never at import time; tests pass profiles to the
verifier directly. API keys never live in settings: a profile names the environment
variable that holds its key (``api_key_env``).
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from referee.verifiers.judge.transport import Origin


class JudgeProfile(BaseModel):
    """One judge endpoint and the discipline used to call it.

    ``base_url`` ends where the OpenAI API root is (``http://host:8000/v1``); the client
    posts to ``{base_url}/chat/completions``. Times are seconds.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    base_url: str
    model: str
    api_key_env: str | None = None
    """Name of the environment variable holding the bearer key; none sends no key."""
    temperature: float = Field(default=0.0, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int = Field(default=1024, ge=1)
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Sent as-is in every request body (vendor sampling knobs such as ``top_k``)."""
    concurrency: int = Field(default=32, ge=1, le=4096)
    """Most requests in flight to this endpoint at once, across all items and requests."""
    timeout_s: float = Field(default=60.0, gt=0)
    """Per-call limit (connect + wait for the whole reply); always cut to the item deadline."""
    connect_timeout_s: float = Field(default=5.0, gt=0)
    retries: int = Field(default=3, ge=0, le=10)
    """Extra attempts after a connection error, 429 or 5xx; other 4xx are never retried."""
    backoff_s: float = Field(default=0.5, ge=0)
    """First backoff; attempt k waits a random time in [0, backoff_s * 2**k] (full jitter)."""
    backoff_max_s: float = Field(default=10.0, ge=0)
    breaker_failures: int = Field(default=10, ge=1)
    """Consecutive retryable failures (any items) after which the circuit opens: calls
    fail at once with the last error instead of queueing behind a dead endpoint."""
    breaker_cooldown_s: float = Field(default=5.0, ge=0)
    """How long an open circuit fails calls before letting them try again."""
    supports_json_mode: bool = False
    """Send ``response_format: {"type": "json_object"}``."""
    supports_logprobs: bool = False
    """Ask for ``logprobs``/``top_logprobs``, enabling G-Eval style expected scores."""
    top_logprobs: int = Field(default=20, ge=1, le=20)
    cache_size: int = Field(default=50_000, ge=0)
    """Parsed replies kept per profile (LRU); 0 disables the cache."""
    # What one item may make this endpoint do: the operator pays for it, the client only
    # asks. An item asking for more is ``invalid`` (code ``judge_budget``), never trimmed.
    max_calls_per_item: int = Field(default=16, ge=1, le=1024)
    """Chat calls one item may cost, re-asks included (a tournament group: this times
    its size). Checked before the first call against the item's worst case."""
    max_samples: int = Field(default=4, ge=1, le=16)
    """Most completions per call (``params.samples``)."""
    max_tokens_limit: int | None = Field(default=None, ge=1)
    """Most ``params.sampling.max_tokens`` an item may ask for; None: ``max_tokens``
    (clients may lower the profile's reply length, never raise it)."""
    max_prompt_bytes_per_item: int = Field(default=1 << 20, ge=1)
    """UTF-8 bytes of prompt one item may send over all its calls."""
    allow_messages_mode: bool = False
    """Messages mode (and OpenAI model graders) send the client's own conversation: a
    general chat proxy on this endpoint's key. Off unless the operator allows it."""
    allow_remote_images: bool = False
    """Let caller-written messages carry image parts by ``http(s)`` URL, which an endpoint
    that fetches them (vLLM, OpenAI) would fetch from wherever the caller points, inside
    the operator's network too. Off: images must be inline ``data:`` URLs."""

    @field_validator("base_url")
    @classmethod
    def _reachable_url(cls, value: str) -> str:
        Origin.parse(value)  # raises ValueError, which pydantic names with the field
        return value

    def reply_tokens_limit(self) -> int:
        """The largest ``max_tokens`` an item may ask for."""
        return self.max_tokens_limit or self.max_tokens

    def api_key(self) -> str | None:
        """The key from the environment variable ``api_key_env`` (read at call time),
        without surrounding whitespace (a secret file's trailing newline)."""
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return key.strip() if key else None


_PROFILES = TypeAdapter(dict[str, JudgeProfile])


class JudgeSettings(BaseSettings):
    """``REFEREE_JUDGE_*`` settings. ``profiles`` and ``profiles_file`` merge; the
    environment variable wins for a name defined in both."""

    model_config = SettingsConfigDict(env_prefix="REFEREE_JUDGE_", extra="ignore")

    profiles: dict[str, JudgeProfile] = Field(default_factory=dict)
    profiles_file: Path | None = None
    item_deadline_s: float = Field(default=30.0, gt=0)
    """Budget for one judge item when its params name none (retries and re-asks included)."""

    def all_profiles(self) -> dict[str, JudgeProfile]:
        """Every profile by name; reads ``profiles_file`` when set (raises on a bad file)."""
        merged: dict[str, JudgeProfile] = {}
        if self.profiles_file is not None:
            merged.update(read_profiles_file(self.profiles_file))
        merged.update(self.profiles)
        return merged


DEFAULT_PROFILE = "default"
NO_PROFILES = (
    "no judge profiles are configured: set REFEREE_JUDGE_PROFILES (JSON, e.g. "
    """'{"default": {"base_url": "http://127.0.0.1:8001/v1", "model": "judge"}}') """
    "or REFEREE_JUDGE_PROFILES_FILE (a JSON or YAML file); the README's settings "
    "section shows both"
)
"""What a judge item says when the service has no profile at all (``not_configured``)."""


def profile_for_model(profiles: Mapping[str, JudgeProfile], model: str) -> str | None:
    """The name of the profile that serves ``model``, or None when none does.

    In order: the profile named ``model``; else the first (by name, so the choice does
    not depend on configuration order) whose configured ``model`` id equals it; else the
    ``default`` profile. The fallback means a grader naming a hosted model (``gpt-4o``)
    runs on the operator's own judge unless a profile claims that model.
    """
    if model in profiles:
        return model
    serving = sorted(name for name, profile in profiles.items() if profile.model == model)
    if serving:
        return serving[0]
    return DEFAULT_PROFILE if DEFAULT_PROFILE in profiles else None


def read_profiles_file(path: Path) -> dict[str, JudgeProfile]:
    """Profiles from a JSON or YAML (``.yaml``/``.yml``, needs PyYAML) mapping name -> profile."""
    text = path.read_text(encoding="utf-8")
    data: object
    if path.suffix.lower() in (".yaml", ".yml"):
        # Imported by name: PyYAML is optional and only needed for YAML profile files.
        data = importlib.import_module("yaml").safe_load(text)
    else:
        data = json.loads(text)
    return _PROFILES.validate_python(data)
