// lumo's in-page helper. Runs in the isolated world "lumo" of each frame: the
// page's own scripts can neither see nor touch it. Installed once per
// document; every call goes through globalThis.__lumo.
(() => {
  if (globalThis.__lumo) return;
  const refs = new Map();      // "e12" -> WeakRef(element)
  const ids = new WeakMap();   // element -> "e12"
  let prefix = 'e';
  let next = 1;

  const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE']);
  const IMPLICIT = {
    A: (e) => (e.hasAttribute('href') ? 'link' : ''), BUTTON: () => 'button', SELECT: (e) => (e.multiple || e.size > 1 ? 'listbox' : 'combobox'),
    TEXTAREA: () => 'textbox', H1: () => 'heading', H2: () => 'heading', H3: () => 'heading', H4: () => 'heading',
    H5: () => 'heading', H6: () => 'heading', UL: () => 'list', OL: () => 'list', LI: () => 'listitem', NAV: () => 'navigation',
    MAIN: () => 'main', HEADER: () => 'banner', FOOTER: () => 'contentinfo', ASIDE: () => 'complementary',
    FORM: () => 'form', TABLE: () => 'table', TR: () => 'row', TD: () => 'cell', TH: () => 'columnheader',
    IMG: (e) => (e.getAttribute('alt') === '' ? '' : 'img'), DIALOG: () => 'dialog', SUMMARY: () => 'button',
    DETAILS: () => 'group', FIELDSET: () => 'group', PROGRESS: () => 'progressbar', IFRAME: () => 'iframe',
    SECTION: (e) => (e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby') ? 'region' : ''),
    ARTICLE: () => 'article', P: () => 'paragraph', LABEL: () => '', OPTION: () => 'option', HR: () => 'separator',
    INPUT: (e) => {
      const t = (e.getAttribute('type') || 'text').toLowerCase();
      if (t === 'hidden') return '';
      return ({ checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', button: 'button',
        submit: 'button', reset: 'button', image: 'button', file: 'button', search: 'searchbox' })[t] || 'textbox';
    },
  };
  const INTERACTIVE = new Set(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
    'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem']);
  // Containers that get a ref so an agent can ask for their subtree.
  const ANCHORS = new Set(['heading', 'form', 'table', 'list', 'dialog', 'region', 'article', 'main', 'navigation', 'iframe', 'group']);
  const NAME_FROM_CONTENT = new Set(['link', 'button', 'heading', 'tab', 'menuitem', 'option', 'cell', 'columnheader',
    'listitem', 'treeitem', 'switch', 'checkbox', 'radio', 'menuitemcheckbox', 'menuitemradio']);

  // Input types whose expected format an agent should see.
  const TYPED = new Set(['email', 'tel', 'url', 'date', 'time', 'datetime-local', 'month', 'week', 'color', 'file', 'password']);
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const squash = (s) => s.replace(/\s+/g, ' ').trim();
  const quote = (s) => JSON.stringify(s);

  function roleOf(e) {
    const explicit = e.getAttribute('role');
    if (explicit) return explicit.split(' ')[0];
    const f = IMPLICIT[e.tagName];
    if (f) return TABLE_PARTS.has(e.tagName) && layoutTable(e.closest('table')) ? '' : f(e);
    if (e.isContentEditable && (e.parentElement === null || !e.parentElement.isContentEditable)) return 'textbox';
    return '';
  }

  // Layout tables (a page laid out in cells, as old sites and mail are) read as
  // their content, not as rows of cut cells: an article in one cell is still
  // an article (issue 13). Decided by shape, once per table per call.
  const TABLE_PARTS = new Set(['TABLE', 'TR', 'TD', 'TH']);
  const BLOCKS = 'p,div,ul,ol,dl,h1,h2,h3,h4,h5,h6,blockquote,pre,form,article,section,table,br';
  let layoutSeen = new WeakMap();
  function layoutTable(t) {
    if (!t) return false;
    let v = layoutSeen.get(t);
    if (v === undefined) {
      v = isLayoutTable(t);
      layoutSeen.set(t, v);
    }
    return v;
  }
  function isLayoutTable(t) {
    const r = t.getAttribute('role');
    if (r === 'presentation' || r === 'none') return true;
    if (r) return false;
    if (t.querySelector('table')) return true;
    // Header cells or a caption make a data table; without them, one inside another table is layout.
    if (t.caption || t.tHead || t.querySelector('th')) return false;
    if (t.parentElement && t.parentElement.closest('table')) return true;
    const rows = t.rows;
    if (rows.length < 2) return true;
    let cells = 0;
    let single = true;
    for (const row of rows) {
      if (row.cells.length > 1) single = false;
      for (const c of row.cells) {
        if (++cells > 200) break;
        if (c.querySelector(BLOCKS) || (c.textContent || '').length > 200) return true;
      }
      if (cells > 200) break;
    }
    return single;
  }

  // textContent, not innerText: innerText costs a layout query per call, which
  // on a 5,000-row table adds up to seconds; names rarely depend on rendering.
  function textOf(e) {
    return squash(plainText(e));
  }

  // textContent less what is never rendered: inline scripts in layout tables
  // put ad code (`//<![CDATA[ google_ad_client = …`) into snapshots (issue 13).
  // Subtrees marked hidden go too, as the tree walk and accessible names leave them out.
  const NEVER_RENDERED = 'script,style,template,noscript,[hidden],[aria-hidden=true]';
  const unrendered = (n) => SKIP.has(n.tagName) || n.hasAttribute('hidden') || n.getAttribute('aria-hidden') === 'true';
  const renderedOnly = { acceptNode: (n) => (n.nodeType === 1 && unrendered(n) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT) };
  function plainText(e) {
    if (!e.querySelector || !e.querySelector(NEVER_RENDERED)) return e.textContent || '';
    let out = '';
    const tw = e.ownerDocument.createTreeWalker(e, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, renderedOnly);
    for (let n = tw.nextNode(); n; n = tw.nextNode()) if (n.nodeType === 3) out += n.data;
    return out;
  }

  // Rendered-ish text without innerText, which would force a layout of the
  // whole page on first use: hidden descendants are left out, element
  // boundaries become spaces.
  function visibleText(el) {
    let out = '';
    for (const c of el.childNodes) {
      if (c.nodeType === 3) out += c.data;
      else if (c.nodeType === 1 && !SKIP.has(c.tagName) && visible(c)) out += ' ' + visibleText(c) + ' ';
    }
    return out;
  }

  function labelOf(e) {
    const by = e.getAttribute('aria-labelledby');
    if (by) {
      const doc = e.ownerDocument;
      const t = by.split(/\s+/).map((id) => doc.getElementById(id)).filter(Boolean).map(textOf).join(' ');
      if (t) return t;
    }
    const aria = e.getAttribute('aria-label');
    if (aria) return squash(aria);
    if (e.labels && e.labels.length) return squash(Array.from(e.labels, (l) => labelText(l, e)).join(' '));
    if (e.tagName === 'FIELDSET') {
      const legend = e.querySelector(':scope > legend');
      if (legend) return textOf(legend);
    }
    return '';
  }

  // A label's own words, without the text of the control it may wrap (a select's options).
  function labelText(label, control) {
    let out = '';
    (function add(n) {
      for (const c of n.childNodes) {
        if (c.nodeType === 3) out += c.data + ' ';
        else if (c.nodeType === 1 && c !== control && !['SELECT', 'TEXTAREA', 'INPUT', 'BUTTON'].includes(c.tagName)) add(c);
      }
    })(label);
    return out;
  }

  function nameOf(e, role, max = 100) {
    let n = labelOf(e);
    if (!n) {
      const tag = e.tagName;
      if (tag === 'IMG' || (tag === 'INPUT' && e.type === 'image')) n = e.getAttribute('alt') || '';
      else if (tag === 'INPUT' && (e.type === 'submit' || e.type === 'button' || e.type === 'reset')) n = e.value || (e.type === 'submit' ? 'Submit' : '');
      else if (NAME_FROM_CONTENT.has(role)) n = textOf(e);
      if (!n) n = e.getAttribute('title') || e.getAttribute('placeholder') || '';
      if (!n && tag === 'IFRAME') n = e.getAttribute('name') || e.getAttribute('src') || '';
    }
    return clip(squash(n), max);
  }

  function isInteractive(e, role) {
    if (INTERACTIVE.has(role)) return true;
    if (e.hasAttribute('onclick') || (e.tabIndex >= 0 && e.hasAttribute('tabindex'))) return true;
    return false;
  }

  function refOf(e) {
    let r = ids.get(e);
    if (!r) {
      r = prefix + next++;
      ids.set(e, r);
      refs.set(r, new WeakRef(e));
    }
    return r;
  }

  function resolve(ref) {
    const w = refs.get(ref);
    const e = w && w.deref();
    if (!e || !e.isConnected) {
      if (w) refs.delete(ref);
      return null;
    }
    return e;
  }

  function states(e, role) {
    const out = [];
    if (role === 'heading') out.push('level=' + (e.getAttribute('aria-level') || e.tagName.slice(1)));
    if (e.disabled || e.getAttribute('aria-disabled') === 'true') out.push('disabled');
    if (role === 'checkbox' || role === 'radio' || role === 'switch' || role.startsWith('menuitem')) {
      const c = e.checked !== undefined && e.tagName === 'INPUT' ? e.checked : e.getAttribute('aria-checked') === 'true';
      if (c) out.push('checked');
    }
    const exp = e.getAttribute('aria-expanded');
    if (exp !== null) out.push(exp === 'true' ? 'expanded' : 'collapsed');
    if (e.tagName === 'DETAILS') out.push(e.open ? 'expanded' : 'collapsed');
    if (e.getAttribute('aria-selected') === 'true' || (e.tagName === 'OPTION' && e.selected)) out.push('selected');
    if (e.required) out.push('required');
    if (e.readOnly && (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA')) out.push('readonly');
    if (e === e.ownerDocument.activeElement && e.tagName !== 'BODY') out.push('focused');
    return out;
  }

  function valueOf(e, role) {
    const tag = e.tagName;
    if (tag === 'SELECT') {
      const sel = Array.from(e.selectedOptions, (o) => squash(o.label || o.text));
      return sel.length ? sel.join(', ') : null;
    }
    if (tag === 'INPUT') {
      const t = e.type;
      if (t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return null;
      if (t === 'password') return e.value ? '•'.repeat(Math.min(e.value.length, 8)) : '';
      if (t === 'file') return Array.from(e.files || [], (f) => f.name).join(', ');
      return e.value;
    }
    if (tag === 'TEXTAREA') return e.value;
    if (role === 'textbox' && e.isContentEditable) return textOf(e);
    if (role === 'slider' || role === 'spinbutton' || role === 'progressbar') return e.getAttribute('aria-valuenow') || e.value || null;
    return null;
  }

  function visible(e) {
    if (e.checkVisibility) return e.checkVisibility({ visibilityProperty: true });
    return !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  }

  function inViewport(e) {
    const r = e.getBoundingClientRect();
    const w = e.ownerDocument.defaultView;
    return r.bottom > 0 && r.right > 0 && r.top < w.innerHeight && r.left < w.innerWidth;
  }

  function childrenOf(n) {
    if (n.shadowRoot) return n.shadowRoot.childNodes;
    if (n.tagName === 'SLOT') {
      const a = n.assignedNodes({ flatten: true });
      return a.length ? a : n.childNodes;
    }
    if (n.tagName === 'IFRAME') {
      let d = null;
      try { d = n.contentDocument; } catch (_) { d = null; }
      return d && d.body ? [d.body] : [];
    }
    return n.childNodes;
  }

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
    let omitted = 0;
    let seen = 0;
    const skip = opts.offset || 0;
    const frames = [];
    const root = opts.root || document.body || document.documentElement;
    const push = (line) => {
      if (truncatedAt >= 0) { omitted++; return; }
      if (seen++ < skip) return;
      if (bytes + line.length + 1 > opts.maxBytes) { truncatedAt = seen - 1; omitted++; return; }
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
          if (role === 'iframe') frames.push(refOf(el));
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
          frames.push(ref);
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
    return { text: lines.join('\n'), omitted, frames, truncated: truncatedAt >= 0, next: truncatedAt, lines: seen, title: document.title };
  }

  // The elements a query can match, each with the text it is matched on (its
  // "hay"). A regex is never run here: lumo matches hays in Rust with a
  // linear-time engine, since a page-side RegExp can backtrack for minutes.
  function gather(q) {
    layoutSeen = new WeakMap();
    const needle = q.text ? q.text.toLowerCase() : null;
    const byText = !!(needle || q.regex);
    const out = [];
    const all = [];
    (function collect(root) {
      const tw = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let n = tw.currentNode; n; n = tw.nextNode()) {
        if (n.nodeType !== 1) continue;
        all.push(n);
        if (n.shadowRoot) collect(n.shadowRoot);
        if (n.tagName === 'IFRAME') { try { if (n.contentDocument && n.contentDocument.body) collect(n.contentDocument.body); } catch (_) {} }
      }
    })(document.body || document.documentElement);
    for (const e of all) {
      if (SKIP.has(e.tagName)) continue;
      if (needle) {
        // Cheap prefilter: a name or value can only match if the text or a naming attribute has the needle.
        const cheap = (e.textContent + ' ' + (e.getAttribute('aria-label') || '') + ' ' + (e.getAttribute('placeholder') || '') + ' ' +
          (e.getAttribute('title') || '') + ' ' + (e.getAttribute('alt') || '') + ' ' + (e.value || '')).toLowerCase();
        if (!cheap.includes(needle) && !e.hasAttribute('aria-labelledby') && !(e.labels && e.labels.length)) continue;
      }
      const role = roleOf(e);
      const interactive = isInteractive(e, role);
      if (q.role && role !== q.role) continue;
      if (!role && !interactive && !byText) continue;
      const name = role || interactive ? nameOf(e, role) : '';
      const val = valueOf(e, role);
      let hay = name + (val ? ' ' + val : '');
      if (!interactive && !NAME_FROM_CONTENT.has(role)) {
        // Containers (plain, paragraphs, status) match on their own text nodes, so each hit is the innermost element.
        hay += ' ' + Array.from(e.childNodes).filter((c) => c.nodeType === 3).map((c) => c.data).join(' ');
      }
      hay = squash(hay);
      if (!hay && byText) continue;
      if (needle && !hay.toLowerCase().includes(needle)) continue;
      out.push({ e, hay, interactive });
    }
    return out;
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

  // Describes an element for an action's answer: role "name" [ref].
  function describe(e) {
    const role = roleOf(e) || e.tagName.toLowerCase();
    const name = nameOf(e, role);
    return role + (name ? ' ' + quote(name) : '') + ' [' + refOf(e) + ']';
  }

  // Scrolls the element into view and returns its centre in this frame's
  // viewport, plus whether another element covers that point.
  function point(e) {
    e.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const rects = e.getClientRects();
    if (!rects.length) return { error: 'not_visible' };
    const r = rects[0];
    const x = r.left + r.width / 2;
    const y = r.top + r.height / 2;
    let covered = null;
    const hit = e.ownerDocument.elementFromPoint(x, y);
    if (hit && hit !== e && !e.contains(hit) && !hit.contains(e) && !(e.labels && Array.from(e.labels).some((l) => l.contains(hit)))) {
      let shadowHit = hit;
      while (shadowHit && shadowHit.shadowRoot) {
        const inner = shadowHit.shadowRoot.elementFromPoint(x, y);
        if (!inner || inner === shadowHit) break;
        shadowHit = inner;
      }
      if (shadowHit !== e && !e.contains(shadowHit)) covered = describe(hit);
    }
    // Same-origin iframes: add the offsets of every frame up to the top.
    let ox = 0, oy = 0;
    for (let w = e.ownerDocument.defaultView; w && w.frameElement; w = w.parent) {
      const fr = w.frameElement.getBoundingClientRect();
      ox += fr.left + w.frameElement.clientLeft;
      oy += fr.top + w.frameElement.clientTop;
    }
    return { x: x + ox, y: y + oy, covered, width: r.width, height: r.height };
  }

  // Records DOM changes between start() and stop() as a few readable lines.
  let observer = null;
  let changes = null;
  function watch() {
    if (observer) observer.disconnect();
    changes = { added: [], removed: 0, attrs: new Set(), text: [] };
    observer = new MutationObserver((muts) => {
      for (const m of muts) {
        if (m.type === 'childList') {
          for (const n of m.addedNodes) {
            if (changes.added.length < 50) changes.added.push(n);
          }
          changes.removed += m.removedNodes.length;
        } else if (m.type === 'attributes') {
          changes.attrs.add(m.target);
        } else if (m.type === 'characterData') {
          if (changes.text.length < 50) changes.text.push(m.target);
        }
      }
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true,
      attributeFilter: ['aria-expanded', 'aria-checked', 'aria-selected', 'aria-hidden', 'disabled', 'open', 'hidden', 'class', 'style'] });
  }
  function collectChanges(limit) {
    if (!observer) return [];
    for (const m of observer.takeRecords()) {
      if (m.type === 'childList') for (const n of m.addedNodes) changes.added.push(n);
    }
    observer.disconnect();
    observer = null;
    const lines = [];
    const seen = new Set();
    const add = (s) => { if (s && !seen.has(s) && lines.length < limit) { seen.add(s); lines.push(s); } };
    for (const n of changes.added) {
      if (!n.isConnected) continue;
      if (n.nodeType === 3) { const t = squash(n.data); if (t) add('+ text ' + quote(clip(t, 120))); continue; }
      if (n.nodeType !== 1 || SKIP.has(n.tagName) || !visible(n)) continue;
      const role = roleOf(n);
      if (role || isInteractive(n, role)) add('+ ' + describe(n));
      else {
        const t = clip(textOf(n), 120);
        if (t) add('+ text ' + quote(t));
      }
      for (const c of n.querySelectorAll('a[href],button,input,select,textarea,[role]')) {
        if (lines.length >= limit) break;
        if (visible(c)) add('+ ' + describe(c));
      }
    }
    for (const n of changes.text) {
      if (n.isConnected && n.parentElement) add('~ text ' + quote(clip(squash(n.data), 120)));
    }
    for (const e of changes.attrs) {
      if (!e.isConnected) continue;
      const role = roleOf(e);
      if (!role && !isInteractive(e, role)) continue;
      const st = states(e, role);
      add('~ ' + describe(e) + (st.length ? ' ' + st.join(' ') : '') + (visible(e) ? '' : ' hidden'));
    }
    if (changes.removed) add('- ' + changes.removed + ' node' + (changes.removed === 1 ? '' : 's') + ' removed');
    changes = null;
    return lines;
  }

  // Scrolls an element's own box (or the page when el is null); says where it ended.
  function scroll(el, o) {
    if (Array.isArray(el)) { o = el[1]; el = el[0]; }
    if (el && o.intoView) { el.scrollIntoView({ block: 'center', behavior: 'instant' }); return describe(el) + ' is in view'; }
    const box = el || document.scrollingElement || document.documentElement;
    if (o.edge === 'top') box.scrollTo({ top: 0, behavior: 'instant' });
    else if (o.edge === 'bottom') box.scrollTo({ top: box.scrollHeight, behavior: 'instant' });
    else box.scrollBy({ left: o.dx, top: o.dy, behavior: 'instant' });
    const h = Math.max(0, box.scrollHeight - box.clientHeight);
    return (el ? describe(el) : 'Page') + ' scrolled to ' + Math.round(box.scrollTop) + 'px of ' + Math.round(h) + 'px';
  }

  globalThis.__lumo = {
    setPrefix(p, n) { prefix = p; if (n > next) next = n; return next; },
    nextRef() { return next; },
    snapshot(opts) {
      if (opts.ref) {
        const e = resolve(opts.ref);
        if (!e) return { error: 'stale_ref' };
        opts.root = e;
      }
      return snapshot(opts);
    },
    find(q) { return report(gather(q), q.limit); },
    // A regex query in two steps: the hays to match, then the indexes of those that matched.
    findCandidates(q) { pending = gather(q); return pending.map((c) => c.hay); },
    findPick(p) { const hits = p.matched.map((i) => pending[i]).filter(Boolean); pending = []; return report(hits, p.limit); },
    // page_wait's probes: is the text shown (case-insensitive, open shadow roots too)? Is the ref shown?
    hasText(t) {
      const want = squash(t).toLowerCase();
      const shows = (root) => squash(root.innerText || '').toLowerCase().includes(want)
        || Array.from(root.querySelectorAll('*')).some((e) => e.shadowRoot
          && Array.from(e.shadowRoot.children).some((c) => !SKIP.has(c.tagName) && shows(c)));
      return !!document.body && shows(document.body);
    },
    refState(r) { const e = resolve(r); return !e ? 'gone' : visible(e) ? 'shown' : 'hidden'; },
    resolve, describe, point, watch, collectChanges, scroll, refOf, roleOf, nameOf, valueOf, states,
  };
})();
