-- CloudNotes commands. The plugin's code loads on first use (lua/cloudnotes).
if vim.g.loaded_cloudnotes then
  return
end
vim.g.loaded_cloudnotes = 1

local function safe(fn)
  return function(...)
    return require("cloudnotes.util").safe(fn, "CloudNotes")(...)
  end
end

vim.api.nvim_create_user_command("CloudNotes", safe(function()
  require("cloudnotes").open()
end), { desc = "Open the CloudNotes split view in a new tab" })

vim.api.nvim_create_user_command("CloudNotesClose", safe(function()
  require("cloudnotes").close()
end), { desc = "Close CloudNotes and shut its server down" })

vim.api.nvim_create_user_command("CloudNotesImport", safe(function(opts)
  require("cloudnotes").import(opts.args)
end), { nargs = 1, complete = "file", desc = "Import a JSON file of memos into CloudNotes" })

vim.api.nvim_create_user_command("CloudNotesHistory", safe(function()
  require("cloudnotes").history()
end), { desc = "List the shown memo's versions; diff and restore them" })

vim.api.nvim_create_user_command("CloudNotesTrash", safe(function()
  require("cloudnotes").trash()
end), { desc = "List the deleted memos; bring them back" })
