; Purpose: every simple command of a shell script, with its name and its argument words.
;   The Python side decides which commands launch sglang (see invocation.match_launch).
; Captures:
;   @command           the whole `command` node (prefix assignments and redirections included)
;   @command.name      its `command_name`
;   @command.argument  each argument word (word, string, raw_string, concatenation, expansion …)
;   @command.env       each prefix assignment (`CUDA_VISIBLE_DEVICES=0 python3 …`)
; Grammar: tree-sitter-bash 0.25.x (ABI 15)
(command
  (variable_assignment)* @command.env
  name: (command_name) @command.name
  argument: (_)* @command.argument) @command
