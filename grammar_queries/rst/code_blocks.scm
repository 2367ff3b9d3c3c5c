; Purpose: the code blocks of a reStructuredText document: `.. code-block:: LANG` (and `code`,
;   `sourcecode`, `code-cell`, sphinx-prompt's `prompt`) directives with their language argument,
;   `::` literal blocks (untagged: read as shell when their text launches sglang), and comments
;   (`.. sglang-lsp: ignore` right before a block leaves it out). extract/rst.py reads each block
;   as a document of its own.
; Captures:
;   @block.arguments  a code directive's arguments (the language, and a prompt's prompt)
;   @block.content    its content (the directive is the content's grandparent)
;   @block.literal    a `::` literal block
;   @nested           the content of any other directive (`.. tab::`, `.. note::` …): the grammar
;                     leaves it unparsed, extraction parses it again for the blocks inside
;   @comment          a comment
; Grammar: tree-sitter-rst 0.2.x (ABI 14)
((directive
   name: (type) @_name
   body: (body
     (arguments)? @block.arguments
     (content) @block.content))
 (#any-of? @_name "code-block" "code" "sourcecode" "code-cell" "prompt"))

((directive
   name: (type) @_other
   body: (body (content) @nested))
 (#not-any-of? @_other "code-block" "code" "sourcecode" "code-cell" "prompt"))

(literal_block) @block.literal

(comment) @comment
