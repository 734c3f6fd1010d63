-- The history and trash panels against the real server: versions listed
-- after edits, the diff of the version under the cursor, restoring one
-- (the buffer and the store), the trash listing a deleted memo, bringing
-- it back, emptying the trash. The server keeps a version at every change
-- (--version-pause 0).
local api = vim.api

local KEEP_EVERY_VERSION = { args = { "--version-pause", "0" } }

--- Open on a memo "Plan\nstep 1" and type two more steps, each saved: the
--- memo is at its third text and keeps the two before as v2 and v1.
local function open_with_two_versions(H)
  local s = H.open_with_memo("Plan\nstep 1", KEEP_EVERY_VERSION)
  H.type({ "Plan", "step 1", "step 2" })
  H.type({ "Plan", "step 1", "step 2", "step 3" })
  return s
end

--- Run `command` and wait until the panel of `kind` shows what the server sent.
local function open_panel(H, command, kind)
  local s = H.s
  vim.cmd(command)
  H.settle(s)
  H.assert(s.panel and s.panel.kind == kind, command .. " opened its panel")
  H.eq(api.nvim_get_current_tabpage(), s.panel.tab, "the panel's tab is current")
  return s.panel
end

local function panel_lines(p)
  return api.nvim_buf_get_lines(p.buf, 0, -1, false)
end

local function diff_lines(p)
  return api.nvim_buf_get_lines(p.detail_buf, 0, -1, false)
end

--- The store's text of memo `id`, as the shell prints it.
local function shell_show(H, id)
  -- stderr apart: the shell may warn about the test folder's mode.
  local out = vim.fn.system(string.format("%s show %s --store %s 2>/dev/null", vim.fn.shellescape(H.bin),
    vim.fn.shellescape(id), vim.fn.shellescape(H.store)))
  H.eq(vim.v.shell_error, 0, "cloudnotes show exit code (output: " .. out .. ")")
  return out
end

