"""``python -m referee.service`` is the ``referee`` command."""

from referee.service.cli import app

if __name__ == "__main__":
    app()
