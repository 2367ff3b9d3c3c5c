"""sglang-lsp's own configuration: .sglang-lsp.toml / [tool.sglang-lsp], its discovery, rule
selection and severities."""
