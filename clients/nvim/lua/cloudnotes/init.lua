--- CloudNotes for Neovim: configuration and the commands' entry points.
---
---   require('cloudnotes').setup{ cmd = 'cloudnotes', store = '~/notes.sqlite' }
---   :CloudNotes
---
--- The work is split by job: rpc.lua (process and JSON-RPC framing),
--- mirror.lua (applying the server's notifications), view.lua (the tab,
--- windows and text buffer) and listbuf.lua (the list buffer and drawing
--- it), session.lua (start, keys, shutdown), listing.lua (mirroring the
--- server, fetching the rows on screen), editor.lua (the text buffer's
--- saves and conflicts), actions.lua (the list keys), and panel.lua and
--- history.lua (the history and trash views).
local util = require("cloudnotes.util")

local M = {}

M.version = "0.1.0"

local function env_locale()
  -- LC_ALL > LC_TIME > LANG decide how dates read, as for other programs.
  local raw = vim.env.LC_ALL or vim.env.LC_TIME or vim.env.LANG or ""
  local lang, region = raw:match("^(%a%a%a?)_(%a%a)")
  if lang and lang ~= "C" then
    return lang:lower() .. "-" .. region:upper()
  end
  return "en-US"
end

local function env_time_zone()
  local tz = (vim.env.TZ or ""):gsub("^:", "")
  if tz == "UTC" or tz:match("^%a[%w_+-]*/[%w_+/-]+$") then
    return tz
  end
  local f = io.open("/etc/timezone", "r")
  if f then
    local line = f:read("*l")
    f:close()
    if line and line:match("^%a[%w_+-]*/[%w_+/-]+$") then
      return line
    end
  end
  local link = vim.loop.fs_readlink("/etc/localtime")
  local zone = link and link:match("zoneinfo/(.+)$")
  if zone then
    return zone
  end
  return "UTC"
end

local function default_confirm(message)
  return vim.fn.confirm(message, "&Yes\n&No", 2, "Question") == 1
end

local CANCELLED = "\1cloudnotes-cancelled\1"

--- The default search prompt: like vim.ui.input, except that an empty
--- answer is "" (clear the search) and only <Esc>/<C-c> give nil. Neovim
--- 0.7's vim.ui.input gives nil for both, so it could not clear. With
--- `opts.on_change`, that is called with the text after each change.
function M.default_input(opts, on_confirm)
  local autocmd
  if opts.on_change then
    autocmd = vim.api.nvim_create_autocmd("CmdlineChanged", {
      pattern = "@", -- the input() prompt
      callback = function()
        opts.on_change(vim.fn.getcmdline())
      end,
    })
  end
  local ok, answer = pcall(vim.fn.input, {
    prompt = opts.prompt or "",
    default = opts.default or "",
    cancelreturn = CANCELLED,
  })
  if autocmd then
    pcall(vim.api.nvim_del_autocmd, autocmd)
  end
  if not ok or answer == CANCELLED then
    on_confirm(nil)
  else
    on_confirm(answer)
  end
end

--- The defaults; setup{} merges the user's options over them.
M.defaults = {
  cmd = nil, -- program (string) or program and leading args (list); nil: $CLOUDNOTES_BIN or "cloudnotes"
  store = nil, -- store file; nil: the server's default ($CLOUDNOTES_STORE or ~/.local/share/cloudnotes/notes.sqlite)
  args = {}, -- extra arguments after "serve", e.g. { "--durability", "synced" }
  log_file = nil, -- server log file (--log-file); nil: logs go to stderr (kept for error messages)
  locale = nil, -- BCP 47, for displayDate and the placeholder title; nil: from $LC_ALL/$LC_TIME/$LANG
  time_zone = nil, -- IANA name; nil: from $TZ or /etc/localtime
  debounce_ms = 150, -- pause in typing after which the text is sent
  share_register = "+", -- where shared text goes
  share_fallback_register = '"', -- used when share_register is + or * and there is no clipboard
  share_format = "text", -- "text", "markdown" or "json"
  conflict_register = "c", -- where text the server refused (conflict, deleted memo) is kept
  list_width = nil, -- nil: half the screen, between 40 and 80 columns
  title_width = 18,
  focus_on_create = true, -- after `a`, go to the new memo's text
  insert_on_create = true, -- ... and start Insert mode there
  shutdown_timeout_ms = 2000,
  confirm = default_confirm, -- function(message) -> boolean, asked before deleting
  input = nil, -- function(opts, on_confirm) like vim.ui.input; nil: M.default_input
  debug = false, -- show Lua tracebacks in error messages
  keys = {
    select = "<CR>",
    create = "a",
    delete = "dd",
    share = "s",
    search = "/",
    clear_search = "<Esc>",
    refresh = "r",
    quit = "q",
    focus_text = "<Tab>",
    focus_list = nil, -- a key in the text buffer that goes back to the list
  },
}

M.config = nil
local current = nil

--- Configure the plugin. Every option is optional; see :help cloudnotes-setup.
function M.setup(opts)
  opts = opts or {}
  vim.validate({
    cmd = { opts.cmd, { "string", "table" }, true },
    store = { opts.store, "string", true },
    debounce_ms = { opts.debounce_ms, "number", true },
    share_register = { opts.share_register, "string", true },
    confirm = { opts.confirm, "function", true },
    input = { opts.input, "function", true },
    keys = { opts.keys, "table", true },
  })
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- tbl_deep_extend keeps functions from opts; keep the user's key table
  -- semantics where `false` disables a key.
  cfg.cmd = cfg.cmd or vim.env.CLOUDNOTES_BIN or "cloudnotes"
  cfg.locale = cfg.locale or env_locale()
  cfg.time_zone = cfg.time_zone or env_time_zone()
  cfg.input = cfg.input or M.default_input
  util.debug = cfg.debug
  M.config = cfg
  return cfg
end

--- The running session, if any (for scripting and tests).
function M.session()
  return current
end

--- Open the split view (:CloudNotes). With a session already running, go
--- to its tab instead of starting a second server.
function M.open()
  if not M.config then
    M.setup({})
  end
  if current and (current.state == "ready" or current.state == "starting") and current.view
    and vim.api.nvim_tabpage_is_valid(current.view.tab) then
    vim.api.nvim_set_current_tabpage(current.view.tab)
    return current
  end
  if current then
    -- A stopped session's view is still open: replace it.
    current:close()
  end
  local session = require("cloudnotes.session").new(M.config, M.version)
  if not session:start() then
    return nil
  end
  current = session
  return session
end

--- Close the view and shut the server down (:CloudNotesClose, or q).
function M.close()
  if current then
    current:close()
  end
end

--- The running session, started (and its handshake and first screen
--- waited for) if there is none; nil if it cannot start.
local function ready_session()
  local s = current
  if not s or s.state ~= "ready" then
    s = M.open()
  end
  if s and s.state == "starting" then
    vim.wait(5000, function()
      return s.state ~= "starting" and s:idle()
    end, 10)
  end
  return s
end

--- Import a JSON file of memos (:CloudNotesImport {file}).
function M.import(path)
  local s = ready_session()
  if s then
    s:import(path)
  end
end

--- Show the versions of the memo shown (:CloudNotesHistory).
function M.history()
  local s = ready_session()
  if s then
    s:history()
  end
end

--- Show the memos in the trash (:CloudNotesTrash).
function M.trash()
  local s = ready_session()
  if s then
    s:trash()
  end
end

return M
