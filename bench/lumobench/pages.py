"""Fixture pages for the benchmark, and the loopback HTTP server that serves them.

Every page is generated (deterministically) into a directory under bench/cache;
nothing here is committed as HTML. The pages are:

* ``size-<N>.html``  – a mixed page with exactly N elements
  (``document.getElementsByTagName('*').length``): a nested navigation list,
  a table whose rows carry a link, an input and a button, and filler.
* ``table-5000.html`` – a 5,000-row table; every row has a "Select" button.
* ``article.html``   – a long article in <section>s with <h2> headings; the
  third section holds the marker sentence (ARTICLE_MARKER).
* ``form.html``      – a form with 20 fields of all input types (FORM_FIELDS).
* ``login.html`` / ``welcome.html`` – a login form and the page it submits to.
* ``dialog.html``    – buttons that open confirm() / alert() dialogs.
* ``frames.html`` / ``frame-inner.html`` – an iframe and an open shadow root.
"""

from __future__ import annotations

import functools
import html
import http.server
import random
import re
import threading
from dataclasses import dataclass
from pathlib import Path

SIZES_FULL = (100, 1_000, 5_000, 20_000)
SIZES_QUICK = (100, 1_000, 5_000)

TABLE_ROWS = 5_000
TABLE_TARGET_ROW = 4_321
ARTICLE_SECTIONS = 12
ARTICLE_MARKER = "The lighthouse keeper's code word is AURORA-7."
ARTICLE_THIRD_TITLE = "The Harbour at Dawn"
LOGIN_USER = "alice"
LOGIN_PASSWORD = "wonderland"
FRAME_MARKER = "FRAME-TEXT-MARKER"
SHADOW_MARKER = "SHADOW-TEXT-MARKER"

