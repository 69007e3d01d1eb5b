// The options page: the user approves or refuses callers, flips the switches,
// reviews scripts and reads the audit. It edits the same chrome.storage the
// service worker re-reads on every call, so each change applies at once.

import * as policy from './kit/policy.js';
import * as audit from './kit/audit.js';
import * as scripts from './scripts.js';

const $ = (id) => document.getElementById(id);

function cell(row, text, tag = 'td') {
  const td = document.createElement(tag);
  if (text instanceof Node) td.append(text);
  else td.textContent = text;
  row.append(td);
}

function button(label, dataset, onClick) {
  const b = document.createElement('button');
  b.textContent = label;
  Object.assign(b.dataset, dataset);
  b.addEventListener('click', onClick);
  return b;
}

function table(el, headings, rows) {
  el.replaceChildren();
  const head = el.insertRow();
  for (const h of headings) cell(head, h, 'th');
  if (!rows.length) {
    const r = el.insertRow();
    r.className = 'empty';
    cell(r, 'none');
  }
  for (const row of rows) {
    const r = el.insertRow();
    for (const c of row) cell(r, c);
  }
}

const when = (ms) => (ms ? new Date(ms).toLocaleString() : '');

async function render() {
  const p = await policy.get();
  for (const key of ['enabled', 'writes', 'review']) $(key).checked = p[key];
  table($('pending'), ['caller ID', 'name (as it says)', 'asked', ''], p.pending.map((e) => [
    e.id, e.name, when(e.at),
    (() => {
      const span = document.createElement('span');
      span.append(
        button('Approve', { approve: e.id }, () => policy.approve(e.id)),
        ' ',
        button('Refuse', { deny: e.id }, () => policy.deny(e.id)),
      );
      return span;
    })(),
  ]));
  table($('allowlist'), ['caller ID', 'name', 'since', ''], p.allowlist.map((e) => [
    e.id, e.name, when(e.at), button('Revoke', { revoke: e.id }, () => policy.deny(e.id)),
  ]));
  table($('denied'), ['caller ID', 'name', 'since', ''], p.denied.map((e) => [
    e.id, e.name, when(e.at), button('Forget', { forget: e.id }, () => policy.forget(e.id)),
  ]));
  const all = Object.values(await scripts.all());
  table($('scripts'), ['name', 'id', 'matches', 'enabled', 'reviewed', ''], all.map((s) => [
    s.name, s.id, s.matches.join(' '), String(s.enabled), String(s.reviewed),
    s.reviewed ? '' : button('Mark reviewed', { review: s.id }, () => scripts.change((x) => { if (x[s.id]) x[s.id].reviewed = true; })),
  ]));
  const log = (await audit.list()).slice().reverse();
  table($('audit'), ['time', 'tool', 'caller', 'outcome', 'target', 'params hash'], log.map((e) => [
    when(e.atMs), e.tool, e.caller, e.outcome, e.target ?? '', e.paramsHash.slice(0, 16) + '…',
  ]));
  document.body.dataset.rendered = String(Date.now());
}

for (const key of ['enabled', 'writes', 'review']) {
  $(key).addEventListener('change', (e) => policy.set({ [key]: e.target.checked }));
}
chrome.storage.onChanged.addListener(() => render());
render();
