"""Isolation between clients (issue 10 item 5), driven by the Python `mcp` SDK
over Streamable HTTP. Run by `isolation.rs` with: LUMO_URL FIXTURE_PORT.

Two MCP sessions (A and B) on one `lumo serve --http` each open the same page
(`isolation.html?who=alpha` / `?who=bravo`, same origin). A must not list, read
or act on B's tab: browser_tabs, page_snapshot, page_click with B's ref,
network_requests, devtools_console, page tools; a cookie and localStorage set
in A are not seen in B. A stateless request (2026-07-28, no session) works in
the default context and sees neither. Then A's session closes (its context is
disposed: the Rust side checks lumo's log) and B keeps working.

With a third argument `expire` (lumo run with `--session-idle 4`): a session
left idle expires, and its browser context is disposed (the Rust side checks the log).

Prints one line per check; exits non-zero on the first failure.
"""

from __future__ import annotations

import asyncio
import sys

import mcp.client.session
from mcp import Client
from mcp.shared.exceptions import MCPError

LUMO, PORT = sys.argv[1], sys.argv[2]


def page(who: str) -> str:
    return f"http://127.0.0.1:{PORT}/isolation.html?who={who}"


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def check(ok: bool, what: str, detail: object = "") -> None:
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n     {detail}"), flush=True)
    if not ok:
        sys.exit(1)


async def call(client: Client, name: str, args: dict):
    try:
        return await client.call_tool(name, args)
    except MCPError as e:
        return e


async def ok(client: Client, name: str, args: dict) -> str:
    result = await call(client, name, args)
    check(not isinstance(result, MCPError) and not result.is_error, f"{name} {args}", result)
    return text(result)


async def evaluate(client: Client, expression: str) -> str:
    answer = await ok(client, "devtools_evaluate", {"expression": expression})
    return answer.split("<untrusted")[-1].split("\n")[1].strip() if "<untrusted" in answer else answer


async def open_page(client: Client, who: str) -> None:
    await ok(client, "browser_navigate", {"url": page(who)})
    for _ in range(100):  # the page registers its tool from an inline script
        tools = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
        if f"webmcp_tool_{who}" in tools:
            return
        await asyncio.sleep(0.1)
    check(False, f"{who}'s page registered tool_{who}")


def ref_of(snapshot: str, needle: str) -> str:
    """The ref (`[e12]`) after `needle` on its line."""
    for line in snapshot.splitlines():
        if needle in line and "[e" in line.split(needle, 1)[1]:
            candidate = line.split(needle, 1)[1].split("[e", 1)[1].split("]")[0]
            if candidate.isdigit():
                return "e" + candidate
    check(False, f"a ref for {needle!r}", snapshot)
    return ""


