--- The split view's windows and buffers: a tab with the memo list on the
--- left and the selected memo's text on the right, and how the mirror is
--- drawn into them. It holds no protocol state: the session tells it what
--- to show.
---
--- This file has the tab, the windows and the text buffer; the list
--- buffer, and drawing the list into it, are in listbuf.lua, whose methods
--- the view has too.
local api = vim.api
local util = require("cloudnotes.util")
local listbuf = require("cloudnotes.listbuf")

local M = {}

local View = {}
View.__index = View
for name, fn in pairs(listbuf.methods) do
  View[name] = fn
end

local ns_title = api.nvim_create_namespace("cloudnotes_title")

--- Define the highlight groups (as defaults, so a colour scheme or the user
--- can override them).
function M.define_highlights()
  local links = {
    CloudNotesSelected = "Visual",
    CloudNotesMark = "Special",
    CloudNotesListTitle = "Identifier",
    CloudNotesDate = "Comment",
    CloudNotesPreview = "Normal",
    CloudNotesEmpty = "Comment",
    CloudNotesTitle = "Title",
  }
  for group, target in pairs(links) do
    api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

--- Open the view in a new tab. `cfg` is the plugin configuration (list_width,
--- title_width). Returns the view; its `list_buf`, `text_buf`, `list_win` and
--- `text_win` are the buffers and windows.
function M.open(cfg)
  M.define_highlights()
  local self = setmetatable({
    cfg = cfg,
    -- The list lines that hold text: `lines[i]` is line `first + i - 1`
    -- (0-based); every other line is blank.
    drawn = { first = 0, lines = {} },
    formatted = setmetatable({}, { __mode = "k" }), -- row table -> {line, spans}
  }, View)

  self.list_buf = listbuf.new_list_buf()
  util.set_buf_name(self.list_buf, "[CloudNotes]")

  self.text_buf = api.nvim_create_buf(false, true)
  -- acwrite: ":w" runs our BufWriteCmd instead of writing a file.
  api.nvim_buf_set_option(self.text_buf, "buftype", "acwrite")
  api.nvim_buf_set_option(self.text_buf, "bufhidden", "hide")
  api.nvim_buf_set_option(self.text_buf, "swapfile", false)
  api.nvim_buf_set_option(self.text_buf, "modifiable", false)
  api.nvim_buf_set_option(self.text_buf, "filetype", "cloudnotes")
  util.set_buf_name(self.text_buf, "[CloudNotes memo]")

  vim.cmd("tab sbuffer " .. self.text_buf)
  self.tab = api.nvim_get_current_tabpage()
  self.text_win = api.nvim_get_current_win()
  vim.cmd("topleft vertical sbuffer " .. self.list_buf)
  self.list_win = api.nvim_get_current_win()
  api.nvim_win_set_width(self.list_win, self:list_width())

  util.set_win_opts(self.list_win, {
    number = false,
    relativenumber = false,
    wrap = false,
    cursorline = true,
    signcolumn = "no",
    foldcolumn = "0",
    spell = false,
    list = false,
    winfixwidth = true,
  })
  self:_text_win_opts()
  self:set_list_status("loading…")
  self:set_text_status("")
  return self
end

function View:_text_win_opts()
  util.set_win_opts(self.text_win, {
    number = false,
    relativenumber = false,
    wrap = true,
    linebreak = true,
    spell = false,
    list = false,
  })
end

--- Re-open the text window beside the list if the user closed it (the list
--- window is the view; the text window comes back when a memo is shown).
function View:ensure_text_window()
  if api.nvim_win_is_valid(self.text_win) or not api.nvim_win_is_valid(self.list_win) then
    return
  end
  local cur = api.nvim_get_current_win()
  api.nvim_set_current_win(self.list_win)
  vim.cmd("rightbelow vertical sbuffer " .. self.text_buf)
  self.text_win = api.nvim_get_current_win()
  self:_text_win_opts()
  api.nvim_win_set_width(self.list_win, self:list_width())
  if api.nvim_win_is_valid(cur) then
    api.nvim_set_current_win(cur)
  end
end

--- The list window's width: the configured one, or half the screen kept
--- between 40 and 80 columns (room for title and date, and the preview when
--- the screen is wide).
function View:list_width()
  if self.cfg.list_width then
    return self.cfg.list_width
  end
  return math.max(40, math.min(80, math.floor(vim.o.columns / 2)))
end

--- True while both windows are open.
function View:valid()
  return api.nvim_win_is_valid(self.list_win) and api.nvim_win_is_valid(self.text_win)
end

function View:set_list_status(text)
  if api.nvim_win_is_valid(self.list_win) then
    api.nvim_win_set_option(self.list_win, "statusline", " CloudNotes  " .. util.escape_status(text))
  end
end

function View:set_text_status(text)
  if api.nvim_win_is_valid(self.text_win) then
    api.nvim_win_set_option(self.text_win, "statusline", " " .. util.escape_status(text) .. "%=%l:%c ")
  end
end

--- Replace the text buffer's contents. The undo history is dropped so that
--- `u` can never bring another memo's text into this one.
function View:set_text(lines, editable)
  local buf = self.text_buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local undolevels = api.nvim_buf_get_option(buf, "undolevels")
  api.nvim_buf_set_option(buf, "modifiable", true)
  api.nvim_buf_set_option(buf, "undolevels", -1)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_buf_set_option(buf, "undolevels", undolevels)
  api.nvim_buf_set_option(buf, "modifiable", editable)
  api.nvim_buf_set_option(buf, "modified", false)
  if api.nvim_win_is_valid(self.text_win) then
    api.nvim_win_set_cursor(self.text_win, { 1, 0 })
  end
  self:highlight_title()
end

function View:text_lines()
  return api.nvim_buf_get_lines(self.text_buf, 0, -1, false)
end

--- Highlight the title line: the first line with a non-blank character, as
--- the server derives the title.
function View:highlight_title()
  local buf = self.text_buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  api.nvim_buf_clear_namespace(buf, ns_title, 0, -1)
  for i, line in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find("%S") then
      api.nvim_buf_add_highlight(buf, ns_title, "CloudNotesTitle", i - 1, 0, -1)
      return
    end
  end
end

--- Close the view's tab (or, if it is the last tab, its windows' buffers).
function View:close()
  self:on_scroll(nil)
  util.close_tab(self.tab)
  if api.nvim_buf_is_valid(self.list_buf) then
    pcall(api.nvim_buf_delete, self.list_buf, { force = true })
  end
  if api.nvim_buf_is_valid(self.text_buf) then
    pcall(api.nvim_buf_delete, self.text_buf, { force = true })
  end
end

return M
