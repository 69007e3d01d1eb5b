// Refs: each element the helper shows gets a ref ("e12", "f2e7" in a
// cross-origin frame) that names it for the life of the document.

const refs = new Map();      // "e12" -> WeakRef(element)
const ids = new WeakMap();   // element -> "e12"
let prefix = 'e';
let next = 1;

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
