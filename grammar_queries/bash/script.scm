; Purpose: the one pass over a shell script that extraction needs: every simple command (the
;   Python side decides which ones launch sglang, see invocation.match_launch, and reads the
;   arguments and prefix assignments of those few from the node's fields) and everything that
;   gives a shell variable a value, so `$VAR`, `${VAR:-x}` and `"${ARR[@]}"` can be resolved
;   from the same file. One query, no predicates: predicates and quantified captures cost more
;   than the rest of the pass (measured in bench/bench_check.py). Extraction (shell._Pass) walks
;   the tree to the same effect, since compiling any bash query costs a cold check more than
;   the walk (a test compares the two); the language server's incremental re-check runs it.
; Captures:
;   @command        every `command` node (prefix assignments and redirections included)
;   @command.name   its `command_name` (`read`, `source`, `.` and `eval` are told apart by text)
;   @assignment     every `variable_assignment` (plain, `export`, `declare`, `local`, prefix)
;   @clobber.name   the variable of a `for` loop, whose value cannot be known
; Grammar: tree-sitter-bash 0.25.x (ABI 15)
(command
  name: (command_name) @command.name) @command

(variable_assignment) @assignment

(for_statement
  variable: (variable_name) @clobber.name)
