-- Conflicts with other front ends, and a server that dies or cannot start:
-- the user is told with vim.notify, nothing typed is lost, no Lua error.
local api = vim.api

--- Open on the first two memos of H.SEED: Plan (the newest, selected and
--- shown) and Other. Returns the session and Plan's id.
local function open_plan_and_other(H, opts)
  local s = H.open_seeded(opts, 2)
  return s, s.edit.id
end

return {
  {
    "conflict_with_another_server",
    function(H)
      -- A long debounce, and ":w" to send: the user's text is typed before the other
      -- side's edit and sent after it, whenever the server notices that edit.
      local s, plan = open_plan_and_other(H, { debounce_ms = 5000 })
      H.eq(H.text_lines(), { "Plan", "step 1" }, "start")
      -- The user types, on version 1 ...
      H.set_text({ "Plan", "step 1", "my change" })
      -- ... while another front end (its own server on the same store) edits the memo.
      local r = H.elsewhere({
        { "memo/update", { id = plan, text = "Plan\nstep 1\nfrom the other side", baseVersion = 1 } },
      })[1]
      H.eq(r.memo.version, 2, "the other side made version 2")
      -- The server tells the plugin of version 2, but the buffer holds unsent typing: kept.
      H.eq(H.text_lines(), { "Plan", "step 1", "my change" }, "unsent typing kept")
      H.write()
      local warn = H.note("changed elsewhere")
      H.assert(warn, "the conflict was reported")
      H.eq(warn.level, vim.log.levels.WARN, "as a warning")
      H.assert(warn.msg:find('register "c', 1, true), "the message names the register")
      -- Nothing typed is lost: it is in register c ...
      H.eq(vim.fn.getreg("c"), "Plan\nstep 1\nmy change\n", "the user's text in register c")
      -- ... and the buffer shows the server's current text, now version 2.
      H.eq(H.text_lines(), { "Plan", "step 1", "from the other side" }, "server's text shown")
      H.eq(s.versions[plan], 2, "version from the conflict")
      H.eq(H.request("memo/select", { id = plan }).memo.text, "Plan\nstep 1\nfrom the other side",
        "the store was not overwritten")
      -- The user pastes their text back: based on version 2 it now goes through.
      local sent = H.record_sent(s)
      H.set_text({ "Plan", "step 1", "from the other side", "my change" })
      H.write()
      H.eq(sent[#sent].params.baseVersion, 2, "retry based on version 2")
      H.eq(s.versions[plan], 3, "version 3")
      local line = H.list_lines()[1]
      H.assert(line:match("^> Plan  .+  step 1 from the other side my change$"), "row: " .. line)
      H.eq(H.text_lines(), { "Plan", "step 1", "from the other side", "my change" }, "text")
      H.quit(s)
    end,
  },
  {
    "another_servers_edit_appears_without_refresh",
    function(H)
      local s, plan = open_plan_and_other(H, { debounce_ms = 60 })
      H.elsewhere({
        { "memo/update", { id = plan, text = "Plan\nedited in another editor", baseVersion = 1 } },
        { "memo/create", { text = "Third\nfrom the other editor" } },
      })
      -- No key pressed: the server notices within a second and the view follows.
      H.wait(function()
        return #H.list_lines() == 3 and H.text_lines()[2] == "edited in another editor"
      end, "the other editor's changes to show", 3000)
      H.eq(s.versions[plan], 2, "the buffer is at the other side's version")
      H.type({ "Plan", "edited in another editor", "and here" })
      H.eq(H.request("memo/select", { id = plan }).memo.text, "Plan\nedited in another editor\nand here",
        "typing on top of it is saved, no conflict")
      H.quit(s)
    end,
  },
  {
    "conflict_stale_base_version_same_server",
    function(H)
      -- Another client of the same server updated the memo without us
      -- hearing the new version (a request we did not make).
      local s, plan = open_plan_and_other(H, { debounce_ms = 60 })
      s.rpc:request_sync("memo/update", { id = plan, text = "Plan\nchanged behind our back" })
      H.settle(s)
      H.type({ "Plan", "typed here" })
      H.assert(H.note("changed elsewhere"), "conflict reported")
      H.eq(vim.fn.getreg("c"), "Plan\ntyped here\n", "typed text kept")
      H.eq(H.text_lines(), { "Plan", "changed behind our back" }, "current text shown")
      H.quit(s)
    end,
  },
  {
    "memo_deleted_elsewhere_keeps_text",
    function(H)
      local s, plan = open_plan_and_other(H, { debounce_ms = 5000 })
      -- The user types (not sent yet) while another front end deletes the memo.
      H.set_text({ "Plan", "still typing" })
      H.elsewhere({ { "memo/delete", { id = plan } } })
      H.write()
      -- However the server learned of it first, the text is kept and the user told.
      H.wait_note("deleted elsewhere", "the report")
      H.eq(vim.fn.getreg("c"), "Plan\nstill typing\n", "text in register c")
      -- The selection moved on to the memo now at that place (rule S4), without a refresh.
      H.wait(function()
        return #H.list_lines() == 1 and H.text_lines()[1] == "Other"
      end, "the view to follow the delete", 3000)
      H.quit(s)
    end,
  },
  {
    "server_killed",
    function(H)
      H.allowed_errors = { "the server stopped", "the server is not running" }
      local s = open_plan_and_other(H)
      vim.loop.kill(s.rpc.pid, "sigkill")
      local note = H.wait_note("the server stopped", "the death notice")
      H.eq(note.level, vim.log.levels.ERROR, "an error notification")
      H.assert(note.msg:find("signal 9", 1, true), "says how: " .. note.msg)
      H.eq(s.state, "dead", "session dead")
      H.assert(api.nvim_win_get_option(s.view.list_win, "statusline"):find("server stopped"), "list status")
      -- The windows keep what they showed.
      H.eq(#H.list_lines(), 2, "rows still shown")
      H.eq(H.text_lines(), { "Plan", "step 1" }, "text still shown")
      -- Keys now explain instead of failing.
      H.press("a")
      H.assert(H.note("not running"), "a explains the server is gone")
      H.press("<CR>")
      H.press("dd")
      H.press("s")
      -- Typing does not raise errors either.
      H.set_text({ "Plan", "after death" })
      vim.wait(200)
      -- q closes the view without a shutdown.
      local tabs = #api.nvim_list_tabpages()
      H.press("q")
      H.eq(#api.nvim_list_tabpages(), tabs - 1, "tab closed")
      H.eq(s.state, "closed", "closed")
    end,
  },
  {
    "server_killed_with_unsaved_text",
    function(H)
      H.allowed_errors = { "the server stopped" }
      local s = open_plan_and_other(H, { debounce_ms = 10000 })
      H.set_text({ "Plan", "unsaved words" })
      vim.loop.kill(s.rpc.pid, "sigterm")
      local msg = H.wait_note("the server stopped", "the death notice").msg
      H.assert(msg:find("not saved", 1, true), "mentions the unsaved text: " .. msg)
      H.eq(vim.fn.getreg("c"), "Plan\nunsaved words\n", "kept in register c")
      H.eq(H.text_lines(), { "Plan", "unsaved words" }, "and in the buffer")
      vim.cmd("CloudNotesClose")
    end,
  },
  {
    "unknown_time_zone_falls_back_to_utc",
    function(H)
      -- The first initialize is refused; the initialized notification and the
      -- first screen's memo/list sent after it are dropped and refused, and
      -- the retry with UTC brings the list.
      H.store = H.new_store()
      H.seed_store(H.store, 3)
      local s = H.open({ time_zone = "Nowhere/Bad" })
      local warn = H.note("does not know the time zone")
      H.assert(warn and warn.level == vim.log.levels.WARN, "the user was told")
      H.eq(#H.list_lines(), 3, "the list")
      H.eq(H.list_lines()[1], H.row(true, "Memo 0001", H.date("December 31, 2025 at 11:59 PM"), "body 1"), "in UTC")
      H.eq(H.text_lines(), { "Memo 0001", "body 1" }, "the newest memo is shown")
      H.quit(s)
    end,
  },
  {
    "missing_binary",
    function(H)
      H.allowed_errors = { "cannot run" }
      local tabs = #api.nvim_list_tabpages()
      require("cloudnotes").setup(H.options({ cmd = H.tmp .. "/no-such-cloudnotes" }))
      vim.cmd("CloudNotes")
      local note = H.note("cannot run")
      H.assert(note, "told the user")
      H.eq(note.level, vim.log.levels.ERROR, "as an error")
      H.eq(#api.nvim_list_tabpages(), tabs, "no tab opened")
      H.eq(require("cloudnotes").session(), nil, "no session")
    end,
  },
  {
    "store_cannot_be_opened",
    function(H)
      H.allowed_errors = { "the server stopped" }
      local bad = H.tmp .. "/not-a-store.sqlite"
      vim.fn.writefile({ "this is not a database, just text" }, bad)
      require("cloudnotes").setup(H.options({ store = bad }))
      vim.cmd("CloudNotes")
      local s = require("cloudnotes").session()
      local msg = H.wait_note("the server stopped", "the failure notice").msg
      H.assert(msg:find("exit code 2", 1, true), "exit code in: " .. msg)
      H.assert(msg:find("store", 1, true), "the server's reason in: " .. msg)
      H.eq(s.state, "dead", "dead session")
      H.press("q", s)
      H.eq(s.state, "closed", "q closes")
    end,
  },
}
