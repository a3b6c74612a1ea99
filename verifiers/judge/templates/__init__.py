"""Versioned judge prompt templates (package data; see `verifiers.judge.prompts`)."""
