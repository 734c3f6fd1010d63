--- Runs inside `nvim --headless`: with CN_MODE=list prints every test's
--- name; with CN_MODE=run runs the test CN_TEST and exits 0 (pass) or 1.
--- A test also fails if the plugin reported an unexpected error, or if
--- Neovim recorded an error message (v:errmsg).
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")

local tests, names = {}, {}
for _, file in ipairs(vim.fn.sort(vim.fn.glob(here .. "/test_*.lua", false, true))) do
  for _, t in ipairs(dofile(file)) do
    if tests[t[1]] then
      error("two tests named " .. t[1])
    end
    tests[t[1]] = t[2]
    names[#names + 1] = t[1]
  end
end

local mode = os.getenv("CN_MODE") or "list"
if mode == "list" then
  for _, n in ipairs(names) do
    io.stdout:write(n, "\n")
  end
  vim.cmd("qall!")
  return
end

local name = os.getenv("CN_TEST")
local fn = tests[name]
if not fn then
  io.stdout:write("no test named ", tostring(name), "\n")
  vim.cmd("cquit 2")
  return
end

local H = dofile(here .. "/helpers.lua")
package.loaded["cloudnotes_test_helpers"] = H

local ok, err = xpcall(fn, debug.traceback, H)

-- Whatever happened, do not leave a server behind.
local s = require("cloudnotes").session()
if s and s.rpc and s.rpc.running then
  pcall(function()
    s:close()
    vim.wait(3000, function()
      return not s.rpc.running
    end, 10)
  end)
end

if ok then
  for _, n in ipairs(H.notes) do
    if n.level == vim.log.levels.ERROR then
      local allowed = false
      for _, pat in ipairs(H.allowed_errors) do
        if n.msg:find(pat) then
          allowed = true
        end
      end
      if not allowed then
        ok, err = false, "unexpected error notification: " .. n.msg
        break
      end
    end
  end
end
if ok and vim.v.errmsg ~= "" then
  ok, err = false, "Neovim error message: " .. vim.v.errmsg
end

if ok then
  io.stdout:write("\nRESULT PASS\n")
  vim.cmd("qall!")
else
  io.stdout:write("\nRESULT FAIL\n", tostring(err), "\n")
  vim.cmd("cquit 1")
end
