--- Test helpers: start the plugin against a temporary store, drive it with
--- keys, wait for the server, and compare both windows' lines.
local api = vim.api
local H = {}

H.bin = os.getenv("CLOUDNOTES_BIN")
H.plugin = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
H.tmp = os.getenv("CN_TMP") or vim.fn.tempname()
vim.fn.mkdir(H.tmp, "p")

H.NNBSP = "\u{202f}" -- the space before AM/PM in en-US displayDate

--- Notifications the plugin sent: { {msg=, level=} ... }.
H.notes = {}
--- Patterns of ERROR notifications a test expects (others fail the test).
H.allowed_errors = {}

vim.notify = function(msg, level)
  table.insert(H.notes, { msg = msg, level = level or vim.log.levels.INFO })
  io.stdout:write(string.format("  notify[%s] %s\n", tostring(level), msg))
end

--- The answers the stubbed prompts give, consumed in order.
H.confirm_answers = {}
H.confirm_asked = {}
H.input_answers = {}
H.input_asked = {}

local function confirm_stub(message)
  table.insert(H.confirm_asked, message)
  local a = table.remove(H.confirm_answers, 1)
  if a == nil then
    error("unexpected confirmation prompt: " .. message)
  end
  return a
end

local function input_stub(opts, on_confirm)
  table.insert(H.input_asked, opts.prompt)
  local a = table.remove(H.input_answers, 1)
  if a == nil then
    error("unexpected input prompt: " .. tostring(opts.prompt))
  end
  if a == false then
    a = nil -- stands for <Esc> at the prompt
  end
  on_confirm(a)
end

--- A fresh store path in this test's temporary folder.
function H.new_store(name)
  return H.tmp .. "/" .. (name or "notes") .. ".sqlite"
end

--- The plugin options used by the tests, with `opts` over them.
function H.options(opts)
  return vim.tbl_extend("force", {
    cmd = H.bin,
    store = H.store or H.new_store(),
    locale = "en-US",
    time_zone = "UTC",
    debounce_ms = 60,
    insert_on_create = false,
    confirm = confirm_stub,
    input = input_stub,
  }, opts or {})
end

--- Configure the plugin, run :CloudNotes and wait until the list is loaded.
function H.open(opts)
  H.store = (opts and opts.store) or H.store or H.new_store()
  require("cloudnotes").setup(H.options(opts))
  vim.cmd("CloudNotes")
  local s = require("cloudnotes").session()
  H.assert(s ~= nil, "a session after :CloudNotes")
  H.s = s
  H.wait(function()
    return s.state == "ready" and s:idle()
  end, "the session to be ready")
  return s
end

--- Wait until `cond()` is true, or fail with `what`.
function H.wait(cond, what, timeout)
  if not vim.wait(timeout or 5000, cond, 5) then
    error("timed out waiting for " .. (what or "a condition"), 2)
  end
end

--- Wait until the session has nothing on its way (requests, fetch, text).
function H.settle(s)
  s = s or H.s
  -- Let already-received messages be handled before judging idleness.
  vim.wait(20)
  H.wait(function()
    return s:idle()
  end, "the session to settle")
end

function H.list_lines(s)
  s = s or H.s
  return api.nvim_buf_get_lines(s.view.list_buf, 0, -1, false)
end

function H.text_lines(s)
  s = s or H.s
  return api.nvim_buf_get_lines(s.view.text_buf, 0, -1, false)
end

--- The list line the plugin should draw for a row with an ASCII title.
function H.row(selected, title, date, preview)
  local line = string.format("%s%-18s  %s", selected and "> " or "  ", title, date)
  if preview and preview ~= "" then
    line = line .. "  " .. preview
  end
  return line
end

--- "January 1, 2026 at 12:00 AM" with the narrow no-break space.
function H.date(s)
  return (s:gsub(" ([AP]M)$", H.NNBSP .. "%1"))
end

function H.assert(cond, what)
  if not cond then
    error("assertion failed: " .. tostring(what), 2)
  end
end

