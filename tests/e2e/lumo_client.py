"""Helpers shared by the Python end-to-end tests and scripts: where the lumo
binary is, how to start it over stdio with the ``mcp`` SDK, and small readers
for tool answers."""

from __future__ import annotations

import os
import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/lib/chromium/chromium"


def lumo_bin() -> str:
    """The lumo binary: $LUMO_BIN, else target/debug/lumo of this checkout."""
    path = os.environ.get("LUMO_BIN") or str(REPO / "target" / "debug" / "lumo")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no lumo binary at {path}: run `cargo build -p lumo-cli` or set LUMO_BIN")
    return path


@asynccontextmanager
async def lumo_session() -> AsyncIterator[ClientSession]:
    """An initialized MCP session with a fresh `lumo serve` on stdio."""
    env = {}
    if "LUMO_BROWSER" in os.environ:
        env["LUMO_BROWSER"] = os.environ["LUMO_BROWSER"]
    elif os.path.exists(CHROMIUM):
        env["LUMO_BROWSER"] = CHROMIUM
    params = StdioServerParameters(command=lumo_bin(), args=["serve"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: Any) -> str:
    """Every text block of a tool result, joined by newlines."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def ref_in(text: str, needle: str) -> str:
    """The ref (``e12``) on the first line of ``text`` that contains ``needle``, after it."""
    for line in text.splitlines():
        at = line.find(needle)
        if at < 0:
            continue
        m = re.search(r"\[(e\d+)\]", line[at + len(needle) :])
        if m:
            return m.group(1)
    raise AssertionError(f"no ref after {needle!r} in:\n{text}")


async def ok(session: ClientSession, name: str, args: dict[str, Any]) -> Any:
    """Calls a tool that must succeed; returns the result."""
    result = await session.call_tool(name, args)
    assert not result.is_error, f"{name} {args} failed:\n{text_of(result)}"
    return result
