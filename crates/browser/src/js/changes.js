// What an action changed on the page, as a few readable lines.

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
