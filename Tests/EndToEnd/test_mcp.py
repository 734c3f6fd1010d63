"""`cloudnotes mcp` driven by the official MCP Python SDK (`stdio_client` and `ClientSession` from the
`mcp` package), a client no one here wrote: the handshake, every tool, paging, resources and their
subscriptions, `--read-only`, tool errors, and changes reaching an editor's running `serve` (and the
other way) as they are made. `protocol/mcp.md` describes the tools; a test holds the two together."""

from __future__ import annotations

import json
import re

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import PaginatedRequestParams

from cnsupport.cli import Cli
from cnsupport.mcp import RawMcp, mcp_session, run
from cnsupport.paths import REPO, path_with_binary
from cnsupport.session import barrier, make_entries, methods_of, read_unprompted, write_entries
from cnsupport.store_file import memos_of


@pytest.fixture
def store(tmp_root):
    return tmp_root / "notes.sqlite"


def shell(store) -> Cli:
    return Cli(store)


async def call(session, tool: str, **arguments) -> dict:
    """A tool call that must succeed; its structured result (which the SDK checked against the tool's
    output schema)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def failure(session, tool: str, **arguments) -> str:
    """A tool call that must fail as a tool error: its sentence."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result
    return result.content[0].text


# -- the handshake ----------------------------------------------------------------------------------

def test_the_sdk_negotiates_the_latest_version_and_sees_the_capabilities(store):
    async def body():
        async with mcp_session(store) as (session, _):
            result = session.initialize_result
            assert result.protocol_version == "2025-11-25"
            assert result.server_info.name == "cloudnotes"
            assert result.capabilities.resources.subscribe and result.capabilities.resources.list_changed
            assert result.capabilities.tools is not None
            assert "baseVersion" in result.instructions
    run(body())


@pytest.mark.parametrize("offered, agreed", [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
                                             ("1999-01-01", "2025-11-25")])
def test_a_client_of_an_older_version_gets_its_own(store, offered, agreed):
    server = RawMcp(store)
    response = server.initialize(offered)
    assert response["result"]["protocolVersion"] == agreed
    assert server.request("tools/list")["result"]["tools"]
    assert server.close() == []


def test_requests_piped_before_stdin_closes_are_all_answered(store):
    server = RawMcp(store)
    lines = ['{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
             '"capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}',
             '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    lines += [json.dumps({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
                          "params": {"name": "create_memo", "arguments": {"text": f"piped {n}"}}}) for n in range(5)]
    server.send("\n".join(lines))
    server.proc.stdin.close()
    answered = set()
    with pytest.raises(EOFError):
        while True:
            message = server.next_message()
            if "id" in message:
                assert "result" in message and not message["result"].get("isError"), message
                answered.add(message["id"])
    assert answered == {1, 10, 11, 12, 13, 14}
    assert server.close() == []
    assert sorted(memos_of(store).values()) == [f"piped {n}" for n in range(5)]


# -- the tools --------------------------------------------------------------------------------------

def spec_tools() -> dict[str, tuple[set[str], set[str]]]:
    """protocol/mcp.md's table of tools: name -> (required arguments, optional arguments)."""
    table = {}
    for line in (REPO / "protocol" / "mcp.md").read_text().splitlines():
        match = re.match(r"\| `(\w+)` \| ([^|]*) \|", line)
        if match:
            names = re.findall(r"`(\w+)(\??)`", match.group(2))
            table[match.group(1)] = ({n for n, optional in names if not optional}, {n for n, optional in names if optional})
    return table


def test_the_tools_are_the_ones_the_spec_describes(store):
    async def body():
        async with mcp_session(store) as (session, _):
            return (await session.list_tools()).tools
    tools = run(body())
    spec = spec_tools()
    assert {tool.name for tool in tools} == set(spec) == {
        "search_memos", "list_memos", "read_memo", "create_memo", "edit_memo", "delete_memo"}
    for tool in tools:
        required, optional = spec[tool.name]
        schema = tool.input_schema
        assert set(schema.get("required", [])) == required, tool.name
        assert set(schema["properties"]) == required | optional, tool.name
        assert schema["additionalProperties"] is False
        assert tool.output_schema["type"] == "object", tool.name
        assert tool.annotations.read_only_hint == (tool.name in {"search_memos", "list_memos", "read_memo"})


