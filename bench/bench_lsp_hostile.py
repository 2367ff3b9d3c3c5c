#!/usr/bin/env python3
"""The language server under hostile input and sloppy clients: a table of cases and what
happened (answered or not, in how long, exit code, diagnostics, RSS).

This is a benchmark, not a test: it prints what it saw and never fails. The regression tests
of the same cases (without timings) are tests/test_lsp_hostile.py and tests/test_lsp_protocol.py.

Each case starts a fresh ``sglang-lsp serve`` and drives it with the raw client of
tests/lsp_wire.py. "answered" means a valid request sent *after* the bad input got its
response: the server is still listening. Every wait is capped (``--timeout``, default 30 s);
a case that reaches the cap is reported as such, and its server is killed (also when its RSS
passes ``--rss-cap-mb``).

Usage (from the repository root)::

    python bench/bench_lsp_hostile.py                     # every case
    python bench/bench_lsp_hostile.py --only framing      # one group: framing, lifecycle,
                                                          # text, big, deep, memory, explain, yaml
    PYTHONPATH=/some/other/checkout/server python bench/bench_lsp_hostile.py   # compare

Hover latency while a big document is checked: a hover on another (small) document is sent
every 50 ms from the moment the big one is opened until its diagnostics arrive; the median
and maximum time to the answer are printed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
if importlib.util.find_spec("sglang_lsp") is None:
    sys.path.insert(0, str(ROOT / "server"))

from lsp_wire import Wire, frame  # noqa: E402

import sglang_lsp  # noqa: E402

URI = (ROOT / "bench" / "virtual" / "hostile.sh").as_uri()
OTHER = (ROOT / "bench" / "virtual" / "other.sh").as_uri()
SMALL = "python -m sglang.launch_server --model-path m --tp 2 --quantization nope\n"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}}
HOVER_OTHER = {"textDocument": {"uri": OTHER}, "position": {"line": 0, "character": 50}}

ROWS: list[tuple[str, str, str]] = []
TIMEOUT = 30.0
RSS_CAP = 4000.0


def row(group: str, case: str, outcome: str) -> None:
    ROWS.append((group, case, outcome))
    print(f"{group:<10} {case:<52} {outcome}", flush=True)


def probe(w: Wire, timeout: float | None = None) -> str:
    """Send a valid request; 'answered in X ms' or 'NO ANSWER in T s'."""
    t0 = time.monotonic()
    msg_id = w.request("textDocument/hover", HOVER_OTHER)
    try:
        w.response(msg_id, timeout or TIMEOUT)
        return f"answered in {(time.monotonic() - t0) * 1000:.0f} ms"
    except AssertionError:
        return f"NO ANSWER in {timeout or TIMEOUT:g} s" + ("" if w.alive() else f" (exited {w.proc.returncode})")


def watch_rss(w: Wire, stop: threading.Event, peak: list[float]) -> None:
    while not stop.is_set() and w.alive():
        rss = w.rss_mb()
        if rss == rss:
            peak[0] = max(peak[0], rss)
        if rss > RSS_CAP:
            w.kill()
            return
        time.sleep(0.2)


def ended(w: Wire) -> str:
    w.close_stdin()
    try:
        code = w.proc.wait(timeout=10)
        return f"exit {code}"
    except Exception:
        w.kill()
        return "no exit after stdin closed (killed)"


# --- framing -----------------------------------------------------------------------------------


def framing() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": HOVER_OTHER}).encode()
    non_ascii = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": OTHER, "languageId": "shellscript", "version": 1,
        "text": "# größe ünd ümlaute — ✓\n" + SMALL}}}, ensure_ascii=False)
    cases = {
        "Content-Length 3 bytes short": frame(body, length=len(body) - 3),
        "Content-Length 3 bytes long (a frame follows)": frame(body, length=len(body) + 3),
        "header in lower case": frame(body, header=b"content-length: %d\r\n\r\n" % len(body)),
        "Content-Length:N without the blank": frame(body, header=b"Content-Length:%d\r\n\r\n" % len(body)),
        "LF-only header lines": frame(body, header=b"Content-Length: %d\n\n" % len(body)),
        "a header line of 1 MiB": frame(body, header=b"X-Junk: " + b"a" * (1 << 20) + b"\r\nContent-Length: %d\r\n\r\n"
                                        % len(body)),
        "a stdin line over 1 MiB without newline": b"x" * ((1 << 20) + 100),
        "request whose id is an object": frame({"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover",
                                                "params": HOVER_OTHER}),
        "request without \"jsonrpc\"": frame({"id": 77, "method": "textDocument/hover", "params": HOVER_OTHER}),
        "Content-Length counts characters (non-ASCII body)": b"Content-Length: %d\r\n\r\n" % len(non_ascii)
                                                             + non_ascii.encode(),
        "body that is not JSON": frame(b"{not json at all}"),
        "Content-Length not a number": frame(body, header=b"Content-Length: lots\r\n\r\n"),
    }
    for case, data in cases.items():
        w = Wire()
        try:
            w.send(INIT)
            w.response(1, TIMEOUT)
            w.send_raw(data)
            n0 = len(w.messages)
            outcome = probe(w)
            extra = [m for _, m, _ in w.messages[:n0 + 5] if "error" in m and m.get("id") in (None, 77)]
            if extra:
                outcome += f"; error response {extra[0]['error']['code']}"
            if case.startswith("Content-Length 3 bytes long"):
                pass
            row("framing", case, outcome + "; " + ended(w))
        finally:
            w.kill()
    # a frame too long as the last message before the client waits for its answer
    w = Wire()
    try:
        w.send(INIT)
        w.response(1, TIMEOUT)
        w.send_raw(frame(body, length=len(body) + 3))
        try:
            w.response(2, 5)
            outcome = "answered"
        except AssertionError:
            outcome = "NO ANSWER in 5 s"
        row("framing", "Content-Length 3 bytes long, then the client waits", outcome + "; " + ended(w))
    finally:
        w.kill()
    w = Wire(stdin=subprocess.DEVNULL)
    try:
        code = w.proc.wait(timeout=TIMEOUT)
        w.finish(5)
        tb = b"Traceback" in w.stderr
        row("framing", "serve < /dev/null", f"exit {code}" + ("; TRACEBACK on stderr" if tb else "; no traceback"))
    except Exception:
        w.kill()
        row("framing", "serve < /dev/null", f"NO EXIT in {TIMEOUT:g} s")


# --- lifecycle -----------------------------------------------------------------------------------


def _answer(w: Wire, msg_id: int, timeout: float = 10) -> str:
    try:
        m = w.response(msg_id, timeout)
    except AssertionError:
        return "no answer" + ("" if w.alive() else f" (exited {w.proc.returncode})")
    return f"error {m['error']['code']}" if "error" in m else f"result {json.dumps(m.get('result'))[:40]}"


def lifecycle() -> None:
    w = Wire()
    try:
        row("lifecycle", "hover before initialize", _answer(w, w.request("textDocument/hover", HOVER_OTHER)))
    finally:
        w.kill()
    w = Wire()
    try:
        outcome = _answer(w, w.request("shutdown"))
        w.notify("exit")
        row("lifecycle", "shutdown before initialize (then exit)", outcome + "; " + ended(w))
    finally:
        w.kill()
    w = Wire()
    try:
        w.initialize({"general": {"positionEncodings": ["utf-16"]}})
        line = "echo ✓✓✓✓ 𝄞𝄞𝄞𝄞; python -m sglang.launch_server --model-path m --tp 3x\n"
        w.open(URI, line)
        first = w.published(URI, 1, TIMEOUT)["diagnostics"]
        second = _answer(w, w.request("initialize", {"processId": None, "capabilities": {
            "general": {"positionEncodings": ["utf-8"]}}}))
        w.change(URI, 2, [{"text": line + "\n"}])
        after = w.published(URI, 2, TIMEOUT)["diagnostics"]
        moved = [d["range"] for d in first] != [d["range"] for d in after]
        row("lifecycle", "second initialize (utf-8 after utf-16)",
            second + ("; position encoding SWITCHED" if moved else "; position encoding kept"))
    finally:
        w.kill()
    w = Wire()
    try:
        w.initialize()
        w.call("shutdown")
        row("lifecycle", "hover after shutdown", _answer(w, w.request("textDocument/hover", HOVER_OTHER), 5))
        w.notify("exit")
        row("lifecycle", "exit after shutdown", ended(w))
    finally:
        w.kill()
    w = Wire()
    try:
        w.initialize()
        w.notify("exit")
        row("lifecycle", "exit without shutdown", ended(w))
    finally:
        w.kill()


# --- text ------------------------------------------------------------------------------------------


def surrogates() -> None:
    for where in ("didOpen", "didChange"):
        w = Wire()
        try:
            w.initialize()
            text = "# a\ud800b\npython -m sglang.launch_server --model-path m --tp 3x\n"
            raw = None
            if where == "didOpen":
                raw = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                    "uri": URI, "languageId": "shellscript", "version": 1, "text": text}}})
                w.send_raw(frame(raw.encode()))
                version = 1
            else:
                w.open(URI, "# ab\npython -m sglang.launch_server --model-path m --tp 3x\n")
                w.published(URI, 1, TIMEOUT)
                w.change(URI, 2, [{"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}},
                                   "text": "\ud800"}])
                w.change(URI, 3, [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 4}},
                                   "text": "Z"}])
                version = 3
            try:
                p = w.published(URI, version, 15)
                outcome = f"published {len(p['diagnostics'])} diagnostics"
            except AssertionError:
                outcome = "NO diagnostics in 15 s"
            pops = [m for _, m, _ in w.messages if m.get("method") == "window/showMessage"]
            if pops:
                outcome += f"; showMessage: {pops[0]['params']['message'][:60]!r}"
            if where == "didChange":
                hid = w.hover(URI, 0, 5)
                outcome += "; " + _answer(w, hid)
            row("text", f"lone surrogate in {where}", outcome)
        finally:
            w.kill()


# --- big documents ----------------------------------------------------------------------------------


def big_case(case: str, text: str, language_id: str = "shellscript", uri: str = URI, group: str = "big") -> None:
    w = Wire(["--log-level", "warning"])
    stop = threading.Event()
    peak = [0.0]
    watcher = threading.Thread(target=watch_rss, args=(w, stop, peak), daemon=True)
    try:
        w.initialize()
        w.open(OTHER, SMALL)
        w.published(OTHER, 1, TIMEOUT)
        watcher.start()
        t0 = time.monotonic()
        w.open(uri, text, language_id)
        latencies = []
        published = None
        while time.monotonic() - t0 < TIMEOUT and w.alive():
            t = time.monotonic()
            msg_id = w.request("textDocument/hover", HOVER_OTHER)
            try:
                w.response(msg_id, max(0.1, TIMEOUT - (t - t0)))
            except AssertionError:
                latencies.append(float("inf"))
                break
            latencies.append((time.monotonic() - t) * 1000)
            found = w.arrival(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                              and m["params"]["uri"] == uri)
            if found is not None:
                published = found
                break
            time.sleep(0.05)
        size = 0
        outcome = ""
        if published is not None:
            index, at = published
            size = w.messages[index][2]
            p = w.messages[index][1]["params"]
            outcome = (f"published {len(p['diagnostics'])} diagnostics ({size / 1e6:.2f} MB) after "
                       f"{at - t0:.1f} s")
            first = p["diagnostics"][:1]
            if first and len(p["diagnostics"]) <= 3:
                outcome += f" [{first[0]['message'][:70]}]"
        else:
            outcome = f"NO diagnostics in {TIMEOUT:g} s" + ("" if w.alive() else f" (exit {w.proc.returncode})")
        finite = [x for x in latencies if x != float("inf")]
        if latencies:
            outcome += (f"; hover on another doc: median {statistics.median(finite) if finite else float('inf'):.0f} ms,"
                        f" max {max(latencies):.0f} ms ({len(latencies)} hovers)")
        outcome += f"; peak RSS {peak[0]:.0f} MB" + (" (KILLED at cap)" if peak[0] > RSS_CAP else "")
        row(group, case, outcome)
    finally:
        stop.set()
        w.kill()


def big() -> None:
    launch = "python3 -m sglang.launch_server --tp 8 "
    big_case("5 MB single line of repeated launches", (launch * (5_000_000 // len(launch))) + "\n")
    flags = "python3 -m sglang.launch_server --model-path m " + " ".join(["--tp 8"] * 50_000) + "\n"
    big_case(f"{len(flags) // 1000} KB line of 50,000 flags", flags)
    big_case("64 KB of NUL bytes", "\0" * 65536)
    big_case("1 MB of NUL bytes", "\0" * (1 << 20))
    rng = random.Random(5)
    control = "".join(rng.choice("\x01\x02\x03\x07\x08\x0b\x0c\x0e\x1b\x7fab ") for _ in range(1 << 20))
    big_case("1 MB of mostly control characters", control)
    many = "".join(f"python -m sglang.launch_server --model-path m --quantization nope{i % 7} --tp 2\n"
                   for i in range(5000))
    big_case("5,000 launches with one error each", many)
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_lsp import make_dense_script

    dense = make_dense_script(20_000)
    big_case(f"{len(dense) / 1e6:.1f} MB script of nothing but launches (checked)", dense)


# --- memory ------------------------------------------------------------------------------------------


def launch_script(lines: int, seed: int = 0) -> str:
    """A script of nothing but launches (bench_lsp's ``script-dense``)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_lsp import make_dense_script

    return make_dense_script(lines, seed=seed)


def memory() -> None:
    text = launch_script(1500)
    lines = text.split("\n")
    rng = random.Random(11)
    w = Wire(["--log-level", "warning"])
    try:
        w.initialize()
        w.open(URI, text)
        w.published(URI, 1, TIMEOUT)
        time.sleep(0.5)
        before = w.rss_mb()
        t0 = time.monotonic()
        peak = before
        for version in range(2, 2002):
            line = rng.randrange(len(lines) - 1)
            col = rng.randint(0, len(lines[line]))
            if rng.random() < 0.5 and col < len(lines[line]):
                change = {"range": {"start": {"line": line, "character": col},
                                    "end": {"line": line, "character": col + 1}}, "text": ""}
                lines[line] = lines[line][:col] + lines[line][col + 1:]
            else:
                ch = rng.choice("abc -=8")
                change = {"range": {"start": {"line": line, "character": col},
                                    "end": {"line": line, "character": col}}, "text": ch}
                lines[line] = lines[line][:col] + ch + lines[line][col:]
            w.change(URI, version, [change])
            time.sleep(0.01)  # an edit every 10 ms: checks run between them
            if version % 100 == 0:
                peak = max(peak, w.rss_mb())
        w.published(URI, 2001, TIMEOUT * 4)
        after = w.rss_mb()
        row("memory", "2,000 random edits of a 1,500-line launch script, one every 10 ms",
            f"RSS {before:.0f} -> {after:.0f} MB (peak seen {peak:.0f}) in {time.monotonic() - t0:.0f} s")
    finally:
        w.kill()
    for every_ms, edits in ((50, 600), (20, 600)):
        typing(text, every_ms, edits, 1)  # into MODEL=…, which every launch reads: no incremental re-check
    typing(text, 20, 600, text.count("\n") // 2)  # into a launch in the middle


def typing(text: str, every_ms: int, edits: int, line: int) -> None:
    w = Wire(["--log-level", "warning"])
    try:
        w.initialize()
        w.open(URI, text)
        w.published(URI, 1, TIMEOUT)
        time.sleep(0.5)
        before = w.rss_mb()
        column = len(text.split("\n")[line].rstrip(" \\"))
        t0 = time.monotonic()
        for i in range(edits):
            at = {"line": line, "character": column + i}
            w.change(URI, i + 2, [{"range": {"start": at, "end": at}, "text": "x"}])
            time.sleep(every_ms / 1000)
        typed = time.monotonic() - t0
        during = len(w.publishes(URI)) - 1
        peak = w.rss_mb()
        w.published(URI, edits + 1, TIMEOUT)
        row("memory", f"typing a char every {every_ms} ms into line {line + 1}, {edits} edits",
            f"RSS {before:.0f} -> {peak:.0f} MB; {during} publishes while typing "
            f"({during / typed:.1f}/s over {typed:.0f} s)")
    finally:
        w.kill()


# --- explain ---------------------------------------------------------------------------------------


def explain() -> None:
    for size in (60_000, 1_000_000):
        w = Wire(["--log-level", "warning"])
        try:
            w.initialize()
            w.open(OTHER, SMALL)
            w.published(OTHER, 1, TIMEOUT)
            t0 = time.monotonic()
            eid = w.request("workspace/executeCommand", {"command": "sglang-lsp.explainError",
                                                         "arguments": ["a" * size]})
            time.sleep(0.05)
            hover = probe(w)
            try:
                w.response(eid, TIMEOUT)
                done = f"explained in {time.monotonic() - t0:.2f} s"
            except AssertionError:
                done = f"NOT explained in {TIMEOUT:g} s"
            row("explain", f"explainError with {size:,} characters", f"{done}; hover meanwhile {hover}")
        finally:
            w.kill()


# --- yaml --------------------------------------------------------------------------------------------


def deep_yaml(depth: int) -> str:
    """``depth`` block mappings nested in each other (one space of indentation per level), a
    launch at the bottom."""
    lines = [" " * i + f"k{i}:" for i in range(depth)]
    lines.append(" " * depth + "command: [python3, -m, sglang.launch_server, --tp, '2']")
    return "\n".join(lines) + "\n"


def yaml() -> None:
    text = deep_yaml(2000)
    big_case(f"{len(text) / 1e6:.1f} MB YAML of 2,000 nested block mappings (a launch inside)", text, "yaml",
             (ROOT / "bench" / "virtual" / "deep.yaml").as_uri())
    text = deep_yaml(300)
    big_case(f"{len(text) / 1e3:.0f} KB YAML of 300 nested block mappings (a launch inside)", text, "yaml",
             (ROOT / "bench" / "virtual" / "deep300.yaml").as_uri())
    flow = "command: [python3, -m, sglang.launch_server]\nx: " + "[" * 10000 + "]" * 10000 + "\n"
    big_case("YAML of 10,000 nested flow sequences (a launch beside)", flow, "yaml",
             (ROOT / "bench" / "virtual" / "deep-flow.yaml").as_uri())


def deep() -> None:
    """Deep input the size guard lets through: short lines, a small document."""
    launch = "python -m sglang.launch_server --model-path m --tp 2"
    for n in (1000, 2000):
        chain = " && \\\n".join([launch] * n) + "\n"
        big_case(f"{n:,} launches joined by && ({len(chain) // 1000} KB)", chain, group="deep")
    ifs = "if true; then\n" * 2000 + launch + "\nfi" * 2000 + "\n"
    big_case("2,000 nested ifs around a launch", ifs, group="deep")


GROUPS = {"framing": framing, "lifecycle": lifecycle, "text": surrogates, "big": big, "deep": deep, "memory": memory,
          "explain": explain, "yaml": yaml}


def main() -> int:
    global TIMEOUT, RSS_CAP
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=sorted(GROUPS), action="append")
    p.add_argument("--timeout", type=float, default=30.0, help="cap of every wait, seconds (default 30)")
    p.add_argument("--rss-cap-mb", type=float, default=4000.0, help="kill a server past this RSS (default 4000)")
    args = p.parse_args()
    TIMEOUT, RSS_CAP = args.timeout, args.rss_cap_mb
    print(f"sglang_lsp from {Path(sglang_lsp.__file__).parent}; python {sys.version.split()[0]}", flush=True)
    for name, fn in GROUPS.items():
        if not args.only or name in args.only:
            fn()
    return 0


if __name__ == "__main__":
    sys.exit(main())
