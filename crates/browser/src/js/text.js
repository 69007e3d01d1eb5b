// Text and visibility: what of an element is rendered, and its words.

const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE']);

const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
// Most strings need no squashing: a test is cheaper than a replace and a trim.
const MESSY = /[^\S ]| {2}|^ | $/;
const squash = (s) => (MESSY.test(s) ? s.replace(/\s+/g, ' ').trim() : s);
const quote = (s) => JSON.stringify(s);

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
  // Most names are one text node (a link, a button): no descendants to leave out.
  if (!e.firstElementChild || !e.querySelector(NEVER_RENDERED)) return e.textContent || '';
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
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3) out += c.data;
    else if (c.nodeType === 1 && !SKIP.has(c.tagName) && visible(c)) out += ' ' + visibleText(c) + ' ';
  }
  return out;
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

// The nodes the walk goes through under `n`, as an array: a shadow root's,
// a slot's assigned nodes, a frame's body, else its own children. Built from
// the sibling chain: iterating a NodeList with for…of costs about 2 µs a
// node in Chromium (10 ms of a snapshot of the bench's 5,000-element page).
function childrenOf(n) {
  if (n.shadowRoot) return siblings(n.shadowRoot.firstChild);
  if (n.tagName === 'SLOT') {
    const a = n.assignedNodes({ flatten: true });
    return a.length ? a : siblings(n.firstChild);
  }
  if (n.tagName === 'IFRAME') {
    let d = null;
    try { d = n.contentDocument; } catch (_) { d = null; }
    return d && d.body ? [d.body] : [];
  }
  return siblings(n.firstChild);
}

// Whether the walk goes through other nodes than `n`'s own children.
const composed = (n) => n.shadowRoot || n.tagName === 'SLOT' || n.tagName === 'IFRAME';

function siblings(c) {
  const a = [];
  for (; c; c = c.nextSibling) a.push(c);
  return a;
}

// An element's element children, as an array (see childrenOf).
function elementsOf(n) {
  const a = [];
  for (let c = n.firstElementChild; c; c = c.nextElementSibling) a.push(c);
  return a;
}
