; Purpose: YAML strings that may carry a shell command launching sglang: block scalars and
;   plain or quoted scalars whose text mentions `sglang.launch_server`, `sglang serve` or the
;   router (SkyPilot `run:`/`setup:`, GitHub Actions `run:`, GitLab `script:` items, Helm values
;   and Kubernetes/compose command strings). The Python side decodes each and parses it as shell.
; Captures:
;   @script   the scalar node (block_scalar, plain_scalar, single/double_quote_scalar)
; Grammar: tree-sitter-yaml 0.7.x (ABI 14)
([(block_scalar) (plain_scalar) (double_quote_scalar) (single_quote_scalar)] @script
  (#match? @script "sglang(\\.launch_server|_router|[ \\t\\n]+serve)"))
