"""Per-API-key rate limits: a token bucket of items per second, kept in Redis.

One Lua script refills and takes atomically, so any number of gateways share a key's
budget. Without a broker (embedded mode) the same bucket lives in this process.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass

import redis.asyncio as aioredis

from referee.service.http.errors import Overloaded, PayloadTooLarge

_TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local now, want = tonumber(ARGV[3]), tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local ok = 0
if tokens >= want then
  tokens = tokens - want
  ok = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('EXPIRE', KEYS[1], math.ceil(burst / rate) + 60)
return {ok, tostring(tokens)}
"""


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """Refuse (429) a caller whose items exceed ``rate`` per second beyond ``burst``."""

    def __init__(self, rate: float, burst: int, client: aioredis.Redis | None = None) -> None:
        self.rate = rate
        self.burst = burst
        self._redis = client
        self._take = client.register_script(_TAKE) if client is not None else None
        self._local: dict[str, _Bucket] = {}

    async def take(self, api_key: str, items: int) -> None:
        """Spend ``items`` tokens of ``api_key``'s bucket or raise `Overloaded`."""
        if items > self.burst:
            raise PayloadTooLarge(
                f"items: {items} items exceed the per-key burst of {self.burst}; send fewer"
            )
        name = "referee:rate:" + hashlib.sha256(api_key.encode()).hexdigest()[:32]
        if self._take is not None:
            ok, left = await self._take(
                keys=[name], args=[self.rate, self.burst, time.time(), items]
            )
            allowed, tokens = bool(ok), float(left)
        else:
            allowed, tokens = self._take_local(name, items)
        if not allowed:
            wait = math.ceil((items - tokens) / self.rate)
            raise Overloaded(
                f"rate limit: {self.rate:g} items/s per API key (burst {self.burst})",
                retry_after_s=max(1, wait),
            )

    def _take_local(self, name: str, items: int) -> tuple[bool, float]:
        now = time.monotonic()
        bucket = self._local.setdefault(name, _Bucket(tokens=self.burst, at=now))
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens >= items:
            bucket.tokens -= items
            return True, bucket.tokens
        return False, bucket.tokens
