// page_find: the elements whose name, value or text match a query.

// The elements a query can match, each with the text it is matched on (its
// "hay"). A regex is never run here: lumo matches hays in Rust with a
// linear-time engine, since a page-side RegExp can backtrack for minutes.
function gather(q) {
  layoutSeen = new WeakMap();
  const needle = q.text ? q.text.toLowerCase() : null;
  const byText = !!(needle || q.regex);
  const out = [];
  const root = document.body || document.documentElement;
  const all = [root];
  // Subtrees the snapshot leaves out (aria-hidden, hidden, scripts…) are not found either.
  // A walk by element siblings: a TreeWalker with a script filter cost a third of a find.
  (function collect(n) {
    for (let c = n.firstElementChild; c; c = c.nextElementSibling) {
      if (unrendered(c)) continue;
      all.push(c);
      if (c.shadowRoot) collect(c.shadowRoot);
      if (c.tagName === 'IFRAME') { try { if (c.contentDocument && c.contentDocument.body) { all.push(c.contentDocument.body); collect(c.contentDocument.body); } } catch (_) {} }
      collect(c);
    }
  })(root);
  for (const e of all) {
    if (SKIP.has(e.tagName)) continue;
    const role = roleOf(e);
    const interactive = isInteractive(e, role);
    if (q.role && role !== q.role) continue;
    if (!role && !interactive && !byText) continue;
    // Containers match on their own text nodes (each hit is the innermost element); the rest on their name.
    const own = !interactive && !NAME_FROM_CONTENT.has(role);
    if (needle) {
      // Cheap prefilter: a name or value can only match if the text or a naming attribute has the needle.
      const words = own && e.tagName !== 'FIELDSET' ? ownText(e) : e.textContent;
      const cheap = (words + ' ' + (e.getAttribute('aria-label') || '') + ' ' + (e.getAttribute('placeholder') || '') + ' ' +
        (e.getAttribute('title') || '') + ' ' + (e.getAttribute('alt') || '') + ' ' + (e.value || '')).toLowerCase();
      if (!cheap.includes(needle) && !e.hasAttribute('aria-labelledby') && !labelsOf(e).length) continue;
    }
    const name = role || interactive ? nameOf(e, role) : '';
    const val = valueOf(e, role);
    let hay = name + (val ? ' ' + val : '');
    if (own) hay += ' ' + ownText(e);
    hay = squash(hay);
    if (!hay && byText) continue;
    if (needle && !hay.toLowerCase().includes(needle)) continue;
    out.push({ e, hay, interactive });
  }
  return out;
}

// The words of an element's own text nodes, apart.
function ownText(e) {
  let t = '';
  for (let c = e.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) t += (t ? ' ' : '') + c.data;
  return t;
}

// Writes the visible hits among `hits` as lines with refs and a little context.
function report(hits, limit) {
  const out = [];
  let total = 0;
  const seen = new Set();
  for (const { e, hay, interactive } of hits) {
    if (!e.isConnected || !visible(e)) continue;
    // Prefer the actionable element: a text hit inside a button or link reports the button.
    let target = e;
    if (!interactive) {
      const act = e.closest('a[href],button,[role=button],[role=link],label,summary,option');
      // A label stands for its control: report the checkbox, not the words beside it.
      if (act && act !== e) target = act.tagName === 'LABEL' ? act.control || act : act;
    }
    if (seen.has(target)) continue;
    seen.add(target);
    total++;
    if (out.length >= limit) continue;
    const r = roleOf(target) || 'text';
    const n = nameOf(target, r) || (target === e ? clip(hay, 100) : '');
    let line = '- ' + r + (n ? ' ' + quote(n) : '') + ' [' + refOf(target) + ']';
    const st = states(target, r);
    if (st.length) line += ' ' + st.join(' ');
    const v = valueOf(target, r);
    if (v !== null && v !== undefined) line += ' = ' + quote(clip(String(v), 80));
    const ctx = contextOf(target);
    if (ctx) line += ' in ' + ctx;
    out.push(line);
  }
  return { text: out.join('\n'), total };
}

// A regex query's candidates, kept until lumo says which of their hays matched.
let pending = [];

// The nearest labelled container: a row's first cell, a form, a section heading.
function contextOf(e) {
  const row = e.closest('tr');
  if (row && row.cells && row.cells.length) return 'row: ' + clip(rowText(row), 400);
  for (let p = e.parentElement; p; p = p.parentElement) {
    const role = roleOf(p);
    if (role === 'form' || role === 'dialog' || role === 'region' || role === 'navigation' || role === 'listitem') {
      const n = nameOf(p, role) || clip(textOf(p), 40);
      return role + (n ? ' ' + quote(clip(n, 60)) : '') + ' [' + refOf(p) + ']';
    }
  }
  return '';
}
