"""The facts of an sglang release and argv -> ParsedArgs: the flag catalog, release history,
value types, user-built catalogs and argparse semantics (with the findings argparse itself
would raise)."""
