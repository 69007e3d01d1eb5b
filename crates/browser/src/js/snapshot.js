// page_snapshot: the page as a terse outline that keeps every visible word.
//
// The format (README, "The snapshot's format"), chosen by measuring bytes on real
// pages (issue 13): text is written as it reads, without quotes or a role;
// a block's links and controls stay inline where they stand, a link as
// `[words][e12]` and any other control as `role "name" [e12]`; headings are
// `#` per level; list items start with `- `; a data table row is one line,
// its cells split by `|`; a container with a name or a ref gets a line
// (`navigation "Site" [e2]`) and its contents one more space of indent.
// Wrappers that say nothing (unnamed lists, paragraphs, generic boxes) have
// no line: their contents take their place.

// Input types whose expected format an agent should see.
const TYPED = new Set(['email', 'tel', 'url', 'date', 'time', 'datetime-local', 'month', 'week', 'color', 'file', 'password']);

// Roles whose element reads as its words in running text: no line of its own.
const PLAIN = new Set(['paragraph', 'generic', 'presentation', 'none']);

// A link target that is not a place (`#`, `javascript:` in any case): such a
// link acts by script, each its own way, so it is never the same as another.
const BY_SCRIPT = /^\s*(?:#$|javascript:)/i;

// A list item that is one link and nothing else.
const LONE_LINK = /^\[[^\[\]]*\](?:\[(?:f\d+)?e\d+\])?(?: [a-z]+)*(?:\([^()]*\))?$/;

// Lines longer than this (or than half the byte budget) are split between
// words, so a budget cut or a continuation never has to swallow a whole
// article written as one block.
const LONG_LINE = 2000;

// One table row on one line: each cell's words in order, with its actionable
// elements (refs) where they stand. Nothing is cut: words around a link are
// part of what the cell says (issue 13). A row shaped like the row written
// just before it (the same controls in the same cells) is written `bare`:
// its controls without role words, quotes or link brackets, as `name [e12]`
// (on the bench's 5,000-element page, rows were 72% of the bytes). Cells are
// split by a bare `|`: ` | ` cost 6 bytes a row and no fewer tokens.
function rowLine(tr, links, prevShape) {
  const found = [];
  const cells = [];
  for (let cell = tr.firstElementChild; cell; cell = cell.nextElementSibling) {
    found.cell = cells.length;
    cells.push(inlineOf(cell, links, true, found));
  }
  let shape = '';
  for (const f of found) shape += f.cell + ':' + f.role + ',';
  const bare = found.length > 0 && shape === prevShape;
  // Controls were left as marks `[\u0000i\u0000`: odd pieces of the split are their numbers.
  const pieces = cells.join('|').split('\u0000');
  let text = '';
  for (let i = 0; i < pieces.length; i++) {
    if (i % 2 === 0) text += i + 1 < pieces.length ? pieces[i].slice(0, -1) : pieces[i];
    else { const f = found[+pieces[i]]; text += control(f.e, f.role, links, bare); }
  }
  return { text, shape };
}

// A row in full, as page_find gives it for context.
function rowText(tr) {
  return rowLine(tr, false, null).text;
}

// An actionable element as it reads inline: `[words][e12]` for a link,
// `role "name" [e12] states = "value"` for any other; `name [e12]` when bare.
function control(e, r, links, bare) {
  let s;
  if (r === 'link') {
    // An image link is named by its image.
    const n = nameOf(e, r, Infinity) || imageName(e);
    if (!bare && shownBefore(e, n)) return '[' + n + ']';
    const ref = refOf(e);
    s = bare ? n + ' [' + ref + ']' : '[' + n + '][' + ref + ']';
  } else {
    const ref = refOf(e);
    // A clickable box (a div with onclick or tabindex) is named by its words.
    const n = nameOf(e, r, Infinity) || (r === 'generic' ? textOf(e) : '');
    s = bare ? n + ' [' + ref + ']' : r + (n ? ' ' + quote(n) : '') + ' [' + ref + ']';
  }
  const st = states(e, r);
  if (st.length) s += ' ' + st.join(' ');
  if (r === 'link') {
    const href = e.getAttribute('href');
    if (href && !href.startsWith('javascript:')) {
      if (links) s += '(' + href + ')';
      else if (s.startsWith('[]')) s += '(' + shortTarget(e, href) + ')';
    }
    return s;
  }
  if (!bare && e.tagName === 'INPUT' && TYPED.has(e.type)) s += ' type=' + e.type;
  const v = valueOf(e, r);
  if (v !== null && v !== undefined && v !== '') s += ' = ' + quote(clip(String(v), 200));
  return s;
}

// The links a whole-page snapshot has written, by target and words. A link
// with the same words to the same place as one written above it (a site's
// menu again in its footer, "Share" after every post to one address) is
// written `[words]`, without a ref or target: the one above is the same click.
// Its words stay; only the ref goes. Targets that are not places (`#`,
// `javascript:`) do not count: such links act by script, each its own way.
let linksShown = null;
// The keys in the order they were added: a line tried and given up (a block
// inside) takes back the links it wrote (undoLinks).
const linksAdded = [];
function undoLinks(mark) {
  while (linksAdded.length > mark) linksShown.delete(linksAdded.pop());
}
// Targets are compared as written: one document, one base, so the same
// attribute is the same place (resolving `a.href` cost 5 µs a link, a sixth of
// a snapshot of the bench's 5,000-element page).
function shownBefore(e, name) {
  if (!linksShown || !name) return false;
  const href = e.getAttribute('href');
  if (!href || BY_SCRIPT.test(href)) return false;
  const key = href + '\u0000' + name;
  if (!linksShown.has(key)) {
    linksShown.add(key);
    linksAdded.push(key);
    return false;
  }
  // A state (focused, expanded) is news the line above did not tell.
  return states(e, 'link').length === 0;
}

// Where a link without words goes, in a few characters: the page's own path,
// or another site's host and path (an icon link reads `[][e7](twitter.com/ars)`).
function shortTarget(e, href) {
  let u;
  try { u = new URL(href, e.ownerDocument.baseURI); } catch (_) { return clip(href, 30); }
  const here = e.ownerDocument.location;
  const where = u.origin === here.origin ? u.pathname : u.host.replace(/^www\./, '') + u.pathname.replace(/\/$/, '');
  return clip(where, 30);
}

// Elements that start a new block: their words are a line of their own.
const BLOCK_TAGS = new Set(['P', 'DIV', 'UL', 'OL', 'LI', 'DL', 'DT', 'DD', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE',
  'PRE', 'FORM', 'ARTICLE', 'SECTION', 'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'MAIN', 'FIGURE', 'FIGCAPTION', 'TABLE', 'TR',
  'TD', 'TH', 'ADDRESS', 'FIELDSET', 'DETAILS', 'SUMMARY', 'HR', 'CENTER']);

// The words of `el` on one line, its links and leaf controls inline; null
// when it holds blocks or structure that need lines of their own. With
// `always` (a table cell, a heading), everything is flattened into the line.
// With `found` (a row), controls are left as numbered marks and listed there.
function inlineOf(el, links, always, found) {
  const line = new Line(links, always, found);
  const mark = linksAdded.length;
  if (composed(el)) { for (const c of childrenOf(el)) if (!line.add(c)) return given(mark); }
  else if (!el.firstElementChild) line.words(el.textContent);
  else for (let c = el.firstChild; c; c = c.nextSibling) if (!line.add(c)) return given(mark);
  return line.text();
}

// A line given up: the links it wrote were not written.
function given(mark) {
  if (linksShown) undoLinks(mark);
  return null;
}

// Set for the length of a `viewport` snapshot.
let onScreenOnly = false;

// Inline elements with no role and nothing to say of their own: without
// attributes, they are their words (no role, state or handler to read).
const PLAIN_INLINE = new Set(['SPAN', 'B', 'I', 'EM', 'STRONG', 'SMALL', 'CODE', 'ABBR', 'TIME', 'SUB', 'SUP', 'U', 'S',
  'MARK', 'CITE', 'Q', 'FONT', 'KBD', 'VAR', 'DFN', 'BDI', 'BDO', 'DEL', 'INS', 'SAMP', 'TT', 'BIG', 'STRIKE', 'NOBR', 'WBR']);

// A line being written from inline pieces: add(node) takes a node's words
// (and its links and leaf controls) or, for a block, refuses it unchanged.
// A class, not closures: a snapshot writes thousands of lines.
class Line {
  constructor(links, always, found) {
    this.out = '';
    // The line's last two characters (UTF-16 units), kept apart: reading them from
    // the line would flatten the string it is built as, on every piece (a quadratic
    // cost on a long line: 4% of a snapshot of the bench's 5,000-element page).
    this.end = 0;
    this.before = 0;
    // At an element's edge, words on both sides stay apart (as they are in the accessibility tree).
    this.edge = false;
    this.links = links;
    this.always = always;
    this.found = found;
  }

  add(c) {
    const at = this.out.length;
    const { edge, end, before } = this;
    const mark = linksAdded.length;
    if (this.put(c)) return true;
    given(mark);
    this.out = this.out.slice(0, at);
    this.edge = edge;
    this.end = end;
    this.before = before;
    return false;
  }

  append(t) {
    const n = t.length;
    if (n === 0) return;
    this.before = n > 1 ? t.charCodeAt(n - 2) : this.end;
    this.end = t.charCodeAt(n - 1);
    this.out += t;
  }

  // Whether the line ends in a letter, a digit or a ref's `]`.
  endsInWord() {
    const c = this.end;
    if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 93;
    const last = c >= 0xdc00 && c <= 0xdfff ? String.fromCharCode(this.before, c) : String.fromCharCode(c);
    return /[\p{L}\p{N}]$/u.test(last);
  }

  text() {
    return squash(this.out);
  }

  words(t) {
    if (this.edge && this.endsInWord() && startsWithWord(t)) this.append(' ');
    this.edge = false;
    this.append(t);
  }

  put(c) {
    const type = c.nodeType;
    if (type === 3) { this.words(c.data); return true; }
    if (type !== 1) return true;
    const tag = c.tagName;
    if (SKIP.has(tag)) return true;
    const plain = !c.hasAttributes();
    if (!plain && (c.hasAttribute('hidden') || c.getAttribute('aria-hidden') === 'true')) return true;
    if (tag === 'BR') { this.append(' '); return true; }
    if (tag === 'LEGEND' && c.parentElement && c.parentElement.tagName === 'FIELDSET') return true;
    if (tag === 'LABEL' && c.control) {
      // The control's name already says what the label says: keep only what the label wraps.
      for (let k = c.firstElementChild; k; k = k.nextElementSibling) if (!this.put(k)) return false;
      return true;
    }
    const always = this.always;
    const block = BLOCK_TAGS.has(tag);
    if (!always && (block || tag === 'IFRAME' || tag === 'SELECT' || c.shadowRoot)) return false;
    // In a table cell, like in a row's name, what is not rendered is known without a layout query.
    if (!always && !visible(c) && getComputedStyle(c).display !== 'contents') return true;
    // On-screen only: an inline piece off screen goes (text nodes have no box of their own to ask).
    if (onScreenOnly && !c.shadowRoot && !inViewport(c)) return true;
    this.edge = true;
    if (!(plain && PLAIN_INLINE.has(tag))) {
      const r = roleOf(c);
      if (isInteractive(c, r)) {
        if (r === 'link' && twinned(c)) return true;
        if (!always && !leafControl(c)) return false;
        const found = this.found;
        if (found) { this.words('[\u0000' + found.length + '\u0000'); found.push({ e: c, role: r || 'generic', cell: found.cell }); }
        else this.words(control(c, r || 'generic', this.links, false));
        this.edge = true;
        return true;
      }
      if (tag === 'IMG') { this.append(' ' + freshAlt(c.getAttribute('alt')) + ' '); return true; }
      if (r && !INLINE_ROLES.has(r) && !always) return false;
    }
    // Blocks flattened into one line (a table cell) are apart.
    if (block) this.append(' ');
    if (composed(c)) { for (const k of childrenOf(c)) if (!this.put(k)) return false; }
    // Only text inside: its words in one read (each node the walk touches costs a wrapper in lumo's world).
    else if (!c.firstElementChild) this.words(c.textContent);
    else for (let k = c.firstChild; k; k = k.nextSibling) if (!this.put(k)) return false;
    if (block) this.append(' ');
    this.edge = true;
    return true;
  }
}

// Whether a piece starts with a letter, a digit or `[`.
function startsWithWord(s) {
  const c = s.charCodeAt(0);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 91;
  return /^[\p{L}\p{N}]/u.test(s.slice(0, 2));
}

// Roles that read as words inside a line of text.
const INLINE_ROLES = new Set(['generic', 'presentation', 'none', 'img', 'paragraph']);

// A control with nothing inside that has a role of its own (words, images, plain wrappers).
function leafControl(el) {
  if (el.shadowRoot || el.tagName === 'SELECT' || el.tagName === 'IFRAME') return false;
  for (let c = el.firstElementChild; c; c = c.nextElementSibling) {
    const r = roleOf(c);
    if ((r && !INLINE_ROLES.has(r)) || isInteractive(c, r) || c.shadowRoot || c.tagName === 'IFRAME' || !leafControl(c)) return false;
  }
  return true;
}

// Set for a whole-page snapshot: a narrow look (a subtree, the viewport) may not
// hold a link's twin, so there every link is written.
let twinsDropped = false;

// A link of images or icons only (no words of its own) next to a link to the
// same place whose words say at least what its name says: a thumbnail beside
// its headline. It adds a ref and its name again and nothing else, so it is
// left out; the twin with the words is the one to click. Looked for among the
// link's nearest three containers, by a selector (no walk of theirs).
function twinned(e) {
  if (!twinsDropped || e.tagName !== 'A' || !e.firstElementChild || squash(e.textContent)) return false;
  const href = e.getAttribute('href');
  if (!href || BY_SCRIPT.test(href)) return false;
  const name = squash(nameOf(e, 'link', Infinity) || imageName(e)).toLowerCase();
  const same = 'a[href="' + CSS.escape(href) + '"]';
  let box = e.parentElement;
  for (let up = 0; up < 3 && box; up++, box = box.parentElement) {
    for (const a of box.querySelectorAll(same)) {
      if (a === e) continue;
      const words = squash(a.textContent).toLowerCase();
      if (words && words.includes(name) && visible(a) && a.getAttribute('aria-hidden') !== 'true') return true;
    }
  }
  return false;
}

// An image link's name, from its image.
function imageName(e) {
  const img = e.querySelector('img[alt]');
  return img ? squash(img.alt) : '';
}

// The alt texts a snapshot has written: an image that says what one above said
// (a thumbnail repeated down a list) adds no words.
let altsSeen = null;
function freshAlt(alt) {
  if (!alt) return '';
  if (!altsSeen) return alt;
  const key = squash(alt);
  if (altsSeen.has(key)) return '';
  altsSeen.add(key);
  return alt;
}

// A heading's level, from aria-level or its tag (2 when neither says).
function headingLevel(el) {
  return Number(el.getAttribute('aria-level') || el.tagName.slice(1)) || 2;
}

const HEADINGS = 'h1,h2,h3,h4,h5,h6,[role=heading]';

// A heading's section, what a subtree of a heading's ref reads: the heading and
// everything after it in the document up to the next heading of its level or
// above (or the end). `place(node)` says where a node the walk meets stands:
// before the heading (left out), in the section or holding part of it (walked),
// or at the end (the walk stops).
function sectionOf(h) {
  const scope = h.getRootNode();
  const level = headingLevel(h);
  let end = null;
  let after = false;
  for (const x of scope.querySelectorAll(HEADINGS)) {
    if (x === h) { after = true; continue; }
    if (after && !h.contains(x) && roleOf(x) === 'heading' && headingLevel(x) <= level) { end = x; break; }
  }
  let box = h.parentNode || h;
  if (end) while (box.parentNode && !box.contains(end)) box = box.parentNode;
  else box = scope.nodeType === 9 ? (scope.body || scope.documentElement) : scope;
  const place = (n) => {
    if (n === h) return IN;
    const toStart = n.compareDocumentPosition(h);
    // A node of another tree (a shadow root's, a frame's) is reached only through a host in the section.
    if (toStart & (Node.DOCUMENT_POSITION_CONTAINED_BY | Node.DOCUMENT_POSITION_DISCONNECTED)) return IN;
    if (toStart & Node.DOCUMENT_POSITION_FOLLOWING) return BEFORE;
    if (!end) return IN;
    if (n === end) return PAST;
    const toEnd = n.compareDocumentPosition(end);
    if (toEnd & Node.DOCUMENT_POSITION_CONTAINED_BY) return IN;
    return toEnd & Node.DOCUMENT_POSITION_PRECEDING ? PAST : IN;
  };
  return { box, place };
}
const BEFORE = 0;
const IN = 1;
const PAST = 2;

// Indents, made once.
const pads = [];
const padOf = (d) => pads[d] || (pads[d] = ' '.repeat(d));

// Walks from `root` and writes one line per block. Options: interactive
// (only actionable elements, flat), viewport (only what is on screen),
// maxBytes (stop there and say where: `next` is the first line left out),
// offset (start at that line: the continuation of a cut snapshot), root or
// ref (a subtree; its links show their targets).
function snapshot(opts) {
  layoutSeen = new WeakMap();
  const lines = [];
  let bytes = 0;
  let truncatedAt = -1;
  let seen = 0;
  const skip = opts.offset || 0;
  const root = opts.root || document.body || document.documentElement;
  // A subtree is a narrow look: there, links carry their targets (page_extract shows them too).
  const links = !!opts.root;
  // The row written last (a row like it is written bare), and the line count after it.
  let lastRow = { parent: null, shape: null, end: -1 };
  // Lines are split to fit half the budget, so a continuation always makes progress.
  const longLine = Math.min(LONG_LINE, Math.max(80, Math.floor(opts.maxBytes / 2)));
  // A list item's bullet goes on the first line written inside it.
  let bullet = null;
  const put = (line) => {
    if (truncatedAt >= 0) return;
    if (seen++ < skip) return;
    if (bytes + line.length + 1 > opts.maxBytes) { truncatedAt = seen - 1; return; }
    lines.push(line);
    bytes += line.length + 1;
  };
  const push = (pad, text) => {
    if (bullet !== null) { pad = bullet + '- '; bullet = null; }
    while (text.length > longLine) {
      const { at, next } = splitAt(text, longLine);
      put(pad + text.slice(0, at));
      text = text.slice(next);
      pad = pad.replace('- ', '  ');
    }
    put(pad + text);
  };

  // A heading's ref: its section (sectionOf), and whether the walk has passed its end.
  const section = opts.root && opts.root.nodeType === 1 && !opts.interactive && roleOf(opts.root) === 'heading'
    ? sectionOf(opts.root) : null;
  let sectionEnded = false;

  function walk(node, depth) {
    // Over budget: stop walking. Counting what was left out would cost a walk of the whole page.
    if (truncatedAt >= 0 || sectionEnded) return;
    const pad = padOf(depth);
    if (node.nodeType === 3) {
      if (opts.interactive) return;
      const t = squash(node.data);
      if (t) push(pad, t);
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 11) return;
    if (node.nodeType === 1) {
      if (SKIP.has(node.tagName)) return;
      if (node.getAttribute('aria-hidden') === 'true') return;
      if (!visible(node) && node.tagName !== 'OPTION' && !(node.tagName === 'INPUT' && (node.type === 'checkbox' || node.type === 'radio' || node.type === 'file'))) {
        // display:contents elements report invisible but their children may show.
        if (getComputedStyle(node).display !== 'contents') return;
      }
    }
    const el = node.nodeType === 1 ? node : null;
    if (!el) { walkAll(node, depth); return; }
    if (el.tagName === 'LEGEND' && el.parentElement && el.parentElement.tagName === 'FIELDSET') return;
    if (el.tagName === 'LABEL' && el.control && !opts.interactive) {
      // The control's name already says what the label says: keep only what the label wraps.
      for (const c of elementsOf(el)) walk(c, depth);
      return;
    }
    const role = roleOf(el);
    const interactive = isInteractive(el, role);
    if (opts.viewport && !inViewport(el) && !el.shadowRoot && el.tagName !== 'IFRAME') {
      // Off-screen: rows, controls and leaves go; containers are still walked, their children may show.
      if (!el.firstElementChild || el.tagName === 'TR' || el.tagName === 'LI' || interactive) return;
    }
    if (role === 'link' && twinned(el)) return;
    if (opts.interactive) {
      if (interactive) push('', control(el, role || 'generic', false));
      if (!interactive || !leafControl(el)) walkAll(el, depth);
      return;
    }
    if (interactive && role !== 'iframe' && el.tagName !== 'SELECT' && leafControl(el)) {
      push(pad, control(el, role || 'generic', links));
      return;
    }
    if (role === 'row') {
      const same = lastRow.parent === el.parentNode && lastRow.end === lines.length && lines.length > 0;
      const row = rowLine(el, links, same ? lastRow.shape : null);
      if (row.text) push(pad, interactive ? '[' + refOf(el) + '] ' + row.text : row.text);
      lastRow.parent = el.parentNode;
      lastRow.shape = row.shape;
      lastRow.end = lines.length;
      return;
    }
    if (role === 'listitem') { item(el, depth, inlineOf(el, links, false)); return; }
    if (!role || PLAIN.has(role) || (role === 'list' && !labelOf(el))) {
      if (interactive) {
        // e.g. a div with onclick or tabindex that holds more (a whole post): a ref, then its contents.
        push(pad, 'generic [' + refOf(el) + ']');
        walkAll(el, depth + 1);
        return;
      }
      // A block of text and inline pieces reads as one line; a wrapper of blocks says nothing itself.
      if (el.firstChild) {
        const text = inlineOf(el, links, false);
        if (text !== null) { if (text) push(pad, text); return; }
      }
      walkAll(el, depth);
      return;
    }
    const ref = interactive || ANCHORS.has(role) ? refOf(el) : '';
    if (role === 'heading') {
      const level = headingLevel(el);
      const text = labelOf(el) || inlineOf(el, links, true);
      push(pad, '#'.repeat(Math.min(level, 6)) + ' ' + text + (ref ? ' [' + ref + ']' : ''));
      return;
    }
    let line = role;
    const name = clip(labelOf(el), 100);
    if (name) line += ' ' + quote(name);
    if (ref) line += ' [' + ref + ']';
    const st = states(el, role);
    if (st.length) line += ' ' + st.join(' ');
    if (el.tagName === 'SELECT') {
      // Options on the select's line: page_select takes their labels, so they need no refs.
      line = control(el, role, false);
      const all = Array.from(el.options, (o) => quote(clip(squash(o.label || o.text), 60)));
      push(pad, line + ' options: ' + all.slice(0, 25).join(', ') + (all.length > 25 ? ', … ' + (all.length - 25) + ' more' : ''));
      return;
    }
    if (role === 'iframe' || interactive) {
      // A frame's name, not its address: link targets are left out too.
      const title = labelOf(el) || el.getAttribute('title') || el.getAttribute('name');
      if (role === 'iframe') line = 'iframe' + (title ? ' ' + quote(title) : '') + ' [' + ref + ']';
      push(pad, line);
      walkAll(el, depth + 1);
      return;
    }
    if (role === 'img') {
      const alt = freshAlt(nameOf(el, role, Infinity));
      if (alt) push(pad, 'img ' + quote(alt));
      return;
    }
    const val = valueOf(el, role);
    if (val !== null && val !== undefined) line += ' = ' + quote(clip(String(val), 200));
    const text = inlineOf(el, links, false);
    if (text !== null) {
      push(pad, line + (text && text !== name ? ': ' + text : ''));
      return;
    }
    push(pad, line);
    walkAll(el, depth + 1);
  }

  // A list item: one line when its contents are inline, else a bullet on the first line inside it.
  function item(el, depth, text) {
    const pad = padOf(depth);
    if (text !== null) { if (text) push(pad, '- ' + text); return; }
    bullet = pad;
    walkAll(el, depth + 1);
    bullet = null;
  }

  // The nodes under `parent` (childrenOf): runs of text and inline pieces
  // between blocks read as one line each, and so do runs of list items that
  // are each one link (a menu). Own children are followed along the sibling
  // chain, without an array per element (the garbage it made was a tenth of a
  // snapshot's time).
  function walkAll(parent, depth) {
    const nodes = composed(parent) ? childrenOf(parent) : null;
    let i = 0;
    let line = null;
    let menu = [];
    const flush = () => {
      const text = line && line.text();
      if (text) push(padOf(depth), text);
      line = null;
      if (menu.length) push(padOf(depth), menu.join(' '));
      menu = [];
    };
    for (let c = nodes ? nodes[0] : parent.firstChild; c; c = nodes ? nodes[++i] : c.nextSibling) {
      if (section) {
        if (sectionEnded) break;
        const at = section.place(c);
        if (at === BEFORE) continue;
        if (at === PAST) { sectionEnded = true; break; }
      }
      if (!opts.interactive) {
        if (c.nodeType === 1 && c.tagName === 'LI' && !opts.viewport && roleOf(c) === 'listitem' && visible(c) && c.getAttribute('aria-hidden') !== 'true') {
          const text = inlineOf(c, links, false);
          if (text !== null && LONE_LINK.test(text)) { menu.push(text); continue; }
          flush();
          item(c, depth, text);
          continue;
        }
        if (menu.length && c.nodeType === 3 && !c.data.trim()) continue;
        if (menu.length) flush();
        if (!line) line = new Line(links, false);
        if (line.add(c)) continue;
      }
      flush();
      walk(c, depth);
    }
    flush();
  }

  const rootEl = root.nodeType === 1 ? root : null;
  onScreenOnly = !!opts.viewport;
  focusSeen = new Map();
  altsSeen = new Set();
  twinsDropped = !opts.root && !opts.viewport;
  linksShown = twinsDropped && !opts.interactive ? new Set() : null;
  try {
    if (section) walkAll(section.box, 0);
    else if (rootEl && opts.root) walk(rootEl, 0);
    else walkAll(root, 0);
  } finally {
    onScreenOnly = false;
    focusSeen = null;
    altsSeen = null;
    twinsDropped = false;
    linksShown = null;
    linksAdded.length = 0;
  }
  return { text: lines.join('\n'), truncated: truncatedAt >= 0, next: truncatedAt, lines: seen, title: document.title };
}

// Where to split a line longer than `limit`: the last space before it that
// is not inside `[…]`, else the last space, else the limit itself.
function splitAt(text, limit) {
  let depth = 0;
  let outside = -1;
  let any = -1;
  for (let i = 1; i < limit; i++) {
    const ch = text[i];
    if (ch === '[') depth++;
    else if (ch === ']' && depth > 0) depth--;
    else if (ch === ' ') {
      any = i;
      if (depth === 0 && text[i - 1] !== ']') outside = i;
    }
  }
  const at = outside > 0 ? outside : any > 0 ? any : limit;
  return { at, next: text[at] === ' ' ? at + 1 : at };
}
