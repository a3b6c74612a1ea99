"""Exceptions that cross the gpu_rm boundary. Callers map them to per-item statuses."""

from __future__ import annotations


class RewardModelError(Exception):
    """Base of every gpu_rm exception; ``code`` is stable, the message is for humans."""

    code = "rm_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownModel(RewardModelError):
    """The requested model name is not configured (the client's fault)."""

    code = "unknown_model"


class ModelUnavailable(RewardModelError):
    """The model is configured but could not be loaded (infrastructure; retryable)."""

    code = "model_unavailable"


class ModelMisconfigured(RewardModelError):
    """The model's settings cannot work (its path holds no model): an operator's fix,
    not retryable. The code is the service-wide ``not_configured``."""

    code = "not_configured"


class Overloaded(RewardModelError):
    """The batcher's queue is full: the caller should back off and retry (HTTP 429)."""

    code = "overloaded"


class BatchFailed(RewardModelError):
    """The forward pass of a batch raised; every item of that batch gets this."""

    code = "forward_failed"


class OutOfMemory(RewardModelError):
    """Alone in its batch, the item still did not fit in the device's memory."""

    code = "rm_oom"