def test_every_tool_in_turn(store):
    async def body():
        async with mcp_session(store) as (session, _):
            created = await call(session, "create_memo", text="Groceries\nmilk, eggs")
            assert created["title"] == "Groceries" and created["version"] == 1
            assert created["uri"] == f"cloudnotes://memo/{created['id']}"
            read = await call(session, "read_memo", id=created["id"])
            assert read["text"] == "Groceries\nmilk, eggs" and read["textLength"] == len(read["text"])
            assert "nextCursor" not in read
            listed = await call(session, "list_memos")
            assert listed["total"] == 1 and listed["memos"][0]["id"] == created["id"]
            assert listed["memos"][0]["preview"] == "milk, eggs"
            assert (await call(session, "search_memos", query="EGG"))["total"] == 1
            assert (await call(session, "search_memos", query="z"))["total"] == 0
            edited = await call(session, "edit_memo", id=created["id"], text="Groceries\nmilk, eggs, bread",
                                baseVersion=read["version"])
            assert edited["version"] > read["version"]
            # Another process changes it: the assistant's text is kept as a version of the assistant's.
            shell_edit(store, created["id"], "Groceries\nmilk, eggs, bread, tea")
            history = json.loads(shell(store).ok("history", created["id"], "--json").out)["versions"]
            assert "assistant" in {version["origin"] for version in history}
            deleted = await call(session, "delete_memo", id=created["id"])
            assert deleted == {"id": created["id"], "title": "Groceries", "trashDays": 30}
            assert (await call(session, "list_memos"))["total"] == 0
            return created["id"]
    memo_id = run(body())
    trash = json.loads(shell(store).ok("trash", "--json").out)
    assert [entry["id"] for entry in trash] == [memo_id]


def test_search_finds_one_character_in_any_language(store):
    shell(store).ok("new", "회의 메모\n내일 오전")
    shell(store).ok("new", "Ünïcode\nstraße")
    async def body():
        async with mcp_session(store) as (session, _):
            assert (await call(session, "search_memos", query="회"))["total"] == 1
            assert (await call(session, "search_memos", query="ü"))["total"] == 1
    run(body())


def test_ids_may_be_the_shells_short_prefixes(store):
    async def body():
        async with mcp_session(store) as (session, _):
            created = await call(session, "create_memo", text="Prefix\nbody")
            assert (await call(session, "read_memo", id=created["id"][:8].upper()))["id"] == created["id"]
            message = await failure(session, "read_memo", id="ffffffff")
            assert "ffffffff" in message and "list_memos" in message
            assert "hex" in await failure(session, "read_memo", id="not an id")
    run(body())


def test_lists_search_results_and_long_texts_come_in_pages(store, tmp_root):
    shell(store).ok("import", str(write_entries(tmp_root / "import.json", make_entries(45, "paged"))))
    long_text = "Long\n" + "".join(f"line {n} ✓\n" for n in range(6000))
    async def body():
        async with mcp_session(store) as (session, _):
            seen, cursor, pages = [], None, 0
            while True:
                page = await call(session, "list_memos", limit=20, **({"cursor": cursor} if cursor else {}))
                pages += 1
                assert len(page["memos"]) <= 20 and page["total"] == 45
                seen += [memo["id"] for memo in page["memos"]]
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert pages == 3 and len(set(seen)) == 45
            found = await call(session, "search_memos", query="paged", limit=7)
            assert found["total"] == 45 and len(found["memos"]) == 7 and found["nextCursor"]
            assert "limit" in await failure(session, "list_memos", limit=101)
            assert "cursor" in await failure(session, "list_memos", cursor="bogus")

            one_line = await call(session, "create_memo", text="x" * 300_000)
            assert len(one_line["title"]) <= 201  # cut with an ellipsis: results stay bounded
            assert len((await call(session, "read_memo", id=one_line["id"]))["text"]) == 20_000
            memo = await call(session, "create_memo", text=long_text)
            parts, cursor = [], None
            while True:
                page = await call(session, "read_memo", id=memo["id"], **({"cursor": cursor} if cursor else {}))
                assert len(page["text"]) <= 20_000 and page["textLength"] == len(long_text)
                parts.append(page["text"])
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert len(parts) > 1 and "".join(parts) == long_text
    run(body())


