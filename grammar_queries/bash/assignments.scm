; Purpose: everything that gives a shell variable a value, in document order, so that
;   `$VAR`, `${VAR:-x}` and `"${ARR[@]}"` can be resolved from the same file.
; Captures:
;   @assignment         a `variable_assignment` statement (plain, `export`, `declare`, `local`)
;   @assignment.name    the variable name
;   @assignment.value   the assigned value (word, string, array …); absent for `X=`
;   @clobber.name       a variable given an unknowable value (`for X in …`, `read X`)
;   @clobber.all        a command after which any variable may have changed (`source`, `.`, `eval`)
; Helper captures (start with @_) are only used by predicates.
; Grammar: tree-sitter-bash 0.25.x (ABI 15)
(variable_assignment
  name: (variable_name) @assignment.name
  value: (_)? @assignment.value) @assignment

(for_statement
  variable: (variable_name) @clobber.name)

(command
  name: (command_name (word) @_read)
  argument: (word) @clobber.name
  (#eq? @_read "read"))

(command
  name: (command_name (word) @_source)
  (#any-of? @_source "source" "." "eval")) @clobber.all
