"""Times of day as answers (``4:30 p.m.``, ``12:00``, ``16:45:30``).

The LaTeX parser reads ``h:mm`` as a ratio: ``12:30`` became 2/5 (so ``0.4`` and ``2:5``
were right for it), ``3:05`` became 3/5, ``12:00`` an undefined 12/0 and ``4:30 p.m.`` no
value at all (both golds were ``invalid``). A gold is read as a time when it cannot be a
ratio in lowest terms: it names a meridiem or seconds, its minutes have a leading zero,
or hours and minutes share a factor (``4:30``). ``3:10`` stays a ratio, as before.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_CLOCK = re.compile(
    r"^(\d{1,2})(?::|\{:\})([0-5]\d)(?:(?::|\{:\})([0-5]\d))?"
    r"(?:\s*(?:\\,|~|\\ )?\s*([ap])\.?\s*m\.?)?$",
    re.IGNORECASE,
)
_ZERO_MINUTES = re.compile(r"(?::|\{:\})0")


@dataclass(frozen=True)
class Clock:
    """A time as written: ``hour`` on the clock it names (12-hour when ``meridiem`` is
    ``a`` or ``p``, 24-hour when it is empty)."""

    hour: int
    minute: int
    second: int
    meridiem: str

    @property
    def written(self) -> tuple[int, int, int]:
        return self.hour, self.minute, self.second

    @property
    def day_minutes(self) -> tuple[int, int, int]:
        """Hours on the 24-hour clock (``12 a.m.`` is 0, ``12 p.m.`` 12)."""
        if not self.meridiem:
            return self.written
        return self.hour % 12 + (12 if self.meridiem == "p" else 0), self.minute, self.second


def read_clock(text: str) -> Clock | None:
    """The time ``text`` writes, or None when it is not one (hours above 24, a 12-hour
    time with hour 0 or above 12)."""
    found = _CLOCK.match(text.strip())
    if found is None:
        return None
    hour, minute = int(found.group(1)), int(found.group(2))
    meridiem = (found.group(4) or "").lower()
    if hour > 24 or (meridiem and not 1 <= hour <= 12):
        return None
    return Clock(hour, minute, int(found.group(3) or 0), meridiem)


def clock_gold(text: str) -> Clock | None:
    """The time a gold answer writes, when it cannot be a ratio in lowest terms."""
    clock = read_clock(text)
    if clock is None:
        return None
    written = text.strip()
    if (
        clock.meridiem
        or written.count(":") > 1  # seconds
        or "{:}" in written  # LaTeX's spacing for a time
        or _ZERO_MINUTES.search(written)
        or math.gcd(clock.hour, clock.minute) != 1
    ):
        return clock
    return None


def same_time(gold: Clock, answer: Clock) -> bool:
    """``answer`` names ``gold``'s time. A gold with a meridiem needs the same time of
    day (``16:30`` or ``4:30 pm`` for ``4:30 p.m.``; a bare ``4:30`` does not say which).
    A gold without one is matched as written, or by an answer's time of day."""
    if gold.meridiem:
        return answer.day_minutes == gold.day_minutes and (
            bool(answer.meridiem) or answer.hour > 12 or answer.hour == 0
        )
    return gold.written in (answer.written, answer.day_minutes)
