"""Page tool bindings over Streamable HTTP, driven by the Python `mcp` SDK
(issue 8 item 1). Run by `hardening_webmcp.rs` with: LUMO_URL FIXTURE_PORT.

- Two handshake-era sessions (pinned to 2025-06-18): a session may call only
  the page tools *it* listed; a page tool that changed since it listed is stale.
- The SDK's default `Client(url)` (negotiates 2026-07-28, stateless; rmcp then
  looks the tool up with `get_tool` before calling it): listing, navigating to
  another origin that registers a tool of the same name, then calling must
  fail as stale instead of running the other origin's tool.

Prints one line per check; exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import sys

import mcp.client.session
from mcp import Client
from mcp.shared.exceptions import MCPError

LUMO, PORT = sys.argv[1], sys.argv[2]
PAGE_A = f"http://127.0.0.1:{PORT}/transfer.html"
PAGE_B = f"http://localhost:{PORT}/transfer.html"


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def check(ok: bool, what: str, detail: object = "") -> None:
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"), flush=True)
    if not ok:
        sys.exit(1)


async def ran(client: Client) -> str:
    """How often the current page's `transfer` ran ("undefined" before its script did)."""
    result = await client.call_tool("devtools_evaluate", {"expression": "String(window.ran)"})
    return text(result).split("<untrusted")[-1].split("\n")[1].strip() if "<untrusted" in text(result) else text(result)


async def open_page(client: Client, url: str) -> None:
    result = await client.call_tool("browser_navigate", {"url": url})
    check(not result.is_error, f"navigate to {url}", text(result))
    for _ in range(100):  # the page registers `transfer` from an inline script; do not list to wait
        if await ran(client) == "0":
            return
        await asyncio.sleep(0.1)
    check(False, f"{url} registered its tool", await ran(client))


async def listed(client: Client) -> list[str]:
    tools = (await client.list_tools(cache_mode="refresh")).tools
    return [t.name for t in tools]


async def call_transfer(client: Client):
    """`webmcp_transfer`: the result, or the protocol error."""
    try:
        return await client.call_tool("webmcp_transfer", {"amount": 5})
    except MCPError as e:
        return e


async def handshake_sessions() -> None:
    # Pin the handshake era to 2025-06-18 (the SDK's default is its latest handshake version).
    mcp.client.session.LATEST_HANDSHAKE_VERSION = "2025-06-18"
    async with Client(LUMO, mode="legacy") as a, Client(LUMO, mode="legacy") as b:
        check(a.protocol_version == "2025-06-18", "session A speaks 2025-06-18", a.protocol_version)
        await open_page(a, PAGE_A)
        check("webmcp_transfer" in await listed(a), "A lists webmcp_transfer")
        answer = await call_transfer(b)
        check(isinstance(answer, MCPError) and "unknown tool" in str(answer), "B, which never listed, gets unknown tool", answer)
        check(await ran(a) == "0", "the tool did not run for B")
        answer = await call_transfer(a)
        check(not isinstance(answer, MCPError) and not answer.is_error, "A runs what it listed", answer)
        check(answer.structured_content["ranOn"] == f"127.0.0.1:{PORT}", "on 127.0.0.1", answer.structured_content)
        await open_page(a, PAGE_B)
        answer = await call_transfer(a)
        check(
            not isinstance(answer, MCPError) and answer.is_error and answer.structured_content["error"]["code"] == "stale_context",
            "A's call after the page changed is stale_context",
            answer,
        )
        check(await ran(a) == "0", "localhost's transfer did not run")
        # Each session has its own browser context (issue 10 item 5): B opens the page itself.
        await open_page(b, PAGE_B)
        check("webmcp_transfer" in await listed(b), "B lists now")
        answer = await call_transfer(b)
        check(not isinstance(answer, MCPError) and not answer.is_error, "B runs what it listed", answer)
        check(answer.structured_content["ranOn"] == f"localhost:{PORT}", "on localhost", answer.structured_content)


async def stateless_client() -> None:
    async with Client(LUMO) as c:
        check(c.protocol_version == "2026-07-28", "Client(url) negotiates 2026-07-28", c.protocol_version)
        await open_page(c, PAGE_A)
        check("webmcp_transfer" in await listed(c), "lists webmcp_transfer on 127.0.0.1")
        await open_page(c, PAGE_B)
        answer = await call_transfer(c)
        check(
            not isinstance(answer, MCPError) and answer.is_error and answer.structured_content["error"]["code"] == "stale_context",
            "2026-07-28: calling after the page changed is stale_context (get_tool did not rebind)",
            answer,
        )
        check(await ran(c) == "0", "2026-07-28: localhost's transfer did not run")
        await listed(c)
        answer = await call_transfer(c)
        check(not isinstance(answer, MCPError) and not answer.is_error, "2026-07-28: runs after listing again", answer)
        check(answer.structured_content["ranOn"] == f"localhost:{PORT}", "2026-07-28: on localhost", answer.structured_content)


asyncio.run(handshake_sessions())
asyncio.run(stateless_client())
print("all ok")
