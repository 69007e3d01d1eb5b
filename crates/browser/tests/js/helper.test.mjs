// lumo's in-page helper, tested directly in headless Chromium: the role and
// accessible-name rules, what counts as hidden, and how refs stay put. The
// helper is the script build.rs assembles, installed and called as lumo does
// (chromium.mjs). Run: node --test crates/browser/tests/js/

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Browser, helperScript, readerScript, serve } from './chromium.mjs';

const GIF = 'data:image/gif;base64,R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==';

const PAGES = {
  '/names.html': `<!doctype html><title>names</title><body>
    <span id="first">First</span> <span id="last">Name</span>
    <input id="by" aria-labelledby="first last" aria-label="not this">
    <input id="by-missing" aria-labelledby="no-such-id" aria-label="Fallback">
    <input id="aria" aria-label="  Search   the site ">
    <label for="both">Visible</label><input id="both" aria-label="Spoken">
    <label for="email">E-mail</label><input id="email" type="email">
    <label>Country <select id="country"><option>France</option><option>Spain</option></select></label>
    <label>Subscribe <input id="sub" type="checkbox"></label>
    <label for="two">Card</label><label for="two">number</label><input id="two">
    <img id="logo" alt="Company logo" src="${GIF}" width="10" height="10">
    <input id="go" type="image" alt="Go" src="${GIF}">
    <button id="gear" title="Settings"></button>
    <a id="tip" href="/t" title="Tip">Text wins</a>
    <input id="q" placeholder="Type to search">
    <input id="q-titled" title="Query" placeholder="Ignored">
    <a id="more" href="/more">Read <b>more</b>
       news</a>
    <button id="save">Save<span hidden>draft</span><span aria-hidden="true">(Ctrl+S)</span><script>var ad = 1</script><style>b {}</style></button>
    <input id="submit" type="submit">
    <input id="send" type="submit" value="Send now">
    <input id="reset" type="reset">
    <fieldset id="ship"><legend>Shipping</legend><input id="street" placeholder="Street"></fieldset>
    <iframe id="frame" name="ads" src="about:blank"></iframe>
    <a id="long" href="/long">${'word '.repeat(40)}</a>
  </body>`,
  '/roles.html': `<!doctype html><title>roles</title><body>
    <header id="banner">Top</header>
    <nav id="nav"><a href="/a">A</a></nav>
    <main id="main">
      <h1 id="h1">One</h1><h2 id="h2">Two</h2><h3 id="h3">Three</h3><h6 id="h6">Six</h6>
      <div id="h4" role="heading" aria-level="4">Four</div>
      <a id="link" href="/x">With href</a> <a id="nolink">Without href</a>
      <button id="button">Press</button>
      <div id="explicit" role="button tab">Explicit</div>
      <div id="clicky" onclick="void 0">Clickable div</div>
      <input id="t-text"><input id="t-email" type="email"><input id="t-password" type="password">
      <input id="t-search" type="search"><input id="t-number" type="number"><input id="t-range" type="range">
      <input id="t-checkbox" type="checkbox"><input id="t-radio" type="radio">
      <input id="t-submit" type="submit"><input id="t-reset" type="reset"><input id="t-button" type="button" value="B">
      <input id="t-file" type="file"><input id="t-hidden" type="hidden" value="secret-hidden-input">
      <input id="t-unknown" type="no-such-type">
      <textarea id="textarea"></textarea>
      <select id="one"><option>x</option></select><select id="many" multiple><option>y</option></select>
      <select id="sized" size="3"><option>z</option></select>
      <div id="editable" contenteditable="true">Edit me</div>
      <ul id="ul"><li id="li">Item one</li><li>Item two</li></ul><ol id="ol"><li>First</li></ol>
      <table id="data"><tr><th>Name</th><th>Age</th></tr><tr id="row"><td id="cell">Ada</td><td>36</td></tr></table>
      <table id="column"><tr><th>Planets</th></tr><tr><td>Mercury</td></tr><tr><td>Venus</td></tr></table>
      <table id="layout"><tr><td id="layout-cell"><p>A whole article laid out in a cell.</p></td><td><div>Side</div></td></tr>
        <tr><td><p>More text</p></td><td>x</td></tr></table>
      <form id="form" aria-label="Signup"><input aria-label="Who"></form>
      <section id="region" aria-label="News">In the news</section>
      <section id="section">Plain section</section>
      <article id="article"><p id="para">Paragraph</p></article>
      <img id="decor" alt="" src="${GIF}" width="5" height="5">
      <details id="details" open><summary id="summary">More</summary>Inside</details>
      <dialog id="dialog" open>Hello</dialog>
      <progress id="progress" value="3" max="10"></progress><hr id="hr">
    </main>
    <aside id="aside">Aside</aside>
    <footer id="footer">Bottom</footer>
  </body>`,
  '/hidden.html': `<!doctype html><title>hidden</title><body>
    <p>Shown words</p>
    <p style="display:none">display-none words</p>
    <p style="visibility:hidden">visibility-hidden words</p>
    <div aria-hidden="true"><p>aria-hidden words</p><button>aria-hidden button</button></div>
    <p hidden>hidden-attribute words</p>
    <script>var scriptWords = 'script words';</script>
    <style>.style-words { color: red }</style>
    <template><p>template words</p></template>
    <noscript>noscript words</noscript>
    <input type="hidden" value="hidden-input words">
    <div style="display:contents"><button>Contents child</button></div>
    <div style="display:none"><button id="gone-button">Display-none button</button></div>
  </body>`,
  '/shadow.html': `<!doctype html><title>shadow</title><body>
    <div id="host"><span>Slotted words</span></div>
    <script>
      document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML =
        '<button>In the shadow</button><p hidden>Hidden in the shadow</p><slot></slot>';
    </script>
  </body>`,
  '/terse.html': `<!doctype html><title>terse</title><body>
    <p id="para">Read <a href="/guide">the guide</a>, then <b>press</b> <button>Go</button> now.</p>
    <ul><li><a href="/a">Alpha</a></li><li><a href="/b">Beta</a></li></ul>
    <table id="orders"><tr><th>Order</th><th>Link</th><th>Qty</th></tr>
      ${[1, 2, 3].map((n) => `<tr><td>Order ${n}</td><td><a href="/o/${n}">Open ${n}</a></td><td><input aria-label="Qty ${n}"></td></tr>`).join('')}
    </table>
    <p>Follow <a href="https://example.org/feed/"><img src="${GIF}" alt="" width="8" height="8"></a>
      <a href="/home?from=icon"><img src="${GIF}" alt="" width="8" height="8"></a></p>
    <ul id="thumbs">${[1, 2, 3].map((n) => `<li>Story ${n} <img src="${GIF}" alt="Staff photo" width="8" height="8"></li>`).join('')}</ul>
    <figure><img src="${GIF}" alt="Staff  photo" width="8" height="8"><img src="${GIF}" alt="A map" width="8" height="8"></figure>
    <ul id="news" aria-label="News"><li><a href="/s/1" title="Rates rise again"><img src="${GIF}" width="8" height="8"></a>
        <div><a href="/s/1">Rates rise again</a> by Ann</div></li>
      <li><a href="/s/2"><img src="${GIF}" alt="Harbour at dawn" width="8" height="8"></a>
        <div><a href="/s/2">Ships wait</a></div></li></ul>
    <p id="again">Again: <a href="/a">Alpha</a>, <a href="/a">Alpha</a>, <a href="/a?x">Alpha</a>, <a href="#">Top</a> <a href=" #">Top</a>, <a href="javascript:go()">Go</a> <a href="JavaScript:go()">Go</a></p>
    <div style="height: 3000px"></div>
    <div><span>Far</span> <span>below</span> <a href="/far">the fold</a></div>
  </body>`,
  '/sections.html': `<!doctype html><title>sections</title><body>
    <h1>Guide</h1><p>Intro words.</p>
    <main>
      <h2>Install</h2><p>Install words.</p>
      <h3>On Linux</h3><p>Linux words.</p>
      <div class="mw-heading"><h2>Use</h2><span>[edit]</span></div>
      <p>Use words with <a href="/use">a link</a>.</p>
      <div id="host"></div>
      <p>After the host.</p>
      <div class="mw-heading"><h2>Help</h2></div>
      <p>Help words.</p>
    </main>
    <footer>Footer words.</footer>
    <script>
      document.getElementById('host').attachShadow({ mode: 'open' }).innerHTML = '<p>Shadow words.</p>';
    </script>
  </body>`,
  '/refs.html': `<!doctype html><title>refs</title><body>
    <ul id="list"><li><button id="alpha">Alpha</button></li><li><button id="beta">Beta</button></li></ul>
  </body>`,
};

