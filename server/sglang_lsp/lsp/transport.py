"""The bytes between the client and the server: LSP frames read off a stream, forgiving what
sloppy clients send and recovering from what cannot be forgiven, and the JSON-RPC envelope of
each message checked before pygls sees it.

pygls 2.1 reads a frame only when its header line is exactly ``Content-Length: N\\r\\n``, and
trusts N: a lower-case header, ``Content-Length:5``, LF-only lines or a header line longer than
the reader's limit left it reading forever without answering, and a Content-Length that
counted characters instead of bytes glued the next header onto the rest of the body, deaf for
good. Here:

* a header block is lines ending in CRLF or LF, up to an empty line; names are matched in any
  case and values may follow the colon without a blank (HTTP's rules); other headers are
  ignored. Each forgiven habit is logged once per connection;
* the body is read by its Content-Length, and checked against what JSON says: a body whose
  JSON value ends before the declared length (a length too long) is taken as it is, the rest
  being the next frame's start; one whose value goes on past it (too short: most often a length
  that counted characters of a non-ASCII text) is taken with the bytes up to where the value
  ends, when they arrive within :data:`EXTENSION_WAIT` seconds. Both are logged;
* anything else (a body that is not JSON, a header block without a usable Content-Length, a
  header block longer than :data:`HEADER_LIMIT`, a line of a megabyte without a newline) is
  logged, answered with a ``-32700`` parse error (id ``null``), and skipped up to the next
  ``Content-Length:`` header, where reading starts again. The reader never holds more than
  :data:`HEADER_LIMIT` bytes while it looks for a header, and never raises.

:func:`envelope_error` then checks the JSON-RPC envelope (``"jsonrpc": "2.0"``, an ``id`` that
is a number or a string, a string ``method``), so that a malformed request gets an
``InvalidRequest`` error instead of a crash deep inside pygls.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

log = logging.getLogger("sglang_lsp.lsp")

HEADER_LIMIT = 64 * 1024  # a header block (all its lines) longer than this is not a header
BODY_LIMIT = 512 * 1024 * 1024  # a Content-Length above this is not believed
CHUNK = 1 << 16
EXTENSION_WAIT = 1.0  # seconds to wait for the rest of a body whose Content-Length is short
EXTENSION_LIMIT = 4  # ... and at most this many times the declared length more

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SERVER_NOT_INITIALIZED = -32002

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_HEADER_NAME = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_WHITESPACE = b" \t\r\n"


@dataclass
class Incoming:
    """What :meth:`FrameReader.read` hands on: a decoded message, or a problem (a frame that
    was dropped: ``message`` is ``None``)."""

    message: Any = None
    problem: str | None = None


def _truncated(error: json.JSONDecodeError) -> bool:
    """Whether a JSON error looks like a value cut short (rather than one that is wrong)."""
    return error.pos >= len(error.doc) - 16 or error.msg.startswith(("Unterminated string", "Invalid \\u"))


def _decode(body: bytes) -> str:
    """UTF-8, with invalid bytes kept as lone surrogates (``surrogateescape``: the text encodes
    back to the same bytes; the documents layer turns them into U+FFFD)."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("utf-8", "surrogateescape")


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


