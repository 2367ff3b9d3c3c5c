"""The protocol's corners, end to end: a real ``sglang-lsp serve`` process driven by the raw
client of tests/lsp_wire.py, which writes whatever bytes a test gives it.

* framing: every way a frame can be malformed (a Content-Length a few bytes short or long, or
  counting characters instead of bytes, a lower-case header name, ``Content-Length:5``, LF-only
  header lines, a header line of 1 MiB, a line over 1 MiB without a newline, a body that is not
  JSON, a Content-Length that is no number): the server logs it and either reads the message
  as the client meant it or answers a parse error and reads on from the next header. A request
  sent afterwards is always answered; nothing on stdout is ever anything but a valid frame;
* the JSON-RPC envelope: an ``id`` that is an object, a missing ``"jsonrpc"``, a batch;
* the lifecycle as the LSP specification says (requests before ``initialize``, a second
  ``initialize``, requests after ``shutdown``, ``exit`` with and without ``shutdown``,
  ``serve < /dev/null``);
* lone UTF-16 surrogates in a document's text.

Plus unit tests of :class:`sglang_lsp.lsp.transport.FrameReader` on the same cases, split at
every byte boundary the way a pipe may deliver them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from lsp_wire import ROOT, Wire, frame

from sglang_lsp.lsp import transport

URI = (ROOT / "tests" / "lsp-virtual" / "protocol.sh").as_uri()
OTHER = (ROOT / "tests" / "lsp-virtual" / "other.sh").as_uri()
SCRIPT = "python -m sglang.launch_server --model-path m --tp 2 --quantization nope\n"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}


def hover_request(msg_id, uri: str = OTHER) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 50}}}


def body(message: dict, ensure_ascii: bool = True) -> bytes:
    return json.dumps(message, ensure_ascii=ensure_ascii).encode("utf-8")


HOVER = body(hover_request(2))
NON_ASCII_OPEN = body({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": URI, "languageId": "shellscript", "version": 1,
    "text": "# größe — ✓ 𝄞\n" + SCRIPT}}}, ensure_ascii=False)

# (bad bytes, whether the message in them is read as meant: True, or dropped with a parse error)
FRAMING = {
    "length-3-short": (frame(HOVER, length=len(HOVER) - 3), True),
    "length-3-long": (frame(HOVER, length=len(HOVER) + 3), True),
    "length-counts-characters": (b"Content-Length: %d\r\n\r\n" % len(NON_ASCII_OPEN.decode()) + NON_ASCII_OPEN, True),
    "lower-case-header": (frame(HOVER, header=b"content-length: %d\r\n\r\n" % len(HOVER)), True),
    "no-blank-after-colon": (frame(HOVER, header=b"Content-Length:%d\r\n\r\n" % len(HOVER)), True),
    "lf-only-lines": (frame(HOVER, header=b"Content-Length: %d\n\n" % len(HOVER)), True),
    "other-headers": (frame(HOVER, header=b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(HOVER)), True),
    "header-line-of-1-MiB": (b"X-Junk: " + b"a" * (1 << 20) + b"\r\n" + frame(HOVER), True),
    "line-over-1-MiB-without-newline": (b"x" * ((1 << 20) + 100) + frame(HOVER), True),
    "body-not-json": (frame(b"{not json at all}"), False),
    "length-not-a-number": (frame(HOVER, header=b"Content-Length: lots\r\n\r\n"), False),
    "no-content-length": (frame(HOVER, header=b"Content-Type: x\r\n\r\n"), False),
}


def _session(wire: Wire) -> None:
    wire.send(INIT)
    wire.response(1)
    wire.notify("initialized", {})


def test_framing_errors_are_recovered_from(tmp_path):
    """Every malformed frame of FRAMING, one after the other to one server: after each, a
    well-formed request is answered; the message in the bad frame is read as the client meant
    it, or answered with a parse error."""
    log_file = tmp_path / "server.log"
    with Wire(log_file=log_file) as w:
        _session(w)
        for number, case in enumerate(sorted(FRAMING)):
            data, kept = FRAMING[case]
            msg_id = 100 + number
            data = data.replace(b'"id": 2', b'"id": %d' % msg_id)
            start = len(w.messages)
            w.send_raw(data)
            after = w.call("textDocument/hover", hover_request(0)["params"])  # the server reads on
            assert "result" in after, case
            if case == "length-counts-characters":
                w.published(URI, 1)  # the document opened with the text the client meant
                hover = w.call("textDocument/hover", {"textDocument": {"uri": URI},
                                                      "position": {"line": 1, "character": 47}})
                assert "--tp-size" in hover["result"]["contents"]["value"], case
            elif kept:
                assert "result" in w.response(msg_id), case
            else:
                errors = [m for _, m, _ in w.messages[start:] if "error" in m and m.get("id") is None]
                assert errors and errors[0]["error"]["code"] == transport.PARSE_ERROR, case
        assert w.shutdown_and_exit() == 0
        assert not w.violations  # stdout held valid frames only
    logged = log_file.read_text()
    assert "Traceback" not in logged
    for habit in ("header lines that end in LF only", "without a blank after the colon", "'content-length'",
                  "counts characters, not bytes", "bytes short of the message", "more than the message",
                  "the body is not JSON", "is not a byte count", "a header without Content-Length",
                  "no end of a header within"):
        assert habit in logged, habit  # each mistake of the client is in the log


def test_framing_length_too_long_as_the_last_message_is_answered():
    """A frame whose Content-Length is too long, and nothing after it: the client waits for the
    answer, so the server must not wait for the bytes the length promises."""
    with Wire() as w:
        _session(w)
        w.send_raw(frame(HOVER, length=len(HOVER) + 5))
        assert "result" in w.response(2)
        w.send(hover_request(3))  # and the next frame is read from where the message ended
        assert "result" in w.response(3)


def test_many_broken_frames_in_a_row_then_a_good_one():
    junk = b"".join(FRAMING[c][0] for c in ("body-not-json", "length-not-a-number", "no-content-length",
                                            "line-over-1-MiB-without-newline", "length-3-short"))
    with Wire() as w:
        _session(w)
        w.send_raw(junk + frame(hover_request(9)))
        assert "result" in w.response(9)
        assert w.alive()


INVALID_REQUESTS = [
    ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover", "params": {}}, None),
    ({"jsonrpc": "2.0", "id": [1], "method": "shutdown"}, None),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "shutdown"}, None),
    ({"id": 77, "method": "textDocument/hover", "params": {}}, 77),
    ({"jsonrpc": "1.0", "id": 78, "method": "shutdown"}, 78),
    ({"jsonrpc": "2.0", "id": 79, "method": 5}, 79),
    ([{"jsonrpc": "2.0", "id": 80, "method": "shutdown"}], None),
    ("just a string", None),
    ({"jsonrpc": "2.0"}, None),
]


def test_invalid_requests_get_invalid_request_errors():
    with Wire() as w:
        _session(w)
        for message, answer_id in INVALID_REQUESTS:
            start = len(w.messages)
            w.send(message)
            error = w.wait(lambda m: "error" in m, start=start)
            assert error["error"]["code"] == transport.INVALID_REQUEST, message
            assert error["id"] == answer_id, message
            assert "result" in w.call("textDocument/hover", hover_request(0)["params"]), message
        assert w.shutdown_and_exit() == 0  # nothing shut the server down by mistake


def test_invalid_notifications_and_responses_are_dropped_silently(tmp_path):
    log_file = tmp_path / "server.log"
    with Wire(log_file=log_file) as w:
        _session(w)
        start = len(w.messages)
        w.send({"method": "textDocument/didOpen", "params": {}})  # no "jsonrpc": a notification, no answer
        w.send({"jsonrpc": "2.0", "id": {"x": 1}, "result": None})  # a response with an object id
        answer = w.call("textDocument/hover", hover_request(0)["params"])
        assert "result" in answer
        assert not any("error" in m for _, m, _ in w.messages[start:])
    assert "invalid message" in log_file.read_text()


# --- the lifecycle ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["textDocument/hover", "shutdown", "workspace/executeCommand",
                                    "textDocument/documentSymbol", "no/suchMethod"])
def test_requests_before_initialize_are_refused(method):
    with Wire() as w:
        answer = w.call(method, hover_request(0)["params"] if method == "textDocument/hover" else None)
        assert answer["error"]["code"] == transport.SERVER_NOT_INITIALIZED
        # notifications before initialize are dropped: this didOpen is never checked
        w.open(URI, SCRIPT)
        assert w.initialize()["result"]["serverInfo"]["name"] == "sglang-lsp"
        symbols = w.call("textDocument/documentSymbol", {"textDocument": {"uri": URI}})
        assert symbols["result"] == []
        assert not w.publishes(URI)
        assert w.shutdown_and_exit() == 0


def test_exit_before_initialize_ends_the_server_with_1():
    with Wire() as w:
        w.notify("exit")
        w.close_stdin()
        assert w.finish() == 1


def test_second_initialize_is_refused_and_changes_nothing():
    line = "echo ✓✓✓✓ 𝄞𝄞; python -m sglang.launch_server --model-path m --tp 3x\n"
    with Wire() as w:
        first = w.initialize({"general": {"positionEncodings": ["utf-16"]}})
        assert first["result"]["capabilities"]["positionEncoding"] == "utf-16"
        w.open(URI, line)
        before = w.published(URI, 1)["diagnostics"]
        again = w.call("initialize", {"processId": None, "capabilities": {"general": {"positionEncodings": ["utf-8"]}}})
        assert again["error"]["code"] == transport.INVALID_REQUEST
        w.change(URI, 2, [{"text": line}])
        after = w.published(URI, 2)["diagnostics"]
        assert [d["range"] for d in after] == [d["range"] for d in before]  # still UTF-16 positions
        tp = next(d for d in after if d["code"] == "SGL003")
        assert tp["range"]["start"]["character"] == line.index("3x") + 2  # 4 ✓ + 2 astral (2 units each)


def test_requests_after_shutdown_are_refused_and_exit_gives_0():
    with Wire() as w:
        w.initialize()
        w.open(URI, SCRIPT)
        assert w.call("shutdown")["result"] is None
        for method in ("textDocument/hover", "shutdown", "initialize"):
            answer = w.call(method, hover_request(0, URI)["params"] if method == "textDocument/hover" else None)
            assert answer["error"]["code"] == transport.INVALID_REQUEST, method
        w.notify("exit")
        w.close_stdin()
        assert w.finish() == 0


def test_exit_without_shutdown_gives_1():
    with Wire() as w:
        w.initialize()
        w.notify("exit")
        w.close_stdin()
        assert w.finish() == 1


def test_serve_with_stdin_from_dev_null_exits_cleanly():
    proc = subprocess.run(Wire.command(), stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                          env=Wire.environment())
    assert proc.returncode == 1  # no shutdown was asked for
    assert proc.stdout == b""
    assert b"Traceback" not in proc.stderr


def test_serve_with_stdin_from_a_regular_file(tmp_path):
    session = tmp_path / "session.bin"
    session.write_bytes(frame(INIT) + frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
                        + frame({"jsonrpc": "2.0", "method": "exit"}))
    with session.open("rb") as stdin:
        proc = subprocess.run(Wire.command(), stdin=stdin, capture_output=True, timeout=120, env=Wire.environment())
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    assert b'"id": 2' in proc.stdout or b'"id":2' in proc.stdout


# --- lone surrogates ----------------------------------------------------------------------------------


def _raw_notification(method: str, params: dict) -> bytes:
    # json.dumps writes a lone surrogate as the escape "\ud800", as a JavaScript client does
    return frame(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode("ascii"))


def test_lone_surrogate_in_did_open(tmp_path):
    log_file = tmp_path / "server.log"
    with Wire(log_file=log_file) as w:
        w.initialize()
        for surrogate in ("\ud800", "\udbff", "\udc00", "\udfff", "\udc80"):
            uri = URI.replace("protocol.sh", f"surrogate-{ord(surrogate):x}.sh")
            text = f"# a{surrogate}b 𝄞\npython -m sglang.launch_server --model-path m --tp 3x # {surrogate}\n"
            w.send_raw(_raw_notification("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "shellscript", "version": 1, "text": text}}))
            diagnostics = w.published(uri, 1)["diagnostics"]
            assert [d["code"] for d in diagnostics if d["code"] == "SGL003"] == ["SGL003"], surrogate
        assert not [m for _, m, _ in w.messages if m.get("method") == "window/showMessage"]
    assert "UnicodeEncodeError" not in log_file.read_text()


def test_lone_surrogate_in_did_change_keeps_positions_in_step():
    """The client counts a lone surrogate as one UTF-16 code unit; so does U+FFFD, which the
    server keeps in its place: the edits after it land where the client means (a surrogate
    dropped, as before, put every later edit of the line one character off)."""
    line = "echo ab; python -m sglang.launch_server --model-path m --tp 2\n"
    with Wire() as w:
        w.initialize()
        w.open(URI, line)
        w.published(URI, 1)
        w.send_raw(_raw_notification("textDocument/didChange", {
            "textDocument": {"uri": URI, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 6}},
                                "text": "\ud800"}]}))
        # the client's line is now "echo a\ud800b; …--tp 2": replace its "2" (one unit further right)
        two = len(line) - 2 + 1
        w.change(URI, 3, [{"range": {"start": {"line": 0, "character": two}, "end": {"line": 0, "character": two + 1}},
                           "text": "3x"}])
        diagnostics = w.published(URI, 3)["diagnostics"]
        bad = next(d for d in diagnostics if d["code"] == "SGL003")
        assert bad["range"] == {"start": {"line": 0, "character": two}, "end": {"line": 0, "character": two + 2}}
        hover = w.call("textDocument/hover", {"textDocument": {"uri": URI},
                                              "position": {"line": 0, "character": line.index("--tp") + 2}})
        assert "--tp-size" in hover["result"]["contents"]["value"]
        assert not [m for _, m, _ in w.messages if m.get("method") == "window/showMessage"]


# --- the frame reader itself ------------------------------------------------------------------------


def _read_all(data: bytes, chunk: int) -> list[transport.Incoming]:
    """Every Incoming of ``data`` delivered ``chunk`` bytes at a time."""

    async def run() -> list[transport.Incoming]:
        pieces = [data[i:i + chunk] for i in range(0, len(data), chunk)]

        async def read_some(n: int) -> bytes:
            return pieces.pop(0) if pieces else b""

        reader = transport.FrameReader(read_some)
        out = []
        while (item := await reader.read()) is not None:
            out.append(item)
        return out

    return asyncio.run(run())


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 16])
@pytest.mark.parametrize("case", sorted(set(FRAMING) - {"header-line-of-1-MiB", "line-over-1-MiB-without-newline"}))
def test_frame_reader_in_pieces(case, chunk):
    data, kept = FRAMING[case]
    items = _read_all(data + frame(hover_request(5)), chunk)
    messages = [i.message for i in items if i.message is not None]
    assert messages[-1] == hover_request(5)  # resynchronised, whatever the chunking
    if kept:
        assert len(messages) == 2 and not [i for i in items if i.problem]
    else:
        assert len(messages) == 1 and [i for i in items if i.problem]


def test_frame_reader_keeps_little_of_a_huge_line():
    async def run() -> tuple[list, int]:
        sent = {"n": 0}

        async def read_some(n: int) -> bytes:
            if sent["n"] < 64 << 20:  # 64 MiB of one line
                sent["n"] += 1 << 16
                return b"y" * (1 << 16)
            return b""

        reader = transport.FrameReader(read_some)
        items, most = [], 0
        while (item := await reader.read()) is not None:
            items.append(item)
            most = max(most, len(reader.buffer))
        return items, most

    items, most = asyncio.run(run())
    assert most <= transport.HEADER_LIMIT + transport.CHUNK
    assert items and all(i.problem for i in items)


def test_frame_reader_body_split_inside_a_character():
    message = {"jsonrpc": "2.0", "method": "x", "params": {"text": "✓" * 50}}
    data = frame(body(message, ensure_ascii=False))
    for chunk in (1, 2, 5):
        assert [i.message for i in _read_all(data, chunk)] == [message]


def test_envelope_error():
    assert transport.envelope_error({"jsonrpc": "2.0", "id": 1, "method": "x"}) is None
    assert transport.envelope_error({"jsonrpc": "2.0", "method": "x"}) is None
    assert transport.envelope_error({"jsonrpc": "2.0", "id": "a", "result": 1}) is None
    assert transport.envelope_error({"jsonrpc": "2.0", "id": None, "method": "x"})[0] is None
    assert transport.envelope_error({"id": 3, "method": "x"})[0] == 3
