-- sglang-lsp for Neovim 0.11+ (`:help lsp-config`).
--
-- With this directory (editors/nvim) on 'runtimepath', one line enables it:
--
--   vim.lsp.enable('sglang_lsp')
--
-- Override any field with vim.lsp.config(), e.g. the target GPU:
--
--   vim.lsp.config('sglang_lsp', { settings = { ['sglang-lsp'] = { gpu = 'H100' } } })
--
-- The server must be on PATH (`pip install /path/to/sglang-lsp`, a clone of the repository, in
-- the environment Neovim sees; it is not on PyPI yet), or give its full path:
-- vim.lsp.config('sglang_lsp', { cmd = { '/path/to/venv/bin/sglang-lsp', 'serve' } }).

---@type vim.lsp.Config
return {
  cmd = { 'sglang-lsp', 'serve' },
  -- Neovim names compose files `yaml`; `yaml.docker-compose` is the filetype some setups and
  -- plugins give them (see editors/nvim/README.md). Dockerfiles, Markdown and reStructuredText
  -- docs and Python files are read for the launches in them (a file that mentions no sglang costs
  -- the server a byte scan); the server runs next to the ones you use for those languages.
  filetypes = { 'sh', 'bash', 'yaml', 'yaml.docker-compose', 'dockerfile', 'markdown', 'rst', 'python' },
  -- The languageId is the filetype, except for the compound compose filetype, which the server
  -- knows by VS Code's name. (A YAML file that launches no sglang costs the server a byte scan.)
  get_language_id = function(_, filetype)
    return filetype == 'yaml.docker-compose' and 'dockercompose' or filetype
  end,
  -- The workspace root is also searched for local model directories (`--model-path ./models/x`).
  -- A directory with a `.sglang-lsp.toml` (the server's configuration) is a root, else the git
  -- repository. Without a root the server runs in single-file mode, which works as well.
  root_markers = { '.sglang-lsp.toml', '.git' },
  -- The server's settings section `sglang-lsp` (server/sglang_lsp/lsp/settings.py), with its
  -- defaults. Neovim sends it with workspace/didChangeConfiguration and answers the server's
  -- workspace/configuration requests from it; invalid values fall back to the defaults with a
  -- message.
  settings = {
    ['sglang-lsp'] = {
      -- Target GPU profile: A100, L40S, H100, H200, H20, B200, B300, GB200, GB300, RTX_PRO_6000,
      -- MI300X, MI325X, MI355X, CPU. Unset (null): GPU-dependent rules stay quiet.
      gpu = vim.NIL,
      -- sglang version whose flag catalog is used. Unset (null): the newest bundled.
      sglangVersion = vim.NIL,
      -- Rule codes or prefixes to report (empty: all) and to leave out, e.g. { 'SGL007' }.
      select = {},
      ignore = {},
      -- Directories searched for local models (their config.json), before the workspace root.
      modelSearchPaths = {},
      -- Inlay hints: the flag an abbreviation resolves to (`--tp` → `--tp-size`), the value of
      -- a shell variable defined in the file, the GPU and release the file implies, and what
      -- sglang picks for flags a launch leaves unset on the target GPU. Neovim shows them after
      -- vim.lsp.inlay_hint.enable().
      inlayHints = false,
      -- Diagnostics shown per document (the most severe first); one more counts the rest.
      maxDiagnostics = 1000,
      -- Python interpreter whose installed sglang sets the target release (its catalog from
      -- `sglang-lsp catalog build`). Unset (null): the workspace's .venv, if it has sglang.
      python = vim.NIL,
    },
  },
}
