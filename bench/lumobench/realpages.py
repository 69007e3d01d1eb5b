"""Real pages nobody here wrote: how much of each article a snapshot keeps.

``bench/run --real-pages`` measures every server's snapshot on Mozilla
Readability's test pages. They ship inside the ``readabilityrs`` crate on
crates.io (``tests/test-pages/<case>/{source.html, expected.html}``); the
crate is fetched with ``cargo fetch`` into a throwaway manifest under
``bench/cache`` at run time and never committed.

Each page is served from loopback with a Content-Security-Policy (as a
``<meta>`` first in ``<head>`` and as a response header) that keeps every
request on loopback. Per page and server:

* word recall: the share of the expected article's words (expected.html's
  text, lowercased ``\\w+`` tokens, as a multiset) present in the snapshot
  answer's text;
* bytes: the text bytes of the snapshot answer, as a model receives them.

Peers take long on a busy machine, so each server's figures are also saved
(``bench/cache/real-pages/results/<server>.json``); ``--reuse`` fills in the
servers not measured in this run from there, and the report says so.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .servers import ServerSpec

READABILITYRS_VERSION = "0.1.4"
CSP = "default-src 'self' 'unsafe-inline' data:"
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'.encode()
PAGE_TIMEOUT_S = 120.0
# lumo's truncation marker names the line where the rest starts.
CONTINUE_RE = re.compile(r"page_snapshot with offset=(\d+)")
MAX_CONTINUATIONS = 40


# --------------------------------------------------------------------------- the pages


def fetch_test_pages(cache: Path) -> Path:
    """``cargo fetch`` readabilityrs into the registry cache; returns its tests/test-pages folder."""
    scratch = cache / "readabilityrs-fetch"
    (scratch / "src").mkdir(parents=True, exist_ok=True)
    # [workspace]: this manifest is its own workspace, not a member of lumo's.
    (scratch / "Cargo.toml").write_text(
        '[package]\nname = "lumo-bench-fetch"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f'[dependencies]\nreadabilityrs = "={READABILITYRS_VERSION}"\n\n[workspace]\n')
    (scratch / "src" / "lib.rs").write_text("")
    manifest = str(scratch / "Cargo.toml")
    subprocess.run(["cargo", "fetch", "--quiet", "--manifest-path", manifest], check=True)
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--offline", "--manifest-path", manifest],
        check=True, capture_output=True, text=True).stdout)
    for pkg in meta["packages"]:
        if pkg["name"] == "readabilityrs":
            pages = Path(pkg["manifest_path"]).parent / "tests" / "test-pages"
            if not pages.is_dir():
                raise SystemExit(f"readabilityrs {READABILITYRS_VERSION} has no {pages}")
            return pages
    raise SystemExit("cargo metadata did not list readabilityrs")


def with_csp(source: bytes) -> bytes:
    """The page with the CSP meta tag first in <head> (a <head> is made when missing)."""
    m = re.search(rb"<head(\s[^>]*)?>", source, re.I)
    if m:
        return source[:m.end()] + CSP_META + source[m.end():]
    m = re.search(rb"<html(\s[^>]*)?>", source, re.I)
    at = m.end() if m else 0
    return source[:at] + b"<head>" + CSP_META + b"</head>" + source[at:]


class _TextOf(html.parser.HTMLParser):
    """The text of an HTML document, less scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "template", "noscript"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template", "noscript") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def words(text: str) -> Counter[str]:
    return Counter(re.findall(r"\w+", text.lower()))


def html_words(doc: str) -> Counter[str]:
    p = _TextOf()
    p.feed(doc)
    p.close()
    return words(" ".join(p.parts))


def recall(expected: Counter[str], got: Counter[str]) -> float:
    total = sum(expected.values())
    if not total:
        return 1.0
    return sum(min(n, got[w]) for w, n in expected.items()) / total


def prepare(src: Path, out: Path, min_bytes: int, only: list[str] | None) -> list[dict[str, Any]]:
    """Copies the chosen cases (source ≥ min_bytes) to out/<case>/index.html with the CSP."""
    cases = []
    for d in sorted(p for p in src.iterdir() if p.is_dir()):
        source, expected = d / "source.html", d / "expected.html"
        if not source.is_file() or not expected.is_file():
            continue
        if only and d.name not in only:
            continue
        size = source.stat().st_size
        if size < min_bytes:
            continue
        (out / d.name).mkdir(parents=True, exist_ok=True)
        (out / d.name / "index.html").write_bytes(with_csp(source.read_bytes()))
        exp = html_words(expected.read_text(encoding="utf-8", errors="replace"))
        cases.append({"case": d.name, "source_bytes": size, "expected": exp})
    return cases


