"""Stateful sandbox sessions behind /v1/sessions: held here or on sandbox workers."""
