-- The split view against the real server: each test opens :CloudNotes on
-- its own temporary store and checks both windows after every step. This
-- file has the list's side (opening, selecting, searching, deleting,
-- sharing, refreshing, importing); test_edit.lua has the text buffer's.
local api = vim.api

--- Check the list filtered down to Groceries (the only memo with "milk"),
--- while Plan, selected before, stays shown.
local function check_only_groceries(H, what)
  H.check({ H.seed_row(3) }, { "Plan", "step 1" }, what)
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
    "select_with_enter",
    function(H)
      local s = H.open_seeded()
      H.cursor(3)
      H.press("<CR>")
      H.check(H.seed_rows(3), { "Groceries", "milk", "eggs" }, "after selecting row 3")
      H.cursor(2)
      H.press("<CR>")
      H.check(H.seed_rows(2), { "Other" }, "after selecting row 2")
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
      H.check(H.seed_rows(1), { "Plan", "step 1" }, "after selecting row 1")
      H.quit(s)
    end,
  },
  {
    "search_and_clear",
    function(H)
      local s = H.open_seeded()
      -- The selected memo (Plan) does not match: it stays shown, unmarked.
      H.search("MILK")
      check_only_groceries(H, "filtered by 'MILK'")
      H.assert(api.nvim_win_get_option(s.view.list_win, "statusline"):find("/MILK  1 memo", 1, true),
        "status shows the filter")
      H.eq(H.input_asked, { "Search memos: " }, "prompted once")
      -- A query with no match.
      H.search("zzz")
      H.check({ "  (no memo matches; <Esc> clears the search)" }, { "Plan", "step 1" }, "no match")
      -- Cancelling the prompt changes nothing.
      H.search(false)
      H.check({ "  (no memo matches; <Esc> clears the search)" }, { "Plan", "step 1" }, "prompt cancelled")
      -- <Esc> clears the filter.
      H.press("<Esc>")
      H.check(H.seed_rows(1), { "Plan", "step 1" }, "after <Esc>")
      -- An empty query clears it too.
      H.search("step")
      H.check({ H.seed_row(1, true) }, { "Plan", "step 1" }, "filtered by 'step'")
      H.search("")
      H.check(H.seed_rows(1), { "Plan", "step 1" }, "after an empty query")
      H.eq(s.mirror.query, "", "no filter")
      H.quit(s)
    end,
  },
  {
    "search_with_the_default_prompt",
    function(H)
      local s = H.open_seeded()
      s.cfg.input = require("cloudnotes").default_input
      local all = H.seed_rows(1)
      H.press("/milk<CR>")
      check_only_groceries(H, "typed 'milk' at the prompt")
      -- <Esc> at the prompt keeps the filter.
      H.press("/<C-u>zzz<Esc>")
      check_only_groceries(H, "prompt cancelled")
      -- An empty answer clears it (the prompt starts with the current query).
      H.press("/<C-u><CR>")
      H.check(all, { "Plan", "step 1" }, "empty answer")
      H.quit(s)
    end,
  },
  {
    "create_under_a_filter_clears_it",
    function(H)
      local s = H.open_seeded()
      H.search("milk")
      check_only_groceries(H, "filtered")
      H.press("a")
      local lines = H.list_lines()
      H.eq(#lines, 4, "the filter is gone: all memos")
      H.assert(lines[1]:match("^> New Memo  "), "new memo on top and selected: " .. lines[1])
      H.eq(lines[2], H.seed_row(1), "row 2")
      H.eq(H.text_lines(), { "" }, "the new memo's text")
      H.eq(s.mirror.query, "", "filter cleared")
      H.quit(s)
    end,
  },
  {
    "delete_accept",
    function(H)
      local s = H.open_seeded()
      H.delete(true, 1)
      H.eq(H.confirm_asked, { 'Delete memo "Plan"?' }, "asked before deleting")
      -- Rule S4: the memo now at the same index is selected and shown.
      H.check({ H.seed_row(2, true), H.seed_row(3) }, { "Other" }, "after deleting Plan")
      -- Deleting a memo that is not selected leaves the selection alone.
      H.delete(true, 2)
      H.check({ H.seed_row(2, true) }, { "Other" }, "after deleting Groceries")
      -- Deleting the last memo clears the text and makes it read-only.
      H.delete(true, 1)
      H.check({ "  (no memos; press a to create one)" }, { "" }, "after deleting the last memo")
      H.eq(api.nvim_buf_get_option(s.view.text_buf, "modifiable"), false, "read-only without a memo")
      H.eq(H.request("memo/list").total, 0, "the server has no memo")
      H.quit(s)
    end,
  },
  {
    "delete_decline",
    function(H)
      local s = H.open_seeded()
      H.delete(false, 2)
      H.eq(H.confirm_asked, { 'Delete memo "Other"?' }, "asked")
      H.check(H.seed_rows(1), { "Plan", "step 1" }, "nothing deleted")
      H.eq(H.request("memo/list").total, 3, "the server still has 3 memos")
      H.assert(H.note('"Other" was not deleted'), "told the user")
      H.quit(s)
    end,
  },
  {
    "share_to_register",
    function(H)
      -- Headless Neovim has no clipboard: the default '+' falls back to '"'.
      local s = H.open_seeded()
      H.eq(vim.fn.has("clipboard"), 0, "no clipboard provider in this test")
      H.cursor(3)
      H.press("s")
      H.eq(vim.fn.getreg('"'), "Groceries\nmilk\neggs", "shared text in the unnamed register")
      H.assert(H.note("no clipboard provider"), "the fallback was reported")
      H.assert(H.note('not in register "%+: shared "Groceries" as Groceries.txt in register ""$'), "the registers were named")
      -- Sharing changes neither window.
      H.check(H.seed_rows(1), { "Plan", "step 1" }, "after sharing")
      H.quit(s)
    end,
  },
  {
    "share_markdown_to_configured_register",
    function(H)
      local s = H.open_seeded({ share_register = "a", share_format = "markdown" })
      H.cursor(1)
      H.press("s")
      H.eq(vim.fn.getreg("a"), "# Plan\n\nstep 1", "markdown in register a")
      H.assert(H.note("Plan.md"), "file name reported")
      H.quit(s)
    end,
  },
  {
    "refresh_shows_other_front_ends_changes",
    function(H)
      local s = H.open_seeded()
      H.elsewhere({ { "memo/create", { text = "From elsewhere\nhello" } } })
      -- The change may already have arrived by itself (within a second); after r it is there either way.
      H.press("r")
      local lines = H.list_lines()
      H.eq(#lines, 4, "four rows after r")
      H.assert(lines[1]:match("^  From elsewhere  .+  hello$"), "new row: " .. lines[1])
      H.eq(lines[2], H.seed_row(1, true), "selection still marked")
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
      H.wait_note("imported 2500 memos", "the import to finish", 20000)
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
}
