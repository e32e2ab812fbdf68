"""``python -m tensilekit``: the command-line interface."""

from tensilekit.cli.main import main

if __name__ == "__main__":
    main()
