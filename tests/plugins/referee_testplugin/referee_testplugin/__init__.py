"""Test-only verifiers for referee, loaded through the ``verifiers`` entry points."""
