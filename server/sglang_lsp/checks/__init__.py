"""ParsedArgs + context -> Findings: the checks of each kind (shell text, YAML, deployment,
knowledge-base rules)."""
