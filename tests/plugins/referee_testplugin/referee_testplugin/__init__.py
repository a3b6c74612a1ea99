"""Test-only verifiers for referee, loaded through the ``referee.verifiers`` entry points."""