let browser;
let server;
let helper;

before(async () => {
  helper = helperScript();
  server = await serve(PAGES);
  browser = await Browser.launch();
});

after(async () => {
  await browser?.close();
  server?.close();
});

const open = (path) => browser.open(server.url(path), helper);

describe('accessible names', () => {
  let page;
  before(async () => { page = await open('/names.html'); });

  const cases = [
    ['#by', 'textbox "First Name"', 'aria-labelledby joins the texts of the ids it names, before aria-label'],
    ['#by-missing', 'textbox "Fallback"', 'aria-labelledby that names nothing falls back to aria-label'],
    ['#aria', 'textbox "Search the site"', 'aria-label, with white space squashed'],
    ['#both', 'textbox "Spoken"', 'aria-label before a <label for>'],
    ['#email', 'textbox "E-mail"', '<label for>'],
    ['#country', 'combobox "Country"', 'a wrapping <label>, without the options of the select it wraps'],
    ['#sub', 'checkbox "Subscribe"', 'a wrapping <label> of a checkbox'],
    ['#two', 'textbox "Card number"', 'two <label for> join'],
    ['#logo', 'img "Company logo"', 'alt of an image'],
    ['#go', 'button "Go"', 'alt of an image button'],
    ['#gear', 'button "Settings"', 'title when there is no content'],
    ['#tip', 'link "Text wins"', 'content before title'],
    ['#q', 'textbox "Type to search"', 'placeholder'],
    ['#q-titled', 'textbox "Query"', 'title before placeholder'],
    ['#more', 'link "Read more news"', 'text content across elements, white space squashed'],
    ['#save', 'button "Save"', 'content leaves out hidden, aria-hidden, script and style'],
    ['#submit', 'button "Submit"', 'a submit input without a value'],
    ['#send', 'button "Send now"', 'a submit input by its value'],
    ['#ship', 'group "Shipping"', 'a fieldset by its legend'],
    ['#frame', 'iframe "ads"', 'an iframe by its name'],
  ];
  for (const [selector, want, rule] of cases) {
    test(`${rule}: ${selector} is ${want}`, async () => {
      assert.equal(await page.described(selector), want);
    });
  }

  test('a reset input has no name of its own', async () => {
    assert.equal(await page.described('#reset'), 'button');
  });

  test('a long name is cut at 100 characters in answers', async () => {
    const name = await page.described('#long');
    assert.match(name, /^link "(word ){19}word…"$/);
    assert.equal(JSON.parse(name.slice('link '.length)).length, 100);
  });

  test('the snapshot shows the same names', async () => {
    const text = await page.snapshot();
    for (const line of ['textbox "First Name" [', 'combobox "Country" [', 'button "Save" [', 'group "Shipping" [', '[Read more news][']) {
      assert.ok(text.includes(line), `${line} in:\n${text}`);
    }
    assert.ok(!text.includes('Subscribe checkbox'), 'a label says nothing its control does not:\n' + text);
    assert.ok(!text.includes('France, Spain') || text.includes('options: "France", "Spain"'), text);
  });
});

