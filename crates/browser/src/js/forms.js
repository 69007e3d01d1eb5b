// Form controls: typing into a field, choosing options, toggles, file inputs.
// A control of the wrong kind or state answers { refused: why }.

// Focuses an editable element and selects its content (unless appending).
function focusEditable(e, append) {
  const t = (e.type || '').toLowerCase();
  const editable = e.isContentEditable || e.tagName === 'TEXTAREA' || (e.tagName === 'INPUT' && !['checkbox', 'radio', 'submit', 'button', 'reset', 'file', 'image', 'hidden'].includes(t));
  if (!editable) return { refused: describe(e) + ' is not editable' };
  if (e.disabled || e.readOnly) return { refused: describe(e) + ' is disabled or read-only' };
  e.scrollIntoView({ block: 'center', behavior: 'instant' });
  e.focus();
  if (e.isContentEditable) {
    const r = e.ownerDocument.createRange(); r.selectNodeContents(e); if (append) r.collapse(false);
    const s = e.ownerDocument.getSelection(); s.removeAllRanges(); s.addRange(r);
  } else if (append) {
    try { const n = e.value.length; e.setSelectionRange(n, n); } catch (_) {}
  } else if (['date', 'time', 'datetime-local', 'month', 'week', 'number', 'email'].includes(t)) {
    e.select && e.select();
  } else {
    e.select();
  }
  // Pickers (dates, colours, ranges) ignore typed text: lumo sets their value instead.
  return { name: describe(e), picker: ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(t) };
}

// Sets a value the way the user agent would, with its events; says whether the control took it.
function setValue(e, v) {
  e.value = v;
  e.dispatchEvent(new Event('input', { bubbles: true }));
  e.dispatchEvent(new Event('change', { bubbles: true }));
  return e.value === v;
}

// How page_fill_form fills an element.
function fieldKind(e) {
  const r = roleOf(e);
  if (e.tagName === 'SELECT') return 'select';
  if (e.tagName === 'INPUT' && e.type === 'file') return 'file';
  if (r === 'checkbox' || r === 'radio' || r === 'switch' || r === 'menuitemcheckbox') return 'toggle';
  return 'text';
}

function toggleState(e) {
  const r = roleOf(e);
  if (!['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(r)) return { refused: describe(e) + ' is not a checkbox, radio or switch' };
  return { checked: e.tagName === 'INPUT' ? e.checked : e.getAttribute('aria-checked') === 'true', radio: r === 'radio' };
}

// Chooses the options of a <select> by value or label; or names the first value that matches none.
function selectOptions(e, values) {
  const name = describe(e);
  if (e.tagName !== 'SELECT') return { refused: name + ' is not a <select>; click it and pick an option instead' };
  if (e.disabled) return { refused: name + ' is disabled' };
  if (values.length > 1 && !e.multiple) return { refused: name + ' takes one value' };
  const norm = (s) => s.replace(/\s+/g, ' ').trim().toLowerCase();
  const picked = [];
  for (const v of values) {
    const o = Array.from(e.options).find((o) => o.value === v || norm(o.label) === norm(v) || norm(o.text) === norm(v));
    if (!o) return { missing: { value: v, options: Array.from(e.options).slice(0, 30).map((o) => o.label || o.value) } };
    picked.push(o);
  }
  for (const o of e.options) o.selected = picked.includes(o);
  e.dispatchEvent(new Event('input', { bubbles: true }));
  e.dispatchEvent(new Event('change', { bubbles: true }));
  return { picked: { name, labels: picked.map((o) => o.label) } };
}

function fileInput(e) {
  const name = describe(e);
  const hint = '; give the ref of an <input type=file>';
  if (e.tagName !== 'INPUT' || (e.type || '').toLowerCase() !== 'file') return { refused: name + ' is not a file input' + hint };
  if (e.disabled) return { refused: name + ' is disabled' + hint };
  return { multiple: e.multiple };
}