function H.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(string.format("%s:\n  expected: %s\n  actual:   %s", what or "values differ",
      vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- Check both windows at once.
function H.check(list, text, what)
  local s = H.s
  local ok_list = vim.deep_equal(H.list_lines(s), list)
  local ok_text = vim.deep_equal(H.text_lines(s), text)
  if not (ok_list and ok_text) then
    error(string.format("%s:\n  list expected: %s\n  list actual:   %s\n  text expected: %s\n  text actual:   %s",
      what or "windows differ", vim.inspect(list), vim.inspect(H.list_lines(s)),
      vim.inspect(text), vim.inspect(H.text_lines(s))), 2)
  end
end

--- Type keys in the list window, as if typed (mappings apply), then let
--- things settle. Keys fed from a script do not pass through Neovim's main
--- loop, which would redraw the screen after them: redraw here instead (the
--- list fetches the rows that come into view when it is drawn).
function H.press(keys, s)
  s = s or H.s
  H.press_in(s.view.list_win, keys, s)
end

--- Type keys in the window `win`, as H.press does in the list.
function H.press_in(win, keys, s)
  api.nvim_set_current_win(win)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "mtx", false)
  vim.cmd("redraw")
  H.settle(s)
end

--- Put the list's cursor on row `n` (1-based).
function H.cursor(n, s)
  s = s or H.s
  api.nvim_win_set_cursor(s.view.list_win, { n, 0 })
end

--- Run :w in the text window, then let things settle.
function H.write(s)
  s = s or H.s
  api.nvim_set_current_win(s.view.text_win)
  vim.cmd("write")
  H.settle(s)
end

--- Press dd in the list (on row `n` if given) and answer the confirmation
--- with `answer`.
function H.delete(answer, n)
  if n then
    H.cursor(n)
  end
  H.confirm_answers = { answer }
  H.press("dd")
end

--- Replace the text buffer's lines as typing would, then wait past the
--- debounce for the update to be answered.
function H.type(lines, s)
  s = s or H.s
  H.set_text(lines, s)
  H.settle(s)
end

--- Replace the text buffer's lines as typing would, without waiting.
function H.set_text(lines, s)
  s = s or H.s
  api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, lines)
end

--- The last notification matching `pattern`, or nil.
function H.note(pattern)
  for i = #H.notes, 1, -1 do
    if H.notes[i].msg:find(pattern) then
      return H.notes[i]
    end
  end
  return nil
end

--- Wait until a notification matches `pattern`, or fail with `what`.
--- Returns the last one that matches.
function H.wait_note(pattern, what, timeout)
  H.wait(function()
    return H.note(pattern) ~= nil
  end, what, timeout)
  return H.note(pattern)
end

--- Send a request through the session's own server and wait for the answer.
function H.request(method, params, s)
  s = s or H.s
  local err, result = s.rpc:request_sync(method, params, 5000)
  if err then
    error(method .. " failed: " .. vim.inspect(err), 2)
  end
  return result
end

--- Import memos (title, body, last_modified) through the session's server,
--- as another tool would, and wait for the list to follow.
function H.import(memos, s)
  s = s or H.s
  local r = H.request("memo/import", { memos = memos }, s)
  H.settle(s)
  return r
end

--- Three memos with fixed timestamps, so their dates are known exactly.
H.SEED = {
  { title = "Plan", body = "step 1", last_modified = 1767225600 }, -- 2026-01-01 00:00 UTC
  { title = "Other", body = "", last_modified = 1767225000 }, -- 2025-12-31 23:50
  { title = "Groceries", body = "milk\neggs", last_modified = 1767220000 }, -- 2025-12-31 22:26
}

-- Title, date and preview of each H.SEED memo's list line.
local SEED_ROWS = {
  { "Plan", "January 1, 2026 at 12:00 AM", "step 1" },
  { "Other", "December 31, 2025 at 11:50 PM" },
  { "Groceries", "December 31, 2025 at 10:26 PM", "milk eggs" },
}

--- The list line of H.SEED's memo `i` (1 to 3), marked when `selected`.
function H.seed_row(i, selected)
  local r = SEED_ROWS[i]
  return H.row(selected or false, r[1], H.date(r[2]), r[3])
end

--- The list lines of the first `n` memos of H.SEED (default: all), newest
--- first, with line `selected` (nil: none) marked.
function H.seed_rows(selected, n)
  local lines = {}
  for i = 1, n or #H.SEED do
    lines[i] = H.seed_row(i, i == selected)
  end
  return lines
end

