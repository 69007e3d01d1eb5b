"""Measuring and reporting: process memory, statistics, the Markdown report, the chart."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterable

# =========================================================================== memory

_BROWSER_NAMES = {"chromium", "chrome", "chromium-browser", "chrome_crashpad_handler",
                  "headless_shell", "chrome-headless-shell"}


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _ppid_map() -> dict[int, int]:
    """pid → ppid for every process visible in /proc."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = _read(f"/proc/{entry}/stat")
        if not stat:
            continue
        # comm may contain spaces and parentheses: split after the last ')'.
        rest = stat.rsplit(")", 1)[-1].split()
        if len(rest) >= 2:
            out[int(entry)] = int(rest[1])
    return out


def descendants(root: int, ppids: dict[int, int] | None = None) -> list[int]:
    ppids = ppids if ppids is not None else _ppid_map()
    children: dict[int, list[int]] = {}
    for pid, ppid in ppids.items():
        children.setdefault(ppid, []).append(pid)
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, ()))
    return out


def children(pid: int) -> list[int]:
    return [p for p, pp in _ppid_map().items() if pp == pid]


def cmdline(pid: int) -> list[str]:
    raw = _read(f"/proc/{pid}/cmdline") or ""
    return [a for a in raw.split("\0") if a]


def exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def is_browser(pid: int) -> bool:
    """A Chromium process: its executable (or, unreadable, argv[0]) is a Chromium binary."""
    path = exe(pid) or (cmdline(pid) or [""])[0]
    path = path.removesuffix(" (deleted)")
    return os.path.basename(path) in _BROWSER_NAMES or "/chromium/" in path


def rss_pss_kb(pid: int) -> tuple[int, int]:
    text = _read(f"/proc/{pid}/smaps_rollup")
    if not text:
        return 0, 0
    rss = pss = 0
    for line in text.splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1])
        elif line.startswith("Pss:"):
            pss = int(line.split()[1])
    return rss, pss


def split_tree(root: int) -> tuple[list[int], list[int]]:
    """(server processes, browser processes) under ``root``; a browser's whole subtree is browser."""
    ppids = _ppid_map()
    kids: dict[int, list[int]] = {}
    for pid, ppid in ppids.items():
        kids.setdefault(ppid, []).append(pid)
    server, browser = [], []
    stack = [(root, False)]
    while stack:
        pid, in_browser = stack.pop()
        in_browser = in_browser or is_browser(pid)
        (browser if in_browser else server).append(pid)
        stack.extend((c, in_browser) for c in kids.get(pid, ()))
    return server, browser


@dataclass
class MemSample:
    server_rss_kb: int = 0
    server_pss_kb: int = 0
    browser_rss_kb: int = 0
    browser_pss_kb: int = 0
    server_procs: int = 0
    browser_procs: int = 0

    @property
    def total_pss_kb(self) -> int:
        return self.server_pss_kb + self.browser_pss_kb

    def as_mb(self) -> dict[str, float]:
        return {
            "server_rss_mb": round(self.server_rss_kb / 1024, 1),
            "server_pss_mb": round(self.server_pss_kb / 1024, 1),
            "browser_rss_mb": round(self.browser_rss_kb / 1024, 1),
            "browser_pss_mb": round(self.browser_pss_kb / 1024, 1),
            "total_pss_mb": round(self.total_pss_kb / 1024, 1),
            "server_procs": self.server_procs,
            "browser_procs": self.browser_procs,
        }


def sample_tree(root: int) -> tuple[MemSample, list[int]]:
    server, browser = split_tree(root)
    s = MemSample(server_procs=len(server), browser_procs=len(browser))
    for pid in server:
        rss, pss = rss_pss_kb(pid)
        s.server_rss_kb += rss
        s.server_pss_kb += pss
    for pid in browser:
        rss, pss = rss_pss_kb(pid)
        s.browser_rss_kb += rss
        s.browser_pss_kb += pss
    return s, server + browser


