// The helper's entry points: everything lumo calls goes through globalThis.__lumo.

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
