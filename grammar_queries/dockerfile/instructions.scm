; Purpose: the instructions of a Dockerfile / Containerfile that extraction reads
;   (extract/dockerfile.py): each stage's base image (for the sglang release its tag names), the
;   ARG and ENV instructions (the variables of a stage), and the instructions that run a command
;   (RUN at build time, CMD and ENTRYPOINT when the container starts), in shell form, exec form
;   (a JSON array) or as a here-document.
; Captures:
;   @from            a FROM instruction (a stage starts)
;   @from.image      its image reference
;   @from.alias      the stage's name (`AS name`)
;   @variables       an ARG or ENV instruction
;   @command         a RUN, CMD or ENTRYPOINT instruction
;   @command.shell   a command's shell form (the command text; comment lines are children of it)
;   @command.exec    a command's exec form (a JSON array of strings)
;   @command.heredoc the body of a here-document a RUN instruction runs (`RUN <<EOF … EOF`) (`RUN <<EOF … EOF`)
; Grammar: tree-sitter-containerfile 0.9.x (ABI 15)
(from_instruction
  (image_spec) @from.image
  (image_alias)? @from.alias) @from

[(arg_instruction) (env_instruction)] @variables

[(run_instruction) (cmd_instruction) (entrypoint_instruction)] @command

(run_instruction (shell_command) @command.shell)
(run_instruction (json_string_array) @command.exec)
(run_instruction (heredoc_block (heredoc_content) @command.heredoc))

(cmd_instruction (shell_command) @command.shell)
(cmd_instruction (json_string_array) @command.exec)

(entrypoint_instruction (shell_command) @command.shell)
(entrypoint_instruction (json_string_array) @command.exec)
