"""Cheap rule-based verifiers (cpu pool): string, choice, format, length, similarity,
calibration and composite."""
