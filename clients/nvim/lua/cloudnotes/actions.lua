--- The list window's actions (<CR>, a, dd, s, /, <Esc>, r, <Tab>) and
--- :CloudNotesImport: each sends pending text first, then one request; the
--- server's notifications do the rest. These functions are methods of the
--- session (session.lua mixes them in).
local api = vim.api
local util = require("cloudnotes.util")
local rpc = require("cloudnotes.rpc")

local A = {}

local GONE = rpc.GONE

function A._check_running(self)
  if self:_running() then
    return true
  end
  util.error("the server is not running. Press q to close the view, then :CloudNotes to start again.")
  return false
end

--- Send what was typed first (the server then applies the edit before the
--- request), then a request whose only follow-up on failure is to tell the
--- user.
function A._request(self, method, params, on_result)
  self:flush()
  self.rpc:request(method, params, util.safe(function(err, result)
    if err then
      if err.code ~= GONE then
        util.error(method .. " failed: " .. util.rpc_error_text(err))
      end
      return
    end
    if on_result then
      on_result(result)
    end
  end, method))
end

--- The row under the list's cursor. A row not fetched yet (a key pressed
--- right after a jump) is waited for, a round trip.
function A._row_under_cursor(self)
  local i = self.view:cursor_index(self.mirror)
  if not i then
    return nil
  end
  local row = self.mirror:row(i)
  if not row and self:_running() then
    self:_check_window()
    vim.wait(2000, function()
      i = self.view:cursor_index(self.mirror)
      return not i or self.mirror:row(i) ~= nil or not self:_running() or self.fetch_failed
    end, 5)
    row = i and self.mirror:row(i)
  end
  return row
end

--- The row an action on "the memo under the cursor" works on: nil (after
--- telling the user why, if it is the server, or `none_note` when there is
--- no row) when there is none.
function A._target_row(self, none_note)
  if not self:_check_running() then
    return nil
  end
  local row = self:_row_under_cursor()
  if not row and none_note then
    util.notify(none_note)
  end
  return row
end

--- Select the memo under the cursor (the server then shows it).
function A.select(self)
  local row = self:_target_row()
  if not row then
    return
  end
  self:_request("memo/select", { id = row.id })
end

--- Create a memo; the server selects and shows it, and the cursor goes to
--- the text window.
function A.create(self)
  if not self:_check_running() then
    return
  end
  self:_request("memo/create", { text = "" }, function()
    self.mirror.query = "" -- creating clears the search filter (rule S2)
    self:render()
    if self.cfg.focus_on_create and self.view and api.nvim_win_is_valid(self.view.text_win) then
      api.nvim_set_current_win(self.view.text_win)
      if self.cfg.insert_on_create then
        vim.cmd("startinsert")
      end
    end
  end)
end

--- Delete the memo under the cursor after asking.
function A.delete(self)
  local row = self:_target_row()
  if not row then
    return
  end
  local title = util.one_line(row.title)
  if not self.cfg.confirm(string.format("Delete memo %q?", title)) then
    util.notify(string.format("%q was not deleted", title))
    return
  end
  self:_request("memo/delete", { id = row.id })
end

--- Share the memo under the cursor: its text goes to the share register.
function A.share(self)
  local row = self:_target_row("no memo to share")
  if not row then
    return
  end
  self:_request("memo/share", { id = row.id, format = self.cfg.share_format }, function(result)
    local reg = self.cfg.share_register
    local note = ""
    if (reg == "+" or reg == "*") and vim.fn.has("clipboard") == 0 then
      reg = self.cfg.share_fallback_register
      note = string.format("no clipboard provider (see :help clipboard), so not in register \"%s: ", self.cfg.share_register)
    end
    local lines = util.text_to_lines(result.text or "")
    local ok = pcall(vim.fn.setreg, reg, lines, "c")
    if not ok and reg ~= self.cfg.share_fallback_register then
      reg = self.cfg.share_fallback_register
      note = string.format("the clipboard refused the text, so not in register \"%s: ", self.cfg.share_register)
      pcall(vim.fn.setreg, reg, lines, "c")
    end
    util.notify(string.format("%sshared %q as %s in register \"%s", note, util.one_line(result.title or row.title),
      tostring(result.filename or self.cfg.share_format), reg))
  end)