describe('implicit and explicit roles', () => {
  let page;
  let text;
  before(async () => {
    page = await open('/roles.html');
    text = await page.snapshot();
  });

  const roles = [
    ['#banner', 'banner'], ['#nav', 'navigation'], ['#main', 'main'], ['#aside', 'complementary'], ['#footer', 'contentinfo'],
    ['#form', 'form "Signup"'], ['#region', 'region "News"'], ['#article', 'article'], ['#para', 'paragraph'],
    ['#link', 'link "With href"'], ['#button', 'button "Press"'], ['#explicit', 'button "Explicit"'],
    ['#t-text', 'textbox'], ['#t-email', 'textbox'], ['#t-password', 'textbox'], ['#t-search', 'searchbox'],
    ['#t-number', 'spinbutton'], ['#t-range', 'slider'], ['#t-checkbox', 'checkbox'], ['#t-radio', 'radio'],
    ['#t-submit', 'button "Submit"'], ['#t-reset', 'button'], ['#t-button', 'button "B"'], ['#t-file', 'button'],
    ['#t-unknown', 'textbox'], ['#textarea', 'textbox'],
    ['#one', 'combobox'], ['#many', 'listbox'], ['#sized', 'listbox'], ['#editable', 'textbox'],
    ['#ul', 'list'], ['#ol', 'list'], ['#li', 'listitem "Item one"'],
    ['#data', 'table'], ['#data th', 'columnheader "Name"'], ['#row', 'row'], ['#cell', 'cell "Ada"'],
    ['#details', 'group'], ['#summary', 'button "More"'], ['#dialog', 'dialog'], ['#progress', 'progressbar'], ['#hr', 'separator'],
  ];
  for (const [selector, want] of roles) {
    test(`${selector} is ${want}`, async () => {
      assert.equal(await page.described(selector), want);
    });
  }

  test('elements without a role are described by their tag', async () => {
    assert.equal(await page.described('#nolink'), 'a');
    assert.equal(await page.described('#section'), 'section');
    assert.equal(await page.described('#decor'), 'img', 'alt="" makes an image presentational');
    assert.equal(await page.described('#layout-cell'), 'td', 'a layout table has no cells');
    assert.equal(await page.described('#clicky'), 'div');
  });

  test('headings carry their level, from the tag or aria-level', () => {
    for (const [name, level] of [['One', 1], ['Two', 2], ['Three', 3], ['Six', 6], ['Four', 4]]) {
      // No ref: the section is right below; page_find gives one.
      assert.match(text, new RegExp(`^ *${'#'.repeat(level)} ${name}$`, 'm'), text);
    }
  });

  test('a link without href is text, not a link', () => {
    assert.ok(!text.includes('[Without href]'), text);
    assert.ok(text.includes('Without href'), text);
  });

  test('a data table reads as rows of cells; a layout table as its content', () => {
    assert.match(text, /table \[e\d+\]\n\s+Name\|Age\n\s+Ada\|36\n/, text);
    assert.match(text, /^\s*A whole article laid out in a cell\.$/m, text);
    assert.ok(!/\|.*A whole article/.test(text), text);
  });

  test('header cells make a data table even with one column', () => {
    assert.match(text, /table \[e\d+\]\n\s+Planets\n\s+Mercury\n\s+Venus\n/, text);
  });

  test('lists and list items', () => {
    assert.match(text, /\n\s*- Item one\n\s*- Item two\n\s*- First\n/, text);
  });

  test('actionable elements without a role get a ref; hidden inputs and presentational images do not show', () => {
    assert.match(text, /generic "Clickable div" \[e\d+\]/, text);
    assert.ok(!text.includes('secret-hidden-input'), text);
    assert.ok(!/\bimg\b/.test(text), text);
  });

  test('a section without a name is no region', () => {
    assert.ok(!text.includes('region "Plain section"'), text);
    assert.match(text, /region "News" \[e\d+\]/, text);
  });
});