async def sessions() -> None:
    mcp.client.session.LATEST_HANDSHAKE_VERSION = "2025-06-18"
    async with Client(LUMO, mode="legacy") as b:
        async with Client(LUMO, mode="legacy") as a:
            await open_page(a, "alpha")
            await open_page(b, "bravo")

            for me, other, client in (("alpha", "bravo", a), ("bravo", "alpha", b)):
                tabs = await ok(client, "browser_tabs", {"action": "list"})
                check(me in tabs and other not in tabs and "1 tab(s)" in tabs, f"{me} lists its own tab only", tabs)
                snapshot = await ok(client, "page_snapshot", {})
                check(f"Button {me}" in snapshot and other not in snapshot, f"{me}'s snapshot is its own page", snapshot)
                requests = await ok(client, "network_requests", {})
                check(f"request-{me}" in requests and other not in requests, f"{me} sees its own requests only", requests)
                console = await ok(client, "devtools_console", {})
                check(f"console-{me}" in console and other not in console, f"{me} sees its own console only", console)
                tools = [t.name for t in (await client.list_tools(cache_mode="refresh")).tools]
                check(f"webmcp_tool_{me}" in tools and f"webmcp_tool_{other}" not in tools, f"{me} lists its own page tools only", tools)

            # A acts with B's ref: refused, naming nothing of B, and B's button was not clicked.
            ref_b = ref_of(await ok(b, "page_snapshot", {}), "Button bravo")
            ref_a = ref_of(await ok(a, "page_snapshot", {}), "Button alpha")
            refused = await call(a, "page_click", {"ref": ref_b})
            check(not isinstance(refused, MCPError) and refused.is_error, "A's click with B's ref is refused", refused)
            message = text(refused)
            check("bravo" not in message and "tab 1" not in message and "belongs to tab" not in message and "select it" not in message,
                  "the refusal says nothing of B's tab", message)
            check(refused.structured_content["error"]["code"] == "not_found", "the refusal reads as a ref never given out here", refused.structured_content)
            check(await evaluate(b, "String(window.clicks)") == "0", "B's button was not clicked")
            check(await evaluate(a, "String(window.clicks)") == "0", "nor A's")
            await ok(b, "page_click", {"ref": ref_b})
            check(await evaluate(b, "String(window.clicks)") == "1", "B clicks its own button")
            refused = await call(b, "page_click", {"ref": ref_a})
            check(not isinstance(refused, MCPError) and refused.is_error and "alpha" not in text(refused), "B's click with A's ref is refused", refused)
            check(await evaluate(a, "String(window.clicks)") == "0", "A's button was not clicked")

            # Page tools: A cannot call B's, by name or through webmcp_call.
            answer = await call(a, "webmcp_tool_bravo", {})
            check(isinstance(answer, MCPError) and "unknown tool" in str(answer), "A calling B's page tool gets unknown tool", answer)
            answer = await call(a, "webmcp_call", {"name": "tool_bravo", "input": {}})
            check(not isinstance(answer, MCPError) and answer.is_error and "bravo" not in text(answer).split("tool_bravo")[-1],
                  "A's webmcp_call of B's tool fails", answer)
            answer = await call(a, "webmcp_tool_alpha", {})
            check(not isinstance(answer, MCPError) and not answer.is_error and answer.structured_content["who"] == "alpha", "A runs its own page tool", answer)
            listing = await ok(a, "webmcp_list", {})
            check("tool_alpha" in listing and "bravo" not in listing, "webmcp_list shows A's tools only", listing)

            # Tabs: a new tab in A is A's alone; B cannot select or close it by index.
            await ok(a, "browser_tabs", {"action": "new", "url": page("alpha2")})
            ref_a2 = ref_of(await ok(a, "page_snapshot", {}), "Button alpha2")
            tabs = await ok(a, "browser_tabs", {"action": "list"})
            check("2 tab(s)" in tabs, "A has two tabs now", tabs)
            tabs = await ok(b, "browser_tabs", {"action": "list"})
            check("1 tab(s)" in tabs and "alpha" not in tabs, "B still has one", tabs)
            refused = await call(b, "browser_tabs", {"action": "select", "index": 1})
            check(not isinstance(refused, MCPError) and refused.is_error and "alpha" not in text(refused), "B cannot select A's second tab", refused)
            refused = await call(b, "browser_tabs", {"action": "close", "index": 1})
            check(not isinstance(refused, MCPError) and refused.is_error, "B cannot close A's second tab", refused)
            # A ref of A's tab closed since reads to B as never given out, like any other of A's.
            await ok(a, "browser_tabs", {"action": "close", "index": 1})
            refused = await call(b, "page_click", {"ref": ref_a2})
            check(not isinstance(refused, MCPError) and refused.is_error and refused.structured_content["error"]["code"] == "not_found"
                  and "closed" not in text(refused), "B's click with a ref of A's closed tab says nothing of it", refused)
            await ok(a, "browser_tabs", {"action": "select", "index": 0})

            # Cookies and storage: set in A, same origin, not visible in B.
            await evaluate(a, "document.cookie = 'secret_a=1; path=/'; localStorage.setItem('secret_a', '1'); 'set'")
            check("secret_a=1" in await evaluate(a, "document.cookie"), "A's cookie is set")
            await ok(b, "browser_navigate", {"url": page("bravo")})
            check("secret_a" not in await evaluate(b, "document.cookie"), "B does not see A's cookie", await evaluate(b, "document.cookie"))
            check(await evaluate(b, "String(localStorage.getItem('secret_a'))") == "null", "B does not see A's localStorage")
            answer = await call(b, "webmcp_tool_bravo", {})
            await b.list_tools(cache_mode="refresh")
            answer = await call(b, "webmcp_tool_bravo", {})
            check(not isinstance(answer, MCPError) and "secret_a" not in str(answer.structured_content), "B's page reads no cookie of A's", answer)

        # A's session is closed now: B goes on with its own tab.
        await asyncio.sleep(0.5)
        tabs = await ok(b, "browser_tabs", {"action": "list"})
        check("1 tab(s)" in tabs and "bravo" in tabs and "alpha" not in tabs, "B keeps its one tab after A closed", tabs)


async def stateless() -> None:
    async with Client(LUMO) as c:
        check(c.protocol_version == "2026-07-28", "Client(url) negotiates 2026-07-28", c.protocol_version)
        tabs = await ok(c, "browser_tabs", {"action": "list"})
        check("alpha" not in tabs and "bravo" not in tabs, "a stateless request sees no session's tabs", tabs)
        await ok(c, "browser_navigate", {"url": page("nobody")})
        cookie = await evaluate(c, "document.cookie")
        check("secret_a" not in cookie, "nor their cookies", cookie)


async def expire() -> None:
    """lumo runs with --session-idle 4: an idle session expires, and its context with it."""
    # Start the browser first, outside any session: a call that outlasts the idle time
    # would lose its session (rmcp's worker counts messages, not calls in flight).
    async with Client(LUMO) as c:
        await ok(c, "browser_tabs", {"action": "list"})
    mcp.client.session.LATEST_HANDSHAKE_VERSION = "2025-06-18"
    try:
        async with Client(LUMO, mode="legacy") as a:
            await ok(a, "browser_navigate", {"url": page("alpha")})
            print("idle", flush=True)
            await asyncio.sleep(8)
            answer = await call(a, "browser_tabs", {"action": "list"})
            check(isinstance(answer, MCPError), "the idle session expired", answer)
    except Exception as e:  # the SDK may also fail the closing DELETE of the expired session
        print(f"closing: {e!r}", flush=True)


if len(sys.argv) > 3 and sys.argv[3] == "expire":
    asyncio.run(expire())
else:
    asyncio.run(sessions())
    asyncio.run(stateless())
print("all ok")
