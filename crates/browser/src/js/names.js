// Accessible names: aria-labelledby, aria-label, <label>, legend, alt, value,
// content (for roles named from content), title, placeholder.

function labelOf(e) {
  const by = e.getAttribute('aria-labelledby');
  if (by) {
    const doc = e.ownerDocument;
    const t = by.split(/\s+/).map((id) => doc.getElementById(id)).filter(Boolean).map(textOf).join(' ');
    if (t) return t;
  }
  const aria = e.getAttribute('aria-label');
  if (aria) return squash(aria);
  const labels = labelsOf(e);
  if (labels.length) return squash(labels.map((l) => labelText(l, e)).join(' '));
  if (e.tagName === 'FIELDSET') {
    const legend = e.querySelector(':scope > legend');
    if (legend) return textOf(legend);
  }
  return '';
}

// Which labels name a control. Asked `e.labels`, Chromium searches the whole
// document for each control the first time: on a table of 1,000 fields that
// was a third of the first snapshot. One pass over a tree's labels answers
// every control in it; the index lives for one call (api.js `run`).
const LABELABLE = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'METER', 'OUTPUT', 'PROGRESS']);
let labelIndex = new Map();
function labelsOf(e) {
  if (!LABELABLE.has(e.tagName)) return e.tagName.includes('-') && e.labels ? Array.from(e.labels) : [];
  if (e.tagName === 'INPUT' && e.type === 'hidden') return [];
  const root = e.getRootNode();
  let index = labelIndex.get(root);
  if (!index) {
    index = new Map();
    for (const l of root.querySelectorAll ? root.querySelectorAll('label') : []) {
      const c = l.control;
      if (!c) continue;
      const list = index.get(c);
      if (list) list.push(l);
      else index.set(c, [l]);
    }
    labelIndex.set(root, index);
  }
  return index.get(e) || [];
}
const forgetLabels = () => { labelIndex = new Map(); };

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
