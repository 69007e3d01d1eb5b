// The contract with lumo. Rust calls the helper only through
// crates/browser/src/helper/, which gives each method below its argument and
// reply types; nothing else spells these names.
//
// Every call names the frame's ref prefix and the number lumo's ref book will
// give out next (lumo owns the counter: one for all tabs and frames), and
// answers { value, refs: [first, end) }: the run of numbers this call used,
// which lumo books to the tab and frame.

// Methods on the frame's document; each takes one argument.
const PAGE = {
  // null when the subtree's ref is gone.
  snapshot(opts) {
    if (opts.ref) {
      const e = resolve(opts.ref);
      if (!e) return null;
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
  watch() { watch(); return null; },
  changes(limit) { return collectChanges(limit); },
  scroll(o) { return scroll(null, o); },
  // page_extract's reader (extract.js), once lumo has installed it in this world.
  extract(o) { return reader().extract(o); },
  records(d) { return reader().records(d); },
  probeExtractors(d) { return reader().probeExtractors(d); },
};

let X = null;
function reader() {
  if (!X) throw new Error('lumo reader is not installed in this document');
  return X;
}

// Methods on one element (a ref lumo resolved); each takes the element and one argument.
const ELEMENT = {
  aim, box, frameBox, focus, scroll, focusEditable, setValue, fieldKind, toggleState, selectOptions, fileInput,
};

function run(table, method, p, n, args) {
  const f = table[method];
  if (!f) throw new Error('lumo helper has no method ' + method);
  const first = numberFrom(p, n);
  forgetLabels();
  const value = f(...args);
  return { value, refs: [first, next] };
}

globalThis.__lumo = {
  page(p, n, method, arg) { return run(PAGE, method, p, n, [arg]); },
  element(p, n, method, arg, e) { return run(ELEMENT, method, p, n, [e, arg]); },
  // The element behind a ref, or null: lumo keeps it as a remote object to act on.
  resolve,
  // reader.js calls this with extract.js's function; it gets the parts it shares.
  addReader(make) { if (!X) X = make({ refOf, roleOf, nameOf, valueOf }); },
  hasReader() { return X !== null; },
};
