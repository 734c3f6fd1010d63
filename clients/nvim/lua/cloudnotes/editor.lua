--- The text buffer's edit loop: what the user types is sent after a pause
--- (debounce) as memo/edit (the change) or memo/update (the whole text, when
--- the text at the current version is not known), one request at a time, each with the baseVersion
--- the previous answer brought. A refused update (a conflict, a memo deleted
--- elsewhere) never loses text: it goes to a register before the user is
--- told and the buffer shows the server's text. These functions are methods
--- of the session (session.lua mixes them in).
local api = vim.api
local uv = vim.loop
local util = require("cloudnotes.util")
local rpc = require("cloudnotes.rpc")

local E = {}

local CONFLICT = -33002
local NOT_FOUND = -33001
local GONE = rpc.GONE

function E._set_text(self, text, editable)
  self.applying = true
  local ok, err = pcall(self.view.set_text, self.view, util.text_to_lines(text), editable)
  self.applying = false
  if not ok then
    error(err, 0)
  end
end

function E._update_text_status(self)
  if not self.view then
    return
  end
  local edit = self.edit
  if self.state == "dead" then
    self.view:set_text_status("server stopped: text not saved")
    return
  end
  if not edit.id then
    self.view:set_text_status("(no memo selected)")
    return
  end
  local status
  if edit.gone then
    status = "deleted elsewhere"
  elseif edit.dirty then
    status = "editing…"
  elseif self:_sending(edit.id) then
    status = "saving…"
  else
    status = "saved"
  end
  self.view:set_text_status(string.format(
    "%s · v%s · %s",
    util.one_line(edit.title),
    tostring(self.versions[edit.id] or "?"),
    status
  ))
end

function E._attach_text_buffer(self)
  if self.attached then
    return
  end
  self.attached = true
  api.nvim_buf_attach(self.view.text_buf, false, {
    -- Without on_reload, ":e" would detach us and later typing would be
    -- silently not sent.
    on_reload = function() end,
    on_detach = function()
      self.attached = false
    end,
    on_lines = function()
      if self.applying or self.state == "closed" then
        return
      end
      if not self.edit.id then
        return
      end
      self.edit.dirty = true
      if self.state == "dead" then
        if not self.warned_dead_edit then
          self.warned_dead_edit = true
          util.warn("the server is not running: what you type now is not saved")
        end
        return
      end
      self:_restart_timer()
      if not self.status_pending then
        -- The buffer is locked during on_lines; redraw decorations after it.
        self.status_pending = true
        vim.schedule(util.safe(function()
          self.status_pending = false
          if self.view then
            self.view:highlight_title()
            self:_update_text_status()
          end
        end, "highlight"))
      end
    end,
  })
end

--- Show the mirror's detail memo in the text buffer.
function E._show_detail(self)
  local memo = self.mirror.detail
  local edit = self.edit
  if memo and memo.id == edit.id and (edit.dirty or self:_sending(memo.id)) then
    -- The same memo again while the user's newer text is on its way: keep
    -- the buffer; the answer to the update brings the version.
    return
  end
  self:_stop_timer()
  edit.dirty = false
  edit.gone = false
  self.view:ensure_text_window()
  if memo then
    edit.id, edit.title = memo.id, memo.title or ""
    self.versions[memo.id] = memo.version
    self:_set_text(memo.text or "", self.mirror.editable)
  else
    edit.id, edit.title = nil, ""
    self:_set_text("", false)
  end
  self:_update_text_status()
end

function E._restart_timer(self)
  if not self.timer then
    self.timer = uv.new_timer()
  end
  self.timer:stop()
  self.timer:start(self.cfg.debounce_ms, 0, vim.schedule_wrap(util.method_cb(self, "flush", "memo/update")))
end

function E._stop_timer(self)
  if self.timer then
    self.timer:stop()
  end
end

--- True while text for memo `id` is sent or waiting to be sent.
function E._sending(self, id)
  if self.inflight and self.inflight.id == id then
    return true
  end
  for _, item in ipairs(self.queue) do
    if item.id == id then
      return true
    end
  end
  return false
end

--- Send what the user typed now instead of after the debounce. Every list
--- action calls this first, so the server applies the edit before the action
--- (requests are served in order).
function E.flush(self)
  self:_stop_timer()
  local edit = self.edit
  if not edit.dirty or not edit.id or edit.gone then
    return
  end
  if not self:_running() then
    return
  end
  edit.dirty = false
  self:_send_update(edit.id, util.lines_to_text(self.view:text_lines()))
  self:_update_text_status()
end