describe('hidden content', () => {
  let page;
  let text;
  before(async () => {
    page = await open('/hidden.html');
    text = await page.snapshot();
  });

  test('the snapshot shows what is rendered', () => {
    assert.ok(text.includes('Shown words'), text);
    assert.match(text, /button "Contents child" \[e\d+\]/, 'display:contents keeps its children');
  });

  for (const words of ['display-none', 'visibility-hidden', 'aria-hidden', 'hidden-attribute', 'script words', 'style-words',
    'template words', 'noscript words', 'hidden-input words', 'Display-none button']) {
    test(`the snapshot leaves out ${words}`, () => {
      assert.ok(!text.includes(words), text);
    });
  }

  test('page_find does not report elements that are not rendered', async () => {
    const find = (text) => page.call('find', { text, role: null, regex: false, limit: 20 });
    const shown = await find('Shown words');
    assert.match(shown.text, /^- paragraph "Shown words" \[e\d+\]$/);
    assert.equal(shown.total, 1);
    for (const words of ['display-none', 'visibility-hidden', 'hidden-attribute', 'script words', 'style-words',
      'template words', 'noscript words', 'hidden-input words', 'Display-none button', 'aria-hidden words',
      'aria-hidden button']) {
      const found = await find(words);
      assert.equal(found.total, 0, `${words}: ${found.text}`);
    }
  });

  test('an element with no box cannot be aimed at', async () => {
    const aim = await page.on('#gone-button', 'aim');
    assert.equal(aim.spot, null);
    assert.match(aim.name, /^button "Display-none button" \[e\d+\]$/);
  });
});

