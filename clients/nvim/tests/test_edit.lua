-- The text buffer against the real server: creating and typing (debounced,
-- only the change sent), :w and :e!, long, CRLF and large memos, and text
-- still pending when the view is closed or Neovim exits. Each test opens
-- :CloudNotes on its own temporary store.
local api = vim.api

--- Open on H.SEED with a debounce that never fires within a test, go to
--- the text window and type `lines` over Plan's text: not sent yet.
local function open_and_type_unsent(H, lines)
  local s = H.open_seeded({ debounce_ms = 10000 })
  api.nvim_set_current_win(s.view.text_win)
  H.set_text(lines)
  return s
end

return {
  {
    "create_type_and_title",
    function(H)
      local s = H.open()
      H.press("a")
      H.eq(api.nvim_get_current_win(), s.view.text_win, "a moves to the text window")
      H.assert(H.list_lines()[1]:match("^> New Memo           November") or H.list_lines()[1]:match("^> New Memo "),
        "new row: " .. H.list_lines()[1])
      H.eq(#H.list_lines(), 1, "one row")
      H.eq(H.text_lines(), { "" }, "empty text")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modifiable"), true, "editable")
      local sent = H.record_sent(s)
      H.type({ "", "Groceries", "milk", "eggs" })
      local update = sent[#sent]
      H.eq(update.method, "memo/edit", "the change was sent")
      H.eq(update.params.edits, { { start = 0, ["end"] = 0, text = "\nGroceries\nmilk\neggs" } }, "inserted into the empty text")
      H.eq(update.params.baseVersion, 1, "based on version 1")
      H.eq(s.versions[s.edit.id], 2, "version from the response")
      local line = H.list_lines()[1]
      H.assert(line:match("^> Groceries          .+  milk eggs$"), "row follows the text: " .. line)
      H.eq(H.text_lines(), { "", "Groceries", "milk", "eggs" }, "text kept")
      -- The title line (first non-blank line) is highlighted.
      local ns = api.nvim_get_namespaces().cloudnotes_title
      local marks = api.nvim_buf_get_extmarks(s.view.text_buf, ns, 0, -1, { details = true })
      H.eq(#marks, 1, "one title highlight")
      H.eq(marks[1][2], 1, "title highlight on line 2")
      H.eq(marks[1][4].hl_group, "CloudNotesTitle", "title highlight group")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modified"), false, "saved: not modified")
      -- A second memo goes on top; the first one stays below, unmarked.
      H.press("a")
      H.type({ "Work", "report" })
      local lines = H.list_lines()
      H.eq(#lines, 2, "two rows")
      H.assert(lines[1]:match("^> Work  .+  report$"), "first row: " .. lines[1])
      H.assert(lines[2]:match("^  Groceries  .+  milk eggs$"), "second row: " .. lines[2])
      H.eq(H.text_lines(), { "Work", "report" }, "text of the new memo")
      H.quit(s)
    end,
  },
  {
    "typing_with_keys_is_debounced",
    function(H)
      local s = H.open_seeded({ debounce_ms = 150 })
      local sent = H.record_sent(s)
      api.nvim_set_current_win(s.view.text_win)
      -- Real Insert-mode typing, one key at a time, faster than the debounce.
      -- (Queued without "x": "x" would end Insert mode after each key.)
      for _, key in ipairs({ "G", "o", "s", "t", "e", "p", " ", "2" }) do
        api.nvim_feedkeys(key, "n", false)
      end
      api.nvim_feedkeys(api.nvim_replace_termcodes("<Esc>", true, false, true), "nx", false)
      H.eq(H.text_lines(), { "Plan", "step 1", "step 2" }, "typed text")
      H.eq(#sent, 0, "nothing sent before the pause")
      H.settle(s)
      H.eq(H.methods(sent), { "memo/edit" }, "exactly one edit after the pause")
      H.eq(sent[1].params.edits, { { start = 11, ["end"] = 11, text = "\nstep 2" } }, "only what was typed")
      H.eq(sent[1].params.baseVersion, 1, "baseVersion")
      local lines = H.list_lines()
      H.assert(lines[1]:match("^> Plan  .+  step 1 step 2$"), "row updated: " .. lines[1])
      H.eq(lines[2], H.seed_row(2), "row 2 unchanged")
      H.eq(lines[3], H.seed_row(3), "row 3 unchanged")
      H.eq(H.text_lines(), { "Plan", "step 1", "step 2" }, "text after saving")
      -- The next edit is based on the version the response brought.
      H.type({ "Plan", "step 1", "step 2", "step 3" })
      H.eq(sent[#sent].params.baseVersion, 2, "second update based on version 2")
      H.quit(s)
    end,
  },
  {
    "edit_then_select_saves_the_edit",
    function(H)
      local s = open_and_type_unsent(H, { "Plan B", "step 1" })
      -- Select another memo long before the debounce would fire.
      H.cursor(3)
      H.press("<CR>")
      local lines = H.list_lines()
      H.eq(#lines, 3, "three rows")
      H.assert(lines[1]:match("^  Plan B  .+  step 1$"), "edited memo saved and moved to the top: " .. lines[1])
      H.eq(lines[3], H.seed_row(3, true), "selected row")
      H.eq(H.text_lines(), { "Groceries", "milk", "eggs" }, "text of the selected memo")
      H.quit(s)
    end,
  },
  {
    "write_command_saves_now",
    function(H)
      local s = open_and_type_unsent(H, { "Plan", "step 1", "written" })
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modified"), true, "modified before :w")
      vim.cmd("write")
      H.assert(H.note("memo saved %(version 2%)"), ":w says the memo is saved")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modified"), false, "not modified after :w")
      H.settle(s)
      H.assert(H.list_lines()[1]:match("^> Plan  .+  step 1 written$"), "row updated: " .. H.list_lines()[1])
      H.eq(H.text_lines(), { "Plan", "step 1", "written" }, "text")
      -- :w with nothing new just says so again.
      vim.cmd("write")
      H.eq(#vim.tbl_filter(function(n) return n.msg:find("memo saved") end, H.notes), 2, "second :w")
      H.quit(s)
    end,
  },
  {
    "edit_bang_reloads_saved_text",
    function(H)
      local s = open_and_type_unsent(H, { "Plan", "to be discarded" })
      local sent = H.record_sent(s)
      vim.cmd("edit!")
      H.eq(H.text_lines(), { "Plan", "step 1" }, ":e! shows the text as last saved")
      H.assert(H.note("reloaded the memo as last saved"), "said so")
      vim.wait(100)
      H.eq(#sent, 0, "the discarded (or emptied) text was not sent")
      -- Typing after the reload still reaches the server.
      s.cfg.debounce_ms = 30
      H.type({ "Plan", "after reload" })
      H.eq(H.methods(sent), { "memo/edit" }, "one edit")
      H.assert(H.list_lines()[1]:match("^> Plan  .+  after reload$"), "row: " .. H.list_lines()[1])
      H.quit(s)
    end,
  },
  {
    "typing_into_a_long_memo_sends_only_the_change",
    function(H)
      local long = "Long\n" .. string.rep("가나다 abc\n", 10000) -- 130 KB
      local s = H.open_with_memo(long)
      local sent = H.record_sent(s)
      local lines = H.text_lines()
      lines[#lines] = "the end" -- the text ends with "\n": its last line is empty
      H.type(lines)
      H.eq(H.methods(sent), { "memo/edit" }, "one edit")
      H.eq(sent[1].params.edits, { { start = #long, ["end"] = #long, text = "the end" } }, "only the typed bytes")
      H.eq(H.request("memo/share", { id = s.edit.id }).text, long .. "the end", "the server holds the whole text")
      H.eq(s.mirror.detail.text, long .. "the end", "the detail follows")
      H.eq(s.versions[s.edit.id], 2, "version from the reply")
      H.quit(s)
    end,
  },
  {
    "an_edit_whose_result_length_disagrees_is_followed_by_the_whole_text",
    function(H)
      local s = H.open_with_memo("abc")
      -- The plugin's idea of the server's text is wrong (it never is, unless something is broken).
      s.mirror.detail.text = "ab"
      local sent = H.record_sent(s)
      H.type({ "abX" })
      H.eq(H.methods(sent), { "memo/edit", "memo/update" }, "the edit, then the whole text")
      H.eq(sent[2].params, { id = s.edit.id, text = "abX", baseVersion = 2 }, "based on what the server now holds")
      H.eq(H.request("memo/share", { id = s.edit.id }).text, "abX", "the server holds the buffer's text")
      H.quit(s)
    end,
  },
  {
    "crlf_text_round_trips",
    function(H)
      local s = H.open_with_memo("Work\r\nreport")
      H.eq(H.text_lines(), { "Work\r", "report" }, "CR kept at the line end")
      local sent = H.record_sent(s)
      H.type({ "Work\r", "report\r", "due Friday" })
      H.eq(sent[#sent].params.edits, { { start = 12, ["end"] = 12, text = "\r\ndue Friday" } }, "the CR kept in the change")
      H.eq(H.request("memo/share", { id = s.edit.id }).text, "Work\r\nreport\r\ndue Friday", "CRLF text stored exactly")
      H.assert(H.list_lines()[1]:match("^> Work  .+  report due Friday$"), "row: " .. H.list_lines()[1])
      H.quit(s)
    end,
  },
  {
    "large_memo_arrives_in_many_chunks",
    function(H)
      local lines = { "Big" }
      for i = 1, 6000 do
        lines[#lines + 1] = string.format("line %05d %s", i, string.rep("é", 40))
      end
      local s = H.open_with_memo(table.concat(lines, "\n"))
      H.eq(#H.text_lines(), 6001, "all lines")
      H.eq(H.text_lines(), lines, "the exact text")
      H.assert(H.list_lines()[1]:match("^> Big  "), "row: " .. H.list_lines()[1])
      H.quit(s)
    end,
  },
  {
    "leaving_neovim_saves_and_stops_the_server",
    function(H)
      -- A separate Neovim opens the view, types (long debounce) and quits
      -- with :qa! while the text is still pending.
      local store = H.new_store("leave")
      local pidfile = H.tmp .. "/server.pid"
      local script = H.tmp .. "/leave.lua"
      vim.fn.writefile({
        "require('cloudnotes').setup({ cmd = " .. vim.inspect(H.bin) .. ", store = " .. vim.inspect(store)
          .. ", debounce_ms = 60000, insert_on_create = false, locale = 'en-US', time_zone = 'UTC' })",
        "vim.cmd('CloudNotes')",
        "local s = require('cloudnotes').session()",
        "vim.wait(5000, function() return s.state == 'ready' and s:idle() end)",
        "s:create()",
        "vim.wait(5000, function() return s:idle() end)",
        "vim.api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, { 'Typed', 'just before quitting' })",
        "vim.fn.writefile({ tostring(s.rpc.pid) }, " .. vim.inspect(pidfile) .. ")",
        "vim.cmd('qa!')",
      }, script)
      local out = vim.fn.system({ vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "-n",
        "--cmd", "set rtp^=" .. H.plugin, "--cmd", "runtime plugin/cloudnotes.lua", "-c", "luafile " .. script })
      H.eq(vim.v.shell_error, 0, "child Neovim exit code (output: " .. out .. ")")
      local pid = tonumber(vim.fn.readfile(pidfile)[1])
      H.wait(function()
        return vim.loop.kill(pid, 0) ~= 0
      end, "the child's server to be gone", 3000)
      -- The pending text reached the store.
      local other = H.other_client(store)
      local list = other.req("memo/list")
      H.eq(list.total, 1, "one memo")
      H.eq(list.rows[1].title, "Typed", "title")
      H.eq(list.rows[1].preview, "just before quitting", "preview")
      other.stop()
    end,
  },
  {
    "quit_sends_shutdown_then_exit",
    function(H)
      local s = H.open({ debounce_ms = 10000 })
      H.press("a")
      H.set_text({ "Last words" })
      local sent = H.record_sent(s)
      local tabs = #api.nvim_list_tabpages()
      H.press("q")
      H.wait(function()
        return not s.rpc.running
      end, "the server to exit")
      H.eq(H.methods(sent), { "memo/edit", "shutdown", "exit" }, "pending text, shutdown, then exit")
      H.eq(s.rpc.exit_code, 0, "clean exit code")
      H.eq(#api.nvim_list_tabpages(), tabs - 1, "tab closed")
      -- The text reached the store: a new session shows it.
      local s2 = H.open()
      H.assert(H.list_lines(s2)[1]:match("^> Last words  "), "saved before quitting: " .. H.list_lines(s2)[1])
      H.eq(H.text_lines(s2), { "Last words" }, "text in the new session")
      H.quit(s2)
    end,
  },
}
