"""The language server adapter (``sglang-lsp serve``). The only package that imports pygls and
lsprotocol; everything it shows comes from :func:`sglang_lsp.engine.check.check_document`."""

from __future__ import annotations

import logging
import os
import sys

from .logs import configure_logging


def serve(tcp: tuple[str, int] | None = None, log_file: str | None = None, log_level: str = "info") -> int:
    """Run the server until ``exit`` (or the client goes away). Returns the exit code: 0 after
    ``shutdown`` + ``exit``, 1 when the connection ended without a ``shutdown``."""
    configure_logging(log_file, log_level)
    from .server import create_server

    server = create_server()
    server.log_file, server.log_level = log_file, log_level
    log = logging.getLogger("sglang_lsp.lsp")
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but LSP frames on the real stdout, whatever else prints
    try:
        if tcp is not None:
            log.info("sglang-lsp serving on tcp %s:%s", *tcp)
            server.start_tcp(*tcp)
        else:
            log.info("sglang-lsp serving on stdio")
            server.start_io(sys.stdin.buffer, stdout)
    except SystemExit:
        pass
    except KeyboardInterrupt:
        return 130
    code = server.exit_code if server.exit_code is not None else (0 if server.shutdown_received else 1)
    log.info("sglang-lsp exits with %s", code)
    logging.shutdown()
    try:
        stdout.flush()
    except (OSError, ValueError):
        pass
    # worker threads may still block on reading stdin; nothing is left to do
    os._exit(code)
