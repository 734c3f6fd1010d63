--- A panel: a tab of its own for a view beside the split view (the history
--- of a memo, the trash). It has a read-only buffer with a line per row,
--- keys of its own, and optionally a second window below for what the row
--- under the cursor holds (a diff). Its buffers are wiped when its tab
--- closes. It holds no protocol state: the session tells it what to show.
local api = vim.api
local util = require("cloudnotes.util")
local listbuf = require("cloudnotes.listbuf")

local M = {}

local Panel = {}
Panel.__index = Panel

local ns = api.nvim_create_namespace("cloudnotes_panel")

local NO_GUTTER = { number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0", spell = false }

--- Open a panel in a new tab. `opts`: name and filetype of the rows'
--- buffer; `detail` (optional): { name, filetype } of the buffer below;
--- `keys`: a list of { lhs, fn, description } mapped in the rows' buffer.
function M.open(opts)
  local self = setmetatable({ rows = {} }, Panel)
  self.buf = listbuf.new_list_buf(opts.filetype)
  util.set_buf_name(self.buf, opts.name)
  vim.cmd("tab sbuffer " .. self.buf)
  self.tab = api.nvim_get_current_tabpage()
  self.win = api.nvim_get_current_win()
  util.set_win_opts(self.win, vim.tbl_extend("force", NO_GUTTER, { wrap = false, cursorline = true, list = false }))
  if opts.detail then
    self.detail_buf = listbuf.new_list_buf(opts.detail.filetype)
    util.set_buf_name(self.detail_buf, opts.detail.name)
    vim.cmd("belowright sbuffer " .. self.detail_buf)
    self.detail_win = api.nvim_get_current_win()
    util.set_win_opts(self.detail_win, NO_GUTTER)
    api.nvim_set_current_win(self.win)
    -- The rows get a third of the screen; what they hold, the rest.
    api.nvim_win_set_height(self.win, math.max(3, math.floor(vim.o.lines / 3)))
  end
  for _, k in ipairs(opts.keys) do
    vim.keymap.set("n", k[1], k[2], { buffer = self.buf, nowait = true, silent = true, desc = "CloudNotes: " .. k[3] })
  end
  return self
end

--- True while the panel's tab and rows' buffer are there.
function Panel:valid()
  return api.nvim_tabpage_is_valid(self.tab) and api.nvim_buf_is_valid(self.buf)
end

--- Show `rows`, a line each as `format(row)` returns it (the line and its
--- highlight spans), or the single line `empty` when there are none.
function Panel:show(rows, format, empty)
  self.rows = rows
  local lines, spans = {}, {}
  for i, row in ipairs(rows) do
    lines[i], spans[i] = format(row)
  end
  if #rows == 0 then
    lines[1], spans[1] = empty, { { "CloudNotesEmpty", 0, -1 } }
  end
  listbuf.set_lines(self.buf, 0, -1, lines)
  api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  for i, line_spans in ipairs(spans) do
    for _, s in ipairs(line_spans) do
      api.nvim_buf_add_highlight(self.buf, ns, s[1], i - 1, s[2], s[3])
    end
  end
end

--- The row under the cursor, or nil.
function Panel:row()
  if not self:valid() or not api.nvim_win_is_valid(self.win) then
    return nil
  end
  return self.rows[api.nvim_win_get_cursor(self.win)[1]]
end

--- Replace the lines of the window below.
function Panel:set_detail(lines)
  if self.detail_buf and api.nvim_buf_is_valid(self.detail_buf) then
    listbuf.set_lines(self.detail_buf, 0, -1, lines)
  end
end

function Panel:set_status(text)
  if api.nvim_win_is_valid(self.win) then
    api.nvim_win_set_option(self.win, "statusline", " CloudNotes  " .. util.escape_status(text))
  end
end

function Panel:close()
  util.close_tab(self.tab)
end

return M
