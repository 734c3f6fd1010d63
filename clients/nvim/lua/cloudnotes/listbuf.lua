--- The view's list buffer (see view.lua): one line per memo of the
--- (filtered) list, so that G, gg, <C-f>, :{number} and the mouse move
--- through the whole list as in any buffer; only the lines of the mirror's
--- window hold text, the others are blank until their rows are fetched.
--- Drawing the mirror into it, the lines moving with the rows, and where
--- the list window's cursor and screen are. The functions of M.methods are
--- methods of the view object (view.lua mixes them in).
local api = vim.api
local util = require("cloudnotes.util")

local M = {}

local View = {}
M.methods = View

local ns_list = api.nvim_create_namespace("cloudnotes_list")
local ns_scroll = api.nvim_create_namespace("cloudnotes_scroll")

-- Growing the buffer by more lines than this reads them from a file: :read
-- appends blank lines ten times as fast as nvim_buf_set_lines.
local READ_LINES = 2000
-- Shrinking it by more lines than this replaces the buffer: deleting lines
-- one by one costs as much as adding them with nvim_buf_set_lines.
M.REPLACE_LINES = 20000
-- After this many rows drawn, the next draw starts from a new buffer:
-- Neovim keeps the memory of a line that once held text after it is
-- blanked, so scrolling through a long list would grow it without end.
M.DRAWN_ROWS_LIMIT = 10000

-- List window -> function(topline, botline) called when Neovim draws it,
-- however it was scrolled (the mouse over a window that is not current
-- triggers no CursorMoved or WinScrolled).
local scroll_hooks = {}
api.nvim_set_decoration_provider(ns_scroll, {
  on_win = function(_, win, _, top, bot)
    local hook = scroll_hooks[win]
    if hook then
      hook(top, bot)
    end
    return false
  end,
})

--- A list buffer: scratch, no undo (it is only ever redrawn), wiped when
--- its window closes. `filetype` defaults to "cloudnoteslist".
function M.new_list_buf(filetype)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_option(buf, "bufhidden", "wipe")
  api.nvim_buf_set_option(buf, "undolevels", -1)
  api.nvim_buf_set_option(buf, "modifiable", false)
  api.nvim_buf_set_option(buf, "filetype", filetype or "cloudnoteslist")
  return buf
end

--- Call `fn(topline, botline)` (0-based) whenever the list window is drawn.
function View:on_scroll(fn)
  scroll_hooks[self.list_win] = fn
end

