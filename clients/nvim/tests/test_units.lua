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
        "cloudnotes-dd", "hl-CloudNotesSelected" }) do
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
      local gen = m:begin_fetch()
      H.eq(m:fetch_page(gen, 0, { total = 2, rows = { { id = "a" }, { id = "b" } } }), "done", "first fetch")
      m:apply("list/didInsert", { index = 0, row = { id = "c" } })
      H.eq(vim.tbl_map(function(r) return r.id end, m.rows), { "c", "a", "b" }, "after insert")
      H.eq(m.total, 3, "total after insert")
      m:apply("list/didUpdate", { fromIndex = 2, toIndex = 0, row = { id = "b", title = "new" } })
      H.eq(vim.tbl_map(function(r) return r.id end, m.rows), { "b", "c", "a" }, "after update")
      m:apply("list/didRemove", { index = 1, id = "c" })
      H.eq(vim.tbl_map(function(r) return r.id end, m.rows), { "b", "a" }, "after remove")
      m:apply("selection/didChange", { id = "a", index = 1 })
      H.eq(m:selected_row(), 2, "selected row")
      m:apply("selection/didChange", { id = "a" }) -- index null: outside the filter
      H.eq(m:selected_row(), nil, "selected outside the list")
      -- An index that does not fit asks for a fetch instead of corrupting rows.
      H.eq(m:apply("list/didRemove", { index = 5, id = "zz" }).fetch, true, "bad index asks for a fetch")
      H.eq(m:apply("list/didReset", { total = 7 }).fetch, true, "reset asks for a fetch")
      -- During a fetch: changes before the first page are in it...
      gen = m:begin_fetch()
      m:apply("list/didInsert", { index = 0, row = { id = "x" } })
      H.eq(m:fetch_page(gen, 0, { total = 3, rows = { { id = "x" }, { id = "b" } } }), 2, "next page offset")
      -- ...but a change between pages makes the pages disagree: restart.
      m:apply("list/didRemove", { index = 0, id = "x" })
      H.eq(m:fetch_page(gen, 2, { total = 2, rows = {} }), "restart", "restart after a change between pages")
      gen = m:begin_fetch()
      H.eq(m:fetch_page(gen - 1, 0, { total = 0, rows = {} }), "stale", "an old generation is ignored")
      H.eq(m:fetch_page(gen, 0, { total = 2, rows = { { id = "b" }, { id = "a" } } }), "done", "fresh fetch")
      H.eq(m.total, 2, "total after fetch")
      m:apply("detail/didShow", { memo = { id = "b", text = "t", version = 3 }, editable = true })
      H.eq(m.detail.version, 3, "detail memo")
      m:apply("detail/didClear", { editable = false })
      H.eq(m.detail, nil, "detail cleared")
      H.eq(m.editable, false, "not editable")
    end,
  },
}
