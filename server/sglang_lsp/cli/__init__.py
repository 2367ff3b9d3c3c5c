"""The command line: commands, file discovery, output formats, writing fixed files."""
