"""page_extract on real pages, next to Mozilla Readability's Rust port.

``bench/run --extract`` reads every Readability test page (from the
``readabilityrs`` crate, fetched like ``--real-pages`` does, served from
loopback with a CSP that keeps every request there) with lumo's
``page_extract`` through the Python MCP client, and runs the ``readabilityrs``
crate itself (``bench/readability-rs``, built into ``bench/cache``) on the same
``source.html``. Per page and extractor:

* token F1, precision and recall against ``expected.html``'s text (lowercased
  ``\\w+`` tokens, as multisets; in Chinese and Japanese text each character is
  a token, as there are no spaces between words). For page_extract the Markdown is read as
  prose: link targets ``](…)``, refs ``][e12]`` and images' alt text ``![…]``
  are left out, since expected.html's text (like readabilityrs's) has none of them; the answer's header lines (url, title,
  byline, lang, published) and the ``<untrusted …>`` fence around the page's
  content are left out too;
* words kept: the recall above (the share of the article's words present);
* size: the whole answer's text bytes (as the model gets them, header, URLs
  and refs included) ÷ the article's own text bytes (expected.html's text,
  whitespace folded);
* metadata: title, byline, lang and published time equal to
  ``expected-metadata.json``'s (whitespace folded, case ignored; a field that
  is null there counts as right when the extractor gives none).
"""

from __future__ import annotations

import html as htmlmod
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from . import realpages
from .servers import ServerSpec

BENCH = Path(__file__).resolve().parent.parent
FIELDS = ("title", "byline", "lang", "published")
META_KEYS = {"title": "title", "byline": "byline", "lang": "lang", "published": "publishedTime"}
HEADER_RE = re.compile(r"^(url|title|byline|lang|published): .*$", re.M)
# lumo's fence around page content (``<untrusted 1a2b3c>`` … ``</untrusted 1a2b3c>``): framing, not words.
UNTRUSTED_RE = re.compile(r"^</?untrusted [0-9a-f]+>$", re.M)


def prose(md: str) -> str:
    """Markdown as the words a reader reads: no link targets, no refs, no header lines."""
    body = md.split("\n---\n", 1)[1] if "\n---\n" in md else HEADER_RE.sub("", md)
    body = UNTRUSTED_RE.sub("", body)
    body = re.sub(r"!\[(?:[^\]\\]|\\.)*\]", " ", body)
    # Controls, "[button: Subscribe][e3]": the role is lumo's word, the name the page's. Links are
    # "[text](target)[e4]", never "[link: …]": a link whose text starts with "link" keeps the word.
    body = re.sub(r"\[(?:button|textbox|checkbox|combobox|iframe)(?:: )?(?=(?:[^\]\\]|\\.)*\]\[(?:f\d+)?e\d+\])", "[", body)
    body = re.sub(r"\]\([^)\s]*\)", "]", body)
    body = re.sub(r"\]\[(?:f\d+)?e\d+\]", "]", body)
    return body


# Chinese and Japanese put no spaces between words: there each ideograph or kana is a token. With
# ``\w+`` a whole clause is one token, kept or lost whole depending on where an inline tag (in
# expected.html, whose text nodes are joined with spaces) or an extractor happens to break the run.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN_RE = re.compile(rf"[{CJK}]|[^\W{CJK}]+")


def tokens(text: str) -> Counter[str]:
    return Counter(TOKEN_RE.findall(text.lower()))


def f1(expected: Counter[str], got: Counter[str]) -> dict[str, float]:
    common = sum((expected & got).values())
    exp, have = sum(expected.values()), sum(got.values())
    p = common / have if have else 0.0
    r = common / exp if exp else 1.0
    return {"f1": 2 * p * r / (p + r) if p + r else 0.0, "precision": p, "recall": r}


def norm(v: Any) -> str:
    return re.sub(r"\s+", " ", htmlmod.unescape(str(v or ""))).strip().lower()


def meta_score(expected: dict[str, Any], got: dict[str, Any]) -> dict[str, bool]:
    return {f: norm(expected.get(META_KEYS[f])) == norm(got.get(f)) for f in FIELDS}


def article_text(expected_html: str) -> str:
    p = realpages._TextOf()
    p.feed(expected_html)
    p.close()
    return re.sub(r"\s+", " ", " ".join(p.parts)).strip()


# --------------------------------------------------------------------------- readabilityrs


