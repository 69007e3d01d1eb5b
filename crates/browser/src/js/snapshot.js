// page_snapshot: the page as a compact tree, one line per meaningful node.

// Input types whose expected format an agent should see.
const TYPED = new Set(['email', 'tel', 'url', 'date', 'time', 'datetime-local', 'month', 'week', 'color', 'file', 'password']);

// One table row on one line: each cell's words in order, with its actionable
// elements (refs) where they stand. Nothing is cut: words around a link are
// part of what the cell says (issue 13).
function rowText(tr) {
  const parts = [];
  for (const cell of tr.children) parts.push(cellText(cell));
  return parts.join(' | ');
}

function cellText(cell) {
  const out = [];
  let run = '';
  let controls = 0;
  const flush = () => { const t = squash(run); if (t) out.push(t); run = ''; };
  (function add(n) {
    for (const c of n.childNodes) {
      if (c.nodeType === 3) { run += c.data; continue; }
      if (c.nodeType !== 1 || unrendered(c)) continue;
      const r = roleOf(c);
      if (isInteractive(c, r)) {
        flush();
        controls++;
        out.push(control(c, r || 'generic'));
        continue;
      }
      if (c.tagName === 'IMG') { run += ' ' + (c.getAttribute('alt') || '') + ' '; continue; }
      run += ' ';
      add(c);
      run += ' ';
    }
  })(cell);
  flush();
  // A plain cell stays bare; beside controls, its words are quoted.
  if (!controls) return out.join(' ');
  return out.map((p) => (typeof p === 'string' ? quote(p) : p.text)).join(' ');
}

function control(e, r) {
  const n = nameOf(e, r);
  const v = valueOf(e, r);
  const st = states(e, r);
  return { text: r + (n ? ' ' + quote(n) : '') + ' [' + refOf(e) + ']' + (st.length ? ' ' + st.join(' ') : '') + (v !== null && v !== undefined && v !== '' ? ' = ' + quote(clip(String(v), 80)) : '') };
}


