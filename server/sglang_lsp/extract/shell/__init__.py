"""Shell scripts → sglang launches (tree-sitter-bash): :mod:`.script` finds the launch commands
and builds their words, :mod:`.expansion` gives each word its value as bash would, :mod:`.source`
maps every byte back into the checked file."""