class _CspHandler(http.server.SimpleHTTPRequestHandler):
    # The stored pages are UTF-8 (Readability's own test harness reads them so), though some still
    # declare their site's old charset (qq: gb2312); without this the browser decodes them as that.
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".html": "text/html; charset=utf-8"}

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class CspServer:
    """Serves ``directory`` on 127.0.0.1 with the CSP header on every answer."""

    def __init__(self, directory: Path) -> None:
        self._httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_CspHandler, directory=str(directory)))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="real-pages", daemon=True)

    def url(self, case: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/{case}/index.html"

    def __enter__(self) -> CspServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


# --------------------------------------------------------------------------- measuring


async def _session(spec: ServerSpec, todo: list[dict[str, Any]], srv: CspServer, out: dict[str, Any],
                   errlog: Any) -> None:
    """One server process; measures pages from ``todo`` (popping them) until done or it breaks."""
    params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env or None,
                                   cwd=str(spec.cwd) if spec.cwd else None)
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            a = spec.adapter(session, timeout=PAGE_TIMEOUT_S)
            await a.setup()
            while todo:
                case = todo.pop(0)
                name = case["case"]
                t0 = time.perf_counter()
                try:
                    with anyio.fail_after(PAGE_TIMEOUT_S * 2):
                        await a.navigate(srv.url(name))
                        ans = await a.snapshot()
                except Exception as exc:  # noqa: BLE001 - record, then restart the server
                    out[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                    print(f"[real-pages] {spec.name} {name}: {out[name]['error']}", file=sys.stderr, flush=True)
                    raise
                out[name] = {"recall": round(recall(case["expected"], words(ans.text)), 4),
                             "bytes": ans.text_bytes, "ms": round(ans.ms, 1),
                             "total_ms": round((time.perf_counter() - t0) * 1000, 1)}
                if spec.name == "lumo":
                    # A snapshot cut by the budget says where the rest starts: read on, as an agent would.
                    text, calls, total = ans.text, 1, ans.text_bytes
                    while (m := CONTINUE_RE.search(ans.text)) and calls < MAX_CONTINUATIONS:
                        ans = await a.call("page_snapshot", {"offset": int(m.group(1))})
                        text, calls, total = text + "\n" + ans.text, calls + 1, total + ans.text_bytes
                    out[name].update({"recall_all": round(recall(case["expected"], words(text)), 4),
                                      "bytes_all": total, "calls": calls})


async def measure(spec: ServerSpec, cases: list[dict[str, Any]], srv: CspServer, workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    todo = list(cases)
    workdir.mkdir(parents=True, exist_ok=True)
    with open(workdir / f"real-pages-{spec.name}.stderr.log", "w") as errlog:
        while todo:
            try:
                await _session(spec, todo, srv, out, errlog)
            except Exception as exc:  # noqa: BLE001 - a broken session: go on with a fresh one
                print(f"[real-pages] {spec.name}: session ended: {type(exc).__name__}: {exc}"[:300],
                      file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- report


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def markdown(cases: list[dict[str, Any]], results: dict[str, dict[str, Any]], meta: dict[str, Any]) -> str:
    servers = list(results)
    lines = [f"# Snapshots of real pages ({len(cases)} Readability test pages ≥ {meta['min_bytes']} bytes)", "",
             f"readabilityrs {READABILITYRS_VERSION}; word recall = share of expected.html's words (multiset) "
             "in the snapshot answer; bytes = the answer's text bytes.", ""]
    for s in servers:
        src = meta["sources"].get(s, "")
        if src:
            lines.append(f"- {s}: {src}")
    lines.append("")
    cont = "lumo" in servers and any("recall_all" in r for r in results["lumo"].values())
    head = "| page | kB | words | " + " | ".join(f"{s} recall | {s} bytes" for s in servers) + \
        (" | lumo read on: recall / bytes / calls" if cont else "") + " |"
    lines += [head, "|" + "---|" * (3 + 2 * len(servers) + cont)]
    for c in cases:
        row = [c["case"], f"{c['source_bytes'] / 1000:.0f}", str(sum(c["expected"].values()))]
        for s in servers:
            r = results[s].get(c["case"])
            if not r:
                row += ["—", "—"]
            elif "error" in r:
                row += ["error", "—"]
            else:
                row += [f"{100 * r['recall']:.1f}%", f"{r['bytes']:,}"]
        if cont:
            r = results["lumo"].get(c["case"], {})
            row.append(f"{100 * r['recall_all']:.1f}% / {r['bytes_all']:,} / {r['calls']}" if "recall_all" in r else "—")
        lines.append("| " + " | ".join(row) + " |")
    # Means over the pages every server answered.
    common = [c["case"] for c in cases if all("recall" in results[s].get(c["case"], {}) for s in servers)]
    row = [f"**mean** ({len(common)} pages)", "", ""]
    for s in servers:
        row += [f"**{100 * _mean([results[s][k]['recall'] for k in common]):.1f}%**",
                f"**{_mean([results[s][k]['bytes'] for k in common]):,.0f}**"]
    if cont:
        lu = [results["lumo"][k] for k in common if "recall_all" in results["lumo"][k]]
        row.append(f"**{100 * _mean([r['recall_all'] for r in lu]):.1f}%** / "
                   f"**{_mean([r['bytes_all'] for r in lu]):,.0f}**")
    lines += ["| " + " | ".join(row) + " |", ""]
    if "lumo" in servers and len(servers) > 1:
        peers = [s for s in servers if s != "lumo"]
        behind, ratios = [], []
        for k in common:
            best = max(results[p][k]["recall"] for p in peers)
            gap = best - results["lumo"][k]["recall"]
            if gap > 0.02:
                behind.append((gap, k, results["lumo"][k]["recall"], best))
            smallest = min(results[p][k]["bytes"] for p in peers)
            if smallest:
                ratios.append(results["lumo"][k]["bytes"] / smallest)
        lines.append(f"lumo more than 2 points behind the better peer on {len(behind)} of {len(common)} pages"
                     + (":" if behind else "."))
        for gap, k, mine, best in sorted(behind, reverse=True):
            extra = results["lumo"][k]
            on = (f" (reading on: {100 * extra['recall_all']:.1f}% in {extra['calls']} calls)"
                  if "recall_all" in extra and extra["calls"] > 1 else "")
            lines.append(f"- {k}: lumo {100 * mine:.1f}% vs {100 * best:.1f}%{on}")
        gaps = [max(results[p][k]["recall"] for p in peers) - results["lumo"][k].get("recall_all", 0) for k in common]
        if any("recall_all" in results["lumo"][k] for k in common):
            lines.append(f"Reading on past the budget: lumo more than 2 points behind on {sum(g > 0.02 for g in gaps)} "
                         f"pages; largest gap {100 * max(gaps):.2f} points.")
        total_lumo = sum(results["lumo"][k]["bytes"] for k in common)
        total_best = sum(min(results[p][k]["bytes"] for p in peers) for k in common)
        if total_best:
            lines += ["", f"lumo bytes / smallest peer's bytes: {total_lumo / total_best:.2f}× in total, "
                      f"median per page {sorted(ratios)[len(ratios) // 2]:.2f}×" if ratios else ""]
    return "\n".join(lines) + "\n"


async def run(args: Any, specs: list[ServerSpec], cache: Path, out_dir: Path) -> str:
    src = fetch_test_pages(cache)
    served = cache / "real-pages" / "pages"
    only = args.cases.split(",") if args.cases else None
    cases = prepare(src, served, args.min_bytes, only)
    if not cases:
        raise SystemExit("no test page matched")
    saved = cache / "real-pages" / "results"
    saved.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with CspServer(served) as srv:
        for spec in specs:
            t = time.time()
            print(f"[real-pages] {spec.name}: {len(cases)} pages …", file=sys.stderr, flush=True)
            results[spec.name] = await measure(spec, cases, srv, cache / "work")
            sources[spec.name] = f"measured in this run ({stamp}, {time.time() - t:.0f} s)"
            (saved / f"{spec.name}.json").write_text(json.dumps(
                {"measured": stamp, "command": [spec.command, *spec.args], "pages": results[spec.name]}, indent=1))
    if args.reuse:
        for name in ("lumo", "playwright", "chrome-devtools"):
            f = saved / f"{name}.json"
            if name not in results and f.is_file():
                old = json.loads(f.read_text())
                results[name] = old["pages"]
                sources[name] = f"reused from {f.relative_to(cache.parent)} (measured {old['measured']})"
    order = [s for s in ("lumo", "playwright", "chrome-devtools") if s in results]
    report = markdown(cases, {s: results[s] for s in order},
                      {"min_bytes": args.min_bytes, "sources": sources})
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"real-pages-{stamp.replace(':', '').replace('-', '')}.md"
    path.write_text(report)
    (out_dir / "real-pages-latest.md").write_text(report)
    print(f"[real-pages] report: {path}", file=sys.stderr)
    return report
