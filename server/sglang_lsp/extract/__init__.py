"""Text -> Invocations: one module per file kind (shell, YAML, sglang --config files). Extractors
find launches and their words with exact source ranges; they judge nothing."""
