"""``similarity``'s ROUGE against rouge-score's own scorer, same texts, same run, one core.

    python bench/similarity.py [--repeat 3]

Texts: a reference of 1,000 words and responses of 1,000, 5,000 and 25,000 words, drawn
from a 3,000-word vocabulary (long RL responses against a summary-sized reference). For
each length: ``rouge_l`` and ``rouge_1`` through ``SimilarityVerifier.score`` against
rouge-score's ``RougeScorer`` built for that one type with the same tokenizer (the value
must match, and is checked). Prints the median milliseconds per item and the ratio and
writes ``bench/results/similarity.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rouge_score.rouge_scorer import RougeScorer  # noqa: E402

from referee.verifiers import Item  # noqa: E402
from referee.verifiers.rules.similarity import _WORDS, SimilarityVerifier  # noqa: E402

LENGTHS = (1_000, 5_000, 25_000)
KINDS = {"rouge_l": "rougeL", "rouge_1": "rouge1"}


def timed(fn: object, repeat: int) -> tuple[float, float]:
    """Median seconds of ``repeat`` calls of ``fn`` and its last value."""
    times, value = [], 0.0
    for _ in range(repeat):
        start = time.process_time()
        value = fn()  # type: ignore[operator]
        times.append(time.process_time() - start)
    return statistics.median(times), value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(3000)]
    reference = " ".join(rng.choice(vocabulary) for _ in range(1000))
    ours = SimilarityVerifier()
    rows = []
    for length in LENGTHS:
        response = " ".join(rng.choice(vocabulary) for _ in range(length))
        for metric, kind in KINDS.items():
            item = Item(
                verifier="similarity",
                response=response,
                reference=reference,
                params={"metric": metric},
            )
            scorer = RougeScorer([kind], tokenizer=_WORDS)
            ours_s, ours_v = timed(lambda i=item: ours.score([i])[0].reward, args.repeat)
            theirs_s, theirs_v = timed(
                lambda s=scorer, r=response, k=kind: s.score(reference, r)[k].fmeasure,
                args.repeat,
            )
            assert abs(ours_v - theirs_v) < 1e-12, (metric, length, ours_v, theirs_v)
            rows.append(
                {
                    "metric": metric,
                    "words": length,
                    "referee_ms": round(ours_s * 1e3, 2),
                    "rouge_score_ms": round(theirs_s * 1e3, 2),
                    "speedup": round(theirs_s / ours_s, 1),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    out = ROOT / "bench" / "results" / "similarity.json"
    out.parent.mkdir(exist_ok=True)
    machine = {"cpu": platform.processor() or platform.machine(), "python": sys.version}
    out.write_text(json.dumps({"machine": machine, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
