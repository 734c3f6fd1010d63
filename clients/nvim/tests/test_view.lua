-- The split view against the real server: each test opens :CloudNotes on
-- its own temporary store and checks both windows after every step.
local api = vim.api

-- Three memos with fixed timestamps, so their dates are known exactly.
local SEED = {
  { title = "Plan", body = "step 1", last_modified = 1767225600 }, -- 2026-01-01 00:00 UTC
  { title = "Other", body = "", last_modified = 1767225000 }, -- 2025-12-31 23:50
  { title = "Groceries", body = "milk\neggs", last_modified = 1767220000 }, -- 2025-12-31 22:26
}

local function dates(H)
  return H.date("January 1, 2026 at 12:00 AM"), H.date("December 31, 2025 at 11:50 PM"),
    H.date("December 31, 2025 at 10:26 PM")
end

--- Open on an empty store, import SEED and check the starting picture.
local function open_seeded(H, opts)
  local s = H.open(opts)
  H.import(SEED)
  local d1, d2, d3 = dates(H)
  -- The import selected the newest memo (nothing was selected before).
  H.check({
    H.row(true, "Plan", d1, "step 1"),
    H.row(false, "Other", d2),
    H.row(false, "Groceries", d3, "milk eggs"),
  }, { "Plan", "step 1" }, "after the import")
  return s
end

