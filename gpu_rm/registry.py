"""The models this process serves, by name, each with its own batcher.

A model is loaded on the first request that names it (loading can take minutes for a real
model; callers run `batcher` in a thread). A load failure is remembered with its reason:
items for that model get status ``error`` and `readiness` says why, until `reload`.
Importing this module does not import torch.
"""

from __future__ import annotations

import threading
from typing import Any

from referee.gpu_rm.batcher import Batcher
from referee.gpu_rm.errors import ModelMisconfigured, ModelUnavailable, UnknownModel
from referee.gpu_rm.settings import RMSettings


class ServedModel:
    """A loaded model and its batcher (the `RewardModel` is typed loosely to keep torch out
    of this module's imports)."""

    def __init__(self, model: Any, batcher: Batcher) -> None:
        self.model = model
        self.batcher = batcher


class ModelRegistry:
    """Thread-safe lazy loading of the models named in ``settings``."""

    def __init__(self, settings: RMSettings) -> None:
        self.settings = settings
        self._served: dict[str, ServedModel] = {}
        self._failed: dict[str, ModelUnavailable | ModelMisconfigured] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        """Configured model names, in settings order."""
        return list(self.settings.models)

    def default_name(self) -> str | None:
        """The model used when an item names none: the only one configured, else None."""
        return self.names()[0] if len(self.settings.models) == 1 else None

    def get(self, name: str) -> ServedModel:
        """The served model ``name``, loading it on first use (blocking).

        Raises `UnknownModel` for a name not in settings, `ModelMisconfigured` when its
        path holds no model, and `ModelUnavailable` when it failed to load (now or before).
        """
        spec = self.settings.models.get(name)
        if spec is None:
            known = ", ".join(self.names()) or "none configured"
            raise UnknownModel(f"params.model: unknown reward model {name!r} (known: {known})")
        with self._lock:  # one load at a time; a second caller waits for the first
            if name in self._served:
                return self._served[name]
            if name in self._failed:
                failed = self._failed[name]
                raise type(failed)(failed.message)  # a fresh one: a reused one grows its traceback
            try:
                from referee.gpu_rm.model import RewardModel  # noqa: PLC0415 - torch loads with the first model

                model = RewardModel.load(name, spec)
            except (ModelUnavailable, ModelMisconfigured) as exc:
                self._failed[name] = exc
                raise
            except ImportError as exc:
                message = f"reward models need the 'gpu' extra: {exc}"
                self._failed[name] = ModelMisconfigured(message)
                raise self._failed[name] from None
            s = self.settings
            batcher = Batcher(
                model, s.token_budget, s.max_batch_items, s.max_wait_ms / 1000.0, s.max_queue_items
            )
            self._served[name] = ServedModel(model, batcher)
            return self._served[name]

    def reload(self, name: str) -> None:
        """Forget a load failure so the next request tries again."""
        with self._lock:
            self._failed.pop(name, None)

    def readiness(self) -> dict[str, dict[str, Any]]:
        """Per configured model: loaded, failed with the reason, or not loaded yet."""
        report: dict[str, dict[str, Any]] = {}
        for name in self.names():
            if name in self._served:
                served = self._served[name]
                report[name] = {"state": "loaded", "queued": served.batcher.queue_depth()}
            elif name in self._failed:
                report[name] = {"state": "failed", "reason": self._failed[name].message}
            else:
                report[name] = {"state": "not_loaded"}
        return report

    def saturated(self) -> bool:
        """True when a loaded model's queue is full: new work would be refused."""
        return any(
            served.batcher.queue_depth() >= served.batcher.max_queue
            for served in list(self._served.values())
        )

    def close(self) -> None:
        """Stop every batcher (the models are released with this object)."""
        with self._lock:
            for served in self._served.values():
                served.batcher.close()
            self._served.clear()
