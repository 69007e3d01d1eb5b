// Actions on one element: describing it, finding where to click it, its box,
// focusing and scrolling it.

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
  if (hit && hit !== e && !e.contains(hit) && !hit.contains(e) && !labelsOf(e).some((l) => l.contains(hit))) {
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

// Where the mouse goes for an element: its name, and its centre in the top
// viewport (null when it has no box), with what covers it there.
function aim(e) {
  const name = describe(e);
  const p = point(e);
  return { name, spot: p.error ? null : { x: p.x, y: p.y, covered: p.covered } };
}

// An element's box in the top viewport after scrolling it into view, or null when it has none.
function box(e) {
  const p = point(e);
  if (p.error) return null;
  const r = e.getBoundingClientRect();
  let ox = 0, oy = 0;
  for (let w = e.ownerDocument.defaultView; w && w.frameElement; w = w.parent) {
    const f = w.frameElement.getBoundingClientRect();
    ox += f.left + w.frameElement.clientLeft;
    oy += f.top + w.frameElement.clientTop;
  }
  return { x: r.left + ox, y: r.top + oy, width: r.width, height: r.height };
}

// An <iframe> brought into view: its ref and where its content box starts in this frame's viewport.
function frameBox(e) {
  e.scrollIntoView({ block: 'nearest', behavior: 'instant' });
  const r = e.getBoundingClientRect();
  return { ref: refOf(e), x: r.left + e.clientLeft, y: r.top + e.clientTop };
}

function focus(e) {
  e.focus();
  return describe(e);
}

// Scrolls an element's own box (or the page when el is null); says where it ended.
function scroll(el, o) {
  if (el && o.intoView) { el.scrollIntoView({ block: 'center', behavior: 'instant' }); return describe(el) + ' is in view'; }
  const box = el || document.scrollingElement || document.documentElement;
  if (o.edge === 'top') box.scrollTo({ top: 0, behavior: 'instant' });
  else if (o.edge === 'bottom') box.scrollTo({ top: box.scrollHeight, behavior: 'instant' });
  else box.scrollBy({ left: o.dx, top: o.dy, behavior: 'instant' });
  const h = Math.max(0, box.scrollHeight - box.clientHeight);
  return (el ? describe(el) : 'Page') + ' scrolled to ' + Math.round(box.scrollTop) + 'px of ' + Math.round(h) + 'px';
}
