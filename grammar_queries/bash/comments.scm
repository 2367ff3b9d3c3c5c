; Purpose: comments, used to spot a comment line that cuts a `\`-continued command short.
; Captures:
;   @comment   every `comment` node
; Grammar: tree-sitter-bash 0.25.x (ABI 15)
(comment) @comment
