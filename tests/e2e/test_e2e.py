"""End to end with the PyPI ``mcp`` SDK: a real MCP client drives ``lumo serve``
(``$LUMO_BIN``) on stdio, with a real headless Chromium, over the pages in
``fixtures/``. Plain pytest functions that run their coroutine with
``asyncio.run`` (no pytest-asyncio)."""

from __future__ import annotations

import asyncio
import base64
import json
import re

import pytest
from mcp import MCPError

from fixture_server import FixtureServer
from golden import diff_against_golden
from lumo_client import lumo_session, ok, ref_in, text_of


async def _tools_and_errors() -> None:
    async with lumo_session() as session:
        listed = await session.list_tools()
        again = await session.list_tools()
        names = [t.name for t in listed.tools]
        assert names == [t.name for t in again.tools], "tools/list is not deterministic"
        assert len(set(names)) == len(names), f"duplicate names in {names}"
        live = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in listed.tools]
        difference = diff_against_golden(live)
        assert not difference, f"tools/list differs from the golden file:\n{difference}"
        for tool in listed.tools:
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name), tool.name
            assert tool.description, f"{tool.name} has no description"
            assert tool.input_schema.get("type") == "object", tool.name
            assert tool.input_schema.get("additionalProperties") is False, tool.name

        # A bad argument is a tool error the model can read, naming the field.
        result = await session.call_tool("page_click", {"ref": 5})
        assert result.is_error
        error = result.structured_content["error"]
        assert error["code"] == "invalid_arguments", error
        assert "ref" in error["message"], error
        result = await session.call_tool("browser_resize", {"width": 800, "height": 600, "depth": 3})
        assert result.is_error and result.structured_content["error"]["code"] == "invalid_arguments"
        assert "depth" in result.structured_content["error"]["message"]

        # An unknown tool is a protocol error.
        with pytest.raises(MCPError) as raised:
            await session.call_tool("no_such_tool", {})
        assert "no_such_tool" in raised.value.message


def test_tools_list_and_errors() -> None:
    asyncio.run(_tools_and_errors())


async def _browse(server: FixtureServer) -> None:
    async with lumo_session() as session:
        # Log in: snapshot → fill → click.
        opened = await ok(session, "browser_navigate", {"url": server.url("login.html")})
        assert opened.structured_content["title"] == "Login — lumo fixture"
        snapshot = text_of(await ok(session, "page_snapshot", {}))
        fields = [
            {"ref": ref_in(snapshot, 'textbox "Username"'), "value": "alice"},
            {"ref": ref_in(snapshot, 'textbox "Password"'), "value": "secret"},
            {"ref": ref_in(snapshot, 'checkbox "Remember me"'), "value": True},
        ]
        await ok(session, "page_fill_form", {"fields": fields})
        clicked = await ok(session, "page_click", {"ref": ref_in(snapshot, 'button "Sign in"')})
        assert "Welcome, alice (remembered)" in text_of(clicked)

        # Fill every kind of field of form.html, submit, read what the page got.
        await ok(session, "browser_navigate", {"url": server.url("form.html")})
        form = text_of(await ok(session, "page_snapshot", {"interactive": True}))
        fields = [
            {"ref": ref_in(form, 'textbox "Full name"'), "value": "Grace Hopper"},
            {"ref": ref_in(form, 'textbox "Email"'), "value": "grace@example.com"},
            {"ref": ref_in(form, 'textbox "Password"'), "value": "cobol"},
            {"ref": ref_in(form, 'spinbutton "Age"'), "value": 85},
            {"ref": ref_in(form, 'textbox "Birthday"'), "value": "1906-12-09"},
            {"ref": ref_in(form, 'checkbox "Subscribe to the newsletter"'), "value": True},
            {"ref": ref_in(form, 'radio "Pro"'), "value": True},
            {"ref": ref_in(form, 'combobox "Country'), "value": "Germany"},
            {"ref": ref_in(form, 'textbox "Comments"'), "value": "Ships"},
            {"ref": ref_in(form, 'textbox "Bio"'), "value": "Admiral"},
        ]
        filled = await ok(session, "page_fill_form", {"fields": fields})
        assert text_of(filled).startswith(f"Filled {len(fields)} field(s)")
        await ok(session, "page_select", {"ref": ref_in(form, 'listbox "Languages'), "values": ["Python", "js"]})
        await ok(session, "page_click", {"ref": ref_in(form, 'button "Submit"')})
        out = await ok(session, "devtools_evaluate", {"expression": "document.getElementById('out').textContent"})
        body = text_of(out)
        got = json.loads(body[body.index("{") : body.rindex("}") + 1])
        assert got["text"] == "Grace Hopper"
        assert got["email"] == "grace@example.com"
        assert got["password"] == "cobol"
        assert got["number"] == "85"
        assert got["date"] == "1906-12-09"
        assert got["newsletter"] is True
        assert got["plan"] == "pro"
        assert got["country"] == "de"
        assert got["languages"] == ["python", "js"]
        assert got["comments"] == "Ships"
        assert got["bio"] == "Admiral"

        # A long list: find row 777, then its button, and click it.
        await ok(session, "browser_navigate", {"url": server.url("long-list.html")})
        row = await ok(session, "page_find", {"text": "Row 777"})
        assert row.structured_content["total"] == 1, text_of(row)
        button = await ok(session, "page_find", {"text": "Select 777", "role": "button"})
        clicked = await ok(session, "page_click", {"ref": ref_in(text_of(button), 'button "Select 777"')})
        assert "Selected Row 777" in text_of(clicked)

        # A confirm dialog.
        await ok(session, "browser_navigate", {"url": server.url("dialog.html")})
        dialogs = text_of(await ok(session, "page_snapshot", {}))
        clicked = await ok(session, "page_click", {"ref": ref_in(dialogs, 'button "Confirm"')})
        notice = text_of(clicked)
        assert "confirm" in notice and "Are you sure?" in notice and "page_dialog" in notice, notice
        answered = await ok(session, "page_dialog", {"accept": True})
        assert "Accepted the confirm dialog" in text_of(answered)
        result = await ok(session, "devtools_evaluate", {"expression": "document.getElementById('result').textContent"})
        assert "confirm: true" in text_of(result)

        # A screenshot.
        shot = await ok(session, "page_screenshot", {})
        images = [c for c in shot.content if c.type == "image"]
        assert len(images) == 1
        assert images[0].mime_type == "image/png"
        assert base64.b64decode(images[0].data).startswith(b"\x89PNG\r\n\x1a\n")

        # A bad argument on a live page.
        bad = await session.call_tool("page_snapshot", {"max_bytes": "lots"})
        assert bad.is_error
        assert bad.structured_content["error"]["code"] == "invalid_arguments"
        assert "max_bytes" in bad.structured_content["error"]["message"]


def test_browse_end_to_end() -> None:
    with FixtureServer() as server:
        asyncio.run(_browse(server))
