-- Headless Neovim (0.11) against visa-lsp: open a kernel, wait for its diagnostics, hover the
-- offending mapping, ask for code actions, apply the preferred (padding) fix and see the
-- diagnostic disappear. With DEFINES (another file of the crate) and EXPECT (a line), the
-- preferred fix must edit DEFINES so that its buffer holds EXPECT: an alias padded in the
-- module that defines it; that buffer is then attached as an editor would attach a Rust
-- buffer, and the diagnostic must go. Exits 0 on success, 1 with a message otherwise.
local server = assert(os.getenv("VISA_LSP"), "VISA_LSP: the server binary")
local file = assert(os.getenv("KERNEL"), "KERNEL: the kernel file to open")
local code = os.getenv("CODE") or "CAP-003"
local defines = os.getenv("DEFINES")
local expect_line = os.getenv("EXPECT")

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
  root_dir = os.getenv("ROOT") or vim.fs.dirname(file),
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
if defines then
  local other = vim.fn.bufnr(defines)
  if other < 0 then fail("the fix did not edit " .. defines) end
  local found
  for _, l in ipairs(vim.api.nvim_buf_get_lines(other, 0, -1, false)) do
    if l == expect_line then found = l end
  end
  if not found then fail(defines .. " does not hold `" .. expect_line .. "` after the fix") end
  say("other file now: " .. found)
  vim.lsp.buf_attach_client(other, client_id)
else
  say("line now: " .. vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1])
end

if not vim.wait(20000, function() return find(code) == nil end, 50) then
  fail(code .. " is still reported after its fix")
end
say(code .. " is gone")
client:stop()
vim.cmd("qall!")
