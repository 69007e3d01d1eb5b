"""A stand-in for `lumo serve`, for testing the harness while lumo is not built.

It speaks lumo's (tentative) tool names over MCP stdio and forwards each call
to a @playwright/mcp child, rewriting Playwright refs (`[ref=f1e5]`) into
lumo-style refs (`[e5]`). Its figures mean nothing about lumo: it only proves
that the lumo adapter, the ratio columns and the chart work end to end.

    LUMO_BIN=bench/selftest/fake-lumo bench/run --quick
"""

from __future__ import annotations

import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from collections.abc import AsyncIterator

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.mcpserver import MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lumobench.servers import playwright_spec  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent
_PW_REF = re.compile(r"\[ref=([a-z0-9]+)\]")


class Bridge:
    def __init__(self, session: ClientSession) -> None:
        self.s = session
        self.to_pw: dict[str, str] = {}
        self.from_pw: dict[str, str] = {}
        self.roles: dict[str, str] = {}

    def _lumo_ref(self, pw_ref: str) -> str:
        if pw_ref not in self.from_pw:
            ref = f"e{len(self.from_pw) + 1}"
            self.from_pw[pw_ref], self.to_pw[ref] = ref, pw_ref
        return self.from_pw[pw_ref]

    def rewrite(self, text: str) -> str:
        out = []
        for line in text.splitlines():
            m = _PW_REF.search(line)
            if m:
                ref = self._lumo_ref(m.group(1))
                role = re.match(r"\s*- (\w+)", line)
                if role:
                    self.roles[ref] = role.group(1)
                line = _PW_REF.sub(f"[{ref}]", line)
            out.append(line)
        return "\n".join(out)

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        res = await self.s.call_tool(tool, args)
        text = "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        if res.is_error:
            raise RuntimeError(text)
        return self.rewrite(text)


BRIDGE: Bridge | None = None


@asynccontextmanager
async def lifespan(_: MCPServer) -> AsyncIterator[None]:
    global BRIDGE
    spec = playwright_spec(BENCH / "cache", BENCH / "cache" / "work" / "fake-lumo")
    params = StdioServerParameters(command=spec.command, args=spec.args, cwd=str(spec.cwd))
    async with stdio_client(params, errlog=sys.stderr) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            BRIDGE = Bridge(session)
            yield


server = MCPServer("fake-lumo", version="0.0.0-fake", lifespan=lifespan)


def _b() -> Bridge:
    assert BRIDGE is not None
    return BRIDGE


@server.tool()
async def browser_navigate(url: str) -> str:
    """Open a URL."""
    return await _b().call("browser_navigate", {"url": url})


@server.tool()
async def page_snapshot(ref: str | None = None, interactive: bool = False, max_bytes: int | None = None) -> str:
    """Snapshot of the page or of one element."""
    b = _b()
    return await b.call("browser_snapshot", {"target": b.to_pw[ref]} if ref else {})


@server.tool()
async def page_find(text: str | None = None, role: str | None = None, regex: str | None = None) -> str:
    """Find elements by text, role or regex."""
    if role:
        return await _b().call("browser_find", {"regex": rf"- {role}\b"})
    if regex:
        return await _b().call("browser_find", {"regex": regex})
    return await _b().call("browser_find", {"text": text or ""})


@server.tool()
async def page_click(ref: str) -> str:
    """Click an element."""
    b = _b()
    return await b.call("browser_click", {"target": b.to_pw[ref]})


@server.tool()
async def page_type(ref: str, text: str, submit: bool = False) -> str:
    """Type into an element."""
    b = _b()
    return await b.call("browser_type", {"target": b.to_pw[ref], "text": text, "submit": submit})


@server.tool()
async def page_fill_form(fields: list[dict[str, str]]) -> str:
    """Fill several fields: [{ref, value}]."""
    b = _b()
    kinds = {"checkbox": "checkbox", "radio": "radio", "combobox": "combobox", "slider": "slider"}
    items = [{"target": b.to_pw[f["ref"]], "name": f["ref"], "type": kinds.get(b.roles.get(f["ref"], ""), "textbox"),
              "value": f["value"]} for f in fields]
    return await b.call("browser_fill_form", {"fields": items})


@server.tool()
async def page_dialog(accept: bool, prompt_text: str | None = None) -> str:
    """Accept or dismiss the open dialog."""
    args: dict[str, Any] = {"accept": accept}
    if prompt_text is not None:
        args["promptText"] = prompt_text
    return await _b().call("browser_handle_dialog", args)


@server.tool()
async def devtools_evaluate(expression: str) -> str:
    """Evaluate a JavaScript expression."""
    return await _b().call("browser_evaluate", {"function": f"() => ({expression})"})


if __name__ == "__main__":
    server.run("stdio")
