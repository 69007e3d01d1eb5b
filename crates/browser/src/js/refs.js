// Refs: each element the helper shows gets a ref ("e12", "f2e7" in a
// cross-origin frame) that names it for the life of the document.

const refs = new Map();      // "e12" -> WeakRef(element)
const ids = new WeakMap();   // element -> "e12"
let prefix = 'e';
let next = 1;

// Numbers the refs of one call from `n` (lumo's counter) with the frame's
// prefix; returns the first number it will use. The page never goes back below
// its own last number: a call lumo gave up on (a timeout) may have used some.
function numberFrom(p, n) {
  prefix = p;
  if (n > next) next = n;
  return next;
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
