"""The kind of a file, by its name: what ``sglang-lsp check`` reads it as (the engine's document
language), before its text is looked at."""

from __future__ import annotations

import re
from pathlib import PurePath

SHELL_EXTENSIONS = frozenset({".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".command"})
YAML_EXTENSIONS = frozenset({".yaml", ".yml"})
# documents read part by part (code blocks, cells) and Python sources
EXTENSION_LANGUAGES = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".rst": "rst",
                       ".py": "python", ".ipynb": "notebook"}
# `Dockerfile`, `Dockerfile.cuda`, `cuda.Dockerfile`, `Containerfile` … (any case)
_DOCKERFILE = re.compile(r"(?:docker|container)file(?:\..+)?|.+\.(?:docker|container)file", re.I)


def is_dockerfile(path: str) -> bool:
    return _DOCKERFILE.fullmatch(PurePath(path).name) is not None


def language_by_name(path: str) -> str | None:
    """``shell``, ``yaml``, ``dockerfile``, ``markdown``, ``rst``, ``python``, ``notebook`` or
    ``None`` (the name does not say)."""
    suffix = PurePath(path).suffix.lower()
    if suffix in SHELL_EXTENSIONS:
        return "shell"
    if suffix in YAML_EXTENSIONS:
        return "yaml"
    if is_dockerfile(path):
        return "dockerfile"
    if suffix == ".tpl" and PurePath(path).parent.name == "templates":
        return "yaml"  # a Helm chart's named templates (`templates/_helpers.tpl`)
    return EXTENSION_LANGUAGES.get(suffix)
