from tests.verifiers.conftest import registry, score

__all__ = ["registry", "score"]
