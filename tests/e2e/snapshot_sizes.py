"""Measures page_snapshot on every fixture page: size (bytes of the answer's
text) and client-side round-trip time, with the ``mcp`` SDK over stdio.

    LUMO_BIN=target/debug/lumo .venv/bin/python tests/e2e/snapshot_sizes.py [--runs N] [--json]

For each page: the first snapshot (which installs lumo's page helper), the
median of N more, the interactive variant, and whether the default 100 kB
budget cut it (then also the uncut size, with max_bytes 2000000). Pages are measured right after browser_navigate returns
(slow.html's late content is not there yet).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_server import FIXTURES, FixtureServer  # noqa: E402
from lumo_client import lumo_session, ok, text_of  # noqa: E402

PAGES = [
    "login.html",
    "form.html",
    "long-list.html",
    "frames.html",
    "shadow.html",
    "dialog.html",
    "upload.html",
    "navigate.html",
    "slow.html",
    "console.html",
    "pointer.html",
]


async def _timed(session, args):
    started = time.perf_counter()
    result = await ok(session, "page_snapshot", args)
    return (time.perf_counter() - started) * 1000, text_of(result)


async def measure(runs: int) -> list[dict]:
    rows = []
    with FixtureServer() as server:
        async with lumo_session() as session:
            # Warm the browser up so the first page does not pay for its start.
            await ok(session, "browser_navigate", {"url": "about:blank"})
            for page in PAGES:
                if not (FIXTURES / page).exists():
                    continue
                await ok(session, "browser_navigate", {"url": server.url(page)})
                first_ms, text = await _timed(session, {})
                times = []
                for _ in range(runs):
                    ms, text = await _timed(session, {})
                    times.append(ms)
                inter_times = []
                for _ in range(runs):
                    ms, inter = await _timed(session, {"interactive": True})
                    inter_times.append(ms)
                full_ms, full = (first_ms, text)
                if "[truncated at" in text:
                    full_ms, full = await _timed(session, {"max_bytes": 2_000_000})
                rows.append(
                    {
                        "page": page,
                        "bytes": len(text.encode()),
                        "lines": text.count("\n") + 1,
                        "refs": text.count("[e"),
                        "truncated": "[truncated at" in text,
                        "full_bytes": len(full.encode()),
                        "full_ms": round(full_ms, 1),
                        "first_ms": round(first_ms, 1),
                        "median_ms": round(statistics.median(times), 1),
                        "interactive_bytes": len(inter.encode()),
                        "interactive_median_ms": round(statistics.median(inter_times), 1),
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="snapshots per page after the first (default 5)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    rows = asyncio.run(measure(max(1, args.runs)))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print("| page | bytes | lines | refs | cut (uncut bytes, ms) | first ms | median ms | interactive bytes | interactive ms |")
    print("|---|---:|---:|---:|:-:|---:|---:|---:|---:|")
    for r in rows:
        cut = f"yes ({r['full_bytes']:,}, {r['full_ms']})" if r["truncated"] else ""
        print(
            f"| {r['page']} | {r['bytes']:,} | {r['lines']:,} | {r['refs']:,} | {cut} "
            f"| {r['first_ms']} | {r['median_ms']} | {r['interactive_bytes']:,} | {r['interactive_median_ms']} |"
        )


if __name__ == "__main__":
    main()
