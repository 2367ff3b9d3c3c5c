"""sglang-lsp: finds sglang launch-flag mistakes in scripts and deployment files."""

__version__ = "0.1.0"
# pyproject.toml's [project.urls] Repository, the one place it is set (a test keeps them equal; a
# constant, because reading the installed metadata costs a cold check about 27 ms)
REPOSITORY_URL = "https://github.com/sglang-lsp/sglang-lsp"
DEFAULT_SGLANG_VERSION = "0.5.23"


class _Logger:
    """``logging.getLogger(name)``, fetched when something is first logged: a check that logs
    nothing never imports :mod:`logging` (a tenth of the start-up time of ``sglang-lsp check``)."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr: str):
        import logging

        return getattr(logging.getLogger(self.name), attr)


def logger(name: str) -> _Logger:
    """The module logger of ``name`` (``log = logger(__name__)``), imported lazily."""
    return _Logger(name)