test('open shadow roots are read, with their slotted content', async () => {
  const page = await open('/shadow.html');
  const text = await page.snapshot();
  assert.match(text, /button "In the shadow" \[e\d+\]/, text);
  assert.ok(text.includes('Slotted words'), text);
  assert.ok(!text.includes('Hidden in the shadow'), text);
  const found = await page.call('find', { text: 'in the shadow', role: 'button', regex: false, limit: 5 });
  assert.equal(found.total, 1, found.text);
});

describe('refs', () => {
  test('stay with their element across snapshots, finds, actions and DOM changes', async () => {
    const page = await open('/refs.html');
    const first = await page.snapshot();
    const ref = (text, name) => text.match(new RegExp(`button "${name}" \\[(e\\d+)\\]`))?.[1];
    const alpha = ref(first, 'Alpha');
    const beta = ref(first, 'Beta');
    assert.ok(alpha && beta && alpha !== beta, first);

    assert.equal(await page.snapshot(), first, 'the same page, the same snapshot');
    const found = await page.call('find', { text: 'beta', role: null, regex: false, limit: 5 });
    assert.equal(ref(found.text, 'Beta'), beta, found.text);
    assert.equal((await page.on('#alpha', 'aim')).name, `button "Alpha" [${alpha}]`);

    await page.run(() => {
      const b = document.createElement('button');
      b.textContent = 'Gamma';
      document.getElementById('list').prepend(b);
    });
    const after = await page.snapshot();
    assert.equal(ref(after, 'Alpha'), alpha, after);
    assert.equal(ref(after, 'Beta'), beta, after);
    const gamma = ref(after, 'Gamma');
    assert.ok(Number(gamma.slice(1)) > Math.max(Number(alpha.slice(1)), Number(beta.slice(1))), after);

    assert.equal(await page.call('refState', beta), 'shown');
    await page.run(() => { document.getElementById('beta').style.display = 'none'; });
    assert.equal(await page.call('refState', beta), 'hidden');
    await page.run(() => { document.getElementById('beta').remove(); });
    assert.equal(await page.call('refState', beta), 'gone');
    assert.equal(await page.call('snapshot', { ref: beta, maxBytes: 1000, offset: 0 }), null, 'a gone subtree is null');
    assert.equal(await page.call('refState', 'e99999'), 'gone', 'a ref never given out');
  });

  test('are numbered from the counter lumo hands over, never back below the page\'s own', async () => {
    const page = await open('/refs.html');
    page.next = 500;
    const text = await page.snapshot();
    assert.match(text, /^- button "Alpha" \[e500\]\n- button "Beta" \[e501\]$/, text);
    assert.deepEqual(page.refs, [500, page.next], 'the call reports the run it used');
    assert.ok(page.next > 500);

    // A lower number (lumo lost a run to a timeout) does not make the page reuse one.
    const end = page.next;
    page.next = 10;
    await page.run(() => { document.body.append(Object.assign(document.createElement('button'), { textContent: 'Late' })); });
    const late = await page.snapshot();
    assert.match(late, new RegExp(`button "Late" \\[e${end}\\]`), late);
    // The run starts at lumo's number: the numbers from there were used by this page's calls lumo lost.
    assert.deepEqual(page.refs, [10, end + 1]);
    assert.match(late, /button "Alpha" \[e500\]/, 'old refs stay');

    // A call that makes no ref reports an empty run.
    await page.call('refState', 'e500');
    assert.equal(page.refs[0], page.refs[1]);
  });

  test('of elements that left the document are let go; an element put back gets a new one', async () => {
    const page = await open('/refs.html');
    const first = await page.snapshot();
    const beta = first.match(/button "Beta" \[(e\d+)\]/)[1];
    await page.run(() => { globalThis.parked = document.getElementById('beta'); globalThis.parked.remove(); });
    assert.equal(await page.call('refState', beta), 'gone');
    await page.run(() => { document.getElementById('list').append(globalThis.parked); });
    const again = await page.snapshot();
    const back = again.match(/button "Beta" \[(e\d+)\]/)?.[1];
    assert.ok(back && back !== beta, again);
    assert.equal(await page.call('refState', back), 'shown');
    assert.equal(await page.call('refState', beta), 'gone', 'the old ref names nothing');

    // Thousands of refs to elements the page threw away: the book sweeps them, the live ones still act.
    await page.run(() => {
      const box = document.createElement('div');
      box.id = 'churn';
      for (let i = 0; i < 3000; i++) box.append(Object.assign(document.createElement('button'), { textContent: 'Churn ' + i }));
      document.body.append(box);
    });
    const churned = await page.snapshot();
    const some = churned.match(/button "Churn 17" \[(e\d+)\]/)[1];
    await page.run(() => document.getElementById('churn').remove());
    await page.snapshot();
    assert.equal(await page.call('refState', some), 'gone');
    assert.equal(await page.call('refState', back), 'shown', 'a sweep keeps what is still in the document');
  });

  test('carry the prefix of their frame', async () => {
    const page = await open('/refs.html');
    page.prefix = 'f3e';
    page.next = 7;
    const text = await page.snapshot();
    assert.match(text, /^- button "Alpha" \[f3e7\]\n- button "Beta" \[f3e8\]$/, text);
    assert.equal(await page.call('refState', 'f3e8'), 'shown');
  });
});

