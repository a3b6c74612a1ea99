"""Scoring logic: the Item/Result contract, the registry and every verifier.

Never imports `service`, FastAPI or Celery: every verifier is a plain typed object a test
can call without a server. Importing this package stays light; the built-in verifiers
(and `referee.verifiers.builtin.default_registry`) load when asked for.
"""

from referee.verifiers.base import ItemInvalid, ItemVerifier, Outcome, Params, Verifier
from referee.verifiers.batch import score_items
from referee.verifiers.registry import Registry
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
    "score_items",
]
