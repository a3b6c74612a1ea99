"""Drop-in reward hooks for existing RL trainers (TRL, verl, OpenRLHF).

Each adapter turns a trainer's call into referee items through an `ItemMapping`, a small
declared mapping (verifier, params, which column holds the reference), so users
configure instead of writing glue code.
"""
