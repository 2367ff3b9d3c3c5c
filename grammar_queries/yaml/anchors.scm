; Purpose: anchored nodes (`&name`), so that aliases (`*name`) and merge keys (`<<: *name`)
;   in container and service mappings can be followed to what they repeat.
; Captures:
;   @anchor.name   the anchor's name (without `&`)
;   @anchor.node   the node the anchor is attached to
; Grammar: tree-sitter-yaml 0.7.x (ABI 14)
(block_node (anchor (anchor_name) @anchor.name)) @anchor.node
(flow_node (anchor (anchor_name) @anchor.name)) @anchor.node
