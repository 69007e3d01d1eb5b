// Refs: each element the helper shows gets a ref ("e12", "f2e7" in a
// cross-origin frame) that names it for the life of the document.
//
// The book holds elements strongly (a WeakRef per ref cost 5% of a snapshot
// of the bench's 5,000-element page) and lets go of the ones that left the
// document once it has doubled since the last sweep, so a page that keeps
// replacing its content does not keep the old content alive for long.

const refs = new Map();      // "e12" -> element
const ids = new WeakMap();   // element -> "e12"
let prefix = 'e';
let next = 1;
let sweepAt = 2000;

// Numbers the refs of one call from `n` (lumo's counter) with the frame's
// prefix; returns the first number of the run lumo books for this call. The
// page never goes back below its own last number: a call whose answer lumo
// never got (a timeout, a bridge worker that stopped under it) may have used
// some. Its elements keep those refs and this call may show them, so the run
// starts at `n`: lumo had given nothing from there to anyone.
function numberFrom(p, n) {
  prefix = p;
  if (n > next) next = n;
  if (refs.size > sweepAt) sweep();
  return n;
}

function sweep() {
  for (const [r, e] of refs) if (!e.isConnected) forget(r, e);
  sweepAt = Math.max(2000, 2 * refs.size);
}

function refOf(e) {
  let r = ids.get(e);
  if (!r) {
    r = prefix + next++;
    ids.set(e, r);
    refs.set(r, e);
  }
  return r;
}

function resolve(ref) {
  const e = refs.get(ref);
  if (!e || !e.isConnected) {
    if (e) forget(ref, e);
    return null;
  }
  return e;
}

// An element that left the document loses its ref; put back, it gets a new one.
function forget(r, e) {
  refs.delete(r);
  ids.delete(e);
}
