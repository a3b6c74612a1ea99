"""Isolated execution of untrusted code. Knows nothing of verifiers or the service."""