describe('the terse format', () => {
  let page;
  let text;
  before(async () => {
    page = await open('/terse.html');
    text = await page.snapshot();
  });

  test('a paragraph is one line of its words, its links and controls inline', () => {
    assert.match(text, /^Read \[the guide\]\[e\d+\], then press button "Go" \[e\d+\] now\.$/m, text);
  });

  test('list items that are each one link share a line', () => {
    assert.match(text, /^\[Alpha\]\[e\d+\] \[Beta\]\[e\d+\]$/m, text);
  });

  test('a row shaped like the one above drops role words, keeping every word and ref', () => {
    assert.match(text, /^ Order 1\|\[Open 1\]\[e\d+\]\|textbox "Qty 1" \[e\d+\]$/m, text);
    for (const n of [2, 3]) assert.match(text, new RegExp(`^ Order ${n}\\|Open ${n} \\[e\\d+\\]\\|Qty ${n} \\[e\\d+\\]$`, 'm'), text);
  });

  test('an image whose alt text was written above adds nothing', () => {
    assert.match(text, /^- Story 1 Staff photo$/m, text);
    for (const n of [2, 3]) assert.match(text, new RegExp(`^- Story ${n}$`, 'm'), text);
    assert.match(text, /^(img "A map"|A map)$/m, text);
    assert.equal(text.split('Staff photo').length, 2, text);
  });

  test('a thumbnail link beside its headline link to the same place is left out', async () => {
    assert.equal(text.split('Rates rise again').length, 2, text);
    assert.match(text, /^ *- \[Rates rise again\]\[e\d+\] by Ann$/m, text);
    // Its image says more than the headline: kept.
    assert.match(text, /\[Harbour at dawn\]\[e\d+\]/, text);
    // A subtree may not hold the twin: there the thumbnail is written too.
    const sub = await page.call('snapshot', { ref: text.match(/list "News" \[(e\d+)\]/)[1], maxBytes: 10000, offset: 0 });
    assert.equal(sub.text.split('[Rates rise again]').length, 3, sub.text);
  });

  test('a link written again (same words, same place) keeps its words but not a second ref', async () => {
    // `/a?x` is another place, and `#` and `javascript:` links act by script, each its own way.
    assert.match(text, /^Again: \[Alpha\], \[Alpha\], \[Alpha\]\[e\d+\], \[Top\]\[e\d+\] \[Top\]\[e\d+\], \[Go\]\[e\d+\] \[Go\]\[e\d+\]$/m, text);
    // A narrower look (the viewport, a subtree) may not hold the first one: there every link has its ref.
    const view = await page.call('snapshot', { maxBytes: 10000, offset: 0, interactive: false, viewport: true });
    assert.match(view.text, /^Again: \[Alpha\]\[e\d+\], \[Alpha\]\[e\d+\], /m, view.text);
  });

  test('a viewport snapshot leaves out inline pieces off screen', async () => {
    assert.match(text, /^Far below \[the fold\]\[e\d+\]$/m, text);
    const view = await page.call('snapshot', { maxBytes: 10000, offset: 0, interactive: false, viewport: true });
    assert.ok(view.text.includes('Read [the guide]') && !view.text.includes('Far') && !view.text.includes('the fold'), view.text);
  });

  test('a link without words says where it goes, in short', () => {
    assert.match(text, /^Follow \[\]\[e\d+\]\(example\.org\/feed\) \[\]\[e\d+\]\(\/home\)$/m, text);
  });

  test('other link targets show in a subtree only', async () => {
    assert.ok(!text.includes('/guide'), text);
    const table = text.match(/table \[(e\d+)\]/)[1];
    const sub = await page.call('snapshot', { ref: table, maxBytes: 10000, offset: 0 });
    assert.match(sub.text, /\[Open 1\]\[e\d+\]\(\/o\/1\)/, sub.text);
    assert.match(sub.text, /Open 3 \[e\d+\]\(\/o\/3\)/, sub.text);
  });
});