@pytest.mark.parametrize("text", ["data:,Hello%2C%20World", "data:text/plain;base64,SGVsbG8=", "emoji 😀\u0000nul",
                                  "  leading space\r\nCRLF"])
def test_texts_come_back_exactly_as_written(store, text):
    async def body():
        async with mcp_session(store) as (session, _):
            created = await call(session, "create_memo", text=text)
            assert (await call(session, "read_memo", id=created["id"]))["text"] == text
            assert (await session.read_resource(created["uri"])).contents[0].text == text
            listed = (await session.list_resources()).resources[0]
            assert listed.name == listed.title == (await call(session, "list_memos"))["memos"][0]["title"]
            if text.startswith("data:"):  # one line: the title is the whole text
                assert listed.title == created["title"] == text
            return created["id"]
    memo_id = run(body())
    assert memos_of(store)[memo_id] == text


def test_a_stale_edit_is_refused_with_the_current_text(store):
    async def body():
        async with mcp_session(store) as (session, _):
            created = await call(session, "create_memo", text="Plan\nv1")
            await call(session, "edit_memo", id=created["id"], text="Plan\nv2 by the user", baseVersion=1)
            result = await session.call_tool("edit_memo", {"id": created["id"], "text": "Plan\nassistant", "baseVersion": 1})
            assert result.is_error
            assert "baseVersion" in result.content[0].text and "Plan\nv2 by the user" in result.content[0].text
            assert result.structured_content["text"] == "Plan\nv2 by the user"
            assert (await call(session, "read_memo", id=created["id"]))["text"] == "Plan\nv2 by the user"
    run(body())


def test_bad_arguments_are_tool_errors_that_name_the_argument(store):
    async def body():
        async with mcp_session(store) as (session, _):
            assert "text is missing" in await failure(session, "create_memo")
            assert "text must be a string" in await failure(session, "create_memo", text=5)
            assert "blank" in await failure(session, "create_memo", text="  \n")
            assert "no argument titel" in await failure(session, "create_memo", text="x", titel="y")
            assert "query is empty" in await failure(session, "search_memos", query="")
            memo = await call(session, "create_memo", text="Kept")
            assert "baseVersion" in await failure(session, "edit_memo", id=memo["id"], text="x", baseVersion=0)
            with pytest.raises(MCPError, match="Unknown tool"):
                await session.call_tool("rename_memo", {})
    run(body())
    assert list(memos_of(store).values()) == ["Kept"]


def test_read_only_offers_only_the_reading_tools(store):
    memo_id = shell(store).ok("new", "Kept\nas it is").out.strip()
    async def body():
        async with mcp_session(store, "--read-only") as (session, _):
            tools = (await session.list_tools()).tools
            assert {tool.name for tool in tools} == {"search_memos", "list_memos", "read_memo"}
            assert (await call(session, "read_memo", id=memo_id))["text"] == "Kept\nas it is"
            for tool, arguments in [("create_memo", {"text": "x"}), ("delete_memo", {"id": memo_id}),
                                    ("edit_memo", {"id": memo_id, "text": "x"})]:
                with pytest.raises(MCPError, match="read-only"):
                    await session.call_tool(tool, arguments)
    run(body())
    assert memos_of(store) == {memo_id: "Kept\nas it is"}


# -- resources --------------------------------------------------------------------------------------

def test_memos_are_resources_listed_in_pages(store, tmp_root):
    shell(store).ok("import", str(write_entries(tmp_root / "import.json", make_entries(150, "resource"))))
    async def body():
        async with mcp_session(store) as (session, _):
            first = await session.list_resources()
            assert len(first.resources) == 100 and first.next_cursor
            second = await session.list_resources(params=PaginatedRequestParams(cursor=first.next_cursor))
            assert len(second.resources) == 50 and second.next_cursor is None
            uris = [r.uri for r in first.resources + second.resources]
            assert len(set(uris)) == 150 and all(u.startswith("cloudnotes://memo/") for u in uris)
            read = await session.read_resource(uris[0])
            memo_id = uris[0].removeprefix("cloudnotes://memo/")
            assert read.contents[0].text == memos_of(store)[memo_id]
            templates = await session.list_resource_templates()
            assert templates.resource_templates[0].uri_template == "cloudnotes://memo/{id}"
            with pytest.raises(MCPError) as missing:
                await session.read_resource("cloudnotes://memo/00000000-0000-4000-8000-000000000000")
            assert missing.value.error.code == -32002
            with pytest.raises(MCPError) as foreign:
                await session.read_resource("file:///etc/passwd")
            assert foreign.value.error.code == -32602
    run(body())


