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

--- A request whose only follow-up on failure is to tell the user.
function A._request(self, method, params, on_result)
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

function A._row_under_cursor(self)
  local i = self.view:cursor_row(self.mirror)
  return i and self.mirror.rows[i] or nil
end

--- The row an action on "the memo under the cursor" works on: nil (after
--- telling the user why, if it is the server) when there is none.
function A._target_row(self)
  if not self:_check_running() then
    return nil
  end
  return self:_row_under_cursor()
end

--- Select the memo under the cursor (the server then shows it).
function A.select(self)
  local row = self:_target_row()
  if not row then
    return
  end
  self:flush()
  self:_request("memo/select", { id = row.id })
end

--- Create a memo; the server selects and shows it, and the cursor goes to
--- the text window.
function A.create(self)
  if not self:_check_running() then
    return
  end
  self:flush()
  self:_request("memo/create", { text = "" }, function()
    self.mirror.query = "" -- creating clears the search filter (rule 2)
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
  self:flush()
  self:_request("memo/delete", { id = row.id })
end

--- Share the memo under the cursor: its text goes to the share register.
function A.share(self)
  if not self:_check_running() then
    return
  end
  local row = self:_row_under_cursor()
  if not row then
    util.notify("no memo to share")
    return
  end
  self:flush()
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

--- Ask for a search query; an empty one clears the filter.
function A.search_prompt(self)
  if not self:_check_running() then
    return
  end
  self.cfg.input({ prompt = "Search memos: ", default = self.mirror.query }, util.safe(function(query)
    if query == nil then
      return -- cancelled
    end
    self:search(query)
  end, "search"))
end

--- Set the server's search filter to `query` ("" clears it).
function A.search(self, query)
  if not self:_check_running() then
    return
  end
  self:flush()
  self:_request("memo/search", { query = query }, function(result)
    self.mirror.query = result.query or query
    self:render()
  end)
end

--- Clear the search filter, if there is one.
function A.clear_search(self)
  if self.mirror.query ~= "" then
    self:search("")
  end
end

--- Fetch the list again (shows changes another front end made to the store).
function A.refresh(self)
  if not self:_check_running() then
    return
  end
  self:flush()
  self:fetch()
end

--- Import a file of memos in the sample format (memo/import with a path).
function A.import(self, path)
  if not self:_check_running() then
    return
  end
  local abs = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  self:flush()
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
