"""The golden tool list, ``tests/golden/tools.json``: the exact ``tools/list``
result of a fresh ``lumo serve``, written by the Rust golden test. The Python
tests compare what the ``mcp`` SDK lists with it instead of keeping their own
list of names."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "tools.json"
BLESS = "LUMO_BLESS=1 cargo test -p lumo-cli --test golden"


def golden_tools() -> list[dict[str, Any]]:
    """The tools of the golden file, in order."""
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["tools"]


def golden_names() -> list[str]:
    """The tool names of the golden file, in order."""
    return [t["name"] for t in golden_tools()]


def diff_against_golden(live: list[dict[str, Any]]) -> str:
    """A unified diff of the golden tools and ``live`` (name, description,
    inputSchema of each), empty when they agree."""

    def lines(tools: list[dict[str, Any]]) -> list[str]:
        keep = [{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools]
        return json.dumps(keep, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    diff = difflib.unified_diff(lines(golden_tools()), lines(live), "tests/golden/tools.json", "tools/list now", lineterm="")
    text = "\n".join(diff)
    return f"{text}\nIf the change is intended, bless it: {BLESS}" if text else ""