class FrameReader:
    """Frames from ``read_some(n)``: an awaitable giving at most ``n`` bytes, as soon as there
    are any (``b""`` at the end of the stream)."""

    def __init__(self, read_some: Callable[[int], Awaitable[bytes]]):
        self._read_some = read_some
        self.buffer = bytearray()
        self.eof = False
        self.hunting = False  # skipping to the next Content-Length after a frame was given up
        self._forgiven: set[str] = set()

    async def _fill(self, timeout: float | None = None) -> bool:
        """Read more into the buffer; ``False`` at the end of the stream (or after
        ``timeout`` seconds without data)."""
        if self.eof:
            return False
        try:
            chunk = await (self._read_some(CHUNK) if timeout is None
                           else asyncio.wait_for(self._read_some(CHUNK), timeout))
        except asyncio.TimeoutError:
            return False
        except (OSError, ValueError) as exc:  # a closed or broken stream ends the connection
            log.error("reading from the client failed: %s", exc)
            chunk = b""
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    def _forgive(self, habit: str) -> None:
        if habit not in self._forgiven:
            self._forgiven.add(habit)
            log.warning("the client sends %s; accepted", habit)

    def _resync(self, start: int) -> None:
        """Skip to the next ``Content-Length:`` at or after ``start``: what comes before it is
        not read as a header (see :meth:`_hunt`)."""
        del self.buffer[:start]
        self.hunting = True

    def _hunt(self) -> bool:
        """While resynchronising: drop the buffer up to the next ``Content-Length:`` (or all of
        it but a tail that may hold the start of one); whether one was found."""
        m = _HEADER_NAME.search(self.buffer)
        if m is not None:
            del self.buffer[: m.start()]
            self.hunting = False
            return True
        del self.buffer[: max(0, len(self.buffer) - len(b"content-length"))]
        return False

    async def read(self) -> Incoming | None:
        """The next message or problem; ``None`` at the end of the stream."""
        while True:
            if self.hunting and not self._hunt():
                if not await self._fill():
                    return None
                continue
            # whitespace between frames (a stray blank line) is not an error
            skip = len(self.buffer) - len(self.buffer.lstrip(_WHITESPACE))
            if skip:
                del self.buffer[:skip]
            if not self.buffer:
                if not await self._fill():
                    return None
                continue
            end = _HEADER_END.search(self.buffer, 0, HEADER_LIMIT + 4)
            if end is None:
                if len(self.buffer) > HEADER_LIMIT:
                    problem = f"no end of a header within {HEADER_LIMIT} bytes (starting {bytes(self.buffer[:40])!r})"
                    self._resync(1)
                    return Incoming(problem=problem)
                if not await self._fill():
                    if self.buffer.strip(_WHITESPACE):
                        log.error("the stream ended inside a header: %r", bytes(self.buffer[:80]))
                    return None
                continue
            header = bytes(self.buffer[: end.start()])
            length, problem = self._content_length(header, end.group())
            if problem is not None:
                self._resync(1)
                return Incoming(problem=problem)
            del self.buffer[: end.end()]
            return await self._body(length)

    def _content_length(self, header: bytes, terminator: bytes) -> tuple[int, str | None]:
        length = None
        for line in _LINE_END.split(header):
            name, colon, value = line.partition(b":")
            key = name.strip()
            if not colon or not key or len(key.split()) != 1:
                return 0, f"not a header line: {line[:80]!r}"
            value = value.strip()
            if key.lower() != b"content-length":
                continue
            if name != b"Content-Length":
                self._forgive(f"the header name {name.decode('ascii', 'replace')!r} (not 'Content-Length')")
            if not line[len(name) + 1:].startswith(b" "):
                self._forgive("'Content-Length:' without a blank after the colon")
            if not value.isdigit() or int(value) > BODY_LIMIT:
                return 0, f"Content-Length {value[:40]!r} is not a byte count"
            length = int(value)
        if b"\r\n" not in terminator or (b"\n" in header and b"\r\n" not in header):
            self._forgive("header lines that end in LF only")
        if length is None:
            return 0, f"a header without Content-Length: {header[:80]!r}"
        return length, None

    async def _body(self, length: int) -> Incoming | None:
        while len(self.buffer) < length:
            early = self._complete_value()
            if early is not None:
                log.error("Content-Length %d is more than the message's %d bytes: the rest is read as the next "
                          "frame", length, early[1])
                return early[0]
            if not await self._fill():
                log.error("the stream ended inside a message body (%d of %d bytes)", len(self.buffer), length)
                return None
        body = bytes(self.buffer[:length])
        text = _decode(body)
        try:
            message, end = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError as error:
            if _truncated(error):
                return await self._extend(length, error)
            self._resync(1)
            return Incoming(problem=f"the body is not JSON ({error.msg} at {error.pos})")
        rest = text[end:]
        if rest.strip():
            # the value ended early: the declared length is too long, and the rest belongs to
            # what follows (most often the next frame's header)
            used = _size(text[:end])
            log.error("Content-Length %d is %d bytes more than the message: the rest is read as the next frame",
                      length, length - used)
            del self.buffer[:used]
            return Incoming(message)
        del self.buffer[:length]
        return Incoming(message)

    def _complete_value(self) -> tuple[Incoming, int] | None:
        """While the body is shorter than its Content-Length: the message, when what has
        arrived is already a whole JSON object (nothing valid can follow it within the body,
        so the length is too long and the client may be waiting for an answer)."""
        end = len(self.buffer)
        while end and self.buffer[end - 1] in _WHITESPACE:  # only the whitespace at the end: no copy
            end -= 1
        if not end or self.buffer[end - 1] != ord("}"):
            return None
        try:
            message = json.loads(_decode(bytes(self.buffer[:end])))
        except json.JSONDecodeError:
            return None
        del self.buffer[:]
        return Incoming(message), end

    async def _extend(self, length: int, first: json.JSONDecodeError) -> Incoming:
        """A body whose JSON is cut short by its Content-Length: read on up to where the value
        ends (the bytes the client meant, arrived or arriving within EXTENSION_WAIT seconds),
        else give it up."""
        limit = length + max(EXTENSION_LIMIT * length, CHUNK)
        decoder = json.JSONDecoder()
        while True:
            text = _decode(bytes(self.buffer))
            try:
                message, end = decoder.raw_decode(text)  # the first value; what follows is not read
            except json.JSONDecodeError as error:
                if _truncated(error) and len(self.buffer) < limit and await self._fill(EXTENSION_WAIT):
                    continue
                self._resync(1)
                return Incoming(problem=f"the body is not JSON ({first.msg} at {first.pos} of "
                                        f"Content-Length {length})")
            used = _size(text[:end])
            why = " (it counts characters, not bytes)" if end == length else ""
            log.error("Content-Length %d is %d bytes short of the message%s", length, used - length, why)
            del self.buffer[:used]
            return Incoming(message)