return {
  {
    "history_lists_versions_and_shows_their_diff",
    function(H)
      local s = open_with_two_versions(H)
      local tabs = #api.nvim_list_tabpages()
      local p = open_panel(H, "CloudNotesHistory", "cloudnoteshistory")
      H.eq(#api.nvim_list_tabpages(), tabs + 1, "a tab of its own")
      local lines = panel_lines(p)
      H.eq(#lines, 2, "two earlier versions: " .. vim.inspect(lines))
      H.assert(lines[1]:match("^v2  .+  edit  Plan%s+  18 bytes$"), "newest first: " .. lines[1])
      H.assert(lines[2]:match("^v1  .+  edit  Plan%s+  11 bytes$"), "then the oldest: " .. lines[2])
      H.assert(api.nvim_win_get_option(p.win, "statusline"):find('history of "Plan": 2 versions', 1, true),
        "the status names the memo")
      H.eq(api.nvim_buf_get_option(p.detail_buf, "filetype"), "diff", "the diff is highlighted as one")
      H.wait(function()
        return diff_lines(p)[1]:match("^%-%-%- v2 ") ~= nil
      end, "the diff of v2")
      H.eq(vim.list_slice(diff_lines(p), 2), { "+++ current text", "@@ -1,3 +1,4 @@", " Plan", " step 1", " step 2", "+step 3" },
        "v2 against the current text")
      -- Moving to v1 shows its diff. (Keys fed from a script trigger no
      -- CursorMoved: the test triggers it, as Neovim's main loop would.)
      H.press_in(p.win, "j")
      api.nvim_exec_autocmds("CursorMoved", { buffer = p.buf })
      H.wait(function()
        return diff_lines(p)[1]:match("^%-%-%- v1 ") ~= nil
      end, "the diff of v1")
      H.eq(vim.list_slice(diff_lines(p), 2), { "+++ current text", "@@ -1,2 +1,4 @@", " Plan", " step 1", "+step 2", "+step 3" },
        "v1 against the current text")
      H.press_in(p.win, "q")
      H.eq(#api.nvim_list_tabpages(), tabs, "q closed the panel's tab")
      H.eq(api.nvim_get_current_tabpage(), s.view.tab, "back in the split view")
      H.eq(s.panel, nil, "no panel")
      H.quit(s)
    end,
  },
  {
    "history_of_a_memo_without_versions",
    function(H)
      local s = H.open_with_memo("Alone", KEEP_EVERY_VERSION)
      local p = open_panel(H, "CloudNotesHistory", "cloudnoteshistory")
      H.assert(panel_lines(p)[1]:find("no earlier versions", 1, true), "says so: " .. panel_lines(p)[1])
      H.eq(diff_lines(p), { "" }, "no diff")
      H.press_in(p.win, "r")
      H.eq(H.text_lines(), { "Alone" }, "r on no version restores nothing")
      H.quit(s)
    end,
  },
  {
    "restore_brings_back_the_text_in_the_buffer_and_the_store",
    function(H)
      local s = open_with_two_versions(H)
      local id = s.edit.id
      local p = open_panel(H, "CloudNotesHistory", "cloudnoteshistory")
      api.nvim_win_set_cursor(p.win, { 2, 0 })
      local sent = H.record_sent(s)
      H.press_in(p.win, "r")
      H.eq(H.methods(sent)[#sent], "memo/restore", "restored through memo/restore")
      H.eq(sent[#sent].params, { id = id, version = 1, baseVersion = 3 }, "v1, based on the version shown")
      H.eq(api.nvim_get_current_tabpage(), s.view.tab, "back in the split view")
      H.eq(H.text_lines(), { "Plan", "step 1" }, "the buffer shows v1's text")
      H.eq(shell_show(H, id), "Plan\nstep 1", "the store holds v1's text")
      H.assert(H.list_lines()[1]:match("^> Plan  .+  step 1$"), "the row follows: " .. H.list_lines()[1])
      H.assert(H.note('restored v1 of "Plan"'), "said so")
      -- The replaced text is kept, so the restore can be undone.
      local p2 = open_panel(H, "CloudNotesHistory", "cloudnoteshistory")
      H.eq(#panel_lines(p2), 3, "one more version")
      H.press_in(p2.win, "r")
      H.eq(H.text_lines(), { "Plan", "step 1", "step 2", "step 3" }, "the restore undone")
      H.eq(shell_show(H, id), "Plan\nstep 1\nstep 2\nstep 3", "in the store too")
      H.quit(s)
    end,
  },
  {
    "restore_sends_text_typed_first",
    function(H)
      local s = open_with_two_versions(H)
      s.cfg.debounce_ms = 10000
      local p = open_panel(H, "CloudNotesHistory", "cloudnoteshistory")
      H.set_text({ "Plan", "typed, not sent yet" })
      local sent = H.record_sent(s)
      H.press_in(p.win, "r")
      H.eq(H.methods(sent), { "memo/edit", "memo/restore" }, "the typed text first, then the restore")
      H.eq(sent[2].params.baseVersion, 4, "the restore is based on the version of the typed text")
      H.eq(H.text_lines(), { "Plan", "step 1", "step 2" }, "v2 restored")
      H.eq(H.request("memo/version", { id = s.edit.id, version = 4 }).text, "Plan\ntyped, not sent yet",
        "the typed text is kept in the history")
      H.quit(s)
    end,
  },
  {
    "trash_lists_a_deleted_memo_and_undelete_selects_it",
    function(H)
      local s = H.open_seeded(KEEP_EVERY_VERSION)
      H.delete(true, 3)
      H.search("step") -- a filter, which bringing a memo back clears
      H.check({ H.seed_row(1, true) }, { "Plan", "step 1" }, "filtered")
      local p = open_panel(H, "CloudNotesTrash", "cloudnotestrash")
      local trash = panel_lines(p)
      H.eq(#trash, 1, "one memo in the trash")
      H.assert(trash[1]:match("^  Groceries           .+  milk eggs$"), "the deleted memo: " .. trash[1])
      H.assert(api.nvim_win_get_option(p.win, "statusline"):find("trash: 1 memo", 1, true), "status")
      H.press_in(p.win, "u")
      H.eq(api.nvim_get_current_tabpage(), s.view.tab, "back in the split view")
      H.eq(s.panel, nil, "the panel closed")
      -- It comes back on top, dated now.
      local lines = H.list_lines()
      H.assert(lines[1]:match("^> Groceries           .+  milk eggs$"), "back in the list and selected: " .. lines[1])
      H.eq(vim.list_slice(lines, 2), { H.seed_row(1), H.seed_row(2) }, "unfiltered")
      H.eq(H.text_lines(), { "Groceries", "milk", "eggs" }, "shown")
      H.eq(s.mirror.query, "", "no search")
      H.eq(api.nvim_win_get_cursor(s.view.list_win)[1], 1, "the cursor on it")
      H.eq(H.request("trash/list", {}).total, 0, "the trash is empty")
      H.quit(s)
    end,
  },
  {
    "empty_trash_after_asking",
    function(H)
      local s = H.open_seeded()
      H.delete(true, 2)
      local p = open_panel(H, "CloudNotesTrash", "cloudnotestrash")
      H.confirm_answers = { false }
      H.press_in(p.win, "D")
      H.eq(H.request("trash/list", {}).total, 1, "declined: still in the trash")
      H.confirm_answers = { true }
      H.press_in(p.win, "D")
      H.eq(H.confirm_asked[2], "Empty the trash? Its 1 memo will be gone for good.", "asked")
      H.eq(H.request("trash/list", {}).total, 0, "emptied")
      H.eq(panel_lines(s.panel), { "  (the trash is empty)" }, "the panel shows it")
      H.assert(H.note("purged 1 memo"), "said so")
      H.press_in(s.panel.win, "q")
      H.quit(s)
    end,
  },
}