// Walks from `root` and writes one line per meaningful node. Options:
// interactive (only actionable elements, flat), viewport (only what is on
// screen), maxBytes (stop there and say where: `next` is the first line left
// out), offset (start at that line: the continuation of a cut snapshot).
function snapshot(opts) {
  layoutSeen = new WeakMap();
  const lines = [];
  let bytes = 0;
  let truncatedAt = -1;
  let seen = 0;
  const skip = opts.offset || 0;
  const root = opts.root || document.body || document.documentElement;
  const push = (line) => {
    if (truncatedAt >= 0) return;
    if (seen++ < skip) return;
    if (bytes + line.length + 1 > opts.maxBytes) { truncatedAt = seen - 1; return; }
    lines.push(line);
    bytes += line.length + 1;
  };

  // Returns the inline text of a node when it is only text (to fold into its parent's line).
  function walk(node, depth, pad) {
    // Over budget: stop walking. Counting what was left out would cost a walk of the whole page.
    if (truncatedAt >= 0) return;
    if (node.nodeType === 3) {
      const t = squash(node.data);
      if (t && !opts.interactive) push(pad + '- text: ' + quote(t));
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
    if (el && el.tagName === 'LEGEND' && el.parentElement && el.parentElement.tagName === 'FIELDSET') return;
    if (el && el.tagName === 'LABEL' && el.control && !opts.interactive) {
      // The control's name already says what the label says: keep only what the label wraps.
      for (const c of el.children) walk(c, depth, pad);
      return;
    }
    const role = el ? roleOf(el) : '';
    const interactive = el ? isInteractive(el, role) : false;
    if (el && opts.viewport && !inViewport(el) && !el.shadowRoot && el.tagName !== 'IFRAME') {
      // Off-screen: rows, controls and leaves go; containers are still walked, their children may show.
      if (!el.children.length || el.tagName === 'TR' || el.tagName === 'LI' || isInteractive(el, roleOf(el))) return;
    }
    if (el && (role === 'listitem' || role === 'cell') && !opts.interactive && !labelOf(el)) {
      // A wrapper around one element and no text of its own says nothing: show the element in its place.
      const only = soleChild(el);
      if (only) { walk(only, depth, pad); return; }
    }
    if (el && role && role !== 'generic' && role !== 'presentation' && role !== 'none') {
      const leaf = !NAME_FROM_CONTENT.has(role) || !hasElementChildWithRole(el);
      // Content names are the element's words: a long list item or link is not cut.
      const name = leaf ? nameOf(el, role, Infinity) : clip(labelOf(el), 100);
      const val = valueOf(el, role);
      const ref = interactive || ANCHORS.has(role) ? refOf(el) : '';
      if (opts.interactive && !interactive) {
        for (const c of childrenOf(el)) walk(c, depth, pad);
        return;
      }
      if (role === 'row' && !opts.interactive) {
        push(pad + '- row' + (ref ? ' [' + ref + ']' : '') + ': ' + rowText(el));
        return;
      }
      let line = pad + '- ' + role;
      if (name) line += ' ' + quote(name);
      if (ref) line += ' [' + ref + ']';
      const st = states(el, role);
      if (st.length) line += ' ' + st.join(' ');
      if (el.tagName === 'INPUT' && TYPED.has(el.type)) line += ' type=' + el.type;
      if (val !== null && val !== undefined) line += ' = ' + quote(clip(String(val), 200));
      if (role === 'link' && !opts.interactive) {
        const href = el.getAttribute('href');
        if (href && !href.startsWith('javascript:') && !href.startsWith('#') && href.length < 120) line += ' -> ' + href;
      }
      if (el.tagName === 'SELECT') {
        // Options on the select's line: page_select takes their labels, so they need no refs.
        const opts_ = Array.from(el.options, (o) => quote(clip(squash(o.label || o.text), 60)));
        const shown = opts_.slice(0, 25).join(', ') + (opts_.length > 25 ? ', … ' + (opts_.length - 25) + ' more' : '');
        push(line + ' options: ' + shown);
        return;
      }
      if (role === 'iframe') {
        push(line);
        for (const c of childrenOf(el)) walk(c, depth + 1, pad + '  ');
        return;
      }
      // Leaf-ish: name already carries the text of name-from-content roles.
      if (NAME_FROM_CONTENT.has(role) && leaf) { push(line); return; }
      const inline = onlyText(el);
      if (inline !== null) {
        if (inline && inline !== name) line += ': ' + quote(inline);
        push(line);
        return;
      }
      push(line);
      if (opts.interactive) { for (const c of childrenOf(el)) walk(c, depth, pad); return; }
      for (const c of childrenOf(el)) walk(c, depth + 1, pad + '  ');
      return;
    }
    if (el && interactive) {
      // e.g. a div with onclick or tabindex: give it a ref and a name from its text;
      // one that holds more (a whole post) keeps its contents below it.
      const text = textOf(el);
      if (text.length <= 100 && textOnly(el)) {
        push(pad + '- generic' + (text ? ' ' + quote(text) : '') + ' [' + refOf(el) + ']');
        return;
      }
      push(pad + '- generic [' + refOf(el) + ']');
      if (opts.interactive) { for (const c of childrenOf(el)) walk(c, depth, pad); return; }
      for (const c of childrenOf(el)) walk(c, depth + 1, pad + '  ');
      return;
    }
    if (el && el.firstElementChild && !opts.interactive && textOnly(el)) {
      // A run of plain inline pieces (spans, em, b…) reads as one text, not a line each.
      const t = squash(visibleText(el));
      if (t) push(pad + '- text: ' + quote(t));
      return;
    }
    for (const c of childrenOf(node)) walk(c, depth, pad);
  }

  function soleChild(el) {
    let only = null;
    for (const c of el.childNodes) {
      if (c.nodeType === 3) { if (c.data.trim()) return null; continue; }
      if (c.nodeType !== 1 || SKIP.has(c.tagName)) continue;
      if (only) return null;
      only = c;
    }
    return only && !el.shadowRoot ? only : null;
  }

  // The element's text when it holds nothing but text (and plain wrappers), else null.
  function onlyText(el) {
    return textOnly(el) ? squash(visibleText(el)) : null;
  }

  function textOnly(el) {
    if (el.shadowRoot || el.tagName === 'IFRAME' || el.tagName === 'SELECT') return false;
    for (const c of el.children) {
      if (roleOf(c) || isInteractive(c, '') || c.shadowRoot || c.tagName === 'IFRAME') return false;
      if (c.children.length && !textOnly(c)) return false;
    }
    return true;
  }

  function hasElementChildWithRole(el) {
    for (const c of el.querySelectorAll('*')) { const r = roleOf(c); if (r && r !== 'img') return true; }
    return !!el.shadowRoot;
  }

  const rootEl = root.nodeType === 1 ? root : null;
  if (rootEl && opts.root) walk(rootEl, 0, '');
  else for (const c of childrenOf(root)) walk(c, 0, '');
  return { text: lines.join('\n'), truncated: truncatedAt >= 0, next: truncatedAt, lines: seen, title: document.title };
}
