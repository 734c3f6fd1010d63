-- Neovim's own JSON-RPC client, vim.lsp.rpc, drives one CloudNotes session, as a plugin would use it.
--
-- Run by test_editor_clients.py:
--   nvim --headless -u NONE -i NONE -n -c 'lua dofile("…/session.lua")'
-- with $CLOUDNOTES_SESSION naming the session plan: {command, steps, timeoutSeconds}, where each step is
-- {request = method, params = ...} or {notify = method, params = ...}, and timeoutSeconds is how long to
-- wait for each answer and for the server to exit. It sends the steps in order, each request after the
-- previous one was answered, and writes to $CLOUDNOTES_REPORT, in the order the client delivered them:
-- every notification (dispatchers.notification), every response (the request's callback) and the server's
-- exit code (dispatchers.on_exit). The test checks the report.
--
-- Written against Neovim 0.7.2 (Debian 12), whose vim.lsp.rpc delivers notifications and responses through
-- vim.schedule (so vim.wait lets them run, in arrival order), turns JSON null inside objects into nil, and
-- encodes an empty Lua table as [] (the plan's {} are decoded as vim.empty_dict(), which encodes as {}).
--
-- nvim exits 0 when every request was answered and the server exited, and 1 otherwise.

local events = {}
local server_exited = false

local function read_file(path)
  local file = assert(io.open(path, 'rb'))
  local text = file:read('*a')
  file:close()
  return text
end

local function write_report(failure)
  local file = assert(io.open(os.getenv('CLOUDNOTES_REPORT'), 'wb'))
  file:write(vim.json.encode({ events = events, failure = failure }))
  file:close()
end

local dispatchers = {
  notification = function(method, params)
    table.insert(events, { notification = method, params = params })
  end,
  on_exit = function(code, signal)
    -- Called straight from the event loop, not scheduled like the others: queue it behind them.
    vim.schedule(function()
      table.insert(events, { exit = code, signal = signal })
      server_exited = true
    end)
  end,
  on_error = function(code, err)
    table.insert(events, { client_error = vim.lsp.rpc.client_errors[code], detail = vim.inspect(err) })
  end,
}

local function start(command)
  if vim.fn.has('nvim-0.10') == 1 then -- 0.10 changed the signature to (cmd_list, dispatchers)
    return vim.lsp.rpc.start(command, dispatchers)
  end
  return vim.lsp.rpc.start(command[1], vim.list_slice(command, 2), dispatchers)
end

local function run_step(client, step, timeout_ms)
  if step.notify then
    assert(client.notify(step.notify, step.params), 'could not send ' .. step.notify)
    return
  end
  local answered = false
  local sent = client.request(step.request, step.params, function(err, result)
    answered = true
    if err then
      table.insert(events, { response = step.request, error = err })
    else
      table.insert(events, { response = step.request, result = result == nil and vim.NIL or result })
    end
  end)
  assert(sent, 'could not send ' .. step.request)
  if not vim.wait(timeout_ms, function() return answered end, 10) then
    error(string.format('no answer to %s within %d ms', step.request, timeout_ms))
  end
end

local function run_session()
  local plan = vim.json.decode(read_file(os.getenv('CLOUDNOTES_SESSION')))
  local timeout_ms = plan.timeoutSeconds * 1000
  local client = assert(start(plan.command), 'could not spawn the server')
  for _, step in ipairs(plan.steps) do
    run_step(client, step, timeout_ms)
  end
  if not vim.wait(timeout_ms, function() return server_exited end, 10) then
    error(string.format('the server did not exit within %d ms', timeout_ms))
  end
end

local ok, failure = xpcall(run_session, debug.traceback)
write_report(not ok and failure or nil)
vim.cmd(ok and 'qall!' or 'cquit 1')
