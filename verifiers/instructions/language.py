"""Language detection: langdetect's own algorithm, profiles and random draws, with its
per-language arithmetic done on vectors.

IFEval's language checks call ``langdetect.detect``, which spends most of its time in two
Python loops over the 55 languages (multiplying in one n-gram's probabilities, and
normalising every fifth step). `detect` runs langdetect's `Detector` unchanged except for
those two methods, which do the same IEEE operations on numpy arrays in the same order
(the normalising sum is still Python's ``sum`` over the same values), so it returns what
``langdetect.detect`` returns for every text, about 3x faster. The tests compare the two
on texts in many scripts. The profiles are held once per process as one float64 matrix
(87,598 n-grams x 55 languages, 38 MB), less than langdetect's lists of floats.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from langdetect.detector import Detector
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import ErrorCode, LangDetectException

SEED = 0
"""langdetect samples at random: seeded, one text always gets one answer (as IFEval's
``DetectorFactory.seed = 0``)."""


class _Profiles:
    """langdetect's profiles: the factory (language list, seed) and one row per n-gram."""

    def __init__(self) -> None:
        factory = DetectorFactory()
        factory.load_profile(PROFILES_DIRECTORY)
        factory.set_seed(SEED)
        words = factory.word_lang_prob_map
        self.rows = {word: index for index, word in enumerate(words)}
        self.matrix = np.array(list(words.values()), dtype=np.float64)
        # The detector looks n-grams up in this map; only membership is asked of it here.
        factory.word_lang_prob_map = self.rows
        self.factory = factory


@functools.cache
def _profiles() -> _Profiles:
    return _Profiles()


class _VectorDetector(Detector):  # type: ignore[misc]
    """langdetect's detector with its per-language loops on arrays: the same draws, and the
    same IEEE operations in the same order (see `_detect_block`)."""

    def __init__(self, profiles: _Profiles) -> None:
        super().__init__(profiles.factory)
        self._rows = profiles.rows
        self._matrix = profiles.matrix

    def _detect_block(self) -> None:
        """langdetect's loop. Per trial it multiplies the probabilities by one random
        n-gram's ``weight + p(n-gram | language)`` at steps 0, 1, 2..., normalising after
        step 0 and every fifth step, when it may stop. Here each run of steps between two
        normalisations is one ``cumprod`` down a stack of those factor rows, which
        multiplies in the same order; the draws are the same ``random.choice`` calls."""
        self.cleaning_text()
        ngrams = self._extract_ngrams()
        if not ngrams:
            raise LangDetectException(ErrorCode.CantDetectError, "No features in text.")
        distinct: dict[str, int] = {}
        picks_of = [distinct.setdefault(word, len(distinct)) for word in ngrams]
        rows = self._matrix[[self._rows[word] for word in distinct]]
        total = np.zeros(len(self.langlist), dtype=np.float64)
        self.random.seed(self.seed)
        for _ in range(self.n_trial):
            prob = self._init_probability()
            alpha = self.alpha + self.random.gauss(0.0, 1.0) * self.ALPHA_WIDTH
            factors = alpha / self.BASE_FREQ + rows
            step, run = 0, 1  # the first run is step 0 alone, then five steps each
            while True:
                picks = [self.random.choice(picks_of) for _ in range(run)]
                prob = np.cumprod(np.vstack((prob, factors[picks])), axis=0)[-1]
                if _normalized(prob) > self.CONV_THRESHOLD or step >= self.ITERATION_LIMIT:
                    break
                step, run = step + 5, 5
            total += prob / self.n_trial
        self.langprob = total.tolist()

    def _init_probability(self) -> Any:
        count = len(self.langlist)
        if self.prior_map is not None:
            return np.array(self.prior_map, dtype=np.float64)
        return np.full(count, 1.0 / count, dtype=np.float64)


def _normalized(prob: Any) -> float:
    """langdetect's normalisation in place: each probability over Python's own ``sum`` of
    them (as langdetect adds them), and the largest one (at least 0.0, as its loop)."""
    total = sum(prob.tolist())
    if total == 0.0:
        raise ZeroDivisionError("float division by zero")
    np.divide(prob, total, out=prob)
    return max(0.0, float(prob.max()))


def detect(text: str) -> str:
    """``langdetect.detect(text)`` (seeded): the ISO 639-1 code of the most probable
    language. Raises langdetect's `LangDetectException` when the text has no features."""
    detector = _VectorDetector(_profiles())
    detector.append(text)
    return str(detector.detect())


def detect_probabilities(text: str) -> list[tuple[str, float]]:
    """``langdetect.detect_langs(text)`` as (language, probability) pairs."""
    detector = _VectorDetector(_profiles())
    detector.append(text)
    return [(found.lang, float(found.prob)) for found in detector.get_probabilities()]
