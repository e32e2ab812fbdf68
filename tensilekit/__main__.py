"""``python -m tensilekit``: the command-line interface."""

from tensilekit.cli.main import run

if __name__ == "__main__":
    run()
