--- The client's copy of the server's split view (list rows and total, the
--- selection, the detail memo), kept current by applying the server's
--- notifications in order (protocol rule 7). It never sorts or filters:
--- the server decides what the list holds and where.
---
--- It touches no editor API, so it can be tested on its own.
local M = {}

local Mirror = {}
Mirror.__index = Mirror

--- A mirror with nothing in it; `fetching` until the first memo/list arrives.
function M.new()
  return setmetatable({
    rows = {}, -- MemoRow tables, in server order
    total = 0,
    query = "", -- the search filter, as last confirmed by the server
    selected_id = nil, -- nil: nothing selected
    selected_index = nil, -- 0-based server index; nil: outside the filtered list
    detail = nil, -- the Memo the detail pane shows, or nil when cleared
    editable = false,
    fetching = false,
    fetch_gen = 0,
  }, Mirror)
end

local function valid_index(i, max)
  return type(i) == "number" and i >= 0 and i <= max and i == math.floor(i)
end

--- Apply one server notification. Returns a table of what changed:
--- { list = bool, selection = bool, detail = bool, fetch = bool }, where
--- `fetch` asks the caller to re-fetch the list with memo/list (after
--- list/didReset, or if an index does not fit the rows held).
function Mirror.apply(self, method, params)
  local changed = {}
  params = params or {}
  if method:sub(1, 5) == "list/" then
    changed.list = true
    if self.fetching then
      -- A list fetch is under way. Changes announced before its first page
      -- arrives are already in that page (the server answers in order); a
      -- change between two pages makes the pages disagree, so start over.
      if self.fetch_pages > 0 then
        self.fetch_restart = true
      end
      if method == "list/didReset" then
        self.total = params.total or self.total
      end
      return changed
    end
    local rows = self.rows
    if method == "list/didInsert" then
      if not valid_index(params.index, #rows) or type(params.row) ~= "table" then
        changed.fetch = true
      else
        table.insert(rows, params.index + 1, params.row)
        self.total = self.total + 1
      end
    elseif method == "list/didUpdate" then
      local from, to = params.fromIndex, params.toIndex
      if not valid_index(from, #rows - 1) or not valid_index(to, #rows - 1) or type(params.row) ~= "table" then
        changed.fetch = true
      else
        table.remove(rows, from + 1)
        table.insert(rows, to + 1, params.row)
      end
    elseif method == "list/didRemove" then
      local i = params.index
      if not valid_index(i, #rows - 1) or (params.id and rows[i + 1].id ~= params.id) then
        changed.fetch = true
      else
        table.remove(rows, i + 1)
        self.total = math.max(0, self.total - 1)
      end
    elseif method == "list/didReset" then
      -- Keep showing the old rows until the new ones arrive, so the list
      -- does not flash empty; the total is already the new one.
      self.total = params.total or 0
      changed.fetch = true
    else
      changed.list = false
    end
  elseif method == "selection/didChange" then
    self.selected_id = params.id
    self.selected_index = params.index
    changed.selection = true
  elseif method == "detail/didShow" then
    self.detail = params.memo
    self.editable = params.editable ~= false
    changed.detail = true
  elseif method == "detail/didClear" then
    self.detail = nil
    self.editable = false
    changed.detail = true
  end
  return changed
end

--- Start a fresh fetch of the whole list; returns its generation, which the
--- page results must carry (an older fetch's late pages are ignored).
function Mirror.begin_fetch(self)
  self.fetch_gen = self.fetch_gen + 1
  self.fetching = true
  self.fetch_rows = {}
  self.fetch_pages = 0
  self.fetch_restart = false
  return self.fetch_gen
end

--- Give up a fetch (its request failed); the old rows stay.
function Mirror.abort_fetch(self, gen)
  if gen == self.fetch_gen then
    self.fetching = false
  end
end

--- Feed one memo/list page (`result` = {total, rows}) fetched at `offset`.
--- Returns "done" (rows replaced), "restart" (the list moved between pages:
--- fetch again from 0), "stale" (an old generation: ignore) or the offset of
--- the next page to fetch.
function Mirror.fetch_page(self, gen, offset, result)
  if gen ~= self.fetch_gen or not self.fetching then
    return "stale"
  end
  if self.fetch_restart then
    return "restart"
  end
  result = result or {}
  local got = result.rows or {}
  for i, row in ipairs(got) do
    self.fetch_rows[offset + i] = row
  end
  self.fetch_pages = self.fetch_pages + 1
  local total = result.total or #self.fetch_rows
  if #self.fetch_rows >= total or #got == 0 then
    self.rows = self.fetch_rows
    self.total = #self.fetch_rows
    self.fetch_rows = nil
    self.fetching = false
    return "done"
  end
  return #self.fetch_rows
end

--- The 1-based position in `rows` of the selected memo, or nil when nothing
--- is selected or the selected memo is outside the filtered list.
function Mirror.selected_row(self)
  if self.selected_id == nil or self.selected_index == nil then
    return nil
  end
  local i = self.selected_index + 1
  if self.rows[i] and self.rows[i].id == self.selected_id then
    return i
  end
  -- The index can be stale after a refresh that showed another front end's
  -- changes (no notification tells us about those); the id is still right.
  for j, row in ipairs(self.rows) do
    if row.id == self.selected_id then
      return j
    end
  end
  return nil
end

return M
