-- Headless Neovim (0.11) against visa-lsp: open a kernel, wait for its diagnostics, hover the
-- offending mapping, ask for code actions, apply the preferred (padding) fix and see the
-- diagnostic disappear. Exits 0 on success, 1 with a message otherwise.
local server = assert(os.getenv("VISA_LSP"), "VISA_LSP: the server binary")
local file = assert(os.getenv("KERNEL"), "KERNEL: the kernel file to open")
local code = os.getenv("CODE") or "CAP-003"

local function say(msg) io.stdout:write(msg .. "\n") end
local function fail(msg)
  io.stderr:write("FAIL: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

vim.cmd.edit(vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start({
  name = "visa-lsp",
  cmd = { server },
  root_dir = vim.fs.dirname(file),
}, { bufnr = buf })
if not client_id then fail("visa-lsp did not start") end
local client = vim.lsp.get_client_by_id(client_id)

local function find(c)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == c then return d end
  end
end

if not vim.wait(20000, function() return find(code) ~= nil end, 50) then
  fail("no " .. code .. " diagnostic within 20 s")
end
local d = find(code)
say(("diagnostic %s at %d:%d: %s"):format(d.code, d.lnum + 1, d.col + 1, d.message))

-- Hover inside the offending span.
vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col + 1 })
local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
local hover = client:request_sync("textDocument/hover", params, 10000, buf)
local value = hover and hover.result and hover.result.contents and hover.result.contents.value
if not value or not value:find("size") then fail("hover without a size: " .. vim.inspect(hover)) end
say("hover: " .. value:gsub("\n.*", ""))

-- Code actions for the diagnostic; apply the preferred one.
local lsp_diag = d.user_data and d.user_data.lsp
local actions = client:request_sync("textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = lsp_diag.range,
  context = { diagnostics = { lsp_diag } },
}, 10000, buf)
local preferred
for _, a in ipairs((actions and actions.result) or {}) do
  say("code action: " .. a.title .. (a.isPreferred and " (preferred)" or ""))
  if a.isPreferred then preferred = preferred or a end
end
if not preferred then fail("no preferred code action") end
vim.lsp.util.apply_workspace_edit(preferred.edit, client.offset_encoding)
say("applied: " .. preferred.title)
say("line now: " .. vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1])

if not vim.wait(20000, function() return find(code) == nil end, 50) then
  fail(code .. " is still reported after its fix")
end
say(code .. " is gone")
client:stop()
vim.cmd("qall!")