return {
  {
    "open_empty_store_in_new_tab",
    function(H)
      local tabs_before = #api.nvim_list_tabpages()
      local s = H.open()
      H.eq(#api.nvim_list_tabpages(), tabs_before + 1, "one new tab")
      H.eq(api.nvim_get_current_tabpage(), s.view.tab, "the new tab is current")
      local wins = api.nvim_tabpage_list_wins(s.view.tab)
      H.eq(#wins, 2, "two windows in the tab")
      -- The list is the narrow window on the left.
      H.eq(api.nvim_win_get_position(s.view.list_win)[2], 0, "list window at column 0")
      H.assert(api.nvim_win_get_position(s.view.text_win)[2] > 0, "text window on the right")
      H.eq(api.nvim_win_get_width(s.view.list_win), 40, "list width (half of 80 columns)")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "buftype"), "acwrite", "text buffer is acwrite")
      H.check({ "  (no memos; press a to create one)" }, { "" }, "empty store")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modifiable"), false, "no memo: text is read-only")
      H.assert(api.nvim_win_get_option(s.view.list_win, "statusline"):find("0 memos"), "status shows 0 memos")
      H.quit(s)
      H.eq(#api.nvim_list_tabpages(), tabs_before, "q closed the tab")
      H.eq(api.nvim_buf_is_valid(s.view.list_buf), false, "list buffer wiped")
    end,
  },
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
      local s = H.open({ debounce_ms = 150 })
      H.import(SEED)
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
      local d1, d2, d3 = dates(H)
      local lines = H.list_lines()
      H.assert(lines[1]:match("^> Plan  .+  step 1 step 2$"), "row updated: " .. lines[1])
      H.eq(lines[2], H.row(false, "Other", d2), "row 2 unchanged")
      H.eq(lines[3], H.row(false, "Groceries", d3, "milk eggs"), "row 3 unchanged")
      H.eq(H.text_lines(), { "Plan", "step 1", "step 2" }, "text after saving")
      -- The next edit is based on the version the response brought.
      H.type({ "Plan", "step 1", "step 2", "step 3" })
      H.eq(sent[#sent].params.baseVersion, 2, "second update based on version 2")
      H.quit(s)
    end,
  },
  {
    "select_with_enter",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      H.cursor(3)
      H.press("<CR>")
      H.check({
        H.row(false, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(true, "Groceries", d3, "milk eggs"),
      }, { "Groceries", "milk", "eggs" }, "after selecting row 3")
      H.cursor(2)
      H.press("<CR>")
      H.check({
        H.row(false, "Plan", d1, "step 1"),
        H.row(true, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Other" }, "after selecting row 2")
      -- The selected row is highlighted.
      local ns = api.nvim_get_namespaces().cloudnotes_list
      local found = false
      for _, m in ipairs(api.nvim_buf_get_extmarks(s.view.list_buf, ns, 0, -1, { details = true })) do
        if m[4].hl_group == "CloudNotesSelected" then
          H.eq(m[2], 1, "selection highlight on row 2")
          found = true
        end
      end
      H.assert(found, "a selection highlight")
      -- Closing the text window does not end the session; selecting brings it back.
      api.nvim_win_close(s.view.text_win, true)
      H.cursor(1)
      H.press("<CR>")
      H.eq(#api.nvim_tabpage_list_wins(s.view.tab), 2, "text window back")
      H.eq(api.nvim_win_get_buf(s.view.text_win), s.view.text_buf, "showing the text buffer")
      H.check({
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Plan", "step 1" }, "after selecting row 1")
      H.quit(s)
    end,
  },
  {
    "edit_then_select_saves_the_edit",
    function(H)
      local s = open_seeded(H, { debounce_ms = 5000 })
      local d1, d2, d3 = dates(H)
      api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, { "Plan B", "step 1" })
      -- Select another memo long before the debounce would fire.
      H.cursor(3)
      H.press("<CR>")
      local lines = H.list_lines()
      H.eq(#lines, 3, "three rows")
      H.assert(lines[1]:match("^  Plan B  .+  step 1$"), "edited memo saved and moved to the top: " .. lines[1])
      H.eq(lines[3], H.row(true, "Groceries", d3, "milk eggs"), "selected row")
      H.eq(H.text_lines(), { "Groceries", "milk", "eggs" }, "text of the selected memo")
      H.quit(s)
    end,
  },
  {
    "search_and_clear",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      -- The selected memo (Plan) does not match: it stays shown, unmarked.
      H.input_answers = { "MILK" }
      H.press("/")
      H.check({ H.row(false, "Groceries", d3, "milk eggs") }, { "Plan", "step 1" }, "filtered by 'MILK'")
      H.assert(api.nvim_win_get_option(s.view.list_win, "statusline"):find("/MILK  1 memo", 1, true),
        "status shows the filter")
      H.eq(H.input_asked, { "Search memos: " }, "prompted once")
      -- A query with no match.
      H.input_answers = { "zzz" }
      H.press("/")
      H.check({ "  (no memo matches; <Esc> clears the search)" }, { "Plan", "step 1" }, "no match")
      -- Cancelling the prompt changes nothing.
      H.input_answers = { false }
      H.press("/")
      H.check({ "  (no memo matches; <Esc> clears the search)" }, { "Plan", "step 1" }, "prompt cancelled")
      -- <Esc> clears the filter.
      H.press("<Esc>")
      H.check({
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Plan", "step 1" }, "after <Esc>")
      -- An empty query clears it too.
      H.input_answers = { "step", "" }
      H.press("/")
      H.check({ H.row(true, "Plan", d1, "step 1") }, { "Plan", "step 1" }, "filtered by 'step'")
      H.press("/")
      H.check({
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Plan", "step 1" }, "after an empty query")
      H.eq(s.mirror.query, "", "no filter")
      H.quit(s)
    end,
  },
  {
    "search_with_the_default_prompt",
    function(H)
      local s = open_seeded(H)
      s.cfg.input = require("cloudnotes").default_input
      local d1, d2, d3 = dates(H)
      local all = {
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }
      H.press("/milk<CR>")
      H.check({ H.row(false, "Groceries", d3, "milk eggs") }, { "Plan", "step 1" }, "typed 'milk' at the prompt")
      -- <Esc> at the prompt keeps the filter.
      H.press("/<C-u>zzz<Esc>")
      H.check({ H.row(false, "Groceries", d3, "milk eggs") }, { "Plan", "step 1" }, "prompt cancelled")
      -- An empty answer clears it (the prompt starts with the current query).
      H.press("/<C-u><CR>")
      H.check(all, { "Plan", "step 1" }, "empty answer")
      H.quit(s)
    end,
  },
  {
    "create_under_a_filter_clears_it",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      H.input_answers = { "milk" }
      H.press("/")
      H.check({ H.row(false, "Groceries", d3, "milk eggs") }, { "Plan", "step 1" }, "filtered")
      H.press("a")
      local lines = H.list_lines()
      H.eq(#lines, 4, "the filter is gone: all memos")
      H.assert(lines[1]:match("^> New Memo  "), "new memo on top and selected: " .. lines[1])
      H.eq(lines[2], H.row(false, "Plan", d1, "step 1"), "row 2")
      H.eq(H.text_lines(), { "" }, "the new memo's text")
      H.eq(s.mirror.query, "", "filter cleared")
      H.quit(s)
    end,
  },
  {
    "delete_accept",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      H.cursor(1)
      H.confirm_answers = { true }
      H.press("dd")
      H.eq(H.confirm_asked, { 'Delete memo "Plan"?' }, "asked before deleting")
      -- Rule 4: the memo now at the same index is selected and shown.
      H.check({
        H.row(true, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Other" }, "after deleting Plan")
      -- Deleting a memo that is not selected leaves the selection alone.
      H.cursor(2)
      H.confirm_answers = { true }
      H.press("dd")
      H.check({ H.row(true, "Other", d2) }, { "Other" }, "after deleting Groceries")
      -- Deleting the last memo clears the text and makes it read-only.
      H.cursor(1)
      H.confirm_answers = { true }
      H.press("dd")
      H.check({ "  (no memos; press a to create one)" }, { "" }, "after deleting the last memo")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modifiable"), false, "read-only without a memo")
      H.eq(H.request("memo/list").total, 0, "the server has no memo")
      H.quit(s)
    end,
  },
  {
    "delete_decline",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      H.cursor(2)
      H.confirm_answers = { false }
      H.press("dd")
      H.eq(H.confirm_asked, { 'Delete memo "Other"?' }, "asked")
      H.check({
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Plan", "step 1" }, "nothing deleted")
      H.eq(H.request("memo/list").total, 3, "the server still has 3 memos")
      H.assert(H.note('"Other" was not deleted'), "told the user")
      H.quit(s)
    end,
  },
  {
    "share_to_register",
    function(H)
      -- Headless Neovim has no clipboard: the default '+' falls back to '"'.
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      H.eq(vim.fn.has("clipboard"), 0, "no clipboard provider in this test")
      H.cursor(3)
      H.press("s")
      H.eq(vim.fn.getreg('"'), "Groceries\nmilk\neggs", "shared text in the unnamed register")
      H.assert(H.note("no clipboard provider"), "the fallback was reported")
      H.assert(H.note('not in register "%+: shared "Groceries" as Groceries.txt in register ""$'), "the registers were named")
      -- Sharing changes neither window.
      H.check({
        H.row(true, "Plan", d1, "step 1"),
        H.row(false, "Other", d2),
        H.row(false, "Groceries", d3, "milk eggs"),
      }, { "Plan", "step 1" }, "after sharing")
      H.quit(s)
    end,
  },
  {
    "share_markdown_to_configured_register",
    function(H)
      local s = open_seeded(H, { share_register = "a", share_format = "markdown" })
      H.cursor(1)
      H.press("s")
      H.eq(vim.fn.getreg("a"), "# Plan\n\nstep 1", "markdown in register a")
      H.assert(H.note("Plan.md"), "file name reported")
      H.quit(s)
    end,
  },
  {
    "write_command_saves_now",
    function(H)
      local s = open_seeded(H, { debounce_ms = 10000 })
      api.nvim_set_current_win(s.view.text_win)
      api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, { "Plan", "step 1", "written" })
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
      local s = open_seeded(H, { debounce_ms = 10000 })
      api.nvim_set_current_win(s.view.text_win)
      api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, { "Plan", "to be discarded" })
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
      local s = H.open()
      local long = "Long\n" .. string.rep("가나다 abc\n", 10000) -- 130 KB
      H.request("memo/create", { text = long })
      H.settle(s)
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
      local s = H.open()
      H.request("memo/create", { text = "abc" })
      H.settle(s)
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
      local s = H.open()
      H.request("memo/create", { text = "Work\r\nreport" })
      H.settle(s)
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
    "refresh_shows_other_front_ends_changes",
    function(H)
      local s = open_seeded(H)
      local d1, d2, d3 = dates(H)
      local other = H.other_client(H.store)
      other.req("memo/create", { text = "From elsewhere\nhello" })
      H.eq(other.stop(), 0, "other server exit code")
      -- The change may already have arrived by itself (within a second); after r it is there either way.
      H.press("r")
      local lines = H.list_lines()
      H.eq(#lines, 4, "four rows after r")
      H.assert(lines[1]:match("^  From elsewhere  .+  hello$"), "new row: " .. lines[1])
      H.eq(lines[2], H.row(true, "Plan", d1, "step 1"), "selection still marked")
      H.eq(H.text_lines(), { "Plan", "step 1" }, "text unchanged")
      H.quit(s)
    end,
  },
  {
    "import_command_and_a_window_of_the_list",
    function(H)
      -- After importing 2,500 memos (list/didReset), the list has a line per
      -- memo but only the rows around the screen are fetched.
      local memos = {}
      for i = 1, 2500 do
        memos[i] = { title = string.format("Memo %04d", i), body = "body " .. i, last_modified = 1767225600 - i }
      end
      local file = H.tmp .. "/import.json"
      vim.fn.writefile({ vim.json.encode(memos) }, file)
      local s = H.open()
      local sent = H.record_sent(s)
      vim.cmd("CloudNotesImport " .. vim.fn.fnameescape(file))
      H.wait(function()
        return H.note("imported 2500 memos") ~= nil
      end, "the import to finish", 20000)
      H.settle(s)
      local lists = vim.tbl_filter(function(m) return m.method == "memo/list" end, sent)
      local height = api.nvim_win_get_height(s.view.list_win)
      H.eq(#lists, 2, "after the reset: the screen, then a screen either side")
      H.eq(lists[1].params, { offset = 0, limit = height }, "the screen first")
      H.assert(lists[2].params.limit <= 3 * height, "then its margins: " .. vim.inspect(lists[2].params))
      H.assert(#s.mirror.rows <= 3 * height, "rows held: " .. #s.mirror.rows)
      local lines = H.list_lines()
      H.eq(#lines, 2500, "a line per memo")
      H.assert(lines[1]:match("^> Memo 0001  .+  body 1$"), "first row: " .. lines[1])
      H.eq(lines[2500], "", "a row not fetched is blank")
      H.eq(H.text_lines(), { "Memo 0001", "body 1" }, "the newest memo is shown")
      -- G shows the last rows.
      H.press("G")
      lines = H.list_lines()
      H.assert(lines[2500]:match("^  Memo 2500  .+  body 2500$"), "last row: " .. lines[2500])
      H.eq(lines[1], "", "the first rows are no longer held")
      H.check_screen("after G")
      H.press("gg")
      H.assert(H.list_lines()[1]:match("^> Memo 0001  "), "gg: first row again")
      H.check_screen("after gg")
      H.quit(s)
    end,
  },
  {
    "large_memo_arrives_in_many_chunks",
    function(H)
      local s = H.open()
      local lines = { "Big" }
      for i = 1, 6000 do
        lines[#lines + 1] = string.format("line %05d %s", i, string.rep("é", 40))
      end
      H.request("memo/create", { text = table.concat(lines, "\n") })
      H.settle(s)
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
      api.nvim_buf_set_lines(s.view.text_buf, 0, -1, false, { "Last words" })
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
