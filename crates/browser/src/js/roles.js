// Roles: the ARIA role of an element (explicit or implicit), whether it is
// actionable, its states and its value.

const IMPLICIT = {
  A: (e) => (e.hasAttribute('href') ? 'link' : ''), BUTTON: () => 'button', SELECT: (e) => (e.multiple || e.size > 1 ? 'listbox' : 'combobox'),
  TEXTAREA: () => 'textbox', H1: () => 'heading', H2: () => 'heading', H3: () => 'heading', H4: () => 'heading',
  H5: () => 'heading', H6: () => 'heading', UL: () => 'list', OL: () => 'list', LI: () => 'listitem', NAV: () => 'navigation',
  MAIN: () => 'main', HEADER: () => 'banner', FOOTER: () => 'contentinfo', ASIDE: () => 'complementary',
  FORM: () => 'form', TABLE: () => 'table', TR: () => 'row', TD: () => 'cell', TH: () => 'columnheader',
  IMG: (e) => (e.getAttribute('alt') === '' ? '' : 'img'), DIALOG: () => 'dialog', SUMMARY: () => 'button',
  DETAILS: () => 'group', FIELDSET: () => 'group', PROGRESS: () => 'progressbar', IFRAME: () => 'iframe',
  SECTION: (e) => (e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby') ? 'region' : ''),
  ARTICLE: () => 'article', P: () => 'paragraph', LABEL: () => '', OPTION: () => 'option', HR: () => 'separator',
  INPUT: (e) => {
    const t = (e.getAttribute('type') || 'text').toLowerCase();
    if (t === 'hidden') return '';
    return ({ checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', button: 'button',
      submit: 'button', reset: 'button', image: 'button', file: 'button', search: 'searchbox' })[t] || 'textbox';
  },
};
const INTERACTIVE = new Set(['link', 'button', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
  'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem']);
// Containers that get a ref so an agent can ask for their subtree. Not
// headings: in a snapshot a heading's section is right below it, and a ref on
// every heading cost 0.7% of the bytes of real pages; page_find gives one
// (whose subtree is the section) when an agent wants to read or scroll to it.
const ANCHORS = new Set(['form', 'table', 'list', 'dialog', 'region', 'article', 'main', 'navigation', 'iframe', 'group']);
const NAME_FROM_CONTENT = new Set(['link', 'button', 'heading', 'tab', 'menuitem', 'option', 'cell', 'columnheader',
  'listitem', 'treeitem', 'switch', 'checkbox', 'radio', 'menuitemcheckbox', 'menuitemradio']);


function roleOf(e) {
  const explicit = e.getAttribute('role');
  if (explicit) return explicit.split(' ')[0];
  const f = IMPLICIT[e.tagName];
  if (f) return TABLE_PARTS.has(e.tagName) && layoutTable(tableOf(e)) ? '' : f(e);
  // The root of an editable region names itself with the attribute (isContentEditable asks the style).
  if (e.hasAttribute('contenteditable') && e.isContentEditable && (e.parentElement === null || !e.parentElement.isContentEditable)) return 'textbox';
  return '';
}

// Layout tables (a page laid out in cells, as old sites and mail are) read as
// their content, not as rows of cut cells: an article in one cell is still
// an article (issue 13). Decided by shape, once per table per call.
const TABLE_PARTS = new Set(['TABLE', 'TR', 'TD', 'TH']);
const BLOCKS = 'p,div,ul,ol,dl,h1,h2,h3,h4,h5,h6,blockquote,pre,form,article,section,table,br';
let layoutSeen = new WeakMap();

// The table a table part belongs to, by its parents (closest() costs more on every row).
function tableOf(e) {
  for (let p = e, up = 0; p && up < 4; p = p.parentElement, up++) if (p.tagName === 'TABLE') return p;
  return e.closest('table');
}
function layoutTable(t) {
  if (!t) return false;
  let v = layoutSeen.get(t);
  if (v === undefined) {
    v = isLayoutTable(t);
    layoutSeen.set(t, v);
  }
  return v;
}
function isLayoutTable(t) {
  const r = t.getAttribute('role');
  if (r === 'presentation' || r === 'none') return true;
  if (r) return false;
  if (t.querySelector('table')) return true;
  // Header cells or a caption make a data table; without them, one inside another table is layout.
  if (t.caption || t.tHead || t.querySelector('th')) return false;
  if (t.parentElement && t.parentElement.closest('table')) return true;
  const rows = t.rows;
  if (rows.length < 2) return true;
  let cells = 0;
  let single = true;
  for (const row of rows) {
    if (row.cells.length > 1) single = false;
    for (const c of row.cells) {
      if (++cells > 200) break;
      if (c.querySelector(BLOCKS) || (c.textContent || '').length > 200) return true;
    }
    if (cells > 200) break;
  }
  return single;
}

function isInteractive(e, role) {
  if (INTERACTIVE.has(role)) return true;
  if (e.hasAttribute('onclick') || (e.tabIndex >= 0 && e.hasAttribute('tabindex'))) return true;
  return false;
}

// Elements with the form states (disabled, required, read-only) as properties.
const FORM_TAGS = new Set(['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON', 'FIELDSET', 'OPTION', 'OPTGROUP']);

// The ARIA state attributes states() reads: one match answers "none" for most elements.
const STATE_ATTRS = '[aria-disabled],[aria-checked],[aria-expanded],[aria-selected]';

function states(e, role) {
  const out = [];
  const tag = e.tagName;
  const form = FORM_TAGS.has(tag);
  const aria = e.matches(STATE_ATTRS);
  if (role === 'heading') out.push('level=' + (e.getAttribute('aria-level') || tag.slice(1)));
  if ((form && e.disabled) || (aria && e.getAttribute('aria-disabled') === 'true')) out.push('disabled');
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role.startsWith('menuitem')) {
    const c = e.checked !== undefined && tag === 'INPUT' ? e.checked : aria && e.getAttribute('aria-checked') === 'true';
    if (c) out.push('checked');
  }
  const exp = aria ? e.getAttribute('aria-expanded') : null;
  if (exp !== null) out.push(exp === 'true' ? 'expanded' : 'collapsed');
  if (tag === 'DETAILS') out.push(e.open ? 'expanded' : 'collapsed');
  if ((aria && e.getAttribute('aria-selected') === 'true') || (tag === 'OPTION' && e.selected)) out.push('selected');
  if (form && e.required) out.push('required');
  if (form && e.readOnly && (tag === 'INPUT' || tag === 'TEXTAREA')) out.push('readonly');
  if (tag !== 'BODY' && e === activeIn(e.ownerDocument)) out.push('focused');
  return out;
}

// The focused element of a document; a snapshot asks once per document (focus does not move while it reads).
let focusSeen = null;
function activeIn(doc) {
  if (!focusSeen) return doc.activeElement;
  let a = focusSeen.get(doc);
  if (a === undefined) {
    a = doc.activeElement;
    focusSeen.set(doc, a);
  }
  return a;
}

function valueOf(e, role) {
  const tag = e.tagName;
  if (tag === 'SELECT') {
    const sel = Array.from(e.selectedOptions, (o) => squash(o.label || o.text));
    return sel.length ? sel.join(', ') : null;
  }
  if (tag === 'INPUT') {
    const t = e.type;
    if (t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return null;
    if (t === 'password') return e.value ? '•'.repeat(Math.min(e.value.length, 8)) : '';
    if (t === 'file') return Array.from(e.files || [], (f) => f.name).join(', ');
    return e.value;
  }
  if (tag === 'TEXTAREA') return e.value;
  if (role === 'textbox' && e.isContentEditable) return textOf(e);
  if (role === 'slider' || role === 'spinbutton' || role === 'progressbar') return e.getAttribute('aria-valuenow') || e.value || null;
  return null;
}
