--- The server process and JSON-RPC 2.0 over JSON lines (one message per
--- '\n'-terminated line on stdin/stdout), as in protocol/README.md section 1.
---
--- Everything the client hears is handed to the caller in arrival order on
--- the main loop (vim.schedule), because the protocol's meaning depends on it:
--- notifications come before the response of the request that caused them.
local uv = vim.loop
local util = require("cloudnotes.util")

local M = {}

--- Error code given to callbacks of requests the server never answered
--- because it is not running or exited (not a protocol code).
M.GONE = -32099

--- Returns a function `feed(chunk) -> lines` that cuts a byte stream into
--- complete lines. Chunks may end mid-line or hold many lines; the unfinished
--- tail is kept for the next chunk. `feed(nil)` (end of stream) returns the
--- last line even without its '\n', as the protocol allows. "\r\n" endings
--- are accepted and blank lines are dropped.
function M.line_splitter()
  -- Pieces of the unfinished line, joined only once its '\n' arrives: a
  -- 16 MiB memo comes in hundreds of chunks, and joining on every chunk would
  -- be quadratic.
  local pending = {}
  local function finish(lines, piece)
    pending[#pending + 1] = piece
    local line = table.concat(pending)
    pending = {}
    if line:sub(-1) == "\r" then
      line = line:sub(1, -2)
    end
    if line:find("[^ \t]") then
      lines[#lines + 1] = line
    end
  end
  return function(chunk)
    local lines = {}
    if chunk == nil then
      if #pending > 0 then
        finish(lines, "")
      end
      return lines
    end
    local start = 1
    while true do
      local nl = chunk:find("\n", start, true)
      if not nl then
        break
      end
      finish(lines, chunk:sub(start, nl - 1))
      start = nl + 1
    end
    if start <= #chunk then
      pending[#pending + 1] = chunk:sub(start)
    end
    return lines
  end
end

local Client = {}
Client.__index = Client

local STDERR_TAIL = 4096

--- Start `cmd[1]` with arguments `cmd[2..]` and speak JSON-RPC with it.
--- handlers: on_notification(method, params), on_exit(code, signal, stderr_tail)
--- and on_protocol_error(msg). Returns the client, or nil and a message.
function M.start(cmd, handlers)
  local self = setmetatable({
    handlers = handlers or {},
    next_id = 1,
    pending = {},
    running = false,
    stderr_tail = "",
    split = M.line_splitter(),
  }, Client)

  local stdin, stdout, stderr = uv.new_pipe(false), uv.new_pipe(false), uv.new_pipe(false)
  local args = {}
  for i = 2, #cmd do
    args[#args + 1] = cmd[i]
  end
  local exit_code, exit_signal
  local stdout_done, exited = false, false

  -- The exit callback can run before the last stdout chunk was read; the
  -- caller hears about the exit only once both are over, so that the
  -- responses the server wrote before dying are still delivered.
  local function maybe_finish()
    if not (stdout_done and exited) or self.finished then
      return
    end
    self.finished = true
    vim.schedule(function()
      self:_on_exit(exit_code, exit_signal)
    end)
  end

  local ok, handle, pid = pcall(uv.spawn, cmd[1], {
    args = args,
    stdio = { stdin, stdout, stderr },
  }, function(code, signal)
    exit_code, exit_signal = code, signal
    exited = true
    -- If stdout never reports EOF (a grandchild holding it), don't wait forever.
    local t = uv.new_timer()
    t:start(1000, 0, function()
      t:close()
      stdout_done = true
      maybe_finish()
    end)
    maybe_finish()
  end)
  if not ok or not handle then
    for _, p in ipairs({ stdin, stdout, stderr }) do
      p:close()
    end
    return nil, string.format("cannot start %s: %s", tostring(cmd[1]), tostring(ok and pid or handle))
  end

  self.handle, self.pid = handle, pid
  self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
  self.running = true

  -- The complete lines of `chunk` (nil: the end of output) are handled on
  -- the main loop; one scheduled callback per chunk keeps them in order.
  local function dispatch(chunk)
    local lines = self.split(chunk)
    if #lines > 0 then
      vim.schedule(function()
        self:_dispatch_lines(lines)
      end)
    end
  end

  stdout:read_start(function(err, chunk)
    if err or chunk == nil then
      dispatch(nil)
      if not stdout:is_closing() then
        stdout:close()
      end
      stdout_done = true
      maybe_finish()
      return
    end
    dispatch(chunk)
  end)

  stderr:read_start(function(err, chunk)
    if err or chunk == nil then
      if not stderr:is_closing() then
        stderr:close()
      end
      return
    end
    local tail = self.stderr_tail .. chunk
    if #tail > STDERR_TAIL then
      tail = tail:sub(-STDERR_TAIL)
    end
    self.stderr_tail = tail
  end)

  return self
end

function Client:_dispatch_lines(lines)
  for _, line in ipairs(lines) do
    util.safe(function()
      self:_dispatch(line)
    end, "while handling a server message")()
  end
end

function Client:_dispatch(line)
  -- luanil turns JSON null into Lua nil, so `params.id == nil` means null.
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    self:_protocol_error("the server wrote a line that is not JSON: " .. line:sub(1, 200))
    return
  end
  if msg.method ~= nil and msg.id ~= nil then
    -- The protocol defines no server-to-client requests; answer as LSP would.
    self:_send({ jsonrpc = "2.0", id = msg.id, error = { code = -32601, message = "Method not found" } })
  elseif msg.method ~= nil then
    if self.handlers.on_notification then
      self.handlers.on_notification(msg.method, msg.params or {})
    end
  elseif msg.id ~= nil then
    local cb = self.pending[msg.id]
    self.pending[msg.id] = nil
    if cb then
      cb(msg.error, msg.result)
    end
  elseif msg.error ~= nil then
    -- An error with id null: the server could not read one of our lines.
    self:_protocol_error("the server refused a message: " .. util.rpc_error_text(msg.error))
  end
end

function Client:_protocol_error(text)
  if self.handlers.on_protocol_error then
    self.handlers.on_protocol_error(text)
  else
    util.error(text)
  end
end

function Client:_send(msg)
  if not self.running or self.stdin:is_closing() then
    return false
  end
  local ok, line = pcall(vim.json.encode, msg)
  if not ok then
    util.error("cannot encode a message: " .. tostring(line))
    return false
  end
  self.stdin:write(line .. "\n")
  return true
end

local function params_or_empty(params)
  -- An empty Lua table would encode as [] and the server wants an object.
  if params == nil or next(params) == nil then
    return vim.empty_dict()
  end
  return params
end

--- Send a request. `callback(err, result)` runs on the main loop with the
--- JSON-RPC error object or the result (nil for JSON null). If the server is
--- gone, the callback gets an error instead of never running. Returns the id.
function Client:request(method, params, callback)
  callback = callback or function() end
  if not self.running then
    vim.schedule(function()
      callback({ code = M.GONE, message = "the server is not running" }, nil)
    end)
    return nil
  end
  local id = self.next_id
  self.next_id = id + 1
  self.pending[id] = callback
  self:_send({ jsonrpc = "2.0", id = id, method = method, params = params_or_empty(params) })
  return id
end

--- Send a request and wait for its answer (up to `timeout_ms`), for the few
--- places that must finish before Neovim goes on, such as exiting.
--- Returns err, result; err.code is -32098 on timeout.
function Client:request_sync(method, params, timeout_ms)
  local done, e, r = false, nil, nil
  self:request(method, params, function(err, result)
    done, e, r = true, err, result
  end)
  if not vim.wait(timeout_ms or 2000, function()
    return done
  end, 10) then
    return { code = -32098, message = "no answer from the server in time" }, nil
  end
  return e, r
end

--- Send a notification (no answer expected).
function Client:notify(method, params)
  return self:_send({ jsonrpc = "2.0", method = method, params = params_or_empty(params) })
end

--- Forcibly end the server (used when a clean shutdown got no answer).
function Client:kill(signal)
  if self.handle and not self.handle:is_closing() then
    pcall(self.handle.kill, self.handle, signal or "sigterm")
  end
end

--- Stop sending: close the server's stdin, which also makes it exit (end of
--- input) if the exit notification was lost.
function Client:close_stdin()
  if self.stdin and not self.stdin:is_closing() then
    self.stdin:shutdown(function()
      if not self.stdin:is_closing() then
        self.stdin:close()
      end
    end)
  end
end

function Client:_on_exit(code, signal)
  self.running = false
  self.exit_code, self.exit_signal = code, signal
  self:close_stdin()
  if self.stderr and not self.stderr:is_closing() then
    self.stderr:close()
  end
  if self.handle and not self.handle:is_closing() then
    self.handle:close()
  end
  -- Requests that will never be answered still get their callback.
  local pending = self.pending
  self.pending = {}
  for _, cb in pairs(pending) do
    util.safe(cb, "after the server exited")({ code = M.GONE, message = "the server exited" }, nil)
  end
  if self.handlers.on_exit then
    self.handlers.on_exit(code, signal, self.stderr_tail)
  end
end

--- True while requests are unanswered.
function Client:busy()
  return next(self.pending) ~= nil
end

return M
