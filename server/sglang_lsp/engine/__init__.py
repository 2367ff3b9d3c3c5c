"""The one check entry point both front-ends call, its per-file settings and suppressions,
fix application, and the language server's incremental re-checks."""