class MemorySampler:
    """Polls a server's process tree in a thread; keeps per-field peaks and every pid seen."""

    def __init__(self, root: int, interval: float = 0.25) -> None:
        self.root = root
        self.interval = interval
        self.peak = MemSample()
        self.seen: set[int] = set()
        self.browser_main: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"mem-{root}", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> MemSample:
        s, pids = sample_tree(self.root)
        self.seen.update(pids)
        p = self.peak
        for name in ("server_rss_kb", "server_pss_kb", "browser_rss_kb", "browser_pss_kb",
                     "server_procs", "browser_procs"):
            setattr(p, name, max(getattr(p, name), getattr(s, name)))
        if self.browser_main is None:
            self.browser_main = find_browser_main(self.root)
        return s

    def start(self) -> MemorySampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def find_browser_main(root: int) -> int | None:
    """The topmost Chromium process under ``root`` (no ``--type=``)."""
    _, browser = split_tree(root)
    for pid in browser:
        args = cmdline(pid)
        if args and not any(a.startswith("--type=") for a in args) and "crashpad" not in (exe(pid) or args[0]):
            return pid
    return None


def browser_check(pid: int | None, expected_exe: str, expected_flags: Iterable[str]) -> dict[str, Any]:
    """Proof that a server runs the intended Chromium, headless, with our flags."""
    if pid is None:
        return {"found": False}
    args = cmdline(pid)
    flags = set(args[1:])
    headless = any(a == "--headless" or a.startswith("--headless=") for a in args)
    user_data = next((a.split("=", 1)[1] for a in args if a.startswith("--user-data-dir=")), None)
    return {
        "found": True,
        "exe": exe(pid),
        "exe_ok": os.path.realpath(exe(pid)) == os.path.realpath(expected_exe),
        "headless": headless,
        "missing_flags": [f for f in expected_flags if f not in flags and not (
            f == "--headless" and headless)],
        "user_data_dir": user_data,
        "argc": len(args),
    }


def kill_leftovers(pids: Iterable[int]) -> list[int]:
    """SIGKILL processes this run started (by pid) that outlived their server."""
    killed = []
    for pid in pids:
        if os.path.exists(f"/proc/{pid}"):
            try:
                os.kill(pid, 9)
                killed.append(pid)
            except OSError:
                pass
    return killed


# =========================================================================== statistics


def stats(values: Iterable[float | int | None]) -> dict[str, Any] | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def _get(d: Any, path: str) -> Any:
    for part in path.split("/"):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


@dataclass
class Metric:
    key: str  # path into a run record, '/'-separated
    label: str
    unit: str
    group: str
    lower_is_better: bool = True


