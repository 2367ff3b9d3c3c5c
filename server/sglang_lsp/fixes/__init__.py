"""Fixes as structured edits: rendered for each syntax (shell words, YAML items, ``--config``
keys) and applied to a text."""
