"""The servers under test and one adapter per server.

An adapter turns the suite's abstract steps (navigate, look at the page, find
an element's ref, click, type, fill a form, answer a dialog) into that
server's own natural tool calls, and parses refs out of its snapshot text.
Every tool answer goes through ``Adapter.call``, which times it and counts
the bytes a model would receive.

lumo's tool names and arguments are still moving: they live in the LUMO
table below, which is checked against lumo's golden tool list
(``tests/golden/tools.json``, the one list every test suite reads) before a run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from .pages import FormField

CHROMIUM = os.environ.get("BENCH_CHROMIUM", "/usr/lib/chromium/chromium")

# The flags lumo starts Chromium with (the list); every peer gets them too.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

PLAYWRIGHT_MCP_VERSION = "0.0.83"
CHROME_DEVTOOLS_MCP_VERSION = "1.11.0"


# =========================================================================== lumo
# The lumo adapter table. Adjust here when lumo's tools change.
#   tool name → builder of the arguments
LUMO: dict[str, Any] = {
    "args": ["serve"],
    "env": {"LUMO_BROWSER": CHROMIUM},
    # A ref in lumo's snapshot text: `button "Submit" [e12]`, `[Read more][e13]`.
    "ref_re": r"\[(e\d+)\]",
    "navigate": ("browser_navigate", lambda url: {"url": url}),
    "snapshot": ("page_snapshot", lambda ref=None: {"ref": ref} if ref else {}),
    "find": ("page_find", lambda text=None, role=None: {
        k: v for k, v in (("text", text), ("role", role)) if v is not None}),
    "click": ("page_click", lambda ref: {"ref": ref}),
    "type": ("page_type", lambda ref, text, submit=False: {"ref": ref, "text": text, "submit": submit}),
    # fields: [(ref, FormField)]; value strings, checkboxes "true"/"false", selects the option label.
    "fill_form": ("page_fill_form", lambda fields: {
        "fields": [{"ref": ref, "value": "true" if f.kind == "radio" else f.value} for ref, f in fields]}),
    "dialog": ("page_dialog", lambda accept, prompt_text=None: {
        "accept": accept, **({"prompt_text": prompt_text} if prompt_text is not None else {})}),
    "evaluate": ("devtools_evaluate", lambda expression: {"expression": expression}),
    # How the article task reads one section: page_find the sections (<section
    # aria-labelledby> has role "region"), then page_snapshot the n-th one's ref.
    "section_find": {"role": "region"},
}
# =========================================================================== end lumo

# lumo's tool list as its tests pin it; bless with the command below when tools change.
GOLDEN_TOOLS = Path(__file__).resolve().parents[2] / "tests" / "golden" / "tools.json"
GOLDEN_BLESS = "LUMO_BLESS=1 cargo test -p lumo-cli --test golden"


def lumo_table_problems(golden: Path = GOLDEN_TOOLS) -> list[str]:
    """Tools the LUMO table calls that the golden tool list does not hold (empty when all are there)."""
    listed = {t["name"] for t in json.loads(golden.read_text(encoding="utf-8"))["tools"]}
    used = sorted({v[0] for v in LUMO.values() if isinstance(v, tuple)})
    return [name for name in used if name not in listed]


@dataclass
class Answer:
    """One tool answer as the model sees it."""

    tool: str
    ms: float
    text: str
    text_bytes: int
    image_bytes: int
    other_bytes: int
    rpc_bytes: int
    is_error: bool
    phase: str = ""

    @property
    def model_bytes(self) -> int:
        """Everything a model receives: text + image data (+ any other content)."""
        return self.text_bytes + self.image_bytes + self.other_bytes

    def summary(self) -> dict[str, Any]:
        return {"tool": self.tool, "phase": self.phase, "ms": round(self.ms, 2),
                "model_bytes": self.model_bytes, "rpc_bytes": self.rpc_bytes, "error": self.is_error}


def answer_from_result(tool: str, ms: float, result: Any) -> Answer:
    texts, image_bytes, other_bytes = [], 0, 0
    for item in result.content:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(item.text)
        elif kind in ("image", "audio"):
            image_bytes += len(item.data.encode("utf-8"))
        else:
            other_bytes += len(item.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8"))
    text = "\n".join(texts)
    return Answer(
        tool=tool, ms=ms, text=text,
        text_bytes=sum(len(t.encode("utf-8")) for t in texts),
        image_bytes=image_bytes, other_bytes=other_bytes,
        rpc_bytes=len(result.model_dump_json(by_alias=True, exclude_none=True).encode("utf-8")),
        is_error=bool(result.is_error),
    )


class ToolError(RuntimeError):
    pass


class Adapter:
    """Base adapter: records every call; subclasses map steps to tools."""

    name = "?"
    ref_re = re.compile(r"$^")
    # Roles whose lines never carry the control we look for (labels, text).
    text_roles = ("StaticText", "LabelText", "text", "generic", "paragraph", "cell", "gridcell",
                  "InlineTextBox", "label", "legend", "group")

    def __init__(self, session: Any, timeout: float = 180.0) -> None:
        self.session = session
        self.timeout = timeout
        self.ledger: list[Answer] | None = None
        self.phase = ""

    # ------------------------------------------------------------------ plumbing
    async def call(self, tool: str, args: dict[str, Any]) -> Answer:
        t0 = time.perf_counter()
        result = await self.session.call_tool(tool, args, read_timeout_seconds=self.timeout)
        ans = answer_from_result(tool, (time.perf_counter() - t0) * 1000, result)
        ans.phase = self.phase
        if self.ledger is not None:
            self.ledger.append(ans)
        return ans

    async def must(self, tool: str, args: dict[str, Any]) -> Answer:
        ans = await self.call(tool, args)
        if ans.is_error:
            raise ToolError(f"{tool} failed: {ans.text[:300]}")
        return ans

    async def setup(self) -> None:
        """Anything the server needs before the first page (not part of a task)."""

    # ------------------------------------------------------------------ ref parsing
    def refs(self, text: str) -> list[str]:
        return self.ref_re.findall(text)

    def _line_ref(self, line: str) -> str | None:
        m = self.ref_re.search(line)
        return m.group(1) if m else None

    @staticmethod
    def _has_role(line: str, role: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(role)}(?![\w-])", line) is not None

    def ref_for(self, text: str, name: str, roles: tuple[str, ...] = ()) -> str | None:
        """The ref on the first line that names ``name`` (quoted) with one of ``roles``.

        Without a role match, falls back to a line that names it and is not a text/label line.
        """
        quoted = f'"{name}"'
        fallback = None
        # A table row may sit on one line with its cells split by "|" (lumo): each cell is a candidate.
        for line in (seg for line_ in text.splitlines() for seg in line_.split("|")):
            if quoted not in line:
                continue
            ref = self._line_ref(line)
            if ref is None:
                continue
            head = self.ref_re.sub(" ", line.split(quoted)[0])
            if any(self._has_role(head, r) for r in roles):
                return ref
            words = re.findall(r"[A-Za-z][\w-]*", head)
            if fallback is None and words and not any(w in self.text_roles for w in words):
                fallback = ref
        return fallback

    def ref_after(self, text: str, anchor: str, roles: tuple[str, ...], name: str | None = None,
                  within: int = 12) -> str | None:
        """The first ref of a ``roles`` line (optionally named) within ``within`` lines after ``anchor``."""
        lines = text.splitlines()
        anchor_re = re.compile(re.escape(anchor) + r"(?!\d)")
        for i, line in enumerate(lines):
            # The anchor must be an element line (with a ref), not a heading such as "Found 1 match for …".
            if not anchor_re.search(line) or not self.ref_re.search(line):
                continue
            # A table row may sit on one line with its cells split by " | " (lumo): each cell is a candidate.
            for cand in (seg for line_ in lines[i:i + within] for seg in line_.split(" | ")):
                head = cand.split('"')[0]
                if any(self._has_role(head, r) for r in roles) and (name is None or f'"{name}"' in cand):
                    ref = self._line_ref(cand)
                    if ref:
                        return ref
        return None

    # ------------------------------------------------------------------ steps (override)
    async def navigate(self, url: str) -> Answer: raise NotImplementedError
    async def snapshot(self, ref: str | None = None) -> Answer: raise NotImplementedError
    async def find(self, text: str | None = None, role: str | None = None) -> Answer | None:
        """A targeted search, or None when the server has no such tool (use snapshot)."""
        return None
    async def click(self, ref: str, label: str = "") -> Answer: raise NotImplementedError
    async def type(self, ref: str, text: str, submit: bool = False, label: str = "") -> Answer:
        raise NotImplementedError
    async def fill_form(self, fields: list[tuple[str, FormField]]) -> list[Answer]: raise NotImplementedError
    async def dialog(self, accept: bool) -> Answer: raise NotImplementedError
    async def evaluate(self, expression: str) -> Answer: raise NotImplementedError

    async def read_section(self, url: str, nth: int) -> None:
        """Read the n-th section of an article (default: one full snapshot)."""
        await self.snapshot()


# --------------------------------------------------------------------------- Playwright


class PlaywrightAdapter(Adapter):
    """@playwright/mcp: browser_navigate → browser_snapshot → browser_click(target=ref) …

    Snapshot lines: ``- button "Go" [ref=e10]``; refs inside iframes look like ``f1e3``.
    Since 0.0.8x, answers to actions (navigate/click/…) carry only a *link* to
    a snapshot file written under the workspace; browser_snapshot inlines it.
    """

    name = "playwright"
    ref_re = re.compile(r"\[ref=([a-z0-9]+)\]")

    async def navigate(self, url: str) -> Answer:
        return await self.must("browser_navigate", {"url": url})

    async def snapshot(self, ref: str | None = None) -> Answer:
        return await self.must("browser_snapshot", {"target": ref} if ref else {})

    async def find(self, text: str | None = None, role: str | None = None) -> Answer | None:
        if text is None:
            return None
        return await self.must("browser_find", {"text": text})

    async def click(self, ref: str, label: str = "") -> Answer:
        return await self.must("browser_click", {"element": label or ref, "target": ref})

    async def type(self, ref: str, text: str, submit: bool = False, label: str = "") -> Answer:
        args: dict[str, Any] = {"element": label or ref, "target": ref, "text": text}
        if submit:
            args["submit"] = True
        return await self.must("browser_type", args)

    async def fill_form(self, fields: list[tuple[str, FormField]]) -> list[Answer]:
        items = [{"target": ref, "name": f.label, "type": f.fill_type,
                  "value": "true" if f.kind == "radio" else f.value} for ref, f in fields]
        return [await self.must("browser_fill_form", {"fields": items})]

    async def dialog(self, accept: bool) -> Answer:
        return await self.must("browser_handle_dialog", {"accept": accept})

    async def evaluate(self, expression: str) -> Answer:
        return await self.must("browser_evaluate", {"function": f"() => ({expression})"})


# --------------------------------------------------------------------------- chrome-devtools-mcp


class DevtoolsAdapter(Adapter):
    """chrome-devtools-mcp: navigate_page → take_snapshot → click(uid) …

    Snapshot lines: ``uid=1_5 button "Go"``. Page-scoped tools require a
    ``pageId`` by default (``--pageIdRouting``), so setup calls list_pages once.
    """

    name = "chrome-devtools"
    ref_re = re.compile(r"uid=(\S+)")

    def __init__(self, session: Any, timeout: float = 180.0) -> None:
        super().__init__(session, timeout)
        self.page_id = 1

    async def setup(self) -> None:
        ans = await self.must("list_pages", {})
        m = re.search(r"^(\d+):.*\[selected\]", ans.text, re.M)
        if m:
            self.page_id = int(m.group(1))

    def _p(self, **kw: Any) -> dict[str, Any]:
        return {"pageId": self.page_id, **kw}

    async def navigate(self, url: str) -> Answer:
        return await self.must("navigate_page", self._p(type="url", url=url))

    async def snapshot(self, ref: str | None = None) -> Answer:
        return await self.must("take_snapshot", self._p())  # no subtree option

    async def click(self, ref: str, label: str = "") -> Answer:
        return await self.must("click", self._p(uid=ref))

    async def type(self, ref: str, text: str, submit: bool = False, label: str = "") -> Answer:
        ans = await self.must("fill", self._p(uid=ref, value=text))
        if submit:
            await self.must("press_key", self._p(key="Enter"))
        return ans

    async def fill_form(self, fields: list[tuple[str, FormField]]) -> list[Answer]:
        elements = [{"uid": ref, "value": "true" if f.kind == "radio" else f.value} for ref, f in fields]
        return [await self.must("fill_form", self._p(elements=elements))]

    async def dialog(self, accept: bool) -> Answer:
        return await self.must("handle_dialog", self._p(action="accept" if accept else "dismiss"))

    async def evaluate(self, expression: str) -> Answer:
        return await self.must("evaluate_script", self._p(function=f"() => ({expression})"))


# --------------------------------------------------------------------------- lumo


class LumoAdapter(Adapter):
    """lumo, driven through the LUMO table above."""

    name = "lumo"
    ref_re = re.compile(LUMO["ref_re"])

    # A block's controls share its line (``form "Sign in" [e2]: textbox "User" [e3] button "Go" [e4]``);
    # a table row shaped like the row above drops role words (``Row 3|Details 3 [e9]|Qty 3 [e10]``).
    _NAMED = re.compile(r'([a-z]+) "((?:[^"\\]|\\.)*)"[^"]*$')
    _LINK = re.compile(r"\[([^\[\]]*)\]$")

    def _controls(self, lines: list[str], i: int) -> list[tuple[str | None, str, str]]:
        """(role, name, ref) of each control on line ``i``; a bare row takes the roles of the row above."""
        parts = self.ref_re.split(lines[i])
        out: list[tuple[str | None, str, str]] = []
        for before, ref in zip(parts[0::2], parts[1::2]):
            seg = before.split("|")[-1]
            if m := self._NAMED.search(seg):
                out.append((m.group(1), m.group(2), ref))
            elif m := self._LINK.search(seg):
                out.append(("link", m.group(1), ref))
            else:
                out.append((None, seg.strip().lstrip("-: ").strip(), ref))
        if out and any(r is None for r, _, _ in out) and "|" in lines[i] and i > 0:
            above = self._controls(lines, i - 1)
            if len(above) == len(out) and all(r for r, _, _ in above):
                out = [(r, n, ref) for (r, _, _), (_, n, ref) in zip(above, out)]
        return out

    def ref_for(self, text: str, name: str, roles: tuple[str, ...] = ()) -> str | None:
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if name not in line:
                continue
            for role, n, ref in self._controls(lines, i):
                if n == name and (not roles or role in roles):
                    return ref
        return None

    def ref_after(self, text: str, anchor: str, roles: tuple[str, ...], name: str | None = None,
                  within: int = 12) -> str | None:
        lines = text.splitlines()
        anchor_re = re.compile(re.escape(anchor) + r"(?!\d)")
        for i, line in enumerate(lines):
            if not anchor_re.search(line) or not self.ref_re.search(line):
                continue
            for j in range(i, min(i + within, len(lines))):
                for role, n, ref in self._controls(lines, j):
                    if role in roles and (name is None or n == name):
                        return ref
        return None

    async def _t(self, key: str, *args: Any, **kw: Any) -> Answer:
        tool, build = LUMO[key]
        return await self.must(tool, build(*args, **kw))

    async def navigate(self, url: str) -> Answer:
        return await self._t("navigate", url)

    async def snapshot(self, ref: str | None = None) -> Answer:
        return await self._t("snapshot", ref)

    async def find(self, text: str | None = None, role: str | None = None) -> Answer | None:
        return await self._t("find", text=text, role=role)

    async def click(self, ref: str, label: str = "") -> Answer:
        return await self._t("click", ref)

    async def type(self, ref: str, text: str, submit: bool = False, label: str = "") -> Answer:
        return await self._t("type", ref, text, submit)

    async def fill_form(self, fields: list[tuple[str, FormField]]) -> list[Answer]:
        return [await self._t("fill_form", fields)]

    async def dialog(self, accept: bool) -> Answer:
        return await self._t("dialog", accept)

    async def evaluate(self, expression: str) -> Answer:
        return await self._t("evaluate", expression)

    async def read_section(self, url: str, nth: int) -> None:
        found = await self.find(**LUMO["section_find"])
        role = LUMO["section_find"].get("role", "region")
        sections = [line for line in found.text.splitlines()
                    if self.ref_re.search(line) and self._has_role(line.split('"')[0], role)]
        if len(sections) < nth:
            raise ToolError(f"page_find returned {len(sections)} {role} lines, wanted #{nth}")
        await self.snapshot(self._line_ref(sections[nth - 1]))


# --------------------------------------------------------------------------- specs


@dataclass
class ServerSpec:
    """How to start one server."""

    name: str
    command: str
    args: list[str]
    adapter: Callable[..., Adapter]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    version: str = ""
    available: bool = True
    why_unavailable: str = ""

    def describe(self) -> dict[str, Any]:
        return {"command": [self.command, *self.args], "env": self.env, "version": self.version,
                "available": self.available, "why_unavailable": self.why_unavailable}


def _node() -> str:
    node = shutil.which("node")
    if not node:
        raise RuntimeError("node not found on PATH")
    return node


def _pkg_version(pkg_dir: Path) -> str:
    try:
        return json.loads((pkg_dir / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def playwright_spec(cache: Path, workdir: Path, extra_flags: tuple[str, ...] = ()) -> ServerSpec:
    pkg = cache / "npm" / "node_modules" / "@playwright" / "mcp"
    config = workdir / "playwright-config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({
        "browser": {
            "browserName": "chromium",
            "isolated": True,
            "launchOptions": {
                "executablePath": CHROMIUM,
                "headless": True,
                "chromiumSandbox": False,
                "args": [*CHROMIUM_FLAGS, *extra_flags],
            },
        },
        "outputDir": str(workdir / "playwright-output"),
    }, indent=2))
    return ServerSpec(
        name="playwright",
        command=_node(),
        args=[str(pkg / "cli.js"), "--config", str(config), "--headless", "--isolated",
              "--no-sandbox", "--executable-path", CHROMIUM],
        adapter=PlaywrightAdapter,
        cwd=workdir,
        version=_pkg_version(pkg),
    )


def devtools_spec(cache: Path, workdir: Path, extra_flags: tuple[str, ...] = ()) -> ServerSpec:
    workdir.mkdir(parents=True, exist_ok=True)
    pkg = cache / "npm" / "node_modules" / "chrome-devtools-mcp"
    return ServerSpec(
        name="chrome-devtools",
        command=_node(),
        args=[str(pkg / "build" / "src" / "bin" / "chrome-devtools-mcp.js"),
              "--headless", "--isolated", "--executablePath", CHROMIUM,
              "--no-usage-statistics", "--no-performance-crux",
              *[f"--chromeArg={flag}" for flag in (*CHROMIUM_FLAGS, *extra_flags)]],
        adapter=DevtoolsAdapter,
        env={"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"},
        cwd=workdir,
        version=_pkg_version(pkg),
    )


def lumo_spec(repo: Path, workdir: Path) -> ServerSpec:
    workdir.mkdir(parents=True, exist_ok=True)
    binary = os.path.abspath(os.environ.get("LUMO_BIN") or str(repo / "target" / "release" / "lumo"))
    args = os.environ["LUMO_ARGS"].split() if os.environ.get("LUMO_ARGS") else list(LUMO["args"])
    missing = lumo_table_problems()
    if missing:
        raise RuntimeError(f"the LUMO table in {__file__} calls tools that {GOLDEN_TOOLS} does not list: "
                           f"{missing}; fix the table, or bless the golden file ({GOLDEN_BLESS})")
    env = dict(LUMO["env"])
    # lumo's audit log starts empty each run, as on a fresh install: the user's own log
    # (~/.local/share/lumo) is neither written by the bench nor read at each start-up.
    data = workdir / "lumo-data"
    shutil.rmtree(data, ignore_errors=True)
    env.setdefault("LUMO_DATA_DIR", os.environ.get("LUMO_DATA_DIR") or str(data))
    spec = ServerSpec(name="lumo", command=binary, args=args, adapter=LumoAdapter, env=env, cwd=workdir)
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        spec.available = False
        spec.why_unavailable = f"no lumo binary at {binary} (build it: cargo build --release, or set LUMO_BIN)"
    return spec


def all_specs(repo: Path, cache: Path, workdir: Path, extra_flags: tuple[str, ...] = ()) -> list[ServerSpec]:
    return [
        lumo_spec(repo, workdir / "lumo"),
        playwright_spec(cache, workdir / "playwright", extra_flags),
        devtools_spec(cache, workdir / "chrome-devtools", extra_flags),
    ]