--- `whole`: send the whole text even when the change alone could be sent.
function E._send_update(self, id, text, whole)
  if self.inflight then
    -- One update at a time, so each baseVersion is the answer to the one
    -- before; a newer snapshot of the same memo replaces a queued older one.
    local last = self.queue[#self.queue]
    if last and last.id == id then
      last.text = text
      last.whole = last.whole or whole
    else
      self.queue[#self.queue + 1] = { id = id, text = text, whole = whole }
    end
    return
  end
  self.inflight = { id = id, text = text }
  -- When the text the server holds at this version is known (the detail pane's), only the change is
  -- sent (memo/edit): typing into a long memo then costs the bytes typed, not the memo's length.
  local base = self.mirror.detail
  if whole or not (base and base.id == id and base.version ~= nil and base.version == self.versions[id]) then
    base = nil
  end
  local method, params = "memo/update", { id = id, text = text, baseVersion = self.versions[id] }
  if base then
    method, params = "memo/edit", { id = id, baseVersion = base.version, edits = { util.text_edit(base.text or "", text) } }
  end
  self.rpc:request(method, params, util.safe(function(err, result)
    local sent = self.inflight
    self.inflight = nil
    if err then
      self:_update_failed(sent, err)
    elseif result then
      local memo = result.memo or E._edited_memo(base, result, sent.text)
      self.versions[memo.id] = memo.version
      if memo.id == self.edit.id then
        self.edit.title = memo.title or ""
        self.mirror.detail = memo
      end
      if not result.memo and result.length ~= #sent.text then
        -- The server's text is not the one meant: send the whole text, based on what it now holds.
        table.insert(self.queue, 1, { id = sent.id, text = sent.text, whole = true })
      end
    end
    local nxt = table.remove(self.queue, 1)
    if nxt then
      self:_send_update(nxt.id, nxt.text, nxt.whole)
    end
    self:_after_save()
  end, method))
end

--- The memo after a memo/edit, whose reply carries no text: the base memo with the text sent.
function E._edited_memo(base, result, text)
  local memo = vim.deepcopy(base)
  memo.text = text
  memo.body = nil -- derived by the server; nothing here shows it
  memo.version = result.version
  memo.title = result.title
  memo.modifiedAt = result.modifiedAt
  memo.displayDate = result.displayDate
  return memo
end

--- Mark the buffer unmodified once everything typed has reached the server.
function E._after_save(self)
  local view = self.view
  if view and self.edit.id and not self.edit.dirty and not self:_sending(self.edit.id)
    and api.nvim_buf_is_valid(view.text_buf) then
    api.nvim_buf_set_option(view.text_buf, "modified", false)
  end
  self:_update_text_status()
end

--- Keep text the server did not take in a register, so nothing typed is lost.
function E._keep_text(self, lines)
  local reg = self.cfg.conflict_register
  pcall(vim.fn.setreg, reg, lines, "l")
  return reg
end

function E._update_failed(self, sent, err)
  -- Later snapshots of this memo were based on the same refused version.
  local latest = sent.text
  for i = #self.queue, 1, -1 do
    if self.queue[i].id == sent.id then
      latest = self.queue[i].text
      table.remove(self.queue, i)
    end
  end
  local current = sent.id == self.edit.id
  if current and self.view and api.nvim_buf_is_valid(self.view.text_buf) then
    -- The buffer may hold even newer text than what was sent.
    latest = util.lines_to_text(self.view:text_lines())
    self:_stop_timer()
    self.edit.dirty = false
  end

  if err.code == CONFLICT and type(err.data) == "table" and type(err.data.memo) == "table" then
    local memo = err.data.memo
    self.versions[memo.id] = memo.version
    if memo.text == latest then
      return -- the other side wrote exactly this text: nothing to merge
    end
    local reg = self:_keep_text(util.text_to_lines(latest))
    -- Tell the user first, then show the server's text.
    util.warn(string.format(
      "%q was changed elsewhere (now version %s). Your text was NOT saved: it is in register \"%s. "
        .. "The buffer now shows the current version; paste your text back (\"%sp) to keep it.",
      memo.title or "memo",
      tostring(memo.version),
      reg,
      reg
    ))
    if current then
      self.edit.title = memo.title or ""
      self.mirror.detail = memo
      self:_set_text(memo.text or "", true)
    end
  elseif err.code == NOT_FOUND then
    local reg = self:_keep_text(util.text_to_lines(latest))
    util.warn(string.format(
      "the memo was deleted elsewhere; your text was not saved and is in register \"%s. Press r in the list to refresh.",
      reg
    ))
    if current then
      self.edit.gone = true
      api.nvim_buf_set_option(self.view.text_buf, "modifiable", false)
    end
  elseif err.code == GONE then
    if current then
      self.edit.dirty = true -- still unsaved; _on_exit has told the user
    end
  else
    if current then
      self.edit.dirty = true -- :w retries
    end
    util.error("the memo was not saved: " .. util.rpc_error_text(err))
  end
  self:_update_text_status()
end

--- Handler for ":e" / ":e!" in the text buffer (BufReadCmd): there is no
--- file to read, so show the text as the server last confirmed it. Pending
--- edits are dropped first, as ":e!" asks; otherwise the emptied buffer
--- would be sent as the memo's new text.
function E.reload_text(self)
  self:_stop_timer()
  self.edit.dirty = false
  local detail = self.mirror.detail
  local text = ""
  if self.edit.id and detail and detail.id == self.edit.id then
    text = detail.text or ""
  end
  self:_set_text(text, self.edit.id ~= nil and not self.edit.gone and self.state ~= "dead")
  self:_attach_text_buffer()
  self:_update_text_status()
  if self.edit.id then
    util.notify("reloaded the memo as last saved (version " .. tostring(self.versions[self.edit.id]) .. ")")
  end
end

--- Send pending text now and wait (a while at most) until the server has
--- answered every save of memo `id`, so that its version is known.
function E._flush_and_wait(self, id)
  self:flush()
  vim.wait(5000, function()
    return not self:_sending(id) or not self:_running()
  end, 10)
end

--- Handler for ":w" in the text buffer: send pending text now, wait for the
--- server's answer and say whether the memo is saved.
function E.write(self)
  if not self:_running() then
    util.error("the server is not running: the text was not saved (it stays in the buffer)")
    return
  end
  local id = self.edit.id
  if not id then
    util.notify("no memo is shown; nothing to save")
    return
  end
  if self.edit.gone then
    util.warn("not saved: the memo was deleted elsewhere (your text is in register \"" .. self.cfg.conflict_register .. ")")
    return
  end
  self:_flush_and_wait(id)
  if not self.edit.dirty and not self:_sending(id) and not self.edit.gone and self:_running() then
    api.nvim_buf_set_option(self.view.text_buf, "modified", false)
    util.notify(string.format("memo saved (version %s)", tostring(self.versions[id])))
  end
end

return E
