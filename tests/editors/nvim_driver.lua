-- Drives a real Neovim through the sglang-lsp client config (editors/nvim/lsp/sglang_lsp.lua)
-- for tests/test_editor_nvim.py, which starts
--
--   nvim --headless --clean --cmd 'set runtimepath^=<editors/nvim>' -c 'luafile nvim_driver.lua'
--
-- with SGLANG_NVIM_SPEC naming a JSON spec that pytest wrote:
--
--   { "result": path, "timeout_ms": n,
--     "user_config": {...}?,      -- passed to vim.lsp.config('sglang_lsp', ...), as a user would
--     "filetype_add": {...}?,     -- passed to vim.filetype.add(...)
--     "files": [ { "path": p,
--                  "hover": {"line": l, "col": c}?,                          -- 0-based, byte column
--                  "action": {"line": l, "col": c, "title": t, "code": k}?,  -- quick fix to apply
--                  "completion": {"line": l, "text": s, "col": c}? } ] }     -- line inserted, then asked at col
--
-- The driver only observes: it does what a user does (vim.lsp.enable, :edit, vim.lsp.buf.hover,
-- vim.lsp.buf.code_action, a completion request through the client), waits for each outcome
-- with vim.wait (a generous upper bound, never a timing assertion) and writes what it saw as
-- JSON to spec.result. pytest holds every expectation. On any Lua error the error and its
-- traceback are written instead, and Neovim quits either way.

local spec_path = assert(os.getenv('SGLANG_NVIM_SPEC'), 'SGLANG_NVIM_SPEC is not set')
local spec = vim.json.decode(table.concat(vim.fn.readfile(spec_path), '\n'), { luanil = { object = true } })
local timeout = spec.timeout_ms or 60000
local NAME = 'sglang_lsp'

local out = { files = {}, messages = {}, log = {} }

local function note(fmt, ...)
  table.insert(out.log, string.format('%.3f ', vim.uv.hrtime() / 1e9) .. string.format(fmt, ...))
end

-- window/showMessage and window/logMessage from the server (e.g. invalid settings)
vim.lsp.handlers['window/showMessage'] = function(_, params)
  table.insert(out.messages, { kind = 'showMessage', type = params.type, message = params.message })
end
vim.lsp.handlers['window/logMessage'] = function(_, params)
  table.insert(out.messages, { kind = 'logMessage', type = params.type, message = params.message })
end

local function wait(what, cond)
  local ok = vim.wait(timeout, cond, 20)
  note('%s: %s', what, ok and 'ok' or ('gave up after ' .. timeout .. ' ms'))
  return ok
end

local function client_of(buf)
  return vim.lsp.get_clients({ bufnr = buf, name = NAME })[1]
end

local function diagnostics(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      code = d.code, source = d.source, severity = d.severity, message = d.message,
    })
  end
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return list
end

local function has_code_at(buf, code, line)
  for _, d in ipairs(vim.diagnostic.get(buf, { lnum = line })) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function text_of(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), '\n') .. '\n'
end

local function float_windows()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      table.insert(wins, win)
    end
  end
  return wins
end

local function hover(buf, at)
  vim.api.nvim_win_set_cursor(0, { at.line + 1, at.col })
  vim.lsp.buf.hover()
  local got = wait('hover float', function()
    return #float_windows() > 0
  end)
  local lines = {}
  for _, win in ipairs(float_windows()) do
    vim.list_extend(lines, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false))
    vim.api.nvim_win_close(win, true)
  end
  return { shown = got, lines = lines, buffer = vim.api.nvim_get_current_buf() == buf }
end

