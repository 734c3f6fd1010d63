-- The list as a window: with thousands of memos the plugin holds the rows
-- around the screen, not the list. The buffer still has a line per memo, so
-- every motion works; the rows of the lines that come into view are fetched.
local api = vim.api

local N = 3000

--- Open on a store that already holds N memos (Memo 0001 is the newest).
local function open_big(H, opts)
  H.store = H.new_store()
  H.seed_store(H.store, N)
  return H.open_recorded(opts)
end

--- Like open_big, with one of the list buffer's limits (listbuf.lua) set
--- to `value`.
local function open_big_with_limit(H, limit, value)
  require("cloudnotes.listbuf")[limit] = value
  return open_big(H)
end

local function lists(sent)
  return vim.tbl_filter(function(m)
    return m.method == "memo/list"
  end, sent)
end

local function cursor_line(s)
  return api.nvim_win_get_cursor(s.view.list_win)[1]
end

return {
  {
    "open_large_store_fetches_about_a_screen",
    function(H)
      local s, sent = open_big(H)
      local height = api.nvim_win_get_height(s.view.list_win)
      local requests = lists(sent)
      H.eq(requests[1].params, { offset = 0, limit = height }, "the first screen alone first")
      local fetched = 0
      for _, m in ipairs(requests) do
        fetched = fetched + m.params.limit
      end
      -- Then the rows on screen and a screen either side (none above the top).
      H.assert(#requests == 2 and fetched <= 4 * height,
        string.format("%d rows in %d requests at open for a screen of %d", fetched, #requests, height))
      H.assert(#s.mirror.rows <= 3 * height, "rows held: " .. #s.mirror.rows)
      local lines = H.list_lines()
      H.eq(#lines, N, "a line per memo")
      H.assert(lines[1]:match("^> Memo 0001  "), "the newest memo, selected: " .. lines[1])
      H.check_screen("at open")
      H.eq(lines[N], "", "a row far down is not fetched")
      H.assert(api.nvim_win_get_option(s.view.list_win, "statusline"):find("3000 memos", 1, true), "status")
      H.quit(s)
    end,
  },
  {
    "every_motion_shows_its_rows",
    function(H)
      local s, sent = open_big(H)
      local function at(keys, line)
        H.press(keys)
        if line then
          H.eq(cursor_line(s), line, keys .. ": cursor line")
        end
        H.check_screen("after " .. keys)
        H.assert(#s.mirror.rows <= s.mirror.max_rows, "never more than a window held")
      end
      at("G", N)
      H.assert(H.list_lines()[N]:match("^  Memo 3000  "), "the last row")
      at("gg", 1)
      at("<C-f>")
      at("<C-f><C-f><C-f>")
      at("<C-d>")
      at("<C-b>")
      at("<C-u>")
      at(":1500<CR>", 1500)
      H.assert(H.list_lines()[1500]:match("^  Memo 1500  "), ":1500 shows row 1500")
      at("50%", 1500)
      at("2222G", 2222)
      at("<C-e><C-e><C-e><C-e>")
      at("<ScrollWheelDown><ScrollWheelDown>")
      at("<ScrollWheelUp>")
      -- <CR> on a row reached by a jump selects that memo.
      at("2999G", 2999)
      H.press("<CR>")
      H.eq(H.text_lines(), { "Memo 2999", "body 2999" }, "the memo under the cursor")
      H.assert(H.list_lines()[2999]:match("^> Memo 2999  "), "marked")
      -- Each fetch was about a screen, never the list.
      for _, m in ipairs(lists(sent)) do
        H.assert(m.params.limit <= 5 * api.nvim_win_get_height(s.view.list_win), "limit " .. m.params.limit)
      end
      H.quit(s)
    end,
  },
  {
    "rows_are_fetched_when_drawn_and_when_the_cursor_moves",
    function(H)
      local s = open_big(H)
      -- Only a redraw: how a window scrolled while it is not current (the
      -- mouse) comes to be seen.
      api.nvim_set_current_win(s.view.text_win)
      api.nvim_win_set_cursor(s.view.list_win, { 2000, 0 })
      vim.cmd("redraw")
      H.settle()
      H.check_screen("after a redraw")
      -- Only CursorMoved, no redraw: the cursor moved in the current window.
      api.nvim_set_current_win(s.view.list_win)
      api.nvim_win_set_cursor(s.view.list_win, { 500, 0 })
      api.nvim_exec_autocmds("CursorMoved", { buffer = s.view.list_buf })
      H.settle()
      H.check_screen("after CursorMoved")
      H.quit(s)
    end,
  },
  {
    "a_held_key_does_not_flood_the_server",
    function(H)
      local s, sent = open_big(H)
      local before = #lists(sent)
      api.nvim_set_current_win(s.view.list_win)
      -- 600 lines down, one at a time, each with its CursorMoved, the event
      -- loop running between them as between key repeats.
      for line = 2, 601 do
        api.nvim_win_set_cursor(s.view.list_win, { line, 0 })
        api.nvim_exec_autocmds("CursorMoved", { buffer = s.view.list_buf })
        vim.wait(0)
      end
      H.settle()
      local fetches = #lists(sent) - before
      H.assert(fetches >= 1 and fetches <= 30, "memo/list requests for 600 moves: " .. fetches)
      H.check_screen("after the held key")
      H.quit(s)
    end,
  },
  {
    "changes_elsewhere_while_scrolled_keep_the_window_right",
    function(H)
      local s = open_big(H)
      H.press(":1500<CR>")
      H.check_screen("scrolled")
      local under = H.list_lines()[1500]
      local other = H.other_client(H.store)
      local function row(index)
        return other.req("memo/list", { offset = index, limit = 1 }).rows[1]
      end
      -- Above the window, inside it, and an update from inside to the top.
      other.req("memo/create", { text = "Created first\nhi" })
      other.req("memo/create", { text = "Created elsewhere\nhi" })
      other.req("memo/delete", { id = row(1510).id })
      other.req("memo/delete", { id = row(10).id })
      local moved = row(1495)
      other.req("memo/update", { id = moved.id, text = "Moved to the top\nby the other side" })
      other.req("memo/delete", { id = row(2900).id }) -- below the window
      H.eq(other.stop(), 0, "other server exit code")
      H.wait(function()
        return api.nvim_buf_line_count(s.view.list_buf) == N - 1
      end, "the other side's changes to arrive", 5000)
      H.settle()
      H.check_screen("after the changes")
      -- The lines moved with their rows: one more row above the cursor
      -- (two created, one deleted, one moved from above to the top), so the
      -- row under the cursor is one line down, still under it.
      H.eq(cursor_line(s), 1501, "the cursor moved with its row")
      H.eq(H.list_lines()[1501], under, "the same row under the cursor")
      H.press("gg")
      H.check_screen("at the top")
      H.assert(H.list_lines()[1]:match("^  Moved to the top  "), "the updated memo: " .. H.list_lines()[1])
      H.assert(H.list_lines()[2]:match("^  Created elsewhere  "), "the created memo: " .. H.list_lines()[2])
      H.press("G")
      H.check_screen("at the end")
      H.quit(s)
    end,
  },
  {
    "a_selection_far_down_is_shown_and_followed",
    function(H)
      local s = open_big(H)
      local far = H.request("memo/list", { offset = 2700, limit = 1 }).rows[1]
      -- Another request of this session selects it (as a script would).
      H.request("memo/select", { id = far.id })
      H.settle()
      H.eq(cursor_line(s), 2701, "the cursor went to the selected row")
      H.assert(H.list_lines()[2701]:match("^> Memo 2701  "), "marked: " .. H.list_lines()[2701])
      H.eq(H.text_lines(), { "Memo 2701", "body 2701" }, "its text")
      H.check_screen("at the selection")
      -- Deleting it selects the memo now in its place (rule S4); the cursor follows.
      H.delete(true)
      H.eq(H.text_lines(), { "Memo 2702", "body 2702" }, "the next memo is selected")
      H.eq(cursor_line(s), 2701, "on its row")
      H.assert(H.list_lines()[2701]:match("^> Memo 2702  "), "marked: " .. H.list_lines()[2701])
      -- Typing moves the memo to the top, and the cursor with it.
      H.type({ "Memo 2702", "edited" })
      H.eq(cursor_line(s), 1, "the cursor followed the row to the top")
      H.assert(H.list_lines()[1]:match("^> Memo 2702  .+  edited$"), "row: " .. H.list_lines()[1])
      H.check_screen("after typing")
      -- Looking elsewhere in the list, the cursor stays put when the
      -- selected row moves again.
      H.press("1000G")
      H.type({ "Memo 2702", "edited twice" })
      H.eq(cursor_line(s), 1000, "the cursor stays where the user put it")
      H.check_screen("after typing again")
      H.quit(s)
    end,
  },
  {
    "search_as_you_type_shows_the_first_screen",
    function(H)
      local s, sent = open_big(H)
      s.cfg.input = require("cloudnotes").default_input
      local height = api.nvim_win_get_height(s.view.list_win)
      H.press("G")
      H.press("/Memo 29<CR>")
      local searches = vim.tbl_filter(function(m)
        return m.method == "memo/search"
      end, sent)
      H.assert(#searches >= 2, "a search while typing, then the answer: " .. #searches)
      for _, m in ipairs(searches) do
        H.eq(m.params.limit, height, "one screen of results asked for")
      end
      H.eq(searches[#searches].params.query, "Memo 29", "the last query")
      H.eq(s.mirror.query, "Memo 29", "the filter")
      local lines = H.list_lines()
      H.eq(#lines, 100, "Memo 2900 to 2999")
      H.eq(cursor_line(s), 1, "new results start at the top")
      H.check_screen("the results")
      -- <Esc> at the prompt puts the filter back after a live search.
      H.press("/<C-u>Memo 1<Esc>")
      H.eq(s.mirror.query, "Memo 29", "cancelled: the filter as it was")
      H.eq(#H.list_lines(), 100, "its results")
      H.press("<Esc>")
      H.eq(#H.list_lines(), N, "cleared")
      H.eq(cursor_line(s), 1, "on the selected memo at the top")
      H.check_screen("cleared")
      H.quit(s)
    end,
  },
  {
    "a_list_that_shrinks_a_lot_gets_a_new_buffer",
    function(H)
      -- Deleting many lines costs as much as adding them; past a limit the
      -- view puts a fresh buffer in the list window instead.
      local s = open_big_with_limit(H, "REPLACE_LINES", 100)
      local old = s.view.list_buf
      H.search("Memo 1")
      H.assert(s.view.list_buf ~= old, "a new list buffer")
      H.eq(api.nvim_buf_is_valid(old), false, "the old one is wiped")
      H.eq(api.nvim_win_get_buf(s.view.list_win), s.view.list_buf, "in the list window")
      H.eq(s.state, "ready", "the session goes on")
      H.eq(#H.list_lines(), 1000, "Memo 1000 to 1999")
      H.eq(api.nvim_buf_get_name(s.view.list_buf):match("%[CloudNotes%]$"), "[CloudNotes]", "its name")
      H.eq(api.nvim_buf_get_option(s.view.list_buf, "filetype"), "cloudnoteslist", "its filetype")
      H.check_screen("in the new buffer")
      -- The keys work in the new buffer.
      H.cursor(3)
      H.press("<CR>")
      H.eq(H.text_lines(), { "Memo 1002", "body 1002" }, "<CR> in the new buffer")
      H.press("G")
      H.check_screen("G in the new buffer")
      H.quit(s)
    end,
  },
  {
    "the_list_buffer_is_renewed_after_many_rows_drawn",
    function(H)
      -- Neovim keeps the memory of lines that once held text: after enough
      -- rows drawn, the view starts a new buffer, showing the same lines.
      local s = open_big_with_limit(H, "DRAWN_ROWS_LIMIT", 100)
      local renewed = 0
      for _, keys in ipairs({ "1500G", "<C-f>", "<C-f>", "<C-e><C-e><C-e>", "2900G", "gg", "<C-d>" }) do
        local before = s.view.list_buf
        H.press(keys)
        local top = vim.fn.line("w0", s.view.list_win)
        local line = cursor_line(s)
        H.check_screen("after " .. keys)
        -- Drawing the fetched rows may renew the buffer: the view stays.
        s:render()
        H.settle()
        H.eq({ vim.fn.line("w0", s.view.list_win), cursor_line(s) }, { top, line }, keys .. ": the same lines shown")
        H.check_screen("drawn again after " .. keys)
        if s.view.list_buf ~= before then
          renewed = renewed + 1
          H.eq(api.nvim_buf_is_valid(before), false, "the old buffer is wiped")
        end
      end
      H.assert(renewed >= 3, "renewed " .. renewed .. " times")
      H.eq(s.state, "ready", "the session goes on")
      H.cursor(10)
      H.press("<CR>")
      H.eq(H.text_lines(), { "Memo 0010", "body 10" }, "keys work in the new buffer")
      H.quit(s)
    end,
  },
}
