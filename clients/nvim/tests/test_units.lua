-- Unit tests of the pieces that need no server: the line framing and the
-- mirror's handling of notifications and list fetches.
return {
  {
    "rpc_framing_partial_and_multiple_lines",
    function(H)
      local rpc = require("cloudnotes.rpc")
      local feed = rpc.line_splitter()
      -- A line cut in three chunks, a multibyte character split between chunks.
      H.eq(feed('{"a":'), {}, "no line before its newline")
      H.eq(feed('"\xea\xb0'), {}, "still no line")
      H.eq(feed('\x80"}\n'), { '{"a":"가"}' }, "the joined line")
      -- Several lines in one chunk, with CRLF, blank and blank-with-spaces lines.
      H.eq(feed('{"b":1}\r\n\n  \t \n{"c":2}\n{"d"'), { '{"b":1}', '{"c":2}' }, "many lines in one chunk")
      H.eq(feed(':3}'), {}, "unfinished tail kept")
      -- End of stream: the last line counts without its newline.
      H.eq(feed(nil), { '{"d":3}' }, "the last line at end of stream")
      H.eq(feed(nil), {}, "nothing after the end")
      -- A big line in many small chunks.
      local feed2 = rpc.line_splitter()
      local big = string.rep("x", 200000)
      local got = {}
      for i = 1, #big, 4096 do
        vim.list_extend(got, feed2(big:sub(i, i + 4095)))
      end
      vim.list_extend(got, feed2("\n"))
      H.eq(#got, 1, "one big line")
      H.eq(#got[1], 200000, "big line length")
    end,
  },
  {
    "text_edit_is_the_change_between_two_texts_in_whole_utf8_characters",
    function(H)
      local util = require("cloudnotes.util")
      local function apply(old, e)
        return old:sub(1, e.start) .. e.text .. old:sub(e["end"] + 1)
      end
      local texts = { "", "a", "ab", "회의", "회의록", "회외록", "x회외록👍", "👍", "👎", "", "same", "same" }
      for i = 1, #texts - 1 do
        local e = util.text_edit(texts[i], texts[i + 1])
        H.eq(apply(texts[i], e), texts[i + 1], "edit from " .. texts[i] .. " to " .. texts[i + 1])
      end
      -- 의 and 외 share their first two bytes: the change is the whole character, never half of it.
      H.eq(util.text_edit("회의록", "회외록"), { start = 3, ["end"] = 6, text = "외" }, "whole characters")
      H.eq(util.text_edit("👍", "👎"), { start = 0, ["end"] = 4, text = "👎" }, "a 4-byte character")
      H.eq(util.text_edit("abc", "abc"), { start = 3, ["end"] = 3, text = "" }, "no change")
      H.eq(util.text_edit("aXc", "ac"), { start = 1, ["end"] = 2, text = "" }, "a deletion")
    end,
  },
  {
    "help_file_has_working_tags",
    function(H)
      -- :helptags on a copy (the plugin folder stays clean), then :help.
      local root = H.tmp .. "/rtp"
      vim.fn.mkdir(root .. "/doc", "p")
      vim.fn.writefile(vim.fn.readfile(H.plugin .. "/doc/cloudnotes.txt"), root .. "/doc/cloudnotes.txt")
      vim.cmd("helptags " .. vim.fn.fnameescape(root .. "/doc"))
      local tags = vim.fn.readfile(root .. "/doc/tags")
      H.assert(#tags >= 30, "tags generated: " .. #tags)
      vim.opt.runtimepath:prepend(root)
      for _, tag in ipairs({ "cloudnotes", ":CloudNotes", "cloudnotes-setup", "cloudnotes-conflicts",
        "cloudnotes-dd", "hl-CloudNotesSelected", ":CloudNotesHistory", ":CloudNotesTrash", "cloudnotes-history",
        "cloudnotes-trash" }) do
        vim.cmd("help " .. tag)
        H.eq(vim.fn.expand("%:t"), "cloudnotes.txt", ":help " .. tag)
        H.assert(vim.fn.getline("."):find("*" .. tag .. "*", 1, true), "cursor on the tag " .. tag)
        vim.cmd("helpclose")
      end
    end,
  },
  {
    "mirror_applies_notifications_in_order",
    function(H)
      local m = require("cloudnotes.mirror").new()
      local function ids()
        return vim.tbl_map(function(r) return r.id end, m.rows)
      end
      H.eq(m.stale, true, "stale until the first fetch")
      m:install(0, { total = 2, rows = { { id = "a" }, { id = "b" } } })
      H.eq(m.stale, false, "fetched")
      local ch = m:apply("list/didInsert", { index = 0, row = { id = "c" } })
      H.eq(ids(), { "c", "a", "b" }, "after insert")
      H.eq(m.total, 3, "total after insert")
      H.eq(ch.ops, { { "insert", 0 } }, "the view is told where")
      ch = m:apply("list/didUpdate", { fromIndex = 2, toIndex = 0, row = { id = "b", title = "new" } })
      H.eq(ids(), { "b", "c", "a" }, "after update")
      H.eq(ch.ops, { { "remove", 2 }, { "insert", 0 } }, "an update is a remove and an insert")
      m:apply("list/didRemove", { index = 1, id = "c" })
      H.eq(ids(), { "b", "a" }, "after remove")
      H.eq(m.total, 2, "total after remove")
      ch = m:apply("selection/didChange", { id = "a", index = 1 })
      H.eq(m:selected(), 1, "selected index")
      H.eq(ch.selection_moved, true, "another memo is selected")
      ch = m:apply("selection/didChange", { id = "a" }) -- index null: outside the filter
      H.eq(m:selected(), nil, "selected outside the list")
      H.eq(ch.selection_moved, false, "the same memo")
      -- A notification that does not fit drops the window instead of corrupting it.
      ch = m:apply("list/didRemove", { index = 5, id = "zz" })
      H.eq(ch.reset, true, "bad index: fetch again")
      H.eq(m.stale, true, "the window is dropped")
      m:install(0, { total = 2, rows = { { id = "b" }, { id = "a" } } })
      ch = m:apply("list/didRemove", { index = 0, id = "not-b" })
      H.eq(ch.reset, true, "a row id that differs: fetch again")
      m:install(0, { total = 2, rows = { { id = "b" }, { id = "a" } } })
      ch = m:apply("list/didReset", { total = 7 })
      H.eq(ch.reset, true, "reset asks for a fetch")
      H.eq(m.total, 7, "the new total at once")
      H.eq(m.rows, {}, "no rows until fetched")
      -- While stale, changes keep the total and ask the view for nothing.
      ch = m:apply("list/didInsert", { index = 0, row = { id = "x" } })
      H.eq(ch.ops, nil, "no ops while stale")
      H.eq(m.total, 8, "total counts it")
      m:apply("detail/didShow", { memo = { id = "b", text = "t", version = 3 }, editable = true })
      H.eq(m.detail.version, 3, "detail memo")
      m:apply("detail/didClear", { editable = false })
      H.eq(m.detail, nil, "detail cleared")
      H.eq(m.editable, false, "not editable")
    end,
  },
  {
    "mirror_keeps_a_window_of_the_list",
    function(H)
      -- A list of 1,000 rows r0..r999 on the server; the mirror holds 100..149.
      local server = {}
      for i = 0, 999 do
        server[#server + 1] = { id = "r" .. i }
      end
      local m = require("cloudnotes.mirror").new()
      local function page(offset, limit)
        local rows = {}
        for i = offset + 1, math.min(#server, offset + limit) do
          rows[#rows + 1] = server[i]
        end
        return { total = #server, rows = rows }
      end
      -- What the window must hold: the server's rows at its offset.
      local function check(what)
        H.eq(m.total, #server, what .. ": total")
        for i, row in ipairs(m.rows) do
          H.eq(row.id, server[m.offset + i].id, what .. ": row " .. (m.offset + i - 1))
        end
      end
      -- The server's side of each change, then the notification.
      local function insert(index, id)
        table.insert(server, index + 1, { id = id })
        return m:apply("list/didInsert", { index = index, row = { id = id } })
      end
      local function remove(index)
        local row = table.remove(server, index + 1)
        return m:apply("list/didRemove", { index = index, id = row.id })
      end
      local function update(from, to)
        local row = table.remove(server, from + 1)
        table.insert(server, to + 1, row)
        return m:apply("list/didUpdate", { fromIndex = from, toIndex = to, row = row })
      end

      -- The first fetch: the rows on screen (0..19) with a margin of 20 either side.
      H.eq(m:fetch_for(0, 19, 20), { offset = 0, limit = 60 }, "first fetch while stale")
      m:install(100, page(100, 50))
      H.eq(#m.rows, 50, "fifty rows held")
      check("installed")
      H.eq(m:fetch_for(110, 129, 10), nil, "rows on screen and their margin are held")
      H.eq(m:fetch_for(140, 159, 10), { offset = 120, limit = 60 }, "scrolling past the window fetches")
      H.eq(m:fetch_for(990, 1009, 10), { offset = 970, limit = 30 }, "the end of the list bounds the fetch")
      H.eq(m:row(99), nil, "no row above the window")
      H.eq(m:row(100).id, "r100", "the window's first row")

      insert(5, "above")
      H.eq(m.offset, 101, "an insert above moves the window down")
      check("insert above")
      insert(120, "inside")
      H.eq(m.rows[20].id, "inside", "an insert inside goes in")
      check("insert inside")
      insert(600, "below")
      H.eq(m.offset + #m.rows - 1 < 600, true, "an insert below changes no row held")
      check("insert below")
      remove(0)
      H.eq(m.offset, 100, "a remove above moves the window up")
      check("remove above")
      remove(110)
      check("remove inside")
      update(130, 0)
      check("update from inside to the top")
      update(3, 125)
      check("update from above to inside")
      update(900, 2)
      check("update from below to above")
      update(101, 101)
      check("update in place")
      insert(m.offset + #m.rows, "at the end")
      check("insert just after the window")
      H.eq(m.rows[#m.rows].id, "at the end", "it joins the window")

      -- A response describes the list when it arrives: it replaces the window.
      m:install(990, page(990, 100))
      check("installed at the end")
      H.eq(#m.rows, #server - 990, "up to the last row")
      remove(#server - 1)
      check("the last row removed")
      -- An offset past the end (the list shrank while the request was on its way).
      m:install(5000, { total = #server, rows = {} })
      H.eq(m.offset, #server, "offset kept within the total")
      H.eq(m:fetch_for(990, 1009, 10) ~= nil, true, "and the rows on screen are fetched")

      -- The window never grows past max_rows.
      m.max_rows = 10
      m:install(0, page(0, 10))
      insert(3, "eleventh")
      H.eq(#m.rows, 10, "trimmed at its end")
      check("after the trim")
      H.eq(m:fetch_for(500, 504, 100).limit <= 10, true, "a fetch asks for at most max_rows")
    end,
  },
  {
    "mirror_window_follows_random_changes",
    function(H)
      -- Random inserts, removes, updates and fresh windows against a model
      -- list: after each, the window must be the model's rows at its offset.
      math.randomseed(20240521)
      local server, next_id = {}, 0
      local function new_row()
        next_id = next_id + 1
        return { id = "m" .. next_id }
      end
      for _ = 1, 300 do
        server[#server + 1] = new_row()
      end
      local m = require("cloudnotes.mirror").new()
      m.max_rows = 40
      local function install()
        local offset = math.random(0, #server)
        local rows = {}
        for i = offset + 1, math.min(#server, offset + 30) do
          rows[#rows + 1] = server[i]
        end
        m:install(offset, { total = #server, rows = rows })
      end
      install()
      for step = 1, 3000 do
        local r = math.random()
        local ch
        if r < 0.3 then
          local index = math.random(0, #server)
          local row = new_row()
          table.insert(server, index + 1, row)
          ch = m:apply("list/didInsert", { index = index, row = row })
        elseif r < 0.6 and #server > 0 then
          local index = math.random(0, #server - 1)
          local row = table.remove(server, index + 1)
          ch = m:apply("list/didRemove", { index = index, id = row.id })
        elseif r < 0.95 and #server > 0 then
          local from = math.random(0, #server - 1)
          local row = table.remove(server, from + 1)
          local to = math.random(0, #server)
          row = { id = row.id, title = "v" .. step }
          table.insert(server, to + 1, row)
          ch = m:apply("list/didUpdate", { fromIndex = from, toIndex = to, row = row })
        else
          install()
          ch = {}
        end
        H.eq(ch.reset, nil, "step " .. step .. ": every change fits")
        H.eq(m.total, #server, "step " .. step .. ": total")
        H.assert(#m.rows <= m.max_rows, "step " .. step .. ": at most max_rows")
        H.assert(m.offset + #m.rows <= m.total, "step " .. step .. ": the window is in the list")
        for i, row in ipairs(m.rows) do
          if row ~= server[m.offset + i] then
            error(string.format("step %d: row %d is %s, the list has %s there", step, m.offset + i - 1, row.id,
              tostring(server[m.offset + i] and server[m.offset + i].id)))
          end
        end
      end
    end,
  },
}