# Row whose button/input the click and type micro-benchmarks use on size pages.
MICRO_ROW = 3

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="icon" href="data:,">
<style>body{{font-family:sans-serif;margin:1em}} td,th{{padding:2px 6px}}</style>
</head><body>
"""
_TAIL = "</body></html>\n"


@dataclass(frozen=True)
class FormField:
    """One field of the 20-field form: its label, input kind and target value."""

    key: str
    label: str
    kind: str  # text|email|password|number|tel|url|search|date|time|datetime-local|
    #            month|week|color|range|textarea|select|checkbox|radio
    value: str  # value to enter; for select/radio the visible option label, checkbox "true"
    options: tuple[str, ...] = ()

    @property
    def fill_type(self) -> str:
        """The coarse control type tools such as browser_fill_form want."""
        return {
            "checkbox": "checkbox",
            "radio": "radio",
            "select": "combobox",
            "range": "slider",
        }.get(self.kind, "textbox")

    @property
    def expected(self) -> str:
        """The DOM value the page checks against (option value for selects)."""
        if self.kind in ("select", "radio"):
            return _slug(self.value)
        return self.value


FORM_FIELDS: tuple[FormField, ...] = (
    FormField("fullname", "Full name", "text", "Ada Lovelace"),
    FormField("email", "Email address", "email", "ada@example.org"),
    FormField("password", "Account password", "password", "s3cret-Pass"),
    FormField("age", "Age", "number", "36"),
    FormField("phone", "Phone number", "tel", "+44 20 7946 0958"),
    FormField("website", "Website", "url", "https://ada.example.org/"),
    FormField("search", "Search term", "search", "analytical engine"),
    FormField("birth", "Birth date", "date", "1815-12-10"),
    FormField("meeting", "Meeting time", "time", "14:30"),
    FormField("appointment", "Appointment", "datetime-local", "2026-03-01T09:15"),
    FormField("startmonth", "Start month", "month", "2026-04"),
    FormField("startweek", "Start week", "week", "2026-W15"),
    FormField("colour", "Favourite colour", "color", "#3366cc"),
    FormField("volume", "Volume", "range", "7"),
    FormField("bio", "Short bio", "textarea", "Mathematician and writer."),
    FormField("country", "Country", "select", "United Kingdom", ("France", "United Kingdom", "Italy")),
    FormField("newsletter", "Subscribe to newsletter", "checkbox", "true"),
    FormField("terms", "Accept the terms", "checkbox", "true"),
    FormField("plan", "Pro plan", "radio", "Pro plan", ("Basic plan", "Pro plan", "Enterprise plan")),
    FormField("postcode", "Postcode", "text", "SW1A 1AA"),
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _count_elements(markup: str) -> int:
    return len(re.findall(r"<[a-zA-Z]", markup))


_WORDS = (
    "harbour tide lantern north river stone quiet morning signal keeper rope mast "
    "gull current salt cliff beacon anchor ledger voyage chart compass weather "
    "island fog bell pier timber sail net crew ferry shore wave"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


# --------------------------------------------------------------------------- pages


def size_page(n: int) -> str:
    """A page with exactly ``n`` elements (html/head included)."""
    rows = max(2, int(n * 0.70) // 8)
    groups = max(1, int(n * 0.15) // 12)  # li + a + ul + 4*(li+a) = 11, +1 slack
    nav = ['<nav aria-label="Site"><ul>']
    for g in range(groups):
        nav.append(f'<li><a href="#g{g}">Group {g}</a><ul>')
        nav.extend(f'<li><a href="#g{g}i{i}">Item {g}.{i}</a></li>' for i in range(4))
        nav.append("</ul></li>")
    nav.append("</ul></nav>")
    table = ['<table><thead><tr><th>Row</th><th>Link</th><th>Qty</th><th>Action</th></tr></thead><tbody>']
    for r in range(1, rows + 1):
        table.append(
            f'<tr><td>Row {r}</td><td><a href="#row{r}">Details {r}</a></td>'
            f'<td><input aria-label="Qty {r}" size="4"></td>'
            f'<td><button onclick="mark({r})">Select</button></td></tr>'
        )
    table.append("</tbody></table>")
    body = (
        f"<h1>Size page {n}</h1>"
        '<p id="status" role="status">Nothing selected</p>'
        + "".join(nav)
        + "".join(table)
        + "<script>function mark(r){document.getElementById('status').textContent='Selected row '+r}</script>"
    )
    head = _HEAD.format(title=f"Size {n}")
    used = _count_elements(head + body)
    pad = n - used - 1  # the wrapping <div>
    if pad < 0:
        raise ValueError(f"size page {n}: skeleton already has {used} elements")
    filler = '<div aria-hidden="false">' + "".join(f"<span>s{i} </span>" for i in range(pad)) + "</div>"
    return head + body + filler + _TAIL


def table_page(rows: int = TABLE_ROWS) -> str:
    out = [_HEAD.format(title=f"Inventory ({rows} rows)"), "<h1>Inventory</h1>",
           '<p id="status" role="status">Nothing selected</p>',
           "<table><thead><tr><th>Row</th><th>Item</th><th>Action</th></tr></thead><tbody>"]
    for r in range(1, rows + 1):
        out.append(f'<tr><td>Row {r}</td><td>Widget {r * 7 % 1000}</td>'
                   f'<td><button onclick="sel({r})">Select</button></td></tr>')
    out.append("</tbody></table>")
    out.append("<script>function sel(r){document.getElementById('status').textContent='Selected row '+r}</script>")
    out.append(_TAIL)
    return "".join(out)


def article_page(sections: int = ARTICLE_SECTIONS) -> str:
    rng = random.Random(7)
    titles = ["Arrivals", "Charting the Coast", ARTICLE_THIRD_TITLE, "Storm Season", "The Ledger",
              "Ferries and Crews", "Lanterns", "The North Pier", "Fog Signals", "Salt Trade",
              "Winter Nets", "Departures"]
    out = [_HEAD.format(title="The Keeper's Year"), "<article><h1>The Keeper's Year</h1>"]
    for s in range(sections):
        title = titles[s % len(titles)]
        out.append(f'<section aria-labelledby="s{s + 1}"><h2 id="s{s + 1}">{s + 1}. {html.escape(title)}</h2>')
        for p in range(6):
            text = " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(4))
            if s == 2 and p == 3:
                text += " " + html.escape(ARTICLE_MARKER)
            out.append(f"<p>{text}</p>")
        out.append("</section>")
    out.append("</article>")
    out.append(_TAIL)
    return "".join(out)


def form_page() -> str:
    rows = []
    for f in FORM_FIELDS:
        fid = f"f-{f.key}"
        if f.kind == "textarea":
            ctl = f'<textarea id="{fid}" name="{f.key}" rows="2"></textarea>'
        elif f.kind == "select":
            opts = "".join(f'<option value="{_slug(o)}">{html.escape(o)}</option>' for o in f.options)
            ctl = f'<select id="{fid}" name="{f.key}"><option value="">Choose…</option>{opts}</select>'
        elif f.kind == "checkbox":
            rows.append(f'<div><input type="checkbox" id="{fid}" name="{f.key}">'
                        f'<label for="{fid}">{html.escape(f.label)}</label></div>')
            continue
        elif f.kind == "radio":
            radios = "".join(
                f'<input type="radio" id="{fid}-{_slug(o)}" name="{f.key}" value="{_slug(o)}">'
                f'<label for="{fid}-{_slug(o)}">{html.escape(o)}</label> ' for o in f.options)
            rows.append(f"<fieldset><legend>Plan</legend>{radios}</fieldset>")
            continue
        elif f.kind == "range":
            ctl = f'<input type="range" id="{fid}" name="{f.key}" min="0" max="10" value="2">'
        else:
            ctl = f'<input type="{f.kind}" id="{fid}" name="{f.key}">'
        rows.append(f'<div><label for="{fid}">{html.escape(f.label)}</label> {ctl}</div>')
    checks = ",".join(
        f'["{f.key}","{f.kind}",{_js_str(f.expected)}]' for f in FORM_FIELDS)
    script = """<script>
