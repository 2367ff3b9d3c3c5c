"""Editor features as pure functions of a check :class:`~sglang_lsp.engine.check.Result` (and a byte
offset): each takes core objects and returns lsprotocol objects. No I/O, no server state."""
