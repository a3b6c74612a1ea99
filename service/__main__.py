"""``python -m service`` is the ``referee`` command."""

from service.cli import app

if __name__ == "__main__":
    app()