end

--- Ask for a search query; an empty one clears the filter. With a prompt
--- that reports each change (the default one does), the list follows the
--- query as it is typed, and <Esc> puts the previous filter back.
function A.search_prompt(self)
  if not self:_check_running() then
    return
  end
  local before = self.mirror.query
  local live = false
  local opts = {
    prompt = "Search memos: ",
    default = before,
    on_change = util.safe(function(query)
      if query ~= self.mirror.query or self.live_query then
        live = true
        self:_search_live(query)
      end
    end, "search"),
  }
  self.cfg.input(opts, util.safe(function(query)
    self.live_query = nil
    if query == nil then
      if live then
        self:search(before) -- cancelled: the filter as it was
      end
      return
    end
    if live and not self.live_running and query == self.mirror.query then
      return -- the list shows this query's results already
    end
    self:search(query)
  end, "search"))
end

--- The number of rows one memo/search brings: one screen of the list.
function A._screen_rows(self)
  local height = self.view and api.nvim_win_is_valid(self.view.list_win) and api.nvim_win_get_height(self.view.list_win)
  return math.max(1, math.min(self.mirror.max_rows, height or 50))
end

--- Set the server's search filter to `query` ("" clears it); the response
--- brings the first screen of results. `on_done(ok)` runs after it.
function A.search(self, query, on_done)
  if not self:_check_running() then
    if on_done then
      on_done(false)
    end
    return
  end
  self:flush()
  self.searching = self.searching + 1
  self.rpc:request("memo/search", { query = query, limit = self:_screen_rows() }, util.safe(function(err, result)
    self.searching = self.searching - 1
    if err then
      if err.code ~= GONE then
        util.error("memo/search failed: " .. util.rpc_error_text(err))
      end
    else
      self.mirror.query = result.query or query
      self.mirror:install(0, result)
      self.fetch_failed = false
      self.after_search = true
    end
    self:render()
    if vim.fn.mode() == "c" then
      vim.cmd("redraw") -- the list changes under the prompt
    end
    if on_done then
      on_done(not err)
    end
  end, "memo/search"))
end

--- Search for `query` as it is typed: one search at a time, then the query
--- as it is by then, so that fast typing does not queue a search per key.
function A._search_live(self, query)
  self.live_query = query
  if self.live_running then
    return
  end
  self.live_running = true
  self:search(query, function(ok)
    self.live_running = false
    local latest = self.live_query
    if ok and latest ~= nil and latest ~= self.mirror.query then
      self:_search_live(latest)
    end
  end)
end

--- Clear the search filter, if there is one.
function A.clear_search(self)
  if self.mirror.query ~= "" then
    self:search("")
  end
end

--- Fetch the rows on screen again (and the list's length).
function A.refresh(self)
  if not self:_check_running() then
    return
  end
  self:flush()
  self.fetch_failed = false
  self.mirror:invalidate()
  self:_check_window()
end

--- Import a file of memos in the sample format (memo/import with a path).
function A.import(self, path)
  if not self:_check_running() then
    return
  end
  local abs = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  self:_request("memo/import", { path = abs, workDoneToken = "nvim-import-" .. self.nr }, function(result)
    util.notify(string.format("imported %s memo%s", tostring(result.imported),
      result.imported == 1 and "" or "s"))
  end)
end

function A.focus_text(self)
  if self.view and api.nvim_win_is_valid(self.view.text_win) then
    api.nvim_set_current_win(self.view.text_win)
  end
end

function A.focus_list(self)
  if self.view and api.nvim_win_is_valid(self.view.list_win) then
    api.nvim_set_current_win(self.view.list_win)
  end
end

return A
