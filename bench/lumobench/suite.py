"""What one benchmark session does with one server: startup, page snapshots,
click/type round trips, the agent-economy tasks, and memory sampling."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Awaitable, Callable

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from . import metrics, pages
from .pages import FORM_FIELDS, FormField, PageServer
from .servers import CHROMIUM, CHROMIUM_FLAGS, Adapter, Answer, ServerSpec, ToolError

# Page used for the click and type round trips.
ACTION_PAGE = "size-1000.html"


# =========================================================================== tasks


async def _observe(a: Adapter, last: list[Answer], markers: tuple[str, ...]) -> None:
    """After the final action: look at the page unless the answer already shows the outcome."""
    seen = "\n".join(x.text for x in last)
    if not all(m in seen for m in markers):
        a.phase = "observe"
        await a.snapshot()


def _need(ref: str | None, what: str) -> str:
    if not ref:
        raise ToolError(f"no ref found for {what}")
    return ref


async def task_login(a: Adapter, ps: PageServer) -> None:
    await a.navigate(ps.url("login.html"))
    snap = (await a.snapshot()).text
    user = _need(a.ref_for(snap, "Username", ("textbox",)), "Username")
    pw = _need(a.ref_for(snap, "Password", ("textbox",)), "Password")
    btn = _need(a.ref_for(snap, "Log in", ("button",)), "Log in")
    a.phase = "act"
    await a.fill_form([(user, FormField("user", "Username", "text", pages.LOGIN_USER)),
                       (pw, FormField("pass", "Password", "password", pages.LOGIN_PASSWORD))])
    last = await a.click(btn, "Log in button")
    await _observe(a, [last], (f"Welcome, {pages.LOGIN_USER}!",))


async def task_form(a: Adapter, ps: PageServer) -> None:
    await a.navigate(ps.url("form.html"))
    snap = (await a.snapshot()).text
    fields = []
    for f in FORM_FIELDS:
        fields.append((_need(a.ref_for(snap, f.label), f.label), f))
    submit = _need(a.ref_for(snap, "Submit form", ("button",)), "Submit form")
    a.phase = "act"
    await a.fill_form(fields)
    last = await a.click(submit, "Submit form button")
    await _observe(a, [last], ("Form submitted: OK",))


async def task_table(a: Adapter, ps: PageServer) -> None:
    row = f"Row {pages.TABLE_TARGET_ROW}"
    await a.navigate(ps.url("table-5000.html"))
    found = await a.find(text=row)
    if found is None or not a.ref_after(found.text, row, ("button",), "Select"):
        found = await a.snapshot()
    ref = _need(a.ref_after(found.text, row, ("button",), "Select"), f"{row} Select button")
    a.phase = "act"
    last = await a.click(ref, f"Select button of {row}")
    await _observe(a, [last], (f"Selected row {pages.TABLE_TARGET_ROW}",))


async def task_article(a: Adapter, ps: PageServer) -> None:
    url = ps.url("article.html")
    await a.navigate(url)
    await a.read_section(url, 3)


async def task_dialog(a: Adapter, ps: PageServer) -> None:
    await a.navigate(ps.url("dialog.html"))
    snap = (await a.snapshot()).text
    btn = _need(a.ref_for(snap, "Delete account", ("button",)), "Delete account")
    a.phase = "act"
    first = await a.click(btn, "Delete account button")
    last = await a.dialog(True)
    await _observe(a, [first, last], ("Account deleted",))


async def task_frames(a: Adapter, ps: PageServer) -> None:
    await a.navigate(ps.url("frames.html"))
    snap = (await a.snapshot()).text
    shadow = _need(a.ref_for(snap, "Shadow button", ("button",)), "Shadow button")
    frame = _need(a.ref_for(snap, "Frame button", ("button",)), "Frame button")
    a.phase = "act"
    one = await a.click(shadow, "Shadow button")
    two = await a.click(frame, "Frame button")
    await _observe(a, [one, two], ("Shadow clicked", "Frame clicked"))


@dataclass(frozen=True)
class Task:
    name: str
    run: Callable[[Adapter, PageServer], Awaitable[None]]
    # JS expression (string result) the harness evaluates afterwards, not counted; None: use `seen`.
    check: str | None
    success: str  # must appear in the check result (or, without a check, in what the model received)
    markers: tuple[str, ...] = ()  # what "seen" looks for in the model's text (default: success)


TASKS: tuple[Task, ...] = (
    Task("login", task_login, "document.body.innerText", f"Welcome, {pages.LOGIN_USER}!"),
    Task("form20", task_form, "document.getElementById('result').textContent", "Form submitted: OK"),
    Task("table_row", task_table, "document.getElementById('status').textContent",
         f"Selected row {pages.TABLE_TARGET_ROW}"),
    Task("article_s3", task_article, None, pages.ARTICLE_MARKER),
    Task("dialog", task_dialog, "document.getElementById('status').textContent", "Account deleted"),
    Task("frames", task_frames,
         "document.getElementById('shadow-status').textContent + ' / ' + "
         "document.getElementById('frame').contentDocument.getElementById('fstatus').textContent",
         "Shadow clicked / Frame clicked", ("Shadow clicked", "Frame clicked")),
)


async def run_task(a: Adapter, ps: PageServer, task: Task) -> dict[str, Any]:
    a.ledger, a.phase = [], "locate"
    t0 = time.perf_counter()
    error = None
    try:
        await task.run(a, ps)
    except Exception as exc:  # noqa: BLE001 - a failed task is a result, not a crash
        error = f"{type(exc).__name__}: {exc}"[:400]
    ms = (time.perf_counter() - t0) * 1000
    ledger, a.ledger, a.phase = a.ledger, None, ""
    text = "\n".join(x.text for x in ledger)
    seen = all(m in text for m in (task.markers or (task.success,)))
    ok = seen
    check_text = None
    if task.check is not None:
        try:
            ans = await a.evaluate(task.check)
            check_text = ans.text[-300:]
            ok = task.success in ans.text
        except Exception as exc:  # noqa: BLE001
            ok, check_text = False, f"check failed: {exc}"[:300]
    return {
        "ok": ok,
        "seen": seen,
        "calls": len(ledger),
        "model_bytes": sum(x.model_bytes for x in ledger),
        "rpc_bytes": sum(x.rpc_bytes for x in ledger),
        "bytes_by_phase": {ph: sum(x.model_bytes for x in ledger if x.phase == ph)
                           for ph in dict.fromkeys(x.phase for x in ledger)},
        "ms": round(ms, 1),
        "error": error,
        "check": check_text,
        "steps": [x.summary() for x in ledger],
    }


# =========================================================================== session


@dataclass
class SessionOptions:
    round: int
    size_pages: tuple[str, ...]
    extra_pages: tuple[str, ...]
    tasks: tuple[Task, ...]
    workdir: Path
    session_timeout: float = 600.0


def _new_child(before: set[int]) -> int | None:
    kids = [p for p in metrics.children(os.getpid()) if p not in before]
    return max(kids) if kids else None


async def run_session(spec: ServerSpec, ps: PageServer, opt: SessionOptions) -> dict[str, Any]:
    """One fresh server process: everything measured once, memory polled throughout."""
    rec: dict[str, Any] = {"server": spec.name, "round": opt.round, "errors": [], "pages": {}, "tasks": {}}
    params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env or None,
                                   cwd=str(spec.cwd) if spec.cwd else None)
    opt.workdir.mkdir(parents=True, exist_ok=True)
    if spec.cwd and spec.cwd.is_dir():  # output files of the previous session (snapshots, logs)
        for sub in spec.cwd.iterdir():
            if sub.is_dir():
                shutil.rmtree(sub, ignore_errors=True)
    sampler: metrics.MemorySampler | None = None
    with open(opt.workdir / f"{spec.name}.stderr.log", "a") as errlog:
        errlog.write(f"\n==== round {opt.round} {time.strftime('%H:%M:%S')}\n")
        errlog.flush()
        before = set(metrics.children(os.getpid()))
        t0 = time.perf_counter()
        try:
            with anyio.fail_after(opt.session_timeout):
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        init = await session.initialize()
                        listed = await session.list_tools()
                        rec["cold_start_ms"] = round((time.perf_counter() - t0) * 1000, 1)
                        tools_json = "[" + ",".join(
                            t.model_dump_json(by_alias=True, exclude_none=True) for t in listed.tools) + "]"
                        rec["tools_list_bytes"] = len(tools_json.encode("utf-8"))
                        rec["tools_count"] = len(listed.tools)
                        rec["tool_names"] = [t.name for t in listed.tools]
                        rec["server_info"] = {"name": init.server_info.name, "version": init.server_info.version,
                                              "protocol": init.protocol_version}
                        pid = _new_child(before)
                        rec["pid"] = pid
                        if pid:
                            sampler = metrics.MemorySampler(pid)
                            rec["memory"] = {"idle": sampler.sample().as_mb()}  # before any browser
                            sampler.start()
                        await _body(spec, session, ps, opt, rec, pid)
                        if sampler:
                            rec.setdefault("memory", {})["end"] = sampler.sample().as_mb()
        except Exception as exc:  # noqa: BLE001 - record and carry on with the next server
            rec["errors"].append(f"session: {type(exc).__name__}: {exc}"[:400])
        finally:
            if sampler:
                sampler.stop()
                rec.setdefault("memory", {})["peak"] = sampler.peak.as_mb()
                await anyio.sleep(0.5)
                leftovers = metrics.kill_leftovers(sampler.seen)
                if leftovers:
                    rec["killed_leftover_pids"] = leftovers
    return rec


async def _body(spec: ServerSpec, session: ClientSession, ps: PageServer, opt: SessionOptions,
                rec: dict[str, Any], pid: int | None) -> None:
    a = spec.adapter(session)

    # First navigate: includes launching the browser (and any per-session setup call).
    t = time.perf_counter()
    try:
        await a.setup()
        await a.navigate(ps.url("login.html"))
        rec["first_navigate_ms"] = round((time.perf_counter() - t) * 1000, 1)
    except Exception as exc:  # noqa: BLE001
        rec["errors"].append(f"first navigate: {exc}"[:400])
        return
    if pid:
        rec["browser_check"] = metrics.browser_check(metrics.find_browser_main(pid), CHROMIUM, CHROMIUM_FLAGS)

    # Snapshots per page.
    for name in (*opt.size_pages, *opt.extra_pages):
        try:
            nav = await a.navigate(ps.url(name))
            snap = await a.snapshot()
            page = {
                "navigate_ms": round(nav.ms, 1),
                "snapshot_ms": round(snap.ms, 1),
                "see_ms": round(nav.ms + snap.ms, 1),
                "navigate_model_bytes": nav.model_bytes,
                "snapshot_text_bytes": snap.text_bytes,
                "snapshot_model_bytes": snap.model_bytes,
                "snapshot_rpc_bytes": snap.rpc_bytes,
                "refs": len(a.refs(snap.text)),
            }
            if name == "frames.html":
                page["sees_iframe"] = pages.FRAME_MARKER in snap.text
                page["sees_shadow"] = pages.SHADOW_MARKER in snap.text
            rec["pages"][name] = page
        except Exception as exc:  # noqa: BLE001
            rec["errors"].append(f"page {name}: {exc}"[:400])

    # Click and type round trips.
    try:
        await a.navigate(ps.url(ACTION_PAGE))
        snap = (await a.snapshot()).text
        row = f"Row {pages.MICRO_ROW}"
        btn = _need(a.ref_after(snap, row, ("button",), "Select"), f"{row} Select")
        box = _need(a.ref_for(snap, f"Qty {pages.MICRO_ROW}", ("textbox",)), f"Qty {pages.MICRO_ROW}")
        click = await a.click(btn, f"Select button of {row}")
        rec["click"] = {"ms": round(click.ms, 1), "model_bytes": click.model_bytes, "rpc_bytes": click.rpc_bytes}
        typed = await a.type(box, "42", label=f"Qty {pages.MICRO_ROW} input")
        rec["type"] = {"ms": round(typed.ms, 1), "model_bytes": typed.model_bytes, "rpc_bytes": typed.rpc_bytes}
        check = await a.evaluate(
            f"document.getElementById('status').textContent + ' / ' + "
            f"document.querySelector('input[aria-label=\"Qty {pages.MICRO_ROW}\"]').value")
        rec["click"]["ok"] = f"Selected row {pages.MICRO_ROW}" in check.text
        rec["type"]["ok"] = "/ 42" in check.text
    except Exception as exc:  # noqa: BLE001
        rec["errors"].append(f"click/type: {exc}"[:400])

    # Agent-economy tasks.
    for task in opt.tasks:
        rec["tasks"][task.name] = await run_task(a, ps, task)
    done = rec["tasks"].values()
    if done:
        rec["tasks_total"] = {
            "model_bytes": sum(t["model_bytes"] for t in done),
            "calls": sum(t["calls"] for t in done),
            "ok": sum(1 for t in done if t["ok"]),
        }
