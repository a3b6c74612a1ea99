"""Scoring logic: the Item/Result contract, the registry and every verifier.

Never imports `service`, FastAPI or Celery: every verifier is a plain typed object a test
can call without a server.
"""

from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params, Verifier
from referee.verifiers.batch import score_items
from referee.verifiers.registry import Registry, default_registry
from referee.verifiers.types import Item, Pool, Result, Status

__all__ = [
    "Item",
    "ItemInvalid",
    "ItemVerifier",
    "Outcome",
    "Params",
    "Pool",
    "Registry",
    "Result",
    "Status",
    "Verifier",
    "default_registry",
    "score_items",
]