def test_subscriptions_hear_of_changes_made_in_any_process(store):
    async def body():
        async with mcp_session(store) as (session, heard):
            created = await call(session, "create_memo", text="Watched\nv1")
            other = await call(session, "create_memo", text="Not watched")
            await session.subscribe_resource(created["uri"])
            heard.messages.clear()
            shell(store).ok("new", "From the shell")  # another process: a memo comes
            await heard.wait_for("notifications/resources/list_changed")
            assert heard.updated_uris() == []
            # Another process edits the watched memo, then the unwatched one.
            shell_edit(store, created["id"], "Watched\nedited in the shell")
            await heard.wait_for("notifications/resources/updated")
            shell_edit(store, other["id"], "Not watched\nedited")
            shell(store).ok("rm", created["id"])
            await heard.wait_for("notifications/resources/updated", count=2)
            assert set(heard.updated_uris()) == {created["uri"]}
            await session.unsubscribe_resource(created["uri"])
            await session.subscribe_resource(other["uri"])
            heard.messages.clear()
            shell(store).ok("undelete", created["id"])
            shell_edit(store, other["id"], "Not watched\nuntil now")
            await heard.wait_for("notifications/resources/updated")
            assert heard.updated_uris() == [other["uri"]]  # not the memo unsubscribed from
    run(body())


def shell_edit(store, memo_id: str, text: str) -> None:
    """Replaces a memo's text from another process: `cloudnotes edit`, with `cp` for the editor."""
    source = store.parent / f"edit-{memo_id}.txt"
    source.write_text(text)
    Cli(store, env={"EDITOR": f"cp '{source}'"}).ok("edit", memo_id)
    source.unlink()


# -- live with an editor ----------------------------------------------------------------------------

def test_changes_reach_a_running_editor_and_come_back(servers):
    editor = servers.session(mirror=True)
    async def body():
        async with mcp_session(servers.store) as (session, heard):
            created = await call(session, "create_memo", text="From the assistant\nhello")
            notes = read_unprompted(editor, lambda n: "detail/didShow" in methods_of(n), timeout=5) + barrier(editor)
            assert any(n["params"]["row"]["id"] == created["id"] for n in notes if n["method"] == "list/didInsert")
            editor.check_mirror()
            # The person types in the editor: the assistant reads what they typed.
            memo = editor.call("memo/select", {"id": created["id"]})["memo"]
            typed = editor.call("memo/update", {"id": created["id"], "text": "From the assistant\nhello, edited",
                                                "baseVersion": memo["version"]})["memo"]
            assert (await call(session, "read_memo", id=created["id"]))["text"] == "From the assistant\nhello, edited"
            # An assistant that did not see the edit is refused, and the editor keeps its text.
            stale = await session.call_tool("edit_memo", {"id": created["id"], "text": "overwrite", "baseVersion": memo["version"]})
            assert stale.is_error
            await call(session, "edit_memo", id=created["id"], text="From the assistant\nhello, edited, and added to",
                       baseVersion=typed["version"])
            notes = read_unprompted(editor, lambda n: "detail/didShow" in methods_of(n), timeout=5) + barrier(editor)
            shown = [n["params"]["memo"]["text"] for n in notes if n["method"] == "detail/didShow"]
            assert shown[-1] == "From the assistant\nhello, edited, and added to"
            editor.check_mirror()
    run(body())


# -- the README -------------------------------------------------------------------------------------

def test_the_readme_configuration_works_as_written(tmp_root):
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Assistants (MCP)"):]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    config = json.loads(block)["mcpServers"]["cloudnotes"]
    assert config == {"command": "cloudnotes", "args": ["mcp"]}
    store = tmp_root / "readme.sqlite"
    env = {"PATH": path_with_binary(tmp_root), "CLOUDNOTES_STORE": str(store)}
    async def body():
        async with mcp_session(store, command=config["command"], arguments=config["args"], env=env) as (session, _):
            created = await call(session, "create_memo", text="Configured\nas the README says")
            assert (await call(session, "search_memos", query="README"))["memos"][0]["id"] == created["id"]
    run(body())
    assert list(memos_of(store).values()) == ["Configured\nas the README says"]
