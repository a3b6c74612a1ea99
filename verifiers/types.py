"""Wire and in-process types shared by every package: `Item`, `Result` and friends.

The same pydantic models are used on the HTTP wire, in worker processes and in plain
function calls, so a test can build an `Item` and hand it to a verifier without a server.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

VERIFIER_PATTERN = r"^[A-Za-z0-9_.\-]+(@[0-9]+)?$"


class Status(StrEnum):
    """What happened to one item. See DESIGN.md section 2.

    - ``ok``: scored; a wrong answer is ``ok`` with reward 0.
    - ``invalid``: the item cannot be scored as given (the client's fault); reward is null.
    - ``error``: the infrastructure failed; retryable; reward is null. Never a 0.
    - ``timeout``: the deadline passed first; reward is null.
    """

    OK = "ok"
    INVALID = "invalid"
    ERROR = "error"
    TIMEOUT = "timeout"


class Pool(StrEnum):
    """Where a verifier runs: killable processes (cpu, sandbox), the GPU batcher, or asyncio."""

    CPU = "cpu"
    SANDBOX = "sandbox"
    GPU = "gpu"
    IO = "io"


class Message(BaseModel):
    """One chat message, OpenAI style. Extra keys (name, tool_calls...) are kept."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | None = None


Conversation = list[Message]


class Item(BaseModel):
    """One thing to score.

    ``reference`` and ``params`` are verifier-specific; the verifier validates ``params``
    with its own pydantic model. ``id`` and ``metadata`` are echoed back untouched.
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    verifier: str = Field(pattern=VERIFIER_PATTERN, max_length=128)
    prompt: str | Conversation | None = None
    response: str | Conversation
    reference: Any = None
    params: dict[str, Any] = Field(default_factory=dict)
    group: str | None = Field(default=None, max_length=512)
    metadata: dict[str, Any] | None = None

    def response_text(self) -> str:
        """The text being scored: the response, or the last assistant turn of a conversation."""
        return conversation_text(self.response, role="assistant")

    def prompt_text(self) -> str:
        """The prompt as text: the string, or the last user turn of a conversation."""
        if self.prompt is None:
            return ""
        return conversation_text(self.prompt, role="user")


def conversation_text(value: str | Conversation, role: str) -> str:
    """Return ``value`` if it is text, else the content of its last message with ``role``.

    Falls back to the last message of any role when none has ``role``.
    """
    if isinstance(value, str):
        return value
    for message in reversed(value):
        if message.role == role:
            return message.content or ""
    return (value[-1].content or "") if value else ""


NOT_CONFIGURED = "not_configured"
"""The error code of an item the service is not set up to score (an operator's fix)."""


class ErrorInfo(BaseModel):
    """Why an item is not ``ok``: a stable machine ``code``, a human ``message``, and
    whether sending the same item again may succeed. ``retryable`` is true for an
    infrastructure failure and a deadline, false for an ``invalid`` item and for
    ``not_configured`` (an ``error`` that no retry fixes until an operator changes a
    setting: the message names it)."""

    code: str
    message: str
    retryable: bool = False


class Result(BaseModel):
    """One result per item, in input order."""

    id: str | None = None
    status: Status
    reward: float | None = None
    components: dict[str, float] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    error: ErrorInfo | None = None
    verifier: str | None = None
    elapsed_ms: float = 0.0
    metadata: dict[str, Any] | None = None

    @classmethod
    def failed(
        cls,
        status: Literal[Status.INVALID, Status.ERROR, Status.TIMEOUT],
        code: str,
        message: str,
        *,
        retryable: bool | None = None,
    ) -> Result:
        """A non-``ok`` result; the reward is null by contract. ``retryable`` defaults to
        what the status means: an ``error`` or a ``timeout`` may pass on a retry, an
        ``invalid`` item never does; code ``not_configured`` is never retryable."""
        if retryable is None:
            retryable = status is not Status.INVALID and code != NOT_CONFIGURED
        info = ErrorInfo(code=code, message=message, retryable=retryable)
        return cls(status=status, error=info)


class GroupStats(BaseModel):
    """Per-group statistics over the ``ok`` results of items sharing ``group``.

    ``std`` is the population standard deviation. ``pass_rate`` is the share of ``ok``
    rewards at or above the request's threshold. ``zero_variance`` is true when every
    ``ok`` reward is equal (a GRPO group with no learning signal). ``mean``, ``std`` and
    ``pass_rate`` are null when no item of the group is ``ok``.
    """

    size: int
    n_ok: int
    mean: float | None
    std: float | None
    pass_rate: float | None
    zero_variance: bool