const EXPECTED=[__EXPECTED__];
document.getElementById('reg').addEventListener('submit',e=>{e.preventDefault();
 const bad=[];const fd=e.target.elements;
 for(const [k,kind,v] of EXPECTED){
  let got;
  if(kind==='checkbox') got=String(fd[k].checked);
  else if(kind==='radio'){const c=[...document.getElementsByName(k)].find(x=>x.checked);got=c?c.value:'';}
  else got=fd[k].value;
  if(got.toLowerCase()!==v.toLowerCase()) bad.push(k+'='+JSON.stringify(got));
 }
 document.getElementById('result').textContent = bad.length? 'Form mismatch: '+bad.join(', ') : 'Form submitted: OK';
});
</script>""".replace("__EXPECTED__", checks)
    return (_HEAD.format(title="Registration") + "<h1>Registration</h1>"
            + '<form id="reg">' + "".join(rows)
            + '<button type="submit">Submit form</button></form>'
            + '<p id="result" role="status"></p>' + script + _TAIL)


def _js_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def login_page() -> str:
    return (_HEAD.format(title="Sign in") + "<h1>Sign in</h1>"
            '<form action="welcome.html" method="get">'
            '<div><label for="user">Username</label> <input id="user" name="user" autocomplete="off"></div>'
            '<div><label for="pass">Password</label> <input id="pass" name="pass" type="password"></div>'
            '<button type="submit">Log in</button></form>' + _TAIL)


def welcome_page() -> str:
    return (_HEAD.format(title="Account") + '<h1 id="greeting">…</h1><script>'
            "const q=new URLSearchParams(location.search);"
            f"const ok=q.get('user')==={_js_str(LOGIN_USER)}&&q.get('pass')==={_js_str(LOGIN_PASSWORD)};"
            "document.getElementById('greeting').textContent=ok?'Welcome, '+q.get('user')+'!':'Login failed';"
            "document.title=ok?'Welcome':'Login failed';"
            "</script>" + _TAIL)


def dialog_page() -> str:
    return (_HEAD.format(title="Account settings") + "<h1>Account settings</h1>"
            '<p id="status" role="status">Account active</p>'
            '<button onclick="document.getElementById(\'status\').textContent='
            'confirm(\'Delete your account?\')?\'Account deleted\':\'Deletion cancelled\'">Delete account</button> '
            '<button onclick="alert(\'Saved!\');document.getElementById(\'status\').textContent=\'Alert closed\'">'
            'Show alert</button>' + _TAIL)


def frames_page() -> str:
    return (_HEAD.format(title="Frames and shadow DOM") + "<h1>Frames and shadow DOM</h1>"
            '<p id="status" role="status">Idle</p>'
            '<button onclick="document.getElementById(\'status\').textContent=\'Main clicked\'">Main button</button>'
            '<div id="host"></div>'
            '<iframe id="frame" title="Inner frame" src="frame-inner.html" width="400" height="120"></iframe>'
            "<script>const root=document.getElementById('host').attachShadow({mode:'open'});"
            f"root.innerHTML='<p>{SHADOW_MARKER}</p><button id=\"sb\">Shadow button</button>';"
            "root.getElementById('sb').onclick=()=>{"
            "document.getElementById('shadow-status').textContent='Shadow clicked'};"
            "</script><p id=\"shadow-status\">Shadow idle</p>" + _TAIL)


def frame_inner_page() -> str:
    return (_HEAD.format(title="Inner") + f"<p>{FRAME_MARKER}</p>"
            '<p id="fstatus">Frame idle</p>'
            '<button onclick="document.getElementById(\'fstatus\').textContent=\'Frame clicked\'">Frame button</button>'
            + _TAIL)


def generate(directory: Path, sizes: tuple[int, ...] = SIZES_FULL) -> dict[str, int]:
    """Write every fixture into ``directory``; return {file name: element count}."""
    directory.mkdir(parents=True, exist_ok=True)
    pages = {f"size-{n}.html": size_page(n) for n in sizes}
    pages.update({
        "table-5000.html": table_page(),
        "article.html": article_page(),
        "form.html": form_page(),
        "login.html": login_page(),
        "welcome.html": welcome_page(),
        "dialog.html": dialog_page(),
        "frames.html": frames_page(),
        "frame-inner.html": frame_inner_page(),
    })
    counts = {}
    for name, markup in pages.items():
        (directory / name).write_text(markup, encoding="utf-8")
        counts[name] = _count_elements(markup)
    return counts


# --------------------------------------------------------------------------- server


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class PageServer:
    """A ThreadingHTTPServer on 127.0.0.1 (ephemeral port) serving ``directory``."""

    def __init__(self, directory: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="pages", daemon=True)

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, name: str) -> str:
        return f"{self.base}/{name}"

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