--- Open on an empty store, import the first `n` memos of H.SEED (default:
--- all) and check the starting picture: the import selected the newest memo
--- (nothing was selected before).
function H.open_seeded(opts, n)
  local s = H.open(opts)
  local memos = vim.list_slice(H.SEED, 1, n or #H.SEED)
  H.import(memos, s)
  H.check(H.seed_rows(1, #memos), { "Plan", "step 1" }, "after the import")
  return s
end

--- Open on an empty store and create one memo with `text` through the
--- session's server, which selects and shows it.
function H.open_with_memo(text, opts)
  local s = H.open(opts)
  H.request("memo/create", { text = text }, s)
  H.settle(s)
  return s
end

--- Press / in the list and answer the search prompt with `query` (false
--- stands for <Esc>).
function H.search(query)
  H.input_answers = { query }
  H.press("/")
end

--- A second, independent client: its own `cloudnotes serve` on `store`.
function H.other_client(store)
  local rpc = require("cloudnotes.rpc")
  local c = assert(rpc.start({ H.bin, "serve", "--store", store }, {
    on_notification = function() end,
    on_exit = function() end,
  }))
  local other = {}
  function other.req(method, params)
    local err, result = c:request_sync(method, params, 5000)
    if err then
      error("other client: " .. method .. " failed: " .. vim.inspect(err), 2)
    end
    return result
  end
  function other.stop()
    c:request_sync("shutdown", nil, 5000)
    c:notify("exit")
    H.wait(function()
      return not c.running
    end, "the other server to exit")
    return c.exit_code
  end
  other.req("initialize", { locale = "en-US", timeZone = "UTC" })
  c:notify("initialized")
  return other
end

--- Change the store as another front end would: send `requests` (each
--- { method, params }) through a second server of its own on H.store, stop
--- it and check that it exited with code 0. Returns the results.
function H.elsewhere(requests)
  local other = H.other_client(H.store)
  local results = {}
  for i, r in ipairs(requests) do
    results[i] = other.req(r[1], r[2])
  end
  H.eq(other.stop(), 0, "other server exit code")
  return results
end

--- Record the methods the session sends (requests and notifications).
function H.record_sent(s)
  s = s or H.s
  local sent = {}
  local request, notify = s.rpc.request, s.rpc.notify
  s.rpc.request = function(self, method, params, cb)
    table.insert(sent, { method = method, params = params })
    return request(self, method, params, cb)
  end
  s.rpc.notify = function(self, method, params)
    table.insert(sent, { method = method, params = params })
    return notify(self, method, params)
  end
  return sent
end

function H.methods(sent)
  local out = {}
  for _, m in ipairs(sent) do
    out[#out + 1] = m.method
  end
  return out
end

--- Like H.open, but record every request and notification the session
--- sends from its start. Returns the session and the record.
function H.open_recorded(opts)
  local rpc = require("cloudnotes.rpc")
  local start = rpc.start
  local sent
  rpc.start = function(...)
    local client, err = start(...)
    if client then
      sent = H.record_sent({ rpc = client })
    end
    return client, err
  end
  local ok, s = pcall(H.open, opts)
  rpc.start = start
  if not ok then
    error(s, 0)
  end
  return s, sent
end

--- Import `n` memos "Memo 0001".. "Memo n" (newest first, one a minute)
--- into `store` through a server of its own, as another program would.
function H.seed_store(store, n)
  local memos = {}
  for i = 1, n do
    memos[i] = { title = string.format("Memo %04d", i), body = "body " .. i, last_modified = 1767225600 - 60 * i }
  end
  local other = H.other_client(store)
  other.req("memo/import", { memos = memos })
  other.stop()
end

--- The list lines on screen (1-based numbers first..last).
function H.visible(s)
  s = s or H.s
  local first, last = s.view:visible_range()
  return first + 1, math.min(last + 1, api.nvim_buf_line_count(s.view.list_buf))
end

--- Check that the list buffer has a line per memo and that every line on
--- screen shows the server's row at that place (asked of the server now).
function H.check_screen(what, s)
  s = s or H.s
  local page = H.request("memo/list", { offset = 0, limit = 1 }, s)
  H.eq(api.nvim_buf_line_count(s.view.list_buf), math.max(page.total, 1), what .. ": a line per memo")
  local first, last = H.visible(s)
  local rows = H.request("memo/list", { offset = first - 1, limit = last - first + 1 }, s).rows
  local lines = api.nvim_buf_get_lines(s.view.list_buf, first - 1, last, false)
  for i, line in ipairs(lines) do
    local title = line:sub(3, 2 + #rows[i].title)
    if title ~= rows[i].title then
      error(string.format("%s: line %d shows %q, the server's row there is %q", what, first + i - 1, line,
        rows[i].title), 2)
    end
  end
  return first, last
end

--- Close with q and check the server went away cleanly (code 0).
function H.quit(s)
  s = s or H.s
  H.press("q", s)
  H.wait(function()
    return not s.rpc.running
  end, "the server to exit after q")
  H.eq(s.rpc.exit_code, 0, "server exit code after shutdown and exit")
end

return H
