"""sglang-lsp: finds sglang launch-flag mistakes in scripts and deployment files."""

__version__ = "0.1.0"
DEFAULT_SGLANG_VERSION = "0.5.23"