def metric_catalogue(pages: list[str], tasks: list[str]) -> list[Metric]:
    m = [
        Metric("cold_start_ms", "cold start (spawn → initialize → tools/list)", "ms", "startup"),
        Metric("first_navigate_ms", "first navigate (launches the browser)", "ms", "startup"),
        Metric("tools_list_bytes", "tools/list size (JSON of tools array)", "B", "startup"),
        Metric("tools_count", "tools offered", "", "startup"),
    ]
    for p in pages:
        m += [
            Metric(f"pages/{p}/navigate_ms", f"navigate {p}", "ms", "pages"),
            Metric(f"pages/{p}/snapshot_ms", f"snapshot {p}", "ms", "pages"),
            Metric(f"pages/{p}/see_ms", f"navigate + snapshot {p}", "ms", "pages"),
            Metric(f"pages/{p}/snapshot_text_bytes", f"snapshot text {p}", "B", "pages"),
            Metric(f"pages/{p}/snapshot_rpc_bytes", f"snapshot JSON-RPC result {p}", "B", "pages"),
            Metric(f"pages/{p}/refs", f"refs in snapshot {p}", "", "pages", lower_is_better=False),
        ]
    if "frames.html" in pages:
        m += [
            Metric("pages/frames.html/sees_iframe", "snapshot shows iframe content", "", "pages", False),
            Metric("pages/frames.html/sees_shadow", "snapshot shows shadow DOM content", "", "pages", False),
        ]
    m += [
        Metric("click/ms", "click → answer", "ms", "actions"),
        Metric("click/model_bytes", "click answer", "B", "actions"),
        Metric("click/ok", "click took effect", "", "actions", lower_is_better=False),
        Metric("type/ms", "type/fill → answer", "ms", "actions"),
        Metric("type/model_bytes", "type/fill answer", "B", "actions"),
        Metric("type/ok", "typed text landed", "", "actions", lower_is_better=False),
    ]
    for t in tasks:
        m += [
            Metric(f"tasks/{t}/model_bytes", f"task {t}: bytes to model", "B", "tasks"),
            Metric(f"tasks/{t}/calls", f"task {t}: calls", "", "tasks"),
            Metric(f"tasks/{t}/ms", f"task {t}: wall time", "ms", "tasks"),
            Metric(f"tasks/{t}/ok", f"task {t}: verified success", "", "tasks", lower_is_better=False),
        ]
    if tasks:
        m += [
            Metric("tasks_total/model_bytes", "all tasks: bytes to model", "B", "tasks"),
            Metric("tasks_total/calls", "all tasks: calls", "", "tasks"),
            Metric("tasks_total/ok", f"all tasks: verified successes (of {len(tasks)})", "", "tasks", False),
        ]
    m += [
        Metric("memory/idle/server_pss_mb", "server PSS idle (after tools/list)", "MB", "memory"),
        Metric("memory/peak/server_rss_mb", "server RSS peak (no browser)", "MB", "memory"),
        Metric("memory/peak/server_pss_mb", "server PSS peak (no browser)", "MB", "memory"),
        Metric("memory/peak/browser_rss_mb", "browser RSS peak", "MB", "memory"),
        Metric("memory/peak/browser_pss_mb", "browser PSS peak", "MB", "memory"),
        Metric("memory/end/server_pss_mb", "server PSS at end", "MB", "memory"),
        Metric("memory/end/browser_pss_mb", "browser PSS at end", "MB", "memory"),
        Metric("memory/end/total_pss_mb", "server+browser PSS at end", "MB", "memory"),
    ]
    return m


