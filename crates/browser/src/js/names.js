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
