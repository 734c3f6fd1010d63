--- The client's copy of the server's split view: the list's `total` and the
--- rows of a window of it (rows `offset` to `offset + #rows - 1`), the
--- selection and the detail memo. It follows protocol/README.md §7 "A window
--- of the list": each notification is applied to the window, and a
--- memo/list response replaces it. It never sorts or filters: the server
--- decides what the list holds and where. With 100,000 memos it holds a few
--- screens of rows, never the whole list.
---
--- It touches no editor API, so it can be tested on its own.
local M = {}

local Mirror = {}
Mirror.__index = Mirror

--- The most rows one memo/list request brings (the server's maxListLimit).
M.MAX_ROWS = 1000

--- An empty mirror; `stale` until the first memo/list (or memo/search)
--- response says what the list holds.
function M.new()
  return setmetatable({
    total = 0,
    offset = 0, -- 0-based index of rows[1] in the (filtered) list
    rows = {}, -- MemoRow tables of the window, in server order
    stale = true, -- the rows must be fetched (at start, after list/didReset)
    query = "", -- the search filter, as last confirmed by the server
    selected_id = nil, -- nil: nothing selected
    selected_index = nil, -- 0-based server index; nil: outside the filtered list
    detail = nil, -- the Memo the detail pane shows, or nil when cleared
    editable = false,
    max_rows = M.MAX_ROWS,
  }, Mirror)
end

local function is_index(i)
  return type(i) == "number" and i >= 0 and i == math.floor(i)
end

--- Drop the window (the next fetch brings it back); the total stays.
function Mirror.invalidate(self)
  self.rows = {}
  self.stale = true
end

-- A row entered the list at `index`. Returns false if that cannot be so.
function Mirror._insert(self, index, row)
  if not is_index(index) or index > self.total or type(row) ~= "table" then
    return false
  end
  self.total = self.total + 1
  local count = #self.rows
  if index < self.offset then
    self.offset = self.offset + 1
  elseif index <= self.offset + count then
    table.insert(self.rows, index - self.offset + 1, row)
    if count + 1 > self.max_rows then
      self.rows[count + 1] = nil
    end
  end
  return true
end

-- The row at `index` (memo `id`, when known) left the list. Returns false
-- if that cannot be so.
function Mirror._remove(self, index, id)
  if not is_index(index) or index >= self.total then
    return false
  end
  if index < self.offset then
    self.offset = self.offset - 1
  elseif index < self.offset + #self.rows then
    local i = index - self.offset + 1
    if id ~= nil and self.rows[i].id ~= id then
      return false
    end
    table.remove(self.rows, i)
  end
  self.total = self.total - 1
  return true
end

--- Apply one server notification. Returns a table of what changed:
---   list: the list changed; ops: the changes in order, each
---   { "insert", index } or { "remove", index } (only while the window is
---   current, so that a view can move its lines the same way); reset: the
---   whole list changed (the window is dropped and must be fetched);
---   selection, selection_moved (another memo is selected), detail.
--- A notification that does not fit what the mirror holds (a bug on one
--- side or the other) drops the window, as a reset does, so that the next
--- fetch repairs it.
function Mirror.apply(self, method, params)
  local changed = {}
  params = params or {}
  if method:sub(1, 5) == "list/" then
    changed.list = true
    local stale = self.stale
    local ok = true
    local ops = {}
    if method == "list/didInsert" then
      ok = self:_insert(params.index, params.row)
      ops[1] = { "insert", params.index }
    elseif method == "list/didRemove" then
      ok = self:_remove(params.index, params.id)
      ops[1] = { "remove", params.index }
    elseif method == "list/didUpdate" then
      local row = params.row
      ok = type(row) == "table" and self:_remove(params.fromIndex, row.id) and self:_insert(params.toIndex, row)
      ops = { { "remove", params.fromIndex }, { "insert", params.toIndex } }
    elseif method == "list/didReset" then
      self.total = is_index(params.total) and params.total or 0
      ok = false
    else
      changed.list = false
      return changed
    end
    if not ok then
      self:invalidate()
      self.offset = math.min(self.offset, self.total)
      changed.reset = true
    elseif not stale then
      changed.ops = ops
    end
  elseif method == "selection/didChange" then
    changed.selection_moved = params.id ~= self.selected_id
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

--- Take a memo/list response to a request for `offset` (or a memo/search
--- response, with offset 0). It describes the list after every notification
--- sent before it (§7), so its rows are the window now, whatever moved while
--- it was on its way.
function Mirror.install(self, offset, result)
  result = result or {}
  local rows = result.rows or {}
  self.total = is_index(result.total) and result.total or #rows
  self.offset = math.min(offset, self.total)
  self.rows = {}
  for i = 1, math.min(#rows, self.max_rows, self.total - self.offset) do
    self.rows[i] = rows[i]
  end
  self.stale = false
end

--- The row at 0-based `index`, or nil when it is outside the window.
function Mirror.row(self, index)
  if self.stale or index < self.offset then
    return nil
  end
  return self.rows[index - self.offset + 1]
end

--- The memo/list params ({offset, limit}) that bring the rows `first` to
--- `last` (0-based, the ones on screen) with `margin` rows either side,
--- or nil when the window holds them already. The request asks for twice
--- the margin, so that scrolling on does not fetch again at once.
function Mirror.fetch_for(self, first, last, margin)
  margin = math.max(0, margin or 0)
  local span = last - first + 1
  -- One request brings at most max_rows rows: keep the margins within it.
  margin = math.max(0, math.min(margin, math.floor((self.max_rows - span) / 4)))
  if not self.stale then
    if self.total == 0 then
      return nil
    end
    first = math.max(0, math.min(first, self.total - 1))
    last = math.max(first, math.min(last, self.total - 1))
    local need_lo = math.max(0, first - margin)
    local need_hi = math.min(self.total - 1, last + margin)
    if need_lo >= self.offset and need_hi < self.offset + #self.rows then
      return nil
    end
  end
  local lo = math.max(0, first - 2 * margin)
  local hi = last + 2 * margin
  if not self.stale then
    hi = math.min(self.total - 1, hi)
  end
  return { offset = lo, limit = math.max(1, math.min(self.max_rows, hi - lo + 1)) }
end

--- The 0-based index of the selected memo in the list, or nil when nothing
--- is selected or it is outside the filtered list.
function Mirror.selected(self)
  if self.selected_id == nil or not is_index(self.selected_index) or self.selected_index >= self.total then
    return nil
  end
  return self.selected_index
end

--- True when the window holds the selected memo's row and it is not where
--- the selection says (the two disagree: the window must be fetched again).
function Mirror.selection_disagrees(self)
  local i = self:selected()
  local row = i and self:row(i)
  return row ~= nil and row.id ~= self.selected_id
end

return M