def summarise(runs: list[dict[str, Any]], servers: list[str], metrics: list[Metric]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for s in servers:
        mine = [r for r in runs if r["server"] == s]
        out[s] = {}
        for met in metrics:
            vals = [_get(r, met.key) for r in mine]
            vals = [float(v) if isinstance(v, bool) else v for v in vals]
            out[s][met.key] = stats(vals)
    return out


def ratios(summary: dict[str, Any], base: str, peers: list[str], metrics: list[Metric]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in peers:
        out[p] = {}
        for met in metrics:
            a, b = summary.get(base, {}).get(met.key), summary.get(p, {}).get(met.key)
            if a and b and b["median"]:
                out[p][met.key] = a["median"] / b["median"]
            else:
                out[p][met.key] = None
    return out


# =========================================================================== report


def _fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "B":
        if v >= 1_000_000:
            return f"{v / 1_000_000:.2f} MB"
        if v >= 10_000:
            return f"{v / 1000:.1f} kB"
        return f"{v:.0f} B"
    if unit == "ms":
        return f"{v / 1000:.2f} s" if v >= 10_000 else f"{v:.0f} ms"
    if unit == "MB":
        return f"{v:.0f} MB"
    if float(v).is_integer():
        return f"{v:.0f}"
    return f"{v:.2f}"


def _cell(st: dict[str, Any] | None, unit: str) -> str:
    if not st:
        return "—"
    if st["n"] > 1 and st["min"] != st["max"]:
        return f"{_fmt(st['median'], unit)} ({_fmt(st['min'], unit)}–{_fmt(st['max'], unit)})"
    return _fmt(st["median"], unit)


def _ratio(r: float | None) -> str:
    return "—" if r is None else f"{r:.2f}×"


HEADLINE = (
    "cold_start_ms",
    "first_navigate_ms",
    "tools_list_bytes",
    "click/ms",
    "tasks_total/model_bytes",
    "tasks_total/calls",
    "tasks_total/ok",
    "memory/peak/server_pss_mb",
    "memory/peak/browser_pss_mb",
)


def _largest_size_page(metrics: list[Metric]) -> str:
    sizes = {m.key.split("/")[1] for m in metrics if m.key.startswith("pages/size-")}
    return max(sizes, key=lambda p: int(p.removeprefix("size-").removesuffix(".html")), default="")


def markdown(result: dict[str, Any]) -> str:
    meta = result["meta"]
    servers = meta["servers_measured"]
    peers = [s for s in servers if s != "lumo"]
    metrics = [Metric(**m) for m in result["metrics"]]
    summary, rat = result["summary"], result["ratios"]
    lines = [
        f"# lumo benchmark — {meta['mode']} run, {meta['timestamp']}",
        "",
        f"Machine: {meta['machine']['cpus']} CPUs, load {meta['machine']['loadavg_start'][0]:.2f} at start, "
        f"{meta['machine']['chromium']}, node {meta['machine']['node']}, "
        f"rounds: {meta['rounds']} (interleaved), pages: {', '.join(meta['pages'])}.",
        "",
        "Servers: " + "; ".join(
            f"**{n}** {d.get('version') or '?'}"
            + (f" (serverInfo {d['server_info']['name']} {d['server_info']['version']})"
               if d.get("server_info") else "")
            + ("" if d.get("available", True) else f" — not measured: {d.get('why_unavailable')}")
            for n, d in meta["servers"].items()),
        "",
        "Cells show the median (min–max) over rounds. Ratios are lumo ÷ peer medians: "
        "below 1× is better for lumo wherever lower is better (all rows except refs and ok).",
        "",
    ]
    ratio_peers = peers if "lumo" in servers else []
    if not ratio_peers:
        lines += ["lumo was not measured in this run, so there are no ratio columns.", ""]
    header = ("| metric | " + " | ".join(servers) + " |"
              + "".join(f" lumo÷{p} |" for p in ratio_peers))
    sep = "|" + "---|" * (1 + len(servers) + len(ratio_peers))

    def row(met: Metric) -> str:
        cells = [_cell(summary.get(s, {}).get(met.key), met.unit) for s in servers]
        rcells = [_ratio(rat.get(p, {}).get(met.key)) for p in ratio_peers]
        return f"| {met.label} | " + " | ".join(cells) + " |" + "".join(f" {c} |" for c in rcells)

    by_key = {m.key: m for m in metrics}
    headline = [k for k in HEADLINE if k in by_key] + [
        m.key for m in metrics if m.key.startswith("pages/size-") and m.key.endswith(
            ("/snapshot_ms", "/snapshot_text_bytes")) and m.key.split("/")[1] == _largest_size_page(metrics)]
    lines += ["## headline", "", header, sep]
    lines += [row(by_key[k]) for k in headline if any(summary.get(s, {}).get(k) for s in servers)]
    group = None
    for met in metrics:
        if all(summary.get(s, {}).get(met.key) is None for s in servers):
            continue
        if met.group != group:
            group = met.group
            lines += ["", f"## {group}", "", header, sep]
        lines.append(row(met))
    checks = meta.get("browser_checks", {})
    if checks:
        lines += ["", "## browser used by each server", "",
                  "| server | exe | exe ok | headless | missing flags | user-data-dir |", "|---|---|---|---|---|---|"]
        for s, c in checks.items():
            if not c.get("found"):
                lines.append(f"| {s} | not found | | | | |")
                continue
            lines.append(f"| {s} | `{c['exe']}` | {c['exe_ok']} | {c['headless']} | "
                         f"{' '.join(c['missing_flags']) or '—'} | `{c['user_data_dir']}` |")
    errors = [(r["server"], r["round"], e) for r in result["runs"] for e in r.get("errors", [])]
    if errors:
        lines += ["", "## errors", ""]
        lines += [f"- {s} round {rnd}: {e}" for s, rnd, e in errors[:40]]
    lines.append("")
    return "\n".join(lines)


def chart(result: dict[str, Any], path: Path) -> None:
    """One PNG, six panels, log scales where values span decades."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, summary = result["meta"], result["summary"]
    servers = meta["servers_measured"]
    colours = {"lumo": "#d1495b", "playwright": "#2e86ab", "chrome-devtools": "#edae49"}
    size_pages = [p for p in meta["pages"] if p.startswith("size-")]
    sizes = [p.removeprefix("size-").removesuffix(".html") for p in size_pages]
    tasks = meta["tasks"]

    def med(server: str, key: str) -> float:
        st = summary.get(server, {}).get(key)
        return st["median"] if st else 0.0

    fig, axes = plt.subplots(2, 3, figsize=(17, 9.5))
    fig.suptitle(f"lumo vs peers — {meta['mode']} run {meta['timestamp']} (medians; lower is better)",
                 fontsize=13)
    width = 0.8 / max(1, len(servers))

    def grouped(ax: Any, labels: list[str], key_of: Any, title: str, ylabel: str, log: bool = False,
                scale: float = 1.0) -> None:
        xs = range(len(labels))
        for i, s in enumerate(servers):
            vals = [med(s, key_of(lbl)) * scale for lbl in labels]
            ax.bar([x + (i - (len(servers) - 1) / 2) * width for x in xs], vals, width,
                   label=s, color=colours.get(s, None))
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=0 if len(labels) < 5 else 20)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)

    grouped(axes[0][0], sizes, lambda n: f"pages/size-{n}.html/snapshot_ms",
            "snapshot time by page size (elements)", "ms (log)", log=True)
    grouped(axes[0][1], sizes, lambda n: f"pages/size-{n}.html/snapshot_text_bytes",
            "snapshot text to the model", "kB (log)", log=True, scale=1 / 1000)
    grouped(axes[0][2], tasks, lambda t: f"tasks/{t}/model_bytes",
            "agent tasks: bytes sent to the model", "kB (log)", log=True, scale=1 / 1000)
    grouped(axes[1][0], ["cold start", "first navigate", "click", "type"],
            lambda k: {"cold start": "cold_start_ms", "first navigate": "first_navigate_ms",
                       "click": "click/ms", "type": "type/ms"}[k],
            "latency", "ms")
    grouped(axes[1][1], tasks, lambda t: f"tasks/{t}/calls", "agent tasks: tool calls", "calls")

    ax = axes[1][2]
    xs = range(len(servers))
    srv = [med(s, "memory/peak/server_pss_mb") for s in servers]
    brw = [med(s, "memory/peak/browser_pss_mb") for s in servers]
    ax.bar(xs, srv, 0.6, label="server PSS", color="#555555")
    ax.bar(xs, brw, 0.6, bottom=srv, label="browser PSS", color="#aaaaaa")
    for x, a, b in zip(xs, srv, brw, strict=True):
        ax.text(x, a + b, f"{a:.0f} + {b:.0f}", ha="center", va="bottom", fontsize=9)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(servers)
    ax.set_title("memory at peak (PSS, MB)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="y", alpha=0.3)

    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=len(servers))
    # Mark failed tasks.
    for i, s in enumerate(servers):
        for j, t in enumerate(tasks):
            st = summary.get(s, {}).get(f"tasks/{t}/ok")
            if st is not None and st["median"] < 1:
                axes[0][2].text(j + (i - (len(servers) - 1) / 2) * width, med(s, f"tasks/{t}/model_bytes") / 1000,
                                "✗", ha="center", va="bottom", color="red", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_results(result: dict[str, Any], out_dir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = result["meta"]["timestamp"].replace(":", "").replace("-", "")
    base = f"{stamp}-{result['meta']['mode']}"
    md = markdown(result)
    paths = {
        "json": out_dir / f"{base}.json",
        "md": out_dir / f"{base}.md",
        "png": out_dir / f"{base}.png",
    }
    paths["json"].write_text(json.dumps(result, indent=1, default=str))
    paths["md"].write_text(md)
    try:
        chart(result, paths["png"])
    except Exception as exc:  # a chart failure must not lose the numbers
        paths.pop("png")
        print(f"chart failed: {exc!r}")
    for kind, p in list(paths.items()):
        latest = out_dir / f"latest.{kind}"
        latest.write_bytes(p.read_bytes())
    return paths


def now_stamp() -> str:
    return time.strftime("%Y-%m-%dT%H-%M-%S")


@dataclass
class Timer:
    start: float = field(default_factory=time.perf_counter)

    def ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000
