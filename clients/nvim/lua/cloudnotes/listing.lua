--- The list side of the session: the server's notifications applied to the
--- mirror (mirror.lua) and to the list buffer's lines, the list drawn once
--- for a burst of them, and the window of rows kept on what is on screen as
--- the list scrolls (memo/list, one fetch at a time). These functions are
--- methods of the session (session.lua mixes them in).
local util = require("cloudnotes.util")
local rpc = require("cloudnotes.rpc")

local L = {}

local GONE = rpc.GONE
local NOT_INITIALIZED = -32002

--- Call the session's method `method` once Neovim has handled what it is
--- doing now (the messages already read, the key being typed), once for any
--- number of calls before then; `self[pending]` is true meanwhile. `what`
--- names the job in error messages.
local function once_soon(self, pending, method, what)
  if self[pending] then
    return
  end
  self[pending] = true
  vim.schedule(util.safe(function()
    self[pending] = false
    self[method](self)
  end, what))
end

-- Mirroring the server -------------------------------------------------------

function L._on_progress(self, params)
  local value = type(params.value) == "table" and params.value or {}
  if value.kind == "begin" then
    util.notify((value.title or "working") .. "…")
  end
end

function L._on_notification(self, method, params)
  if method == "$/progress" then
    self:_on_progress(params)
    return
  end
  if method == "detail/didShow" or method == "detail/didClear" then
    local memo = method == "detail/didShow" and params.memo or nil
    if self.edit.dirty and self.edit.id and not (memo and memo.id == self.edit.id) then
      -- Another memo replaces the text: send what the user typed first, so
      -- it is never dropped with the old text.
      self:flush()
    end
  end
  local changed = self.mirror:apply(method, params)
  if changed.ops and self.view then
    -- The list buffer's lines move with the rows, so that what the user is
    -- looking at stays in place.
    for _, op in ipairs(changed.ops) do
      if op[1] == "insert" then
        self.view:list_insert(op[2])
      else
        self.view:list_remove(op[2])
      end
    end
  end
  if changed.reset then
    self.fetch_failed = false
    self:_check_window_soon()
  end
  if changed.detail then
    self:_show_detail()
  end
  if changed.selection and (changed.selection_moved or self.follow) then
    self.move_cursor = true
  end
  if changed.list or changed.selection then
    self:_render_soon()
  end
end

--- Re-draw the list after the messages already read have been applied: a
--- single create sends three notifications, and one redraw covers them.
function L._render_soon(self)
  once_soon(self, "render_pending", "render", "render")
end

--- Draw the list now, put the cursor on the selected row if the selection
--- moved since the last draw, and fetch the rows now on screen if the
--- window does not hold them.
function L.render(self)
  if not self.view then
    return
  end
  local mirror = self.mirror
  if mirror.stale and (self.fetching or self.searching > 0) and self.state ~= "dead" then
    -- The old lines stay until the new rows arrive (a round trip), so the
    -- list does not flash blank after list/didReset.
    return
  end
  if mirror:selection_disagrees() and not self.refetched then
    -- Never so unless a notification was missed: fetch the window again
    -- (once: a server that keeps disagreeing must not be asked forever).
    self.refetched = true
    mirror:invalidate()
    self:_check_window()
    return
  end
  self.refetched = false
  local short = self.view:render_list(mirror, {
    dead = self.state == "dead",
    loading = mirror.stale and self:_running(),
    first_screen = not self.grow_pending,
  })
  if short then
    -- The rows on screen are drawn; the lines of the rest of the list (a
    -- million blank lines take a while) are added once Neovim has shown
    -- them, and the cursor goes where it must then.
    self.grow_pending = true
    vim.defer_fn(util.method_cb(self, "render", "render"), 0)
    return
  end
  self.grow_pending = false
  if self.after_search then
    -- New results: show the selected memo if it is one of them, else the top.
    self.after_search = false
    self.move_cursor = false
    if not self.view:focus_selected(mirror) then
      self.view:focus_top()
    end
  elseif self.move_cursor then
    self.move_cursor = false
    self.view:focus_selected(mirror)
  end
  self:_note_follow()
  self:_check_window()
end

--- Remember whether the list's cursor is on the selected row.
function L._note_follow(self)
  local sel = self.mirror:selected()
  self.follow = sel ~= nil and self.view and self.view:cursor_index(self.mirror) == sel or false
end

-- The window ----------------------------------------------------------------

--- Check soon (once for any number of calls before then) whether the rows on
--- screen are in the window: scrolling calls this on every move, and a held
--- key must not become a request per line.
function L._check_window_soon(self)
  once_soon(self, "check_pending", "_check_window", "memo/list")
end

--- Fetch the rows on screen, a screen either side, unless the window holds
--- them already. One fetch at a time: when it is answered, this runs again
--- for wherever the view is by then.
function L._check_window(self)
  if not self:_running() or self.state ~= "ready" or self.fetching or self.searching > 0 or not self.view
    or self.fetch_failed then
    return
  end
  local first, last, height = self.view:visible_range()
  if not first then
    return
  end
  -- The first screen of a list not fetched yet comes alone, so it shows
  -- sooner; the margins follow.
  local req = self.mirror:fetch_for(first, last, self.mirror.stale and 0 or height)
  if req then
    self:_fetch(req)
  end
end

function L._fetch(self, req)
  self.fetching = req
  self.rpc:request("memo/list", req, util.safe(function(err, result)
    self.fetching = nil
    if err and err.code == NOT_INITIALIZED then
      return -- sent with a failed initialize; the retry fetches again
    end
    if err then
      if err.code ~= GONE then
        util.error("cannot list the memos: " .. util.rpc_error_text(err) .. ". Press r to try again.")
      end
      -- No more automatic fetches until r or the next list/didReset.
      self.fetch_failed = true
      self:render()
      return
    end
    self.mirror:install(req.offset, result)
    self:render()
  end, "memo/list"))
end

--- The rows on screen changed (the list was scrolled, the cursor moved, the
--- window was resized).
function L._on_scroll(self)
  if self.view then
    self:_note_follow()
  end
  self:_check_window_soon()
end

return L