def build_readabilityrs(cache: Path) -> Path:
    target = cache / "readability-rs-target"
    manifest = BENCH / "readability-rs" / "Cargo.toml"
    subprocess.run(["cargo", "build", "--quiet", "--locked", "--manifest-path", str(manifest),
                    "--target-dir", str(target)], check=True)
    return target / "debug" / "lumo-bench-readability"


def run_readabilityrs(binary: Path, pages: Path, cases: list[str]) -> dict[str, dict[str, Any]]:
    out = subprocess.run([str(binary), str(pages), *cases], check=True, capture_output=True, text=True).stdout
    return {r["case"]: r for r in map(json.loads, out.splitlines())}


# --------------------------------------------------------------------------- lumo


async def run_lumo(spec: ServerSpec, cases: list[str], srv: realpages.CspServer, errlog: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    todo = list(cases)
    while todo:
        params = StdioServerParameters(command=spec.command, args=spec.args, env=spec.env or None,
                                       cwd=str(spec.cwd) if spec.cwd else None)
        try:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                while todo:
                    case = todo.pop(0)
                    try:
                        with anyio.fail_after(realpages.PAGE_TIMEOUT_S):
                            await session.call_tool("browser_navigate", {"url": srv.url(case)})
                            t0 = time.perf_counter()
                            res = await session.call_tool("page_extract", {"max_bytes": 2_000_000})
                            ms = (time.perf_counter() - t0) * 1000
                    except Exception as exc:  # noqa: BLE001 - record it, go on with a fresh server
                        out[case] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
                        raise
                    text = "\n".join(c.text for c in res.content if getattr(c, "type", "") == "text")
                    if res.is_error:
                        out[case] = {"error": text[:300]}
                        if "dialog is open" in text:
                            # A page's alert() (remove-script-tags): answer it, so the next page starts clear.
                            await session.call_tool("page_dialog", {"accept": True})
                        continue
                    s = res.structured_content or {}
                    out[case] = {"text": text, "ms": ms, **{f: s.get(f) or None for f in FIELDS}}
        except Exception as exc:  # noqa: BLE001
            print(f"[extract] lumo session ended: {type(exc).__name__}: {exc}"[:300], file=sys.stderr, flush=True)
    return out


# --------------------------------------------------------------------------- report


def score(cases: list[dict[str, Any]], lumo: dict[str, Any], rrs: dict[str, Any]) -> dict[str, Any]:
    rows = {}
    for c in cases:
        k = c["case"]
        row: dict[str, Any] = {"article_bytes": len(c["article"].encode()), "words": sum(c["expected"].values())}
        got = lumo.get(k, {})
        if "text" in got:
            row["lumo"] = {**f1(c["expected"], tokens(prose(got["text"]))),
                           "bytes": len(got["text"].encode()), "meta": meta_score(c["meta"], got)}
        got = rrs.get(k, {})
        if "text" in got and got["text"] is not None:
            row["readabilityrs"] = {**f1(c["expected"], tokens(got["text"] or "")),
                                    "bytes": len((got["text"] or "").encode()),
                                    "meta": meta_score(c["meta"], got)}
        rows[k] = row
    return rows


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def markdown(rows: dict[str, Any], meta: dict[str, Any]) -> str:
    names = ("lumo", "readabilityrs")
    lines = [f"# page_extract on real pages ({len(rows)} Readability test pages)", "",
             f"readabilityrs {realpages.READABILITYRS_VERSION}, run on the same source.html; {meta['stamp']}. "
             "F1/precision/recall: tokens of expected.html's text; lumo's Markdown read as prose "
             "(link targets, refs and image alt text left out); Chinese and Japanese tokens are single characters. size = the answer's text bytes ÷ the article's text bytes. "
             "meta = title, byline, lang, published equal to expected-metadata.json.", "",
             "| page | article bytes | lumo F1 | lumo P | lumo R | lumo size | lumo meta | readabilityrs F1 | "
             "readabilityrs R | readabilityrs meta |", "|" + "---|" * 10]
    for k, r in rows.items():
        cells = [k, f"{r['article_bytes']:,}"]
        lu = r.get("lumo")
        cells += ([f"{lu['f1']:.3f}", f"{lu['precision']:.3f}", f"{100 * lu['recall']:.1f}%",
                   f"{lu['bytes'] / max(1, r['article_bytes']):.2f}×", str(sum(lu["meta"].values()))]
                  if lu else ["error"] + ["—"] * 4)
        rr = r.get("readabilityrs")
        cells += ([f"{rr['f1']:.3f}", f"{100 * rr['recall']:.1f}%", str(sum(rr["meta"].values()))]
                  if rr else ["none"] + ["—"] * 2)
        lines.append("| " + " | ".join(cells) + " |")
    both = [k for k, r in rows.items() if all(n in r for n in names)]
    lines += ["", f"## Means over the {len(both)} pages both extractors answered", "",
              "| extractor | token F1 | precision | words kept (recall) | pages ≥ 95% kept | size ÷ article "
              "(mean / median) | " + " | ".join(f"{f} right" for f in FIELDS) + " |", "|" + "---|" * (6 + len(FIELDS))]
    for n in names:
        rs = [rows[k][n] for k in both]
        ratios = sorted(rows[k][n]["bytes"] / max(1, rows[k]["article_bytes"]) for k in both)
        lines.append("| " + " | ".join([
            n, f"**{_mean([r['f1'] for r in rs]):.3f}**", f"{_mean([r['precision'] for r in rs]):.3f}",
            f"**{100 * _mean([r['recall'] for r in rs]):.1f}%**",
            f"{sum(r['recall'] >= 0.95 for r in rs)} of {len(rs)}",
            f"{_mean(ratios):.2f}× / {ratios[len(ratios) // 2]:.2f}×" if ratios else "—",
            *[f"{sum(r['meta'][f] for r in rs)} of {len(rs)}" for f in FIELDS]]) + " |")
    lu_only = [k for k, r in rows.items() if "lumo" in r and "readabilityrs" not in r]
    if lu_only:
        lines += ["", f"Pages readabilityrs found no article on (lumo's figures there): " + ", ".join(
            f"{k} (F1 {rows[k]['lumo']['f1']:.3f})" for k in lu_only)]
    worst = sorted((rows[k]["lumo"]["f1"] - rows[k]["readabilityrs"]["f1"], k) for k in both)[:10]
    lines += ["", "Largest F1 gaps (lumo − readabilityrs): " + ", ".join(f"{k} {d:+.3f}" for d, k in worst)]
    return "\n".join(lines) + "\n"


async def run(args: Any, specs: list[ServerSpec], cache: Path, out_dir: Path) -> str:
    src = realpages.fetch_test_pages(cache)
    served = cache / "real-pages" / "pages"
    only = args.cases.split(",") if args.cases else None
    cases = []
    for c in realpages.prepare(src, served, args.min_bytes, only):
        d = src / c["case"]
        meta_file = d / "expected-metadata.json"
        c["meta"] = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
        c["article"] = article_text((d / "expected.html").read_text(encoding="utf-8", errors="replace"))
        c["expected"] = tokens(c["article"])
        cases.append(c)
    if not cases:
        raise SystemExit("no test page matched")
    names = [c["case"] for c in cases]
    lumo_spec = next((s for s in specs if s.name == "lumo"), None)
    if lumo_spec is None:
        raise SystemExit("--extract needs lumo (build it, or set LUMO_BIN)")
    lumo_saved = cache / "real-pages" / "extract-lumo.json"
    if getattr(args, "reuse", False) and lumo_saved.is_file():
        # --reuse: lumo's answers from the last run (e.g. to redo only the comparison).
        lumo = json.loads(lumo_saved.read_text())
    else:
        print(f"[extract] lumo page_extract on {len(names)} pages …", file=sys.stderr, flush=True)
        (cache / "work").mkdir(parents=True, exist_ok=True)
        with realpages.CspServer(served) as srv, open(cache / "work" / "extract-lumo.stderr.log", "w") as errlog:
            lumo = await run_lumo(lumo_spec, names, srv, errlog)
        lumo_saved.write_text(json.dumps(lumo))
    # Deterministic for a pinned version: kept in bench/cache and reused while the pages asked for are there.
    saved = cache / "real-pages" / f"readabilityrs-{realpages.READABILITYRS_VERSION}.json"
    rrs = json.loads(saved.read_text()) if saved.is_file() else {}
    missing = [n for n in names if n not in rrs]
    if missing:
        print(f"[extract] readabilityrs: building and running on {len(missing)} pages …", file=sys.stderr, flush=True)
        rrs.update(run_readabilityrs(build_readabilityrs(cache), src, missing))
        saved.write_text(json.dumps(rrs))
    rows = score(cases, lumo, rrs)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report = markdown(rows, {"stamp": stamp})
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"extract-{stamp.replace(':', '').replace('-', '')}.md"
    path.write_text(report)
    (out_dir / "extract-latest.md").write_text(report)
    print(f"[extract] report: {path}", file=sys.stderr)
    return report