local function code_action(buf, action)
  vim.api.nvim_win_set_cursor(0, { action.line + 1, action.col })
  local before = text_of(buf)
  local offered = {}
  vim.lsp.buf.code_action({
    context = { only = { 'quickfix' } },
    apply = true,
    filter = function(a)
      table.insert(offered, a.title)
      return a.title == action.title
    end,
  })
  local changed = wait('code action edit', function()
    return text_of(buf) ~= before
  end)
  local result = { offered = offered, changed = changed, text = text_of(buf) }
  -- the server re-checks the edited buffer: wait for the fixed diagnostic to go
  result.cleared = wait('diagnostic gone after the fix', function()
    return not has_code_at(buf, action.code, action.line)
  end)
  result.diagnostics = diagnostics(buf)
  return result
end

local function completion(buf, req)
  vim.api.nvim_buf_set_lines(buf, req.line, req.line, true, { req.text })
  local client = assert(client_of(buf), 'no sglang_lsp client for the completion request')
  local params = {
    textDocument = vim.lsp.util.make_text_document_params(buf),
    position = { line = req.line, character = req.col }, -- ASCII line: byte = UTF-16 column
    context = { triggerKind = 1 },
  }
  local response
  client:request('textDocument/completion', params, function(err, res)
    response = { err = err, res = res }
  end, buf)
  wait('completion response', function()
    return response ~= nil
  end)
  local labels = {}
  if response and response.res ~= nil and response.res ~= vim.NIL then
    for _, item in ipairs(response.res.items or response.res) do
      table.insert(labels, item.label)
    end
  end
  return { answered = response ~= nil, error = response and response.err or nil, labels = labels }
end

local function run()
  out.nvim = tostring(vim.version())
  out.exepath = vim.fn.exepath('sglang-lsp')
  if spec.filetype_add then
    vim.filetype.add(spec.filetype_add)
  end
  if spec.user_config then
    vim.lsp.config(NAME, spec.user_config)
  end
  -- harness only: record how the server process ends
  vim.lsp.config(NAME, {
    on_exit = function(code, signal)
      out.exit = { code = code, signal = signal }
    end,
  })

  -- what a user writes
  vim.lsp.enable(NAME)

  local resolved = vim.lsp.config[NAME]
  out.config = {
    cmd = resolved.cmd,
    filetypes = resolved.filetypes,
    root_markers = resolved.root_markers,
    settings = resolved.settings,
    language_ids = {},
  }
  for _, ft in ipairs(resolved.filetypes or {}) do
    out.config.language_ids[ft] = resolved.get_language_id and resolved.get_language_id(0, ft) or ft
  end

  for _, file in ipairs(spec.files) do
    vim.cmd.edit(vim.fn.fnameescape(file.path))
    local buf = vim.api.nvim_get_current_buf()
    local rec = { path = file.path, filetype = vim.bo[buf].filetype }
    out.files[#out.files + 1] = rec
    rec.attached = wait('attach ' .. file.path, function()
      return client_of(buf) ~= nil
    end)
    if not rec.attached then
      error('no sglang_lsp client attached to ' .. file.path .. ' (filetype ' .. rec.filetype .. ')')
    end
    wait('diagnostics of ' .. file.path, function()
      return #vim.diagnostic.get(buf) > 0
    end)
    rec.diagnostics = diagnostics(buf)
    if file.hover then
      rec.hover = hover(buf, file.hover)
    end
    if file.action then
      rec.action = code_action(buf, file.action)
    end
    if file.completion then
      rec.completion = completion(buf, file.completion)
    end
  end

  local client = vim.lsp.get_clients({ name = NAME })[1]
  if client then
    out.client = {
      count = #vim.lsp.get_clients({ name = NAME }),
      cmd = client.config.cmd,
      root_dir = client.root_dir,
      workspace_folders = client.workspace_folders,
      offset_encoding = client.offset_encoding,
      server_name = client.server_info and client.server_info.name,
      pull_diagnostics = client:supports_method('textDocument/diagnostic'),
    }
    client:stop()
    wait('server exit', function()
      return out.exit ~= nil
    end)
  end
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  out.error = err
end
vim.fn.writefile({ vim.json.encode(out) }, spec.result)
vim.cmd('qall!')
