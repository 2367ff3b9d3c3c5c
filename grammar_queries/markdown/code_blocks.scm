; Purpose: the code blocks of a Markdown (or MDX) document and the HTML comments between blocks:
;   extraction reads each fenced block tagged with a language sglang-lsp checks (bash, console,
;   yaml, python, dockerfile …), and an untagged one when its text launches sglang, as a document
;   of its own (extract/markdown.py); an HTML block `<!-- sglang-lsp: ignore -->` right before a
;   block leaves it out.
; Captures:
;   @block           a fenced code block (its fences included)
;   @block.language  the language word of its info string (absent when untagged)
;   @block.content   its text (container prefixes of quotes and list items are children of it)
;   @block.indented  an indented code block (untagged)
;   @html            an HTML block (a comment directive, or anything else)
; Grammar: tree-sitter-markdown 0.5.x (block grammar, ABI 15)
(fenced_code_block
  (info_string (language) @block.language)?
  (code_fence_content) @block.content) @block

(indented_code_block) @block.indented

(html_block) @html
