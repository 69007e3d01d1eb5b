"""Command line: ``bench/run [--quick|--full] [options]`` (bench/run sets up bench/cache first)."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from . import extractbench, metrics, pages, realpages
from .servers import CHROMIUM, CHROMIUM_FLAGS, all_specs
from .suite import TASKS, SessionOptions, run_session

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
CACHE = BENCH / "cache"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run", description="Benchmark lumo against @playwright/mcp "
                                "and chrome-devtools-mcp over MCP stdio.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="1 round, pages up to 5,000 elements (default)")
    mode.add_argument("--full", action="store_true", help="5 rounds, pages up to 20,000 elements")
    p.add_argument("--rounds", type=int, help="override the number of interleaved rounds")
    p.add_argument("--servers", default="lumo,playwright,chrome-devtools",
                   help="comma-separated subset (default: all; lumo is skipped when its binary is missing)")
    p.add_argument("--tasks", help="comma-separated subset of tasks: " + ",".join(t.name for t in TASKS))
    p.add_argument("--sizes", help="comma-separated page sizes, e.g. 100,1000")
    p.add_argument("--peer-flag", action="append", default=[],
                   help="extra Chromium flag for the peers (repeatable), e.g. to match lumo's own launcher")
    p.add_argument("--out", type=Path, default=BENCH / "results", help="results folder")
    real = p.add_argument_group("real pages (Mozilla Readability's test pages, from the readabilityrs crate)")
    real.add_argument("--real-pages", action="store_true",
                      help="measure each server's snapshot on real pages: article word recall and bytes")
    real.add_argument("--min-bytes", type=int, default=20_000, help="only pages whose source.html has this many bytes")
    real.add_argument("--cases", help="comma-separated subset of test-page folders, e.g. lwn-1,wikipedia-2")
    real.add_argument("--extract", action="store_true",
                      help="page_extract on the real pages: token F1, words kept, size and metadata against "
                           "expected.*, next to the readabilityrs crate (min-bytes defaults to 0 here)")
    real.add_argument("--reuse", action="store_true",
                      help="fill in servers not measured in this run from their last saved real-pages figures")
    return p.parse_args(argv)


def chromium_version() -> str:
    try:
        return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _node_version() -> str:
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    mode = "full" if args.full else "quick"
    rounds = args.rounds or (5 if mode == "full" else 1)
    sizes = (tuple(int(s) for s in args.sizes.split(",")) if args.sizes
             else pages.SIZES_FULL if mode == "full" else pages.SIZES_QUICK)
    tasks = tuple(t for t in TASKS if not args.tasks or t.name in args.tasks.split(","))
    size_pages = tuple(f"size-{n}.html" for n in sizes)
    extra_pages = ("article.html", "frames.html")

    workdir = CACHE / "work"
    for log in workdir.glob("*.stderr.log"):
        log.unlink()
    fixture_dir = CACHE / "pages"
    element_counts = pages.generate(fixture_dir, sizes)

    wanted = args.servers.split(",")
    specs = [s for s in all_specs(REPO, CACHE, workdir, tuple(args.peer_flag)) if s.name in wanted]
    runnable = [s for s in specs if s.available]
    for s in specs:
        if not s.available:
            print(f"[bench] skipping {s.name}: {s.why_unavailable}", file=sys.stderr)
    if not runnable:
        raise SystemExit("no server to measure")

    runs: list[dict[str, Any]] = []
    started = time.time()
    load_start = os.getloadavg()
    with pages.PageServer(fixture_dir) as ps:
        for r in range(rounds):
            order = runnable[r % len(runnable):] + runnable[:r % len(runnable)]
            for spec in order:
                t = time.time()
                print(f"[bench] round {r + 1}/{rounds}: {spec.name} …", file=sys.stderr, flush=True)
                rec = await run_session(spec, ps, SessionOptions(
                    round=r, size_pages=size_pages, extra_pages=extra_pages, tasks=tasks, workdir=workdir))
                runs.append(rec)
                oks = sum(1 for t_ in rec["tasks"].values() if t_["ok"])
                print(f"[bench]   {spec.name}: {time.time() - t:.1f}s, tasks ok {oks}/{len(tasks)}, "
                      f"errors {len(rec['errors'])}", file=sys.stderr, flush=True)

    measured = [s.name for s in runnable]
    page_names = [*size_pages, *extra_pages]
    catalogue = metrics.metric_catalogue(page_names, [t.name for t in tasks])
    summary = metrics.summarise(runs, measured, catalogue)
    meta = {
        "timestamp": metrics.now_stamp(),
        "mode": mode,
        "rounds": rounds,
        "duration_s": round(time.time() - started, 1),
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version(),
                    "chromium": chromium_version(), "node": _node_version(),
                    "loadavg_start": load_start, "loadavg_end": os.getloadavg()},
        "chromium_flags": list(CHROMIUM_FLAGS),
        "peer_extra_flags": args.peer_flag,
        "pages": page_names,
        "element_counts": element_counts,
        "tasks": [t.name for t in tasks],
        "servers_measured": measured,
        "servers": {s.name: {**s.describe(), "server_info": next(
            (r.get("server_info") for r in runs if r["server"] == s.name and r.get("server_info")), None)}
            for s in specs},
        "browser_checks": {s: next((r["browser_check"] for r in runs if r["server"] == s and "browser_check" in r),
                                   {"found": False}) for s in measured},
    }
    return {
        "meta": meta,
        "metrics": [vars(m) for m in catalogue],
        "summary": summary,
        "ratios": metrics.ratios(summary, "lumo", [s for s in measured if s != "lumo"], catalogue)
        if "lumo" in measured else {},
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.extract:
        specs = [s for s in all_specs(REPO, CACHE, CACHE / "work", tuple(args.peer_flag)) if s.name == "lumo"]
        if args.min_bytes == 20_000 and "--min-bytes" not in (argv or sys.argv):
            args.min_bytes = 0
        print(anyio.run(extractbench.run, args, [s for s in specs if s.available], CACHE, args.out))
        return
    if args.real_pages:
        wanted = args.servers.split(",")
        specs = [s for s in all_specs(REPO, CACHE, CACHE / "work", tuple(args.peer_flag)) if s.name in wanted]
        for s in specs:
            if not s.available:
                print(f"[bench] skipping {s.name}: {s.why_unavailable}", file=sys.stderr)
        runnable = [s for s in specs if s.available]
        print(anyio.run(realpages.run, args, runnable, CACHE, args.out))
        return
    result = anyio.run(main_async, args)
    paths = metrics.write_results(result, args.out)
    print(metrics.markdown(result))
    for kind, path in paths.items():
        print(f"[bench] {kind}: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
