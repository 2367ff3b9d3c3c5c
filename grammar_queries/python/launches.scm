; Purpose: where a Python file may launch sglang (extract/python.py reads each): the calls that
;   can (sglang's `Engine(...)` / `ServerArgs(...)`, its test helper `popen_launch_server(...)`,
;   `subprocess.run/Popen/call/check_call/check_output`, `os.system`, `os.popen`, `shlex.split`,
;   asyncio's subprocess functions), list literals that mention sglang (an argv), strings that
;   mention it (a command run through a shell later), and the imports that say which `Engine` and
;   `ServerArgs` are sglang's.
; Captures:
;   @call            a call of one of those names (its function's last name is matched)
;   @call.function   the called expression (`sgl.Engine`, `subprocess.Popen`, `ServerArgs` …)
;   @call.arguments  its argument list
;   @argv            a list literal whose text mentions sglang or holds a "-m" (its module may be
;                    a name bound to sglang's)
;   @string          a string (or implicitly concatenated strings) whose text mentions sglang
;   @import          an import statement that names sglang
; Grammar: tree-sitter-python 0.25.x (ABI 15)
((call
   function: [(identifier) (attribute)] @call.function
   arguments: (argument_list) @call.arguments) @call
 (#match? @call.function "(^|[.])(Engine|ServerArgs|popen_launch_server|system|popen|run|Popen|call|check_call|check_output|create_subprocess_exec|create_subprocess_shell|split)$"))

((list) @argv
 (#match? @argv "sglang|[\"']-m[\"']"))

([(string) (concatenated_string)] @string
 (#match? @string "sglang"))

([(import_statement) (import_from_statement)] @import
 (#match? @import "sglang"))
