"""Where the language server and its checker process write their log."""

from __future__ import annotations

import logging
import sys

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_file: str | None, level: str) -> None:
    handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8") if log_file \
        else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    # pygls logs every message it sends or receives at INFO/DEBUG: only its warnings
    logging.getLogger("pygls").setLevel(max(root.level, logging.WARNING))
