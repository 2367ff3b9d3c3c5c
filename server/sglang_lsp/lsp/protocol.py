"""The JSON-RPC protocol of ``sglang-lsp serve``: pygls' protocol with the envelope of every
message checked and the LSP lifecycle applied before pygls handles it, and a way to send
messages already built as JSON text."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol

from . import transport

log = logging.getLogger("sglang_lsp.lsp")


class _Answered:
    """A request that could not be read and has already been answered with an error."""

    jsonrpc = None


# pygls' own handlers of these keep a second copy of every open document (its workspace,
# which sglang-lsp never reads: lsp/documents.py keeps the text), and apply each change to it
# line by line in Python: ~1 ms per edit of a 3,000-line file (bench/bench_lsp.py)
_WORKSPACE_COPY = (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_CLOSE)


class Protocol(LanguageServerProtocol):
    """pygls' protocol with three repairs, and a way to send a notification built as JSON:

    * a request whose params do not match the method's type gets an ``InvalidParams`` error
      response (pygls 2.1 logs it and leaves the client waiting);
    * the future of a handled notification is forgotten once done (pygls 2.1 keeps every
      notification's future in ``_request_futures`` when its handler is a generator, as its
      built-in handlers are, or a coroutine: about 2.5 KB per edit, forever);
    * didOpen/didChange/didClose go to the server's handlers only (see ``_WORKSPACE_COPY``).
    """

    def _register_builtin_features(self):
        super()._register_builtin_features()
        for method in _WORKSPACE_COPY:
            self.fm.builtin_features.pop(method, None)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        def forget_then(future, _callback=callback):
            # a cancelled one is left: pygls' shutdown cancels the pending ones while it iterates
            # over them (a generator handler's future calls back at once: "dictionary changed
            # size during iteration"), and $/cancelRequest has taken it out already
            if not future.cancelled() and self._request_futures.get(msg_id) is future:
                del self._request_futures[msg_id]
            _callback(future)

        return super()._execute_handler(msg_id, handler, forget_then, args, kwargs)

    def notify_text(self, method: str, params: str) -> None:
        """Send a notification whose params are JSON text already: the diagnostics of every
        publish, made from templates (see convert.diagnostics_text), neither built as lsprotocol
        objects for cattrs to take apart nor serialised again as a whole."""
        self.send_text('{"jsonrpc":%s,"method":%s,"params":%s}' % (json.dumps(self.VERSION), json.dumps(method), params))

    def send_text(self, body: str) -> None:
        """Send one message given as JSON text."""
        if self.writer is None:
            log.error("cannot send %s: no transport", body[:80])
            return
        data = body.encode(self.CHARSET)
        if self._include_headers:
            header = (f"Content-Length: {len(data)}\r\n"
                      f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n")
            data = header.encode("ascii") + data
        res = self.writer.write(data)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        self.send_text(transport.error_response(msg_id, code, message))

    def receive(self, message: Any) -> None:
        """One decoded message from the client: its envelope checked (a malformed request is
        answered with ``InvalidRequest``), the lifecycle applied (see :meth:`_refused`), then
        pygls' own handling."""
        bad = transport.envelope_error(message)
        if bad is not None:
            msg_id, reason = bad
            log.error("invalid message (%s): %.200s", reason, json.dumps(message, default=str))
            # answered unless it is a notification or a response (which get no answer)
            if not isinstance(message, dict) or ("id" in message) == ("method" in message):
                self.send_error(msg_id, transport.INVALID_REQUEST, f"invalid request: {reason}")
            return
        method = message.get("method")
        if method is not None:
            refused = self._refused(method, "id" in message)
            if refused is not None:
                code, reason = refused
                if "id" in message:
                    log.warning("%s %r refused: %s", method, message["id"], reason)
                    self.send_error(message["id"], code, reason)
                else:
                    log.info("%s dropped: %s", method, reason)
                return
        try:
            structured = self.structure_message(message)
        except JsonRpcException as exc:
            log.error("cannot read %s: %s", method or "a response", exc)
            return
        if isinstance(structured, _Answered):
            return
        self.handle_message(structured)

    def _refused(self, method: str, is_request: bool) -> tuple[int, str] | None:
        """(error code, reason) when the lifecycle forbids ``method`` now, as the LSP
        specification says: before ``initialize`` requests get ``ServerNotInitialized`` and
        notifications other than ``exit`` are dropped; ``initialize`` is answered once; after
        ``shutdown`` requests get ``InvalidRequest`` and notifications other than ``exit`` are
        dropped."""
        server = self._server
        if method == types.EXIT:
            return None
        if server.shutdown_received:
            return transport.INVALID_REQUEST, f"the server is shutting down: {method} is not handled after shutdown"
        if method == types.INITIALIZE:
            if server.initialize_received:
                return transport.INVALID_REQUEST, "the server is initialized already (initialize is sent once)"
            if is_request:
                server.initialize_received = True
            return None
        if not server.initialize_received:
            return transport.SERVER_NOT_INITIALIZED, f"the server is not initialized: {method} before initialize"
        return None

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                log.warning("invalid %s request %r: %s", data.get("method"), data.get("id"), exc)
                self._send_response(data["id"], error=exc.to_response_error())
                return _Answered()
            raise