describe('a heading\'s ref', () => {
  test('reads its section: up to the next heading of its level or above', async () => {
    const page = await open('/sections.html');
    // As an agent gets one: page_find by role and words.
    const ref = async (name) => {
      const found = await page.call('find', { text: name, role: 'heading', regex: false, limit: 5 });
      return found.text.match(new RegExp(`heading "${name}" \\[(e\\d+)\\]`))[1];
    };
    const section = async (name) => (await page.call('snapshot', { ref: await ref(name), maxBytes: 10000, offset: 0 })).text;
    const install = await section('Install');
    for (const w of ['## Install', 'Install words.', '### On Linux', 'Linux words.']) assert.ok(install.includes(w), install);
    for (const w of ['Intro', 'Use', 'Help', 'Footer']) assert.ok(!install.includes(w), install);
    const linux = await section('On Linux');
    assert.ok(linux.includes('Linux words.') && !linux.includes('Install') && !linux.includes('Use'), linux);
    // A heading in a wrapper of its own (Wikipedia's): the wrapper's other pieces are in, the next wrapper's heading ends it.
    const use = await section('Use');
    // A shadow root inside the section is part of it.
    assert.match(use, /^## Use\n\[edit\]\nUse words with \[a link\]\[e\d+\]\(\/use\)\.\nShadow words\.\nAfter the host\.$/, use);
    // The last section runs to the end of the document.
    const help = await section('Help');
    assert.ok(help.includes('Help words.') && help.includes('Footer words.') && !help.includes('Use'), help);
    const guide = await section('Guide');
    for (const w of ['Intro words.', 'Install words.', 'Help words.']) assert.ok(guide.includes(w), guide);
  });
});

describe('the contract', () => {
  test('a call whose answer lumo never got: the next call books the refs it shows', async () => {
    const page = await open('/refs.html');
    const start = page.next;
    const first = await page.snapshot();
    const used = page.refs;
    assert.ok(used[1] > used[0], JSON.stringify(used));
    // The answer was lost (a timeout, a stopped bridge worker): lumo's counter is where it was.
    page.next = start;
    assert.equal(await page.snapshot(), first);
    assert.ok(page.refs[0] <= used[0] && page.refs[1] >= used[1], `${JSON.stringify(page.refs)} covers ${JSON.stringify(used)}`);
  });

  test('an unknown method is an error that names it', async () => {
    const page = await open('/refs.html');
    await assert.rejects(page.call('noSuchMethod'), /lumo helper has no method noSuchMethod/);
    await assert.rejects(page.on('#alpha', 'snapshot'), /lumo helper has no method snapshot/, 'page methods are not element methods');
  });

  test('a control of the wrong kind is refused with its description', async () => {
    const page = await open('/refs.html');
    const refused = await page.on('#alpha', 'toggleState');
    assert.match(refused.refused, /^button "Alpha" \[e\d+\] is not a checkbox, radio or switch$/);
  });
});

test('page_extract\'s reader is in a document only once installed, and hands out the snapshot\'s refs', async () => {
  const page = await open('/refs.html');
  await assert.rejects(page.call('extract', { maxBytes: 10000, offset: 0 }), /reader is not installed/);
  const alpha = (await page.snapshot()).match(/button "Alpha" \[(e\d+)\]/)[1];
  const installed = await page.send('Runtime.evaluate', { expression: readerScript(), contextId: page.context });
  assert.equal(installed.exceptionDetails, undefined);
  const read = await page.call('extract', { maxBytes: 10000, offset: 0 });
  assert.ok(JSON.stringify(read).includes(`[${alpha}]`), JSON.stringify(read));
});
