"""Modules the built-in verifiers import on first use, that a worker process imports
ahead (NLTK costs 1-2 s). Free of imports, so a launcher reads it before anything loads."""

PRELOADED = ("nltk", "rouge_score.rouge_scorer")