--- The line for a row with a title, displayDate and preview (a memo of the
--- list, or of the trash): a mark column, the title cut or padded to
--- `title_width` cells, the date and the preview. Returns the line and the
--- byte ranges to highlight.
function M.format_line(row, title_width)
  local title = util.fit(util.one_line(row.title), title_width)
  local date = util.one_line(row.displayDate)
  local preview = util.one_line(row.preview)
  local line = "  " .. title .. "  " .. date
  local spans = {
    { "CloudNotesMark", 0, 2 },
    { "CloudNotesListTitle", 2, 2 + #title },
    { "CloudNotesDate", 2 + #title + 2, #line },
  }
  if preview ~= "" then
    local start = #line + 2
    line = line .. "  " .. preview
    spans[#spans + 1] = { "CloudNotesPreview", start, #line }
  end
  return line, spans
end

--- The list line for one row (see M.format_line), with "> " in the mark
--- column on the selected row.
function View:format_row(row, selected)
  -- A row table never changes (an update brings a new one), so its line is
  -- made once; the mark is the only part that depends on the selection.
  local f = self.formatted[row]
  if not f then
    f = { M.format_line(row, self.cfg.title_width) }
    self.formatted[row] = f
  end
  if selected then
    return "> " .. f[1]:sub(3), f[2]
  end
  return f[1], f[2]
end

--- Replace lines `first` to `last` (0-based, end-exclusive) of the
--- read-only list buffer `buf` with `lines`.
function M.set_lines(buf, first, last, lines)
  api.nvim_buf_set_option(buf, "modifiable", true)
  api.nvim_buf_set_lines(buf, first, last, false, lines)
  api.nvim_buf_set_option(buf, "modifiable", false)
end

--- Add `count` blank lines to `buf` after line `after` (0: at the top).
local function add_blank_lines(buf, after, count)
  if count <= 0 then
    return
  end
  if count > READ_LINES then
    local path = vim.fn.tempname()
    local f = io.open(path, "wb")
    if f then
      f:write(string.rep("\n", count))
      f:close()
      local before = api.nvim_buf_line_count(buf)
      -- Without 'a' in 'cpoptions', :read makes no buffer for the file.
      local cpo = vim.o.cpoptions
      vim.o.cpoptions = cpo:gsub("a", "")
      api.nvim_buf_set_option(buf, "modifiable", true)
      local ok = pcall(api.nvim_buf_call, buf, function()
        local view = vim.fn.winsaveview()
        vim.cmd("silent keepalt keepjumps noautocmd " .. after .. "read " .. vim.fn.fnameescape(path))
        vim.fn.winrestview(view)
      end)
      api.nvim_buf_set_option(buf, "modifiable", false)
      vim.o.cpoptions = cpo
      os.remove(path)
      if ok and api.nvim_buf_line_count(buf) == before + count then
        return
      end
      count = before + count - api.nvim_buf_line_count(buf)
    end
  end
  local blank = {}
  for i = 1, count do
    blank[i] = ""
  end
  M.set_lines(buf, after, after, blank)
end

--- Forget drawn lines at `count` and below (they are gone).
function View:_clip_drawn(count)
  local d = self.drawn
  for i = #d.lines, 1, -1 do
    if d.first + i - 1 < count then
      break
    end
    d.lines[i] = nil
  end
end

-- Whether the list buffer may be swapped for another now: not in the middle
-- of a Visual selection, an operator or Insert mode, which belong to it.
local function may_replace()
  local mode = api.nvim_get_mode().mode
  return mode == "n" or mode == "c"
end

--- Make the list buffer `count` lines long, adding or removing blank lines
--- at its end.
function View:_resize(count)
  local buf = self.list_buf
  local n = api.nvim_buf_line_count(buf)
  if count > n then
    add_blank_lines(buf, n, count - n)
  elseif count < n then
    if n - count > M.REPLACE_LINES and may_replace() then
      self:_replace_list_buf(count)
      return
    end
    M.set_lines(buf, count, n, {})
    self:_clip_drawn(count)
  end
end

--- Put a new, blank list buffer of `count` lines in the list window in place
--- of the current one (which is wiped), showing the same lines. The
--- session's `on_new_list_buf` sets its keys up again.
function View:_replace_list_buf(count)
  local old = self.list_buf
  local new = M.new_list_buf()
  add_blank_lines(new, 1, count - 1)
  self.list_buf = new
  self.drawn = { first = 0, lines = {} }
  self.drawn_rows = 0
  if api.nvim_win_is_valid(self.list_win) then
    api.nvim_win_call(self.list_win, function()
      local view = vim.fn.winsaveview()
      api.nvim_win_set_buf(self.list_win, new)
      view.lnum = math.min(view.lnum, count)
      view.topline = math.min(view.topline, count)
      vim.fn.winrestview(view)
    end)
  end
  if self.on_new_list_buf then
    self.on_new_list_buf(new)
  end
  if api.nvim_buf_is_valid(old) then
    pcall(api.nvim_buf_delete, old, { force = true })
  end
  util.set_buf_name(new, "[CloudNotes]")
end

--- A row entered the list at 0-based `index`: a blank line goes there, so
--- that the lines below (and the cursor and the view on them) move down
--- with their rows. The next render_list draws it.
function View:list_insert(index)
  local buf = self.list_buf
  if not api.nvim_buf_is_valid(buf) or index > api.nvim_buf_line_count(buf) then
    return
  end
  M.set_lines(buf, index, index, { "" })
  local d = self.drawn
  if index <= d.first then
    d.first = d.first + 1
  elseif index < d.first + #d.lines then
    table.insert(d.lines, index - d.first + 1, "")
  end
end

--- The row at 0-based `index` left the list: its line goes.
function View:list_remove(index)
  local buf = self.list_buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local n = api.nvim_buf_line_count(buf)
  if index >= n then
    return
  end
  M.set_lines(buf, index, index + 1, {})
  local d = self.drawn
  if n == 1 then
    self.drawn = { first = 0, lines = {} }
  elseif index < d.first then
    d.first = d.first - 1
  elseif index < d.first + #d.lines then
    table.remove(d.lines, index - d.first + 1)
  end
end

-- Write `lines` (with their highlight spans) at line `first` on, only where
-- they differ from what is drawn, and blank the drawn lines outside them.
function View:_draw(first, lines, spans)
  local buf = self.list_buf
  local d = self.drawn
  local last = first + #lines -- exclusive
  local changes = {} -- 0-based line -> index in `lines`, or false for blank
  for i, text in ipairs(d.lines) do
    local at = d.first + i - 1
    if (at < first or at >= last) and text ~= "" then
      changes[at] = false
    end
  end
  for i, text in ipairs(lines) do
    local at = first + i - 1
    local old = at >= d.first and d.lines[at - d.first + 1] or ""
    if old ~= text then
      changes[at] = i
    end
  end
  local order = vim.tbl_keys(changes)
  table.sort(order)
  local n = api.nvim_buf_line_count(buf)
  local k = 1
  while k <= #order do
    -- One nvim_buf_set_lines per run of consecutive changed lines.
    local start, texts = order[k], {}
    local stop = start
    while k <= #order and order[k] == stop do
      local i = changes[stop]
      texts[#texts + 1] = i and lines[i] or ""
      stop = stop + 1
      k = k + 1
    end
    if start < n then
      stop = math.min(stop, n)
      while #texts > stop - start do
        texts[#texts] = nil
      end
      M.set_lines(buf, start, stop, texts)
      self.drawn_rows = (self.drawn_rows or 0) + #texts
      api.nvim_buf_clear_namespace(buf, ns_list, start, stop)
      for at = start, stop - 1 do
        local i = changes[at]
        for _, s in ipairs(i and spans[i] or {}) do
          api.nvim_buf_add_highlight(buf, ns_list, s[1], at, s[2], s[3])
        end
      end
    end
  end
  self.drawn = { first = first, lines = lines }
end

--- Draw the list from the mirror: as many lines as the list has rows, the
--- window's rows on theirs (the selected one marked), the others blank. An
--- empty list gets one explanatory line. `state`: { dead, loading,
--- first_screen }. With first_screen, a buffer that must grow by many lines
--- grows only to the window's rows, and render_list returns true: the caller
--- draws again after Neovim has shown them, and the buffer grows then.
function View:render_list(mirror, state)
  local buf = self.list_buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local total = mirror.total
  local sel = mirror:selected()
  local first, lines, spans = 0, {}, {}
  if total == 0 then
    if state.loading then
      lines[1] = "  loading…"
    elseif mirror.query ~= "" then
      lines[1] = "  (no memo matches; <Esc> clears the search)"
    else
      lines[1] = "  (no memos; press a to create one)"
    end
    spans[1] = { { "CloudNotesEmpty", 0, -1 } }
  elseif not mirror.stale then
    first = mirror.offset
    for i, row in ipairs(mirror.rows) do
      local index = first + i - 1
      if index >= total then
        break
      end
      lines[i], spans[i] = self:format_row(row, index == sel and row.id == mirror.selected_id)
    end
  end
  local count = math.max(total, 1)
  local short = false
  local n = api.nvim_buf_line_count(buf)
  if state.first_screen and count - n > READ_LINES then
    count, short = math.max(n, first + #lines), true
  end
  if (self.drawn_rows or 0) > M.DRAWN_ROWS_LIMIT and count > M.DRAWN_ROWS_LIMIT and may_replace() then
    self:_replace_list_buf(count)
  end
  self:_resize(count)
  buf = self.list_buf -- _resize may have replaced it
  self:_draw(first, lines, spans)

  -- One extmark highlights the selected row; it is moved, or removed.
  local row = sel and mirror:row(sel)
  if row and row.id == mirror.selected_id then
    self.selected_mark = api.nvim_buf_set_extmark(buf, ns_list, sel, 0, {
      id = self.selected_mark,
      end_row = sel + 1,
      end_col = 0,
      hl_group = "CloudNotesSelected",
      hl_eol = true,
      priority = 100,
    })
  elseif self.selected_mark then
    api.nvim_buf_del_extmark(buf, ns_list, self.selected_mark)
  end

  local status
  if state.dead then
    status = "(server stopped: q closes)"
  else
    status = string.format("%d memo%s", total, total == 1 and "" or "s")
    if mirror.query ~= "" then
      status = "/" .. util.one_line(mirror.query) .. "  " .. status
    end
    if state.loading then
      status = status .. "  loading…"
    end
  end
  self:set_list_status(status)
  return short
end

--- Put the list's cursor on the selected row (when it is in the list).
--- Returns true if it moved there.
function View:focus_selected(mirror)
  local sel = mirror:selected()
  if sel and api.nvim_win_is_valid(self.list_win) and api.nvim_buf_is_valid(self.list_buf)
    and sel < api.nvim_buf_line_count(self.list_buf) then
    api.nvim_win_set_cursor(self.list_win, { sel + 1, 0 })
    return true
  end
  return false
end

--- Put the list's cursor on line 1.
function View:focus_top()
  if api.nvim_win_is_valid(self.list_win) then
    api.nvim_win_set_cursor(self.list_win, { 1, 0 })
  end
end

--- The 0-based list index under the list's cursor, or nil on an empty list.
function View:cursor_index(mirror)
  if not api.nvim_win_is_valid(self.list_win) or api.nvim_win_get_buf(self.list_win) ~= self.list_buf then
    return nil
  end
  local line = api.nvim_win_get_cursor(self.list_win)[1]
  if line <= mirror.total then
    return line - 1
  end
  return nil
end

--- The rows on screen in the list window: first and last (0-based), and
--- the window's height. nil when the window is closed.
function View:visible_range()
  local win = self.list_win
  if not api.nvim_win_is_valid(win) then
    return nil
  end
  local height = api.nvim_win_get_height(win)
  local top, bot = unpack(api.nvim_win_call(win, function()
    return { vim.fn.line("w0"), vim.fn.line("w$") }
  end))
  return top - 1, math.max(bot, top + height - 1) - 1, height
end

return M