# --- the envelope --------------------------------------------------------------------------


def valid_id(value: Any) -> bool:
    """A request id LSP allows: an integer or a string."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_error(message: Any) -> tuple[Any, str] | None:
    """``(id to answer with, reason)`` when ``message`` is not a JSON-RPC 2.0 message the
    server can handle (the id is ``None`` when the message has none usable); ``None`` when
    it is fine. A malformed notification or response gets no answer: the caller logs it."""
    if not isinstance(message, dict):
        kind = "a batch (an array)" if isinstance(message, list) else f"a JSON {type(message).__name__}"
        return None, f"the message is {kind}, not an object"
    msg_id = message.get("id")
    answer = msg_id if valid_id(msg_id) else None
    if message.get("jsonrpc") != "2.0":
        return answer, f"\"jsonrpc\" must be \"2.0\", not {json.dumps(message.get('jsonrpc'))[:40]}"
    if "id" in message and not valid_id(msg_id):
        return None, f"the id must be an integer or a string, not {json.dumps(msg_id)[:40]}"
    if "method" in message and not isinstance(message["method"], str):
        return answer, "the method must be a string"
    if "method" not in message and "id" not in message:
        return None, "the message has neither a method nor an id"
    return None


def error_response(msg_id: Any, code: int, message: str) -> str:
    """A JSON-RPC error response as JSON text (``"id": null`` written out, as the spec asks when
    the request's id is unknown)."""
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


# --- where the bytes come from ---------------------------------------------------------------


def _pollable(fileno: int) -> bool:
    """Whether the event loop can watch ``fileno`` (epoll refuses regular files and
    ``/dev/null``, and a pipe transport on them fails later inside a loop callback)."""
    try:
        mode = os.fstat(fileno).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def stdin_source(stdin: Any, executor: Any) -> Callable[[int], Awaitable[bytes]]:
    """``read_some`` over ``stdin``: read by the event loop as data arrives when it is a pipe
    or a socket (no thread switch per message), else by ``os.read`` in ``executor`` (a regular
    file, ``/dev/null``, a terminal …)."""
    loop = asyncio.get_running_loop()
    try:
        fileno = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fileno = None
    if fileno is not None and _pollable(fileno):
        stream = asyncio.StreamReader(limit=CHUNK, loop=loop)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream, loop=loop), stdin)
            return stream.read
        except (OSError, ValueError, NotImplementedError) as exc:
            log.debug("stdin is read in a thread (%s)", exc)
    if fileno is not None:
        return lambda n: loop.run_in_executor(executor, os.read, fileno, n)
    return lambda n: loop.run_in_executor(executor, stdin.read, n)
