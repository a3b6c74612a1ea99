"""``python -m referee.service`` is the ``referee`` command."""

from referee.service.launcher import main

if __name__ == "__main__":
    main()
