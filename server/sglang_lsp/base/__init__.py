"""Shared vocabulary of every floor: findings and their fixes, the checked document, launch
invocations and their words, the tree-sitter queries. Imports nothing of ours but the package root."""
