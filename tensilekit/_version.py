"""Package version (single source of truth for pyproject)."""

__version__ = "0.1.0"
