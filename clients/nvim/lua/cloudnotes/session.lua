--- One CloudNotes session: the server process, the handshake, the keys and
--- autocommands, and shutting down. The rest are methods of the same
--- session object, in their own modules: keeping the mirror of the server's
--- split view and the list drawn and fetched in listing.lua, the text
--- buffer's edit loop in editor.lua, the list's keys in actions.lua, the
--- history and trash panels in history.lua.
local api = vim.api
local uv = vim.loop
local util = require("cloudnotes.util")
local rpc = require("cloudnotes.rpc")
local mirror_mod = require("cloudnotes.mirror")
local view_mod = require("cloudnotes.view")

local M = {}

local Session = {}
Session.__index = Session

local GONE = rpc.GONE

local next_session = 0

--- Create a session for the configuration `cfg` (see init.lua's defaults).
--- Nothing runs until :start().
function M.new(cfg, version)
  next_session = next_session + 1
  return setmetatable({
    cfg = cfg,
    client_version = version,
    nr = next_session,
    state = "new", -- new, starting, ready, closing, closed, dead
    mirror = mirror_mod.new(),
    fetching = nil, -- the memo/list params of the window fetch on its way
    searching = 0, -- memo/search requests on their way
    follow = true, -- the list's cursor is on the selected row: keep it there
    -- What the text buffer holds, and the edits on their way to the server.
    edit = {
      id = nil, -- memo in the text buffer (nil: detail pane cleared)
      title = "",
      dirty = false, -- buffer changed since the last text sent
      gone = false, -- the memo was deleted elsewhere
    },
    versions = {}, -- memo id -> version our next baseVersion is based on
    inflight = nil, -- {id, text} of the memo/update awaiting its answer
    queue = {}, -- {id, text} snapshots to send after it, in order
    applying = false, -- true while the plugin itself rewrites the text buffer
  }, Session)
end

-- Command line ---------------------------------------------------------------

local function build_cmd(cfg)
  local cmd = type(cfg.cmd) == "table" and vim.deepcopy(cfg.cmd) or { cfg.cmd }
  cmd[1] = vim.fn.expand(cmd[1])
  cmd[#cmd + 1] = "serve"
  if cfg.store and cfg.store ~= "" then
    local store = vim.fn.fnamemodify(vim.fn.expand(cfg.store), ":p")
    -- The server creates the store file but not the folders above it.
    vim.fn.mkdir(vim.fn.fnamemodify(store, ":h"), "p")
    cmd[#cmd + 1] = "--store"
    cmd[#cmd + 1] = store
  end
  if cfg.log_file then
    cmd[#cmd + 1] = "--log-file"
    cmd[#cmd + 1] = vim.fn.expand(cfg.log_file)
  end
  -- The server exits by itself if Neovim dies without saying goodbye.
  cmd[#cmd + 1] = "--client-process-id"
  cmd[#cmd + 1] = tostring(uv.os_getpid())
  for _, a in ipairs(cfg.args or {}) do
    cmd[#cmd + 1] = a
  end
  return cmd
end

-- Start-up -------------------------------------------------------------------

--- Spawn the server, open the view in a new tab and run the handshake.
--- Returns false (after telling the user why) if the server cannot start.
function Session:start()
  local cmd = build_cmd(self.cfg)
  if vim.fn.executable(cmd[1]) ~= 1 then
    util.error(string.format(
      "cannot run %q (not found or not executable). Set cmd in require('cloudnotes').setup{}.",
      cmd[1]
    ))
    return false
  end
  local client, err = rpc.start(cmd, {
    on_notification = function(method, params)
      self:_on_notification(method, params)
    end,
    on_exit = function(code, signal, stderr)
      self:_on_exit(code, signal, stderr)
    end,
  })
  if not client then
    util.error(err)
    return false
  end
  self.rpc = client
  self.state = "starting"
  self.view = view_mod.open(self.cfg)
  self:_install_keymaps()
  self:_install_autocmds()
  self:_attach_text_buffer()
  self:_initialize(self.cfg.time_zone)
  return true
end

function Session:_initialize(time_zone)
  self.rpc:request("initialize", {
    clientInfo = { name = "cloudnotes.nvim", version = self.client_version },
    locale = self.cfg.locale,
    timeZone = time_zone,
    capabilities = vim.empty_dict(),
  }, util.safe(function(err, result)
    if self.state ~= "starting" then
      return -- closed during the handshake
    end
    if err then
      if err.code == GONE then
        return -- _on_exit tells the user
      end
      local bad_zone = type(err.data) == "table" and err.data.param == "timeZone"
      if bad_zone and time_zone ~= "UTC" then
        -- The server stays uninitialized after a bad param, so retrying is allowed.
        util.warn(string.format("the server does not know the time zone %q; using UTC", tostring(time_zone)))
        self:_initialize("UTC")
        return
      end
      util.error("the server refused to start the session: " .. util.rpc_error_text(err))
      self:close()
      return
    end
    self.capabilities = result and result.capabilities or {}
    local limits = self.capabilities.limits or {}
    self.mirror.max_rows = math.max(1, math.min(mirror_mod.MAX_ROWS, limits.maxListLimit or 100))
    self.state = "ready"
    self:_check_window()
  end, "initialize"))
  -- Sent without waiting for the answer: the server takes messages in order,
  -- so after a successful initialize they are served at once, a round trip
  -- sooner. After a failed one the server drops the notification and
  -- refuses the request (-32002), and the retry sends both again.
  -- initialized makes the server select and show the newest memo (rule S1).
  self.rpc:notify("initialized")
  local first, last = self.view:visible_range()
  if first and not self.fetching then
    self:_fetch(self.mirror:fetch_for(first, last, 0))
  end
end

-- State ----------------------------------------------------------------------

--- True while the server runs and the session has not been closed.
function Session:_running()
  return self.rpc ~= nil and self.rpc.running and (self.state == "ready" or self.state == "starting")
end

-- Keys and autocommands ------------------------------------------------------

--- Map the list keys in the list buffer `buf` (again when the view
--- replaces that buffer), and the text buffer's key once.
function Session:_install_keymaps(buf)
  local keys = self.cfg.keys
  buf = buf or self.view.list_buf
  local actions = {
    select = { "select", "select the memo under the cursor" },
    create = { "create", "create a memo" },
    delete = { "delete", "delete the memo under the cursor" },
    share = { "share", "share the memo under the cursor" },
    search = { "search_prompt", "search the memos" },
    clear_search = { "clear_search", "clear the search" },
    refresh = { "refresh", "refresh the list" },
    quit = { "close", "close CloudNotes" },
    focus_text = { "focus_text", "go to the memo's text" },
  }
  for name, a in pairs(actions) do
    local lhs = keys[name]
    if lhs then
      for _, l in ipairs(type(lhs) == "table" and lhs or { lhs }) do
        vim.keymap.set("n", l, util.method_cb(self, a[1], name),
          { buffer = buf, nowait = true, silent = true, desc = "CloudNotes: " .. a[2] })
      end
    end
  end
  if keys.focus_list and not self.text_keys_done then
    self.text_keys_done = true
    vim.keymap.set("n", keys.focus_list, util.method_cb(self, "focus_list", "focus_list"),
      { buffer = self.view.text_buf, silent = true, desc = "CloudNotes: go to the list" })
  end
end

function Session:_install_autocmds()
  local group = api.nvim_create_augroup("CloudNotesSession" .. self.nr, { clear = true })
  self.augroup = group
  api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    buffer = self.view.text_buf,
    callback = util.method_cb(self, "write", ":w"),
  })
  api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    buffer = self.view.text_buf,
    callback = util.method_cb(self, "reload_text", ":edit"),
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = util.safe(function(args)
      -- Closing the list (:q, :bwipe) ends the session; defer, as the
      -- buffer is being wiped right now. (A list buffer the view replaced
      -- is no longer view.list_buf.)
      if not self.view or args.buf ~= self.view.list_buf then
        return
      end
      vim.schedule(util.method_cb(self, "close", "close"))
    end, "close"),
  })
  -- Scrolling the list fetches the rows that come into view.
  api.nvim_create_autocmd({ "CursorMoved", "WinScrolled" }, {
    group = group,
    callback = util.safe(function(args)
      if self.view and (args.buf == self.view.list_buf or tonumber(args.match) == self.view.list_win) then
        self:_on_scroll()
      end
    end, "scroll"),
  })
  self.view:on_scroll(function()
    self:_check_window_soon()
  end)
  self.view.on_new_list_buf = function(buf)
    self:_install_keymaps(buf)
  end
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = util.method_cb(self, "close_sync", "exit"),
  })
end

-- Ending ---------------------------------------------------------------------

--- Text typed but not yet accepted by the server, or nil.
function Session:_unsaved_text()
  if self.view and self.edit.id and (self.edit.dirty or self:_sending(self.edit.id))
    and api.nvim_buf_is_valid(self.view.text_buf) then
    return self.view:text_lines()
  end
  return nil
end

function Session:_on_exit(code, signal, stderr)
  self:_stop_timer()
  if self.state == "closing" or self.state == "closed" then
    self.state = "closed"
    if code ~= 0 and not self.killed then
      util.warn(string.format("the server exited with code %s", tostring(code)))
    end
    self:_cleanup()
    return
  end
  self.state = "dead"
  local how = signal and signal ~= 0 and string.format("signal %d", signal) or string.format("exit code %s", tostring(code))
  -- The server's own last word on why, if it logged one (not its info lines).
  local last = ""
  for line in tostring(stderr or ""):gmatch("[^\n]+") do
    local lower = line:lower()
    if lower:find("critical") or lower:find("error") or lower:find("fatal") then
      last = line
    end
  end
  local msg = string.format("the server stopped (%s)", how)
  if last ~= "" then
    msg = msg .. ": " .. last
  end
  local unsaved = self:_unsaved_text()
  if unsaved then
    local reg = self:_keep_text(unsaved)
    msg = msg .. string.format(". Your last edits were not saved; they are in the buffer and in register \"%s", reg)
  end
  util.error(msg .. ". Press q to close, then :CloudNotes to start again.")
  if self.view then
    self:render()
    self:_update_text_status()
  end
end

function Session:_cleanup()
  if self.timer then
    self.timer:stop()
    if not self.timer:is_closing() then
      self.timer:close()
    end
    self.timer = nil
  end
end

--- The first step of closing, shared by close() and close_sync(): nil when
--- the session is closing or closed already; else whether the server still
--- runs, after sending it the text typed so far, with the state set to
--- closing (or, without a server, closed).
function Session:_start_closing()
  if self.state == "closing" or self.state == "closed" then
    return nil
  end
  local alive = self:_running()
  if alive then
    self:flush()
  end
  self.state = alive and "closing" or "closed"
  return alive
end

--- Close the view and shut the server down cleanly: pending text is sent,
--- then the shutdown request and, once it is answered, the exit notification.
function Session:close()
  local alive = self:_start_closing()
  if alive == nil then
    return
  end
  if not alive then
    local unsaved = self:_unsaved_text()
    if unsaved then
      util.warn("the text was not saved; it is kept in register \"" .. self:_keep_text(unsaved))
    end
  end
  if self.augroup then
    pcall(api.nvim_del_augroup_by_id, self.augroup)
    self.augroup = nil
  end
  self:close_panel()
  if self.view then
    self.view:close()
  end
  if not alive then
    self:_cleanup()
    return
  end
  local client = self.rpc
  client:request("shutdown", nil, util.safe(function(err)
    if err and err.code == GONE then
      return
    end
    client:notify("exit")
    client:close_stdin()
  end, "shutdown"))
  -- A server that does not answer must not linger.
  local t = uv.new_timer()
  t:start(self.cfg.shutdown_timeout_ms, 0, vim.schedule_wrap(function()
    t:close()
    if client.running then
      self.killed = true
      client:kill("sigterm")
    end
  end))
end

--- Like close(), but waits for the server: used when Neovim is exiting and
--- no later callback would run.
function Session:close_sync()
  local alive = self:_start_closing()
  if alive == nil then
    return
  end
  if alive then
    self.rpc:request_sync("shutdown", nil, self.cfg.shutdown_timeout_ms)
    self.rpc:notify("exit")
    self.rpc:close_stdin()
    vim.wait(500, function()
      return not self.rpc.running
    end, 10)
  end
  self:_cleanup()
end

--- True when nothing is on its way: no request unanswered, no list fetch, no
--- text waiting for the debounce. (Used by the tests.)
function Session:idle()
  if not self:_running() then
    return true
  end
  return not (self.rpc and self.rpc:busy())
    and not self.fetching
    and not self.check_pending
    and not self.grow_pending
    and not self.edit.dirty
    and not self.inflight
    and #self.queue == 0
    and not self.render_pending
end

-- The list's mirroring and fetching, the text buffer's edit loop, the
-- list's actions and the history and trash panels live in their own
-- modules; they are methods of the same session object.
for _, part in ipairs({ "cloudnotes.listing", "cloudnotes.editor", "cloudnotes.actions", "cloudnotes.history" }) do
  for name, fn in pairs(require(part)) do
    Session[name] = fn
  end
end

return M
