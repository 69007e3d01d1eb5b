// lumo's reader (page_extract): the page's main content as compact Markdown,
// and declarative extractors' fields and records. Runs in the isolated world
// "lumo" beside the helper, on the live DOM (after the page's scripts ran), and
// hands out the same refs as page_snapshot through __lumo.refOf.
//
// Choosing the content follows the shape of Mozilla Readability's heuristic
// (score paragraphs, credit their ancestors, weigh class names and link
// density, join related siblings, clean conditionally), on the rendered DOM:
// what CSS hides is left out.
//
// Not a part of the helper: few calls need it, and every document pays for
// what the helper carries. build.rs wraps this function into reader.js, which
// lumo evaluates in the lumo world the first time a document is read
// (helper/world.rs `ensure_reader`); the helper hands it the parts it shares
// (`__lumo.addReader`), so refs are the same as page_snapshot's.
(L) => {

  const squash = (s) => s.replace(/\s+/g, ' ').trim();
  const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE', 'SVG', 'svg', 'CANVAS', 'OBJECT', 'EMBED']);
  const UNLIKELY = /-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote/i;
  const MAYBE = /and|article|body|column|content|main|mathjax|shadow/i;
  const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story/i;
  const NEGATIVE = /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget/i;
  const BYLINE = /byline|author|dateline|writtenby|p-author/i;
  const UNLIKELY_ROLES = new Set(['menu', 'menubar', 'complementary', 'navigation', 'alert', 'alertdialog', 'dialog']);
  const BLOCK = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'DETAILS', 'DIALOG', 'DD', 'DIV', 'DL', 'DT', 'FIELDSET',
    'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR', 'LI', 'MAIN', 'NAV', 'OL',
    'P', 'PRE', 'SECTION', 'TABLE', 'UL', 'CENTER', 'SUMMARY', 'IFRAME', 'TR', 'TD', 'TH', 'TBODY', 'THEAD', 'TFOOT', 'CAPTION']);
  const DIV_TO_P = 'a,blockquote,dl,div,img,ol,p,pre,table,ul,section,article,h1,h2,h3,h4,h5,h6';

  const classWeight = (e) => {
    let w = 0;
    const c = typeof e.className === 'string' ? e.className : '';
    if (c) { if (NEGATIVE.test(c)) w -= 25; if (POSITIVE.test(c)) w += 25; }
    if (e.id) { if (NEGATIVE.test(e.id)) w -= 25; if (POSITIVE.test(e.id)) w += 25; }
    return w;
  };
  const matchString = (e) => (typeof e.className === 'string' ? e.className : '') + ' ' + (e.id || '');

  // A page that hides its whole body until its scripts are done (an anti-flicker
  // `visibility: hidden` on <body>) is read as it will show: visibility is not asked then.
  let veiled = false;
  function shown(e) {
    if (SKIP.has(e.tagName) || e.hidden || e.getAttribute('aria-hidden') === 'true') return false;
    if (e.checkVisibility) return e.checkVisibility({ visibilityProperty: !veiled }) || getComputedStyle(e).display === 'contents';
    return true;
  }

  // Text a person sees (no scripts, styles or hidden parts), with how much of it is link text.
  const textCache = new WeakMap();
  function textStats(e) {
    let s = textCache.get(e);
    if (s) return s;
    let text = '';
    let link = 0;
    (function add(n, inLink) {
      for (const c of n.childNodes) {
        if (c.nodeType === 3) { text += c.data; if (inLink) link += c.data.length; continue; }
        if (c.nodeType !== 1 || SKIP.has(c.tagName) || c.hidden || c.getAttribute('aria-hidden') === 'true') continue;
        add(c, inLink || (c.tagName === 'A' && c.hasAttribute('href')));
      }
    })(e, false);
    text = squash(text);
    s = { text, len: text.length, linkDensity: text.length ? Math.min(1, link / text.length) : 0 };
    textCache.set(e, s);
    return s;
  }

  // ------------------------------------------------------------------ choosing the content

  function unlikely(e, strip) {
    if (e.tagName === 'BODY' || e.tagName === 'A' || e.tagName === 'HTML') return false;
    const role = e.getAttribute('role');
    if (role && UNLIKELY_ROLES.has(role)) return true;
    if (e.tagName === 'NAV' || e.tagName === 'ASIDE') return true;
    if (!strip) return false;
    const m = matchString(e);
    return UNLIKELY.test(m) && !MAYBE.test(m) && !e.closest('table,code') && e.tagName !== 'MAIN' && e.tagName !== 'ARTICLE' && !wrapsArticle(e);
  }

  // Whether most of `e`'s text is one <article> or <main> (a "site_header" around the story).
  function wrapsArticle(e) {
    const len = textStats(e).len;
    for (const a of e.querySelectorAll('article,main,[role=main]')) {
      const n = textStats(a).len;
      if (n >= 500 && n * 2 >= len && !UNLIKELY.test(matchString(a))) return true;
    }
    return false;
  }

  function chooseContent(doc, strip) {
    const body = doc.body;
    if (!body) return { roots: [], dropped: new Set() };
    const scores = new Map();
    const dropped = new Set();
    const init = (e) => {
      if (scores.has(e)) return;
      let s = classWeight(e);
      const t = e.tagName;
      if (t === 'DIV') s += 5;
      else if (t === 'PRE' || t === 'TD' || t === 'BLOCKQUOTE') s += 3;
      else if (['ADDRESS', 'OL', 'UL', 'DL', 'DD', 'DT', 'LI', 'FORM'].includes(t)) s -= 3;
      else if (/^H[1-6]$/.test(t) || t === 'TH') s -= 5;
      scores.set(e, s);
    };
    const scorable = [];
    const tw = doc.createTreeWalker(body, NodeFilter.SHOW_ELEMENT, {
      acceptNode(n) {
        if (!shown(n)) return NodeFilter.FILTER_REJECT;
        if (unlikely(n, strip)) { dropped.add(n); return NodeFilter.FILTER_REJECT; }
        return NodeFilter.FILTER_ACCEPT;
      },
    });
    for (let n = tw.nextNode(); n; n = tw.nextNode()) {
      const t = n.tagName;
      if (t === 'P' || t === 'PRE' || t === 'TD' || t === 'SECTION' || /^H[2-6]$/.test(t)) scorable.push(n);
      else if ((t === 'DIV' || t === 'SPAN' || t === 'FONT' || t === 'CENTER') && !n.querySelector(DIV_TO_P)) scorable.push(n);
      else if (t === 'DIV' && Array.from(n.childNodes).some((c) => c.nodeType === 3 && c.data.trim().length > 25)) scorable.push(n);
    }
    for (const p of scorable) {
      const { text, len } = textStats(p);
      // Text inside a link is the link's words (a download button's), not a paragraph.
      if (len < 25 || p.closest('a[href]')) continue;
      const score = 1 + (text.match(/[,，、]/g) || []).length + Math.min(Math.floor(len / 100), 3);
      let a = p.parentElement;
      // A <div> around just this paragraph is the paragraph (Readability unwraps it): its parent is level 0.
      for (let c = p; a && a.tagName === 'DIV' && a !== body && a.children.length === 1 && textStats(a).len === textStats(c).len; c = a, a = a.parentElement);
      for (let level = 0; a && level < 5 && a !== doc.documentElement; level++, a = a.parentElement) {
        init(a);
        scores.set(a, scores.get(a) + score / (level === 0 ? 1 : level === 1 ? 2 : level * 3));
      }
    }
    const final = new Map();
    for (const [e, s] of scores) final.set(e, s * (1 - textStats(e).linkDensity));
    const ranked = Array.from(final).sort((a, b) => b[1] - a[1]);
    if (!ranked.length) return { roots: [body], dropped };
    let [top, topScore] = ranked[0];
    // Several strong candidates under one ancestor: the ancestor is the article.
    const alternatives = ranked.slice(1, 5).filter(([, s]) => s / topScore >= 0.75).map(([e]) => e);
    if (alternatives.length >= 3) {
      for (let p = top.parentElement; p && p !== body; p = p.parentElement) {
        if (alternatives.filter((a) => p.contains(a)).length >= 3) { top = p; break; }
      }
    }
    // Climb while the parent scores better (its own text and its children's).
    let last = final.get(top) || 0;
    const threshold = last / 3;
    for (let p = top.parentElement; p && p !== body; p = p.parentElement) {
      if (!final.has(p)) continue;
      const ps = final.get(p);
      if (ps < threshold) break;
      if (ps > last) { top = p; break; }
      last = ps;
    }
    while (top.parentElement && top.parentElement !== body && top.parentElement.children.length === 1) top = top.parentElement;
    topScore = final.get(top) || topScore;
    // Siblings that belong with it: scored well, or plain paragraphs of prose.
    const parent = top.parentElement;
    if (!parent) return { roots: [top], dropped };
    const roots = [];
    const siblingThreshold = Math.max(10, topScore * 0.2);
    for (const s of parent.children) {
      if (s === top) { roots.push(s); continue; }
      if (!shown(s) || dropped.has(s) || unlikely(s, strip)) continue;
      let bonus = 0;
      // A sibling of the same kind (its first class is the top's: items of one list) gets a bonus.
      if (s.classList && s.classList.length && top.classList && s.classList[0] === top.classList[0]) bonus = topScore * 0.2;
      if (final.has(s) && final.get(s) + bonus >= siblingThreshold) { roots.push(s); continue; }
      // A paragraph of prose beside it (a lede): a <p>, or a <div> of text only, which Readability reads as one.
      if (s.tagName === 'P' || (s.tagName === 'DIV' && !s.querySelector(DIV_TO_P))) {
        const { text, len, linkDensity } = textStats(s);
        if ((len > 80 && linkDensity < 0.25) || (len > 0 && len <= 80 && linkDensity === 0 && /\.( |$)/.test(text))) roots.push(s);
      }
    }
    return { roots, dropped };
  }

  // Readability's conditional cleaning: a container of links, images or
  // form fields rather than prose is page furniture, not content.
  function furniture(e, strip) {
    const t = e.tagName;
    if (!['TABLE', 'UL', 'OL', 'DIV', 'SECTION', 'FORM', 'HEADER', 'ASIDE', 'FOOTER', 'DL'].includes(t)) return false;
    if (t === 'TABLE' && dataTable(e)) return false;
    if (e.closest('code,pre')) return false;
    const weight = strip ? classWeight(e) : 0;
    if (weight < 0) return true;
    const { text, len, linkDensity } = textStats(e);
    if ((text.match(/[,，、]/g) || []).length >= 10) return false;
    // A container whose text is nearly all lists is judged as a list (Readability does so too).
    const isList = t === 'UL' || t === 'OL' || listText(e) > 0.9 * len;
    const count = (sel) => e.querySelectorAll(sel).length;
    const p = count('p');
    const img = count('img');
    const li = count('li') - 100;
    const input = count('input:not([type=hidden])');
    const embeds = count('object,embed,iframe');
    const inFigure = !!e.closest('figure');
    // A list of images, one to an item (a gallery), is content: Readability keeps these too.
    if (isList && img > 0 && img === count('li') && Array.from(e.children).every((c) => c.children.length <= 1)) return false;
    if (img > 1 && p / img < 0.5 && !inFigure) return true;
    if (!isList && li > p) return true;
    if (input > Math.floor(p / 3)) return true;
    if (!isList && !inFigure && len < 25 && (img === 0 || img > 2) && !e.querySelector('pre,table,h1,h2,h3,h4,h5,h6')) return true;
    if (!isList && weight < 25 && linkDensity > 0.2) return true;
    if (weight >= 25 && linkDensity > 0.5) return true;
    if ((embeds === 1 && len < 75) || embeds > 1) return true;
    if (isList && linkDensity > 0.5 && (!/^[UO]L$/.test(t) || (len < 500 && !e.closest('article,main,[role=main]')))) return true;
    return false;
  }

  // How much of `e`'s text is in its lists (a list inside a list counted once).
  function listText(e) {
    let n = 0;
    for (const l of e.querySelectorAll('ul,ol')) {
      const outer = l.parentElement.closest('ul,ol');
      if (!outer || !e.contains(outer)) n += textStats(l).len;
    }
    return n;
  }

  function dataTable(t) {
    const r = t.getAttribute('role');
    if (r === 'presentation' || r === 'none') return false;
    if (r === 'grid' || r === 'table' || t.getAttribute('datatable') === '1') return true;
    if (t.querySelector('table')) return false;
    if (t.caption || t.tHead || t.querySelector('th,col,colgroup,tfoot')) return true;
    const rows = t.rows.length;
    let cols = 0;
    for (const row of Array.from(t.rows).slice(0, 10)) cols = Math.max(cols, row.cells.length);
    if (rows >= 10 || cols > 4) return !t.querySelector('td p,td div,td ul,td table');
    return rows * cols > 10 && !t.querySelector('td p,td div,td ul');
  }

  // ------------------------------------------------------------------ Markdown

  const BR = '\u2028';
  function linkTarget(a) {
    const raw = a.getAttribute('href') || '';
    if (!raw || raw.startsWith('javascript:')) return '';
    if (raw.startsWith('#')) return raw;
    let u;
    try { u = new URL(a.href); } catch (_) { return raw; }
    const here = a.ownerDocument.location;
    if (u.origin === here.origin) {
      if (u.pathname === here.pathname && u.search === here.search && u.hash) return u.hash;
      return u.pathname + u.search + u.hash;
    }
    return u.href;
  }

  const esc = (s) => s.replace(/([\[\]])/g, '\\$1');

  function render(roots, opts) {
    const blocks = [];
    const frames = [];
    const strip = opts.strip;
    const title = opts.title ? squash(opts.title).toLowerCase() : '';
    let titleSkipped = false;
    const keep = (e) => {
      if (!shown(e) || opts.dropped.has(e) || opts.bylineEl === e) return false;
      if (unlikely(e, strip) && !roots.includes(e)) return false;
      if (!roots.includes(e) && furniture(e, strip)) return false;
      return true;
    };

    // A link's text comes escaped from inline() (its images stay images: [![alt]](url)).
    function control(e, role, text) {
      const ref = L.refOf(e);
      if (role === 'link') {
        const to = linkTarget(e);
        return '[' + text + ']' + (to ? '(' + to.replace(/[()\s]/g, encodeURIComponent) + ')' : '') + '[' + ref + ']';
      }
      return '[' + role + (text ? ': ' + esc(text) : '') + '][' + ref + ']';
    }

    // Inline content of `e` as one Markdown string.
    let inLink = 0;
    function inline(e) {
      let out = '';
      for (const c of kids(e)) {
        if (c.nodeType === 3) { out += inLink ? esc(c.data) : c.data; continue; }
        if (c.nodeType !== 1 || !shown(c) || opts.dropped.has(c) || opts.bylineEl === c) continue;
        out += inlineEl(c);
      }
      return out;
    }

    function inlineEl(c) {
      const t = c.tagName;
      if (t === 'BR') return BR;
      if (t === 'IMG') { const alt = squash(c.getAttribute('alt') || ''); return alt ? ' ![' + esc(alt) + '] ' : ''; }
      if (t === 'A' && c.hasAttribute('href')) {
        inLink++;
        const text = squash(inline(c).replaceAll(BR, ' '));
        inLink--;
        return text ? control(c, 'link', text) : '';
      }
      const role = L.roleOf(c);
      if (t === 'BUTTON' || role === 'button' || (t === 'INPUT' && c.type !== 'hidden') || t === 'SELECT' || t === 'TEXTAREA') {
        const name = L.nameOf(c, role || 'button');
        return ' ' + control(c, role || 'button', name) + ' ';
      }
      if (t === 'CODE' || t === 'KBD' || t === 'SAMP') { const s = c.textContent; return s.trim() ? '`' + s.replace(/`/g, "'") + '`' : ''; }
      if (t === 'STRONG' || t === 'B') return wrap(inline(c), '**');
      if (t === 'EM' || t === 'I') return wrap(inline(c), '*');
      if (t === 'SUP' || t === 'SUB') return inline(c);
      if (BLOCK.has(t)) return ' ' + inline(c) + ' ';
      return inline(c);
    }

    // Emphasis marks hug the words; the spaces around them stay outside.
    function wrap(s, mark) {
      const t = s.trim();
      if (!t || t.includes(BR)) return s;
      return (/^\s/.test(s) ? ' ' : '') + mark + t + mark + (/\s$/.test(s) ? ' ' : '');
    }

    function kids(n) {
      if (n.shadowRoot) return n.shadowRoot.childNodes;
      if (n.tagName === 'SLOT') { const a = n.assignedNodes({ flatten: true }); return a.length ? a : n.childNodes; }
      return n.childNodes;
    }

    const clean = (s) => squash(s.replaceAll(BR, '\n').replace(/[ \t]*\n[ \t]*/g, BR)).replaceAll(BR, '\n').replace(/\n{2,}/g, '\n').trim();

    // Walks block content of `e`, writing blocks with `prefix` (list indent or quote marks).
    function blocksOf(e, prefix) {
      let run = '';
      const flush = () => { const t = clean(run); if (t) push(prefix, t); run = ''; };
      for (const c of kids(e)) {
        if (c.nodeType === 3) { run += c.data; continue; }
        if (c.nodeType !== 1) continue;
        if (!BLOCK.has(c.tagName) && !c.shadowRoot) {
          if (c.tagName === 'BR') { run += BR; continue; }
          if (!shown(c) || opts.dropped.has(c) || opts.bylineEl === c) continue;
          // An inline wrapper holding blocks (a <span> around <p>s) reads as blocks.
          if (c.querySelector && c.querySelector('p,div,ul,ol,table,h1,h2,h3,h4,h5,h6,pre,blockquote') && !(c.tagName === 'A')) { flush(); blocksOf(c, prefix); continue; }
          run += inlineEl(c);
          continue;
        }
        if (!keep(c)) continue;
        flush();
        block(c, prefix);
      }
      flush();
    }

    function push(prefix, text) {
      blocks.push(prefix ? text.split('\n').map((l) => prefix + l).join('\n') : text);
    }

    function block(c, prefix) {
      const t = c.tagName;
      if (/^H[1-6]$/.test(t)) {
        const text = clean(inline(c));
        if (!text) return;
        if (!titleSkipped && title && text.toLowerCase() === title) { titleSkipped = true; return; }
        push(prefix, '#'.repeat(Number(t[1])) + ' ' + text);
        return;
      }
      if (t === 'P' || t === 'DT' || t === 'FIGCAPTION' || t === 'SUMMARY' || t === 'CAPTION') {
        // A paragraph with blocks inside (invalid but common) is read as blocks.
        if (c.querySelector('div,ul,ol,table,pre,blockquote,h1,h2,h3,h4,h5,h6')) { blocksOf(c, prefix); return; }
        const text = clean(inline(c));
        if (text) push(prefix, text);
        return;
      }
      if (t === 'UL' || t === 'OL') { list(c, prefix, t === 'OL'); return; }
      if (t === 'PRE') {
        const text = c.textContent.replace(/\n+$/, '');
        if (text.trim()) push(prefix, '```\n' + text + '\n```');
        return;
      }
      if (t === 'BLOCKQUOTE') { blocksOf(c, prefix + '> '); return; }
      if (t === 'HR') return;
      if (t === 'TABLE') { table(c, prefix); return; }
      if (t === 'IFRAME') { frame(c, prefix); return; }
      if (t === 'DD') { blocksOf(c, prefix + '  '); return; }
      blocksOf(c, prefix);
    }

    function list(e, prefix, ordered) {
      let n = Number(e.getAttribute('start')) || 1;
      for (const li of e.children) {
        if (li.tagName !== 'LI' || !shown(li) || opts.dropped.has(li)) continue;
        const mark = ordered ? n++ + '. ' : '- ';
        const before = blocks.length;
        blocksOf(li, prefix + '  ');
        if (blocks.length === before) continue;
        // The item's first block carries the marker in place of the indent.
        const first = blocks[before];
        blocks[before] = prefix + mark + first.slice(prefix.length + 2);
      }
    }

    function table(e, prefix) {
      if (!dataTable(e)) {
        for (const row of e.rows) for (const cell of row.cells) if (keep(cell)) blocksOf(cell, prefix);
        return;
      }
      const rows = [];
      let width = 0;
      for (const row of e.rows) {
        if (!shown(row)) continue;
        const cells = Array.from(row.cells).filter(shown).map((cell) => clean(inline(cell)).replace(/\n/g, ' ').replace(/\|/g, '\\|'));
        if (!cells.some(Boolean)) continue;
        width = Math.max(width, cells.length);
        rows.push(cells);
      }
      if (!rows.length) return;
      if (e.caption) push(prefix, clean(inline(e.caption)));
      const line = (cells) => '| ' + Array.from({ length: width }, (_, i) => cells[i] || '').join(' | ') + ' |';
      const out = [line(rows[0]), '|' + '---|'.repeat(width), ...rows.slice(1).map(line)];
      push(prefix, out.join('\n'));
    }

    function frame(e, prefix) {
      let d = null;
      try { d = e.contentDocument; } catch (_) { d = null; }
      if (d && d.body) { blocksOf(d.body, prefix); return; }
      // Another process's frame: lumo puts its content here (the marker names its <iframe>).
      const ref = L.refOf(e);
      frames.push(ref);
      push(prefix, '[iframe][' + ref + ']');
    }

    for (const r of roots) {
      if (!shown(r)) continue;
      if (BLOCK.has(r.tagName) || r.tagName === 'BODY') block(r, '');
      else { const t = clean(inlineEl(r)); if (t) push('', t); }
    }
    return { blocks, frames };
  }

  // ------------------------------------------------------------------ metadata

  // Metadata follows Mozilla Readability's order: JSON-LD, then <meta> tags, then the page itself.
  const ARTICLE_TYPES = /^(Article|AdvertiserContentArticle|NewsArticle|AnalysisNewsArticle|AskPublicNewsArticle|BackgroundNewsArticle|OpinionNewsArticle|ReportageNewsArticle|ReviewNewsArticle|Report|SatiricalArticle|ScholarlyArticle|MedicalScholarlyArticle|SocialMediaPosting|BlogPosting|LiveBlogPosting|DiscussionForumPosting|TechArticle|APIReference|WebPage)$/;
  function jsonLd(doc) {
    for (const s of doc.querySelectorAll('script[type="application/ld+json"]')) {
      let v;
      try { v = JSON.parse(s.textContent.replace(/^\s*<!\[CDATA\[|\]\]>\s*$/g, '')); } catch (_) { continue; }
      const all = [].concat(v, ...[].concat(v).map((x) => (x && x['@graph']) || []));
      const art = all.find((x) => x && [].concat(x['@type'] || []).some((t) => ARTICLE_TYPES.test(t)) && (x.headline || x.name || x.datePublished));
      if (art) return art;
    }
    return null;
  }

  // <meta> values by Readability's key names ("og:title", "author", …): property="a b" and name="dc.title" forms; the last one wins.
  function metaValues(doc) {
    const values = {};
    for (const m of doc.querySelectorAll('meta')) {
      const content = (m.getAttribute('content') || '').trim();
      if (!content) continue;
      const prop = (m.getAttribute('property') || '').match(/\s*(article|dc|dcterm|og|twitter)\s*:\s*(author|creator|description|published_time|title|site_name)\s*/i);
      if (prop) { values[prop[0].toLowerCase().replace(/\s/g, '')] = content; continue; }
      const name = m.getAttribute('name') || m.getAttribute('itemprop') || '';
      if (/^\s*(?:(dc|dcterm|og|twitter|parsely|weibo:(article|webpage))\s*[-.:]\s*)?(author|creator|pub-date|description|title|site_name|published_time)\s*$/i.test(name)) {
        values[name.toLowerCase().replace(/\s/g, '').replace(/\./g, ':')] = content;
      }
    }
    return values;
  }

  function meta(doc, names) {
    for (const n of names) {
      const m = doc.querySelector(`meta[name="${n}" i],meta[property="${n}" i],meta[itemprop="${n}" i]`);
      const v = m && squash(m.getAttribute('content') || '');
      if (v) return v;
    }
    return '';
  }

  const wordCount = (s) => s.split(/\s+/).length;
  // Share of b's words that are also a's (Readability's text similarity).
  function similarity(a, b) {
    const ta = a.toLowerCase().split(/\W+/).filter(Boolean);
    const tb = b.toLowerCase().split(/\W+/).filter(Boolean);
    if (!ta.length || !tb.length) return 0;
    return 1 - tb.filter((t) => !ta.includes(t)).join(' ').length / tb.join(' ').length;
  }

  // The document's title less the site's name ("Story | Site" → "Story"), as Readability cuts it.
  function cleanTitle(doc) {
    const orig = squash(doc.title || '');
    let t = orig;
    let hierarchical = false;
    if (/ [|\-–—\\/>»] /.test(t)) {
      hierarchical = / [\\/>»] /.test(t);
      const seps = Array.from(orig.matchAll(/ [|\-–—\\/>»] /g));
      t = orig.slice(0, seps[seps.length - 1].index);
      if (wordCount(t) < 3) t = orig.replace(/^[^|\-–—\\/>»]*[|\-–—\\/>»]/, '');
    } else if (t.includes(': ')) {
      const hs = Array.from(doc.querySelectorAll('h1,h2'), (h) => h.textContent.trim());
      if (!hs.includes(t.trim())) {
        t = orig.slice(orig.lastIndexOf(':') + 1);
        if (wordCount(t.trim()) < 3) t = orig.slice(orig.indexOf(':') + 1);
        else if (wordCount(orig.slice(0, orig.indexOf(':'))) > 5) t = orig;
      }
    } else if (t.length > 150 || t.length < 15) {
      const h1 = doc.querySelectorAll('h1');
      if (h1.length === 1) t = h1[0].textContent;
    }
    t = squash(t);
    const n = wordCount(t);
    if (n <= 4 && (!hierarchical || n !== wordCount(orig.replace(/[|\-–—\\/>»]+/g, '')) - 1)) t = orig;
    return t;
  }

  // A byline in the page: the first element marked as one (rel=author, itemprop author, a class
  // like "byline") that a reader meets, outside hidden parts and page furniture, short enough to be a name.
  function bylineElement(doc) {
    if (!doc.body) return null;
    let found = null;
    const tw = doc.createTreeWalker(doc.body, NodeFilter.SHOW_ELEMENT, {
      acceptNode(n) {
        if (found || !shown(n)) return NodeFilter.FILTER_REJECT;
        const raw = (n.textContent || '').trim();
        if ((n.getAttribute('rel') === 'author' || (n.getAttribute('itemprop') || '').includes('author') || BYLINE.test(matchString(n))) && raw && raw.length < 100) {
          found = n;
          return NodeFilter.FILTER_REJECT;
        }
        // Inside the <article>, its header and aside are where bylines are.
        return unlikely(n, true) && !n.parentElement.closest('article') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    while (tw.nextNode());
    return found;
  }

  function metadata(doc) {
    const ld = jsonLd(doc);
    const values = metaValues(doc);
    const str = (v) => (typeof v === 'string' ? v.trim() : '');
    let ldTitle = '';
    if (ld) {
      const name = str(ld.name);
      const headline = str(ld.headline);
      // Some sites put their own name in "name": take the one that reads like the page's title.
      if (name && headline && name !== headline) {
        const t = cleanTitle(doc);
        ldTitle = similarity(headline, t) > 0.75 && !(similarity(name, t) > 0.75) ? headline : name;
      } else ldTitle = name || headline;
    }
    const pick = (...keys) => { for (const k of keys) if (values[k]) return values[k]; return ''; };
    const title = squash(ldTitle || pick('dc:title', 'dcterm:title', 'og:title', 'weibo:article:title', 'weibo:webpage:title', 'title', 'twitter:title', 'parsely-title') || cleanTitle(doc));
    const authors = ld && ld.author ? [].concat(ld.author).map((a) => str(a && a.name)).filter(Boolean).join(', ') : '';
    let byline = squash(authors || pick('dc:creator', 'dcterm:creator', 'author', 'parsely-author'));
    if (!byline && values['article:author'] && !/^https?:\/\//.test(values['article:author'])) byline = squash(values['article:author']);
    const bylineEl = bylineElement(doc);
    if (!byline && bylineEl) {
      const named = bylineEl.querySelector('[itemprop*=name]');
      byline = squash((named || bylineEl).textContent || '');
    }
    const published = squash(str(ld && ld.datePublished) || meta(doc, ['article:published_time', 'dcterms.available', 'dcterms.created', 'dcterms.issued', 'weibo:article:create_at', 'parsely-pub-date']));
    const lang = doc.documentElement.getAttribute('lang') || '';
    return { title, byline, bylineEl, lang: squash(lang), published };
  }

  // ------------------------------------------------------------------ page_extract

  function extract(opts) {
    const doc = document;
    veiled = !!doc.body && getComputedStyle(doc.body).visibility === 'hidden';
    const md = metadata(doc);
    let chosen = null;
    // Strict first; when that leaves too little, without stripping unlikely-looking parts.
    for (const strip of [true, false]) {
      const { roots, dropped } = chooseContent(doc, strip);
      const r = render(roots, { strip, dropped, title: md.title, bylineEl: md.bylineEl });
      const len = r.blocks.reduce((n, b) => n + b.length, 0);
      if (!chosen || len > chosen.len) chosen = { ...r, len };
      if (len >= 500) break;
    }
    if (chosen.len < 200 && doc.body) {
      const r = render([doc.body], { strip: false, dropped: new Set(), title: md.title, bylineEl: null });
      const len = r.blocks.reduce((n, b) => n + b.length, 0);
      if (len > chosen.len) chosen = { ...r, len };
    }
    const out = [];
    let bytes = 0;
    let next = -1;
    const skip = opts.offset || 0;
    for (let i = skip; i < chosen.blocks.length; i++) {
      const b = chosen.blocks[i];
      if (bytes + b.length + 1 > opts.maxBytes && out.length) { next = i; break; }
      if (bytes + b.length + 1 > opts.maxBytes) { out.push(b.slice(0, Math.max(0, opts.maxBytes - 2)) + '…'); bytes = opts.maxBytes; next = i + 1 < chosen.blocks.length ? i + 1 : -1; break; }
      out.push(b);
      bytes += b.length + 1;
    }
    return { text: out.join('\n'), blocks: chosen.blocks.length, next, truncated: next >= 0, frames: chosen.frames,
      title: md.title, byline: md.byline, lang: md.lang, published: md.published, docTitle: doc.title };
  }

  // ------------------------------------------------------------------ extractors (records)

  // Elements a field spec names within `scope`: a CSS selector, or an ARIA
  // role (implicit or explicit) with an optional accessible-name pattern.
  function pick(scope, spec) {
    let found;
    if (spec.selector) {
      found = Array.from(scope.querySelectorAll(spec.selector));
      if (scope.matches && scope.matches(spec.selector) && spec.self) found.unshift(scope);
    } else if (spec.role) {
      found = Array.from(scope.querySelectorAll('*')).filter((e) => L.roleOf(e) === spec.role);
    } else {
      found = [scope];
    }
    if (spec.name) {
      const re = new RegExp(spec.name, 'i');
      found = found.filter((e) => re.test(L.nameOf(e, L.roleOf(e), 400) || squash(e.textContent || '')));
    }
    return found.filter((e) => e === scope || (e.nodeType === 1 && !e.closest('[hidden],[aria-hidden=true]')));
  }

  function fieldValue(e, spec) {
    const type = spec.type || 'text';
    let raw;
    if (spec.attr) raw = e.getAttribute(spec.attr);
    else if (type === 'link') {
      const a = e.matches('a[href]') ? e : e.querySelector('a[href]');
      if (!a) return null;
      return { text: squash(a.textContent || ''), url: a.href, ref: L.refOf(a) };
    } else if (type === 'ref') return L.refOf(e);
    else if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT') raw = L.valueOf(e, L.roleOf(e));
    else raw = e.innerText !== undefined ? e.innerText : e.textContent;
    if (raw === null || raw === undefined) return null;
    raw = type === 'markdown' ? String(raw).trim() : squash(String(raw));
    if (type === 'number') { const m = raw.match(/-?\d[\d,]*(?:\.\d+)?/); return m ? Number(m[0].replace(/,/g, '')) : null; }
    if (type === 'bool') return !['', 'false', '0', 'no', 'off'].includes(raw.toLowerCase());
    if (type === 'date') { const d = new Date(raw); return Number.isNaN(d.getTime()) ? raw : d.toISOString(); }
    if (type === 'markdown') {
      const r = render([e], { strip: false, dropped: new Set(), title: '', bylineEl: null });
      return r.blocks.join('\n');
    }
    return raw;
  }

  function field(scope, spec) {
    if (spec.table) return tableRecords(pick(scope, spec)[0]);
    const found = pick(scope, spec);
    if (spec.all) return found.map((e) => fieldValue(e, spec)).filter((v) => v !== null && v !== '');
    for (const e of found) { const v = fieldValue(e, spec); if (v !== null && v !== '') return v; }
    return null;
  }

  // A table or grid as records keyed by its column headers.
  function tableRecords(t) {
    if (!t) return [];
    const rows = Array.from(t.querySelectorAll('tr,[role=row]')).filter((r) => r.closest('table,[role=grid],[role=table],[role=treegrid]') === t);
    const cellsOf = (r) => Array.from(r.querySelectorAll('th,td,[role=cell],[role=gridcell],[role=columnheader],[role=rowheader]')).filter((c) => c.closest('tr,[role=row]') === r);
    let header = null;
    const out = [];
    for (const r of rows) {
      const cells = cellsOf(r);
      if (!header && cells.length && cells.every((c) => c.tagName === 'TH' || c.getAttribute('role') === 'columnheader')) {
        header = cells.map((c, i) => squash(c.textContent || '') || 'column ' + (i + 1));
        continue;
      }
      if (!cells.length) continue;
      const rec = {};
      cells.forEach((c, i) => {
        const key = (header && header[i]) || 'column ' + (i + 1);
        const a = c.querySelector('a[href]');
        rec[key] = squash(c.innerText || c.textContent || '');
        if (a) rec[key + ' ref'] = L.refOf(a);
      });
      out.push(rec);
    }
    return out;
  }

  // A bad selector or pattern fails with the definition's path to it.
  function at(path, f) {
    try { return f(); } catch (e) {
      const what = e && e.name === 'SyntaxError' ? 'not a valid CSS selector or pattern' : 'failed';
      throw { path, message: what + ': ' + String((e && e.message) || e) };
    }
  }

  function records(def) {
    let root = document.body;
    if (def.within) {
      root = at('within', () => document.querySelector(def.within));
      if (!root) return { error: 'within', message: 'nothing on the page matches within: ' + def.within };
    }
    const out = { fields: {}, records: {} };
    for (const [k, spec] of Object.entries(def.fields || {})) out.fields[k] = at('fields.' + k, () => field(root, spec));
    for (const [k, r] of Object.entries(def.records || {})) {
      const items = at('records.' + k + '.each', () => pick(root, r.each));
      out.records[k] = items.slice(0, r.limit || 500).map((item) => {
        const rec = {};
        for (const [f, spec] of Object.entries(r.fields || {})) rec[f] = at('records.' + k + '.fields.' + f, () => field(item, spec));
        rec.ref = L.refOf(item);
        return rec;
      });
    }
    return out;
  }

  // Whether the page shows what an extractor needs (for telling the agent which apply).
  function probe(defs) {
    return defs.map((d) => {
      const root = d.within ? document.querySelector(d.within) : document.body;
      if (!root) return false;
      if (!d.requires) return true;
      try { return !!root.querySelector(d.requires); } catch (_) { return false; }
    });
  }

  return {
    extract,
    records(def) {
      try { return records(def); } catch (e) { return { error: 'page', path: e && e.path, message: String((e && e.message) || e) }; }
    },
    probeExtractors: probe,
  };
}
