--- Small helpers shared by the CloudNotes modules: user messages and
--- error containment, so that no callback ever surfaces a Lua stack trace.
local api = vim.api

local M = {}

M.debug = false

local function emit(msg, level)
  vim.notify("CloudNotes: " .. msg, level or vim.log.levels.INFO, { title = "CloudNotes" })
end

--- Show `msg` to the user with vim.notify. Safe to call from libuv callbacks
--- (fast events), where the editor API is off limits: it defers itself.
function M.notify(msg, level)
  if vim.in_fast_event() then
    vim.schedule(function()
      emit(msg, level)
    end)
  else
    emit(msg, level)
  end
end

function M.warn(msg)
  M.notify(msg, vim.log.levels.WARN)
end

function M.error(msg)
  M.notify(msg, vim.log.levels.ERROR)
end

--- Wrap `fn` so that an error inside it becomes one vim.notify message
--- instead of a traceback. Every callback the plugin hands to Neovim or libuv
--- goes through this: a bug must cost the user a message, not the session.
function M.safe(fn, what)
  return function(...)
    local ok, err = xpcall(fn, debug.traceback, ...)
    if ok then
      return err
    end
    local msg = tostring(err)
    if not M.debug then
      -- The first line says what went wrong; the traceback is for bug reports.
      msg = msg:match("^[^\n]*")
    end
    M.error((what and (what .. ": ") or "") .. msg)
  end
end

--- Name the buffer `buf` `name`, or `name-{buf}` when a buffer of a
--- previous session still owns that name.
function M.set_buf_name(buf, name)
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. "-" .. buf)
  end
end

--- Set the window-local options `opts` (name -> value) of `win`.
function M.set_win_opts(win, opts)
  for k, v in pairs(opts) do
    api.nvim_win_set_option(win, k, v)
  end
end

--- `s` with its "%" doubled, for a 'statusline'.
function M.escape_status(s)
  return (tostring(s):gsub("%%", "%%%%"))
end

--- Close the tab page `tab` (or, if it is the last one, leave one empty
--- window in its place).
function M.close_tab(tab)
  if not api.nvim_tabpage_is_valid(tab) then
    return
  end
  if #api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, "tabclose! " .. api.nvim_tabpage_get_number(tab))
  else
    pcall(vim.cmd, "enew")
    pcall(vim.cmd, "only!")
  end
end

--- A callback (for a key, an autocommand, a timer) that calls `obj`'s
--- method `name`, its errors contained as with M.safe(fn, what).
function M.method_cb(obj, name, what)
  return M.safe(function()
    obj[name](obj)
  end, what)
end

--- Text of a JSON-RPC error object, for messages.
function M.rpc_error_text(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  return string.format("%s (%s)", tostring(err.message or "error"), tostring(err.code or "?"))
end

--- "1 memo", "2 memos": `n` and `word`, plural unless `n` is 1.
function M.plural(n, word)
  return string.format("%d %s%s", n, word, n == 1 and "" or "s")
end

--- Split memo text into buffer lines. The split is on "\n" alone so that
--- joining the lines with "\n" gives back the text byte for byte (a CRLF memo
--- keeps its "\r" at the end of each line).
function M.text_to_lines(text)
  return vim.split(text or "", "\n", { plain = true })
end

function M.lines_to_text(lines)
  return table.concat(lines, "\n")
end

--- The one memo/edit change that turns `old` into `new`: the bytes between
--- their common prefix and suffix, in UTF-8 byte offsets, never cutting a
--- character's bytes (the server refuses that).
function M.text_edit(old, new)
  local limit = math.min(#old, #new)
  local prefix = 0
  while prefix < limit and old:byte(prefix + 1) == new:byte(prefix + 1) do
    prefix = prefix + 1
  end
  local suffix = 0
  while suffix < limit - prefix and old:byte(#old - suffix) == new:byte(#new - suffix) do
    suffix = suffix + 1
  end
  local function inside(b) -- a UTF-8 continuation byte
    return b ~= nil and b >= 0x80 and b < 0xC0
  end
  while prefix > 0 and inside(old:byte(prefix + 1)) do
    prefix = prefix - 1
  end
  while suffix > 0 and inside(old:byte(#old - suffix + 1)) do
    suffix = suffix - 1
  end
  return { start = prefix, ["end"] = #old - suffix, text = new:sub(prefix + 1, #new - suffix) }
end

--- Make a server string safe to show on one buffer line: control characters
--- (which a title may hold, and which nvim_buf_set_lines refuses as "\n")
--- become "?".
function M.one_line(s)
  return (tostring(s or ""):gsub("[%z\1-\31\127]", "?"))
end

-- Display cells of one character, asked of Neovim once per character.
local char_cells = {}

--- Pad or cut `s` to exactly `width` display cells (wide characters count 2).
function M.fit(s, width)
  if not s:find("[%z\1-\31\127-\255]") then
    -- Printable ASCII: one cell per byte.
    if #s <= width then
      return s .. string.rep(" ", width - #s)
    end
    return s:sub(1, width - 1) .. "…"
  end
  local w = vim.fn.strdisplaywidth(s)
  if w <= width then
    return s .. string.rep(" ", width - w)
  end
  local out, used = {}, 0
  for ch in s:gmatch("[%z\1-\127\192-\255][\128-\191]*") do
    local cw = char_cells[ch]
    if not cw then
      cw = vim.fn.strdisplaywidth(ch)
      char_cells[ch] = cw
    end
    if used + cw > width - 1 then
      break
    end
    out[#out + 1] = ch
    used = used + cw
  end
  return table.concat(out) .. "…" .. string.rep(" ", width - 1 - used)
end

return M
