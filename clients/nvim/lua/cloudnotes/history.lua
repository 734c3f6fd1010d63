--- The history and trash panels (:CloudNotesHistory, :CloudNotesTrash), each
--- in a tab of its own (panel.lua). The history lists the shown memo's kept
--- versions and shows the diff of the one under the cursor against the
--- current text; `r` restores it (memo/restore). The trash lists the
--- deleted memos; `u` brings one back (memo/undelete) and `D` empties it.
--- The server's notifications update the split view as usual. These
--- functions are methods of the session (session.lua mixes them in).
local api = vim.api
local util = require("cloudnotes.util")
local panel_mod = require("cloudnotes.panel")
local listbuf = require("cloudnotes.listbuf")

local M = {}

--- Open a panel (panel.lua's `opts`) in place of the one open, if any.
function M._open_panel(self, opts)
  if self.panel then
    self.panel:close()
  end
  opts.keys[#opts.keys + 1] = { "q", util.method_cb(self, "close_panel", "close"), "close this view" }
  self.panel = panel_mod.open(opts)
  self.panel.kind = opts.filetype
  return self.panel
end

--- Close the panel, if one is open, and go back to the split view.
function M.close_panel(self)
  local p = self.panel
  if not p then
    return
  end
  self.panel = nil
  p:close()
  if self.view and api.nvim_tabpage_is_valid(self.view.tab) then
    api.nvim_set_current_tabpage(self.view.tab)
  end
end

--- The panel open when it is of kind `kind` (its buffer's filetype), else nil.
function M._panel(self, kind)
  local p = self.panel
  if p and p.kind == kind and p:valid() then
    return p
  end
  return nil
end

-- History ---------------------------------------------------------------------

--- The widest display width of `fn(row)` over `rows`.
local function widest(rows, fn)
  local w = 0
  for _, row in ipairs(rows) do
    w = math.max(w, vim.fn.strdisplaywidth(fn(row)))
  end
  return w
end

local function version_date(v)
  return util.one_line(v.displayDate)
end

local function version_origin(v)
  if v.device then
    return util.one_line(v.origin .. " (" .. v.device .. ")")
  end
  return util.one_line(v.origin)
end

local function version_number(v)
  return "v" .. tostring(v.version)
end

--- A function that makes the line of a version row and its highlight spans:
--- its number, date, origin (and device), title and size, in columns as
--- wide as `rows` need.
local function version_formatter(rows, title_width)
  local number_w, date_w = widest(rows, version_number), widest(rows, version_date)
  local origin_w = widest(rows, version_origin)
  return function(v)
    local columns = {
      { util.fit(version_number(v), number_w), "CloudNotesMark" },
      { util.fit(version_date(v), date_w), "CloudNotesDate" },
      { util.fit(version_origin(v), origin_w) },
      { util.fit(util.one_line(v.title), title_width), "CloudNotesListTitle" },
      { util.plural(v.size, "byte") },
    }
    local texts, spans, at = {}, {}, 0
    for i, c in ipairs(columns) do
      texts[i] = c[1]
      if c[2] then
        spans[#spans + 1] = { c[2], at, at + #c[1] }
      end
      at = at + #c[1] + 2
    end
    return table.concat(texts, "  "), spans
  end
end

--- The unified diff that turns version `v` (its text `old`) into the
--- current text `new`, as lines for a buffer of filetype "diff".
local function diff_lines(v, old, new)
  -- Each text's lines end with "\n" for the diff, so that one without a
  -- final "\n" gets no "\ No newline at end of file" after every hunk.
  local hunks = vim.diff(old .. "\n", new .. "\n", { ctxlen = 3 })
  if hunks == "" then
    return { string.format("v%d is the same as the current text.", v.version) }
  end
  local lines = util.text_to_lines(hunks)
  table.remove(lines) -- the empty line after the last "\n"
  table.insert(lines, 1, "--- v" .. v.version .. "  " .. version_date(v))
  table.insert(lines, 2, "+++ current text")
  return lines
end

--- Open the history of the memo shown: its kept versions, newest first.
function M.history(self)
  if not self:_check_running() then
    return
  end
  local id, title = self.edit.id, self.edit.title
  if not id then
    util.notify("no memo is shown: select one first")
    return
  end
  self:_request("memo/history", { id = id, limit = self.mirror.max_rows }, function(result)
    local p = self:_open_panel({
      name = "[CloudNotes history]",
      filetype = "cloudnoteshistory",
      detail = { name = "[CloudNotes diff]", filetype = "diff" },
      keys = {
        { "<CR>", util.method_cb(self, "_show_version", "memo/version"), "show the diff of this version" },
        { "r", util.method_cb(self, "restore_version", "memo/restore"), "restore this version" },
      },
    })
    p.id, p.texts = id, {}
    local versions = result.versions or {}
    p:show(versions, version_formatter(versions, self.cfg.title_width),
      "  (no earlier versions: one is kept when the text is replaced after a pause, or elsewhere)")
    local shown = #versions < (result.total or 0) and string.format(" (the newest %d)", #versions) or ""
    p:set_status(string.format("history of %q: %s%s   r restores, q closes", util.one_line(title),
      util.plural(result.total or #versions, "version"), shown))
    api.nvim_create_autocmd("CursorMoved", {
      buffer = p.buf,
      callback = util.method_cb(self, "_show_version", "memo/version"),
    })
    self:_show_version()
  end)
end

--- The text of memo `id` now: the text buffer's while it shows the memo.
function M._current_text(self, id)
  if self.edit.id == id and self.view and api.nvim_buf_is_valid(self.view.text_buf) then
    return util.lines_to_text(self.view:text_lines())
  end
  local detail = self.mirror.detail
  return detail and detail.id == id and detail.text or ""
end

--- Show the diff of the version under the history's cursor against the
--- current text, fetching the version's text once (memo/version).
function M._show_version(self)
  local p = self:_panel("cloudnoteshistory")
  local v = p and p:row()
  if not v then
    if p then
      p:set_detail({})
    end
    return
  end
  p.shown = v.version
  local function show(text)
    if p.shown == v.version and p:valid() then
      p:set_detail(diff_lines(v, text, self:_current_text(p.id)))
    end
  end
  if p.texts[v.version] then
    show(p.texts[v.version])
    return
  end
  p:set_detail({ string.format("loading v%d…", v.version) })
  self:_request("memo/version", { id = p.id, version = v.version }, function(result)
    p.texts[v.version] = result.text or ""
    show(p.texts[v.version])
  end)
end

--- Make the version under the history's cursor the memo's text again. The
--- text it replaces is kept as a version, so this can be undone the same way.
function M.restore_version(self)
  local p = self:_panel("cloudnoteshistory")
  local v = p and p:row()
  if not v or not self:_check_running() then
    return
  end
  -- The restore is based on the version the server gave for the text typed.
  self:_flush_and_wait(p.id)
  self:_request("memo/restore", { id = p.id, version = v.version, baseVersion = self.versions[p.id] }, function(result)
    self:close_panel()
    util.notify(string.format("restored v%d of %q (the text it replaced is kept in the history)", v.version,
      util.one_line(result.memo and result.memo.title)))
  end)
end

-- Trash -----------------------------------------------------------------------

--- Open the trash: the deleted memos, most recently deleted first, each
--- with the date it was deleted.
function M.trash(self)
  if not self:_check_running() then
    return
  end
  self:_request("trash/list", { limit = self.mirror.max_rows }, function(result)
    local p = self:_panel("cloudnotestrash") or self:_open_panel({
      name = "[CloudNotes trash]",
      filetype = "cloudnotestrash",
      keys = {
        { "u", util.method_cb(self, "undelete", "memo/undelete"), "bring this memo back" },
        { "<CR>", util.method_cb(self, "undelete", "memo/undelete"), "bring this memo back" },
        { "D", util.method_cb(self, "empty_trash", "trash/empty"), "empty the trash" },
      },
    })
    p.total = result.total or 0
    p:show(result.rows or {}, function(row)
      return listbuf.format_line(row, self.cfg.title_width)
    end, "  (the trash is empty)")
    p:set_status(string.format("trash: %s   u brings back, D empties, q closes", util.plural(p.total, "memo")))
  end)
end

--- Bring the memo under the trash's cursor back; the server selects and
--- shows it, and the view goes back to the split view.
function M.undelete(self)
  local p = self:_panel("cloudnotestrash")
  local row = p and p:row()
  if not row or not self:_check_running() then
    return
  end
  self:_request("memo/undelete", { id = row.id }, function(result)
    self.mirror.query = "" -- undeleting clears the search filter (rule S2)
    self:close_panel()
    self:render()
    util.notify(string.format("brought back %q", util.one_line(result.memo and result.memo.title or row.title)))
  end)
end

--- Empty the trash after asking: its memos are gone for good.
function M.empty_trash(self)
  local p = self:_panel("cloudnotestrash")
  if not p or not self:_check_running() then
    return
  end
  if p.total == 0 then
    util.notify("the trash is empty")
    return
  end
  if not self.cfg.confirm(string.format("Empty the trash? Its %s will be gone for good.", util.plural(p.total, "memo"))) then
    return
  end
  self:_request("trash/empty", nil, function(result)
    util.notify(string.format("purged %s", util.plural(result.purged or 0, "memo")))
    self:trash()
  end)
end

return M
