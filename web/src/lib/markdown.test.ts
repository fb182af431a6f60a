// XSS regression test for mail bodies: every payload of the corpus is
// rendered, put into the live document (jsdom runs scripts and inline
// handlers here), poked with the events that trigger handlers, and must
// neither call the canary nor leave anything executable in the DOM.
// A control case inserts one payload unsanitised to prove the harness
// would notice an execution.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { renderMarkdown, safeLink, sanitizeHtml } from './markdown'

// The canary marks the document; it needs no global of the test's own realm,
// because inline handlers run in the page's realm.
const CANARY = "document.documentElement.setAttribute('data-xss','hit')"

// Payloads: raw HTML inside Markdown, Markdown links and images with
// dangerous schemes, encoding tricks, SVG/MathML, mutation XSS shapes.
const CORPUS: string[] = [
  `<script>${CANARY}</script>`,
  `<img src=x onerror="${CANARY}">`,
  `<img src="x" onerror=${CANARY}>`,
  `<svg onload="${CANARY}"></svg>`,
  `<svg><script>${CANARY}</script></svg>`,
  `<svg><a xlink:href="javascript:${CANARY}"><text x="20" y="20">x</text></a></svg>`,
  `<math><mtext><table><mglyph><style><img src=x onerror="${CANARY}">`,
  `<body onload="${CANARY}">`,
  `<iframe src="javascript:${CANARY}"></iframe>`,
  `<iframe srcdoc="<script>parent.${CANARY}</script>"></iframe>`,
  `<object data="javascript:${CANARY}"></object>`,
  `<embed src="javascript:${CANARY}">`,
  `<a href="javascript:${CANARY}">click</a>`,
  `<a href="JaVaScRiPt:${CANARY}">click</a>`,
  `<a href="  javascript:${CANARY}">click</a>`,
  `<a href="java&#x09;script:${CANARY}">click</a>`,
  `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;${CANARY}">click</a>`,
  `<a href="vbscript:msgbox(1)">click</a>`,
  `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">click</a>`,
  `[click](javascript:${CANARY})`,
  `[click](JAVASCRIPT:${CANARY})`,
  `[click](javascript&#58;${CANARY})`,
  `[click](  javascript:${CANARY})`,
  `[click](<javascript:${CANARY}>)`,
  `[click][ref]\n\n[ref]: javascript:${CANARY}`,
  `![x](javascript:${CANARY})`,
  `![x" onerror="${CANARY}](https://example.invalid/a.png)`,
  `![x](https://example.invalid/a.png" onerror="${CANARY})`,
  `<div onmouseover="${CANARY}">hover</div>`,
  `<p style="background:url(javascript:${CANARY})">x</p>`,
  `<details open ontoggle="${CANARY}"><summary>x</summary></details>`,
  `<input autofocus onfocus="${CANARY}">`,
  `<form action="javascript:${CANARY}"><button>go</button></form>`,
  `<button formaction="javascript:${CANARY}">go</button>`,
  `<video><source onerror="${CANARY}"></video>`,
  `<audio src=x onerror="${CANARY}"></audio>`,
  `<marquee onstart="${CANARY}">x</marquee>`,
  `<meta http-equiv="refresh" content="0;url=javascript:${CANARY}">`,
  `<base href="javascript:${CANARY}//">`,
  `<link rel="stylesheet" href="javascript:${CANARY}">`,
  `<style>@import 'javascript:${CANARY}';</style>`,
  `<template><img src=x onerror="${CANARY}"></template>`,
  `<noscript><p title="</noscript><img src=x onerror=${CANARY}>">`,
  `<a href="#" onclick="${CANARY}">x</a>`,
  `<isindex type=image src=1 onerror=${CANARY}>`,
  `<table background="javascript:${CANARY}"><tr><td>x</td></tr></table>`,
  `<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">`,
  `<scr<script>ipt>${CANARY}</scr</script>ipt>`,
  `\`\`\`html\n<script>${CANARY}</script>\n\`\`\``,
  `<textarea><img src=x onerror="${CANARY}"></textarea>`,
  `<select><option><img src=x onerror="${CANARY}"></option></select>`,
  `<a href="https://ok.example/" target="_self" onclick="${CANARY}">ok</a>`,
  `<div data-x="1" aria-label="y" id="x" name="y">clobber</div>`,
  `<img name="getElementById" src="x">`,
  `- [ ] task <img src=x onerror=${CANARY}>`,
  `<a href="\u0001javascript:${CANARY}">ctl</a>`,
  `<svg><animate onbegin="${CANARY}" attributeName="x" dur="1s"/></svg>`,
  `<svg><set attributeName="onmouseover" to="${CANARY}"/></svg>`,
  `<xss id=x tabindex=1 onfocusin=${CANARY}></xss>`,
]

const FORBIDDEN_TAGS = [
  'script', 'iframe', 'object', 'embed', 'form', 'style', 'link', 'meta', 'base', 'svg', 'math',
  'frame', 'frameset', 'template', 'noscript', 'textarea', 'select', 'button', 'video', 'audio',
  'source', 'marquee', 'details', 'body', 'xss', 'isindex',
]

let host: HTMLDivElement
const executed = () => document.documentElement.getAttribute('data-xss')

beforeEach(() => {
  document.documentElement.removeAttribute('data-xss')
  host = document.createElement('div')
  document.body.appendChild(host)
})

afterEach(() => {
  host.remove()
})

function poke(root: HTMLElement) {
  const events = ['click', 'mouseover', 'focus', 'focusin', 'error', 'load', 'toggle', 'animationstart', 'input']
  for (const el of Array.from(root.querySelectorAll('*'))) {
    for (const type of events) el.dispatchEvent(new Event(type, { bubbles: true }))
  }
}

function unsafeUrl(v: string): boolean {
  // What a browser would see after stripping whitespace and control characters.
  const s = v.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  return /^(javascript|vbscript|data|file|blob):/.test(s) && !/^data:image\/(png|gif|jpeg|webp);base64,/.test(s)
}

describe('renderMarkdown', () => {
  it('control: the harness notices an unsanitised payload executing', () => {
    host.innerHTML = `<img src="x" onclick="${CANARY}">`
    poke(host)
    expect(executed()).toBe('hit')
  })

  it.each(CORPUS.map((p, i) => [i, p]))('payload %i leaves nothing executable: %s', (_i, payload) => {
    const html = renderMarkdown(payload as string)
    host.innerHTML = html
    poke(host)
    expect(executed()).toBeNull()
    for (const el of Array.from(host.querySelectorAll('*'))) {
      expect(FORBIDDEN_TAGS).not.toContain(el.tagName.toLowerCase())
      for (const attr of Array.from(el.attributes)) {
        const name = attr.name.toLowerCase()
        expect(name.startsWith('on'), `${el.tagName} has ${name}`).toBe(false)
        expect(['style', 'srcdoc', 'formaction', 'xlink:href', 'action', 'background', 'id', 'name']).not.toContain(name)
        if (name === 'href' || name === 'src') expect(unsafeUrl(attr.value), `${name}=${attr.value}`).toBe(false)
      }
    }
  })

  it('keeps ordinary Markdown', () => {
    host.innerHTML = renderMarkdown('# Title\n\n**bold** _it_ `code`\n\n- a\n- b\n\n[link](https://example.org/x)\n\n| a | b |\n|---|---|\n| 1 | 2 |')
    expect(host.querySelector('h1')?.textContent).toBe('Title')
    expect(host.querySelector('strong')?.textContent).toBe('bold')
    expect(host.querySelector('em')?.textContent).toBe('it')
    expect(host.querySelector('code')?.textContent).toBe('code')
    expect(host.querySelectorAll('li')).toHaveLength(2)
    expect(host.querySelector('td')?.textContent).toBe('1')
    const a = host.querySelector('a')!
    expect(a.getAttribute('href')).toBe('https://example.org/x')
    expect(a.getAttribute('target')).toBe('_blank')
    expect(a.getAttribute('rel')).toContain('noopener')
  })

  it('shows code blocks as text', () => {
    host.innerHTML = renderMarkdown('```\n<script>x()</script>\n```')
    expect(host.querySelector('pre code')?.textContent).toContain('<script>x()</script>')
    expect(host.querySelector('script')).toBeNull()
  })

  it('turns remote images into links instead of loading them', () => {
    host.innerHTML = renderMarkdown('![diagram](https://example.org/d.png)')
    expect(host.querySelector('img')).toBeNull()
    const a = host.querySelector('a')!
    expect(a.textContent).toBe('diagram')
    expect(a.getAttribute('href')).toBe('https://example.org/d.png')
  })

  it('keeps task-list boxes but makes them read-only', () => {
    host.innerHTML = renderMarkdown('- [x] done\n- [ ] todo')
    const boxes = host.querySelectorAll('input')
    expect(boxes).toHaveLength(2)
    boxes.forEach((b) => {
      expect(b.type).toBe('checkbox')
      expect(b.disabled).toBe(true)
    })
  })

  it('renders line breaks and plain text of agents safely', () => {
    const out = sanitizeHtml('line1<br>line2 & <b>b</b>')
    expect(out).toBe('line1<br>line2 &amp; <b>b</b>')
  })
})

// Mail content must not restyle or position page elements: the page's own
// Tailwind classes (`fixed inset-0 z-50`) would otherwise let a mail cover
// the page with a link or a fake screen.
describe('renderMarkdown keeps no styling or positioning from mail content', () => {
  const attrsOf = (html: string) => {
    host.innerHTML = html
    return Array.from(host.querySelectorAll('*')).flatMap((el) =>
      Array.from(el.attributes).map((a) => `${el.tagName.toLowerCase()}[${a.name}]`),
    )
  }

  it('drops class from the page-covering link payload', () => {
    host.innerHTML = renderMarkdown('<a class="fixed inset-0 z-50" href="http://phish.example/phish"> </a>All tests pass.')
    const a = host.querySelector('a')!
    expect(a.hasAttribute('class')).toBe(false)
    expect(a.getAttribute('href')).toBe('http://phish.example/phish')
    expect(host.textContent).toContain('All tests pass.')
  })

  it('drops class from the fake-screen payload', () => {
    host.innerHTML = renderMarkdown('<span class="fixed inset-0 z-50 bg-white">Everything is fine.</span>')
    expect(host.querySelector('[class]')).toBeNull()
    expect(host.textContent).toContain('Everything is fine.')
  })

  it.each([
    ['class', '<p class="fixed inset-0">x</p><code class="language-go">y</code><span class="z-50">z</span>'],
    ['style', '<p style="position:fixed;inset:0">x</p><span style="z-index:99">y</span><a href="/x" style="top:0">z</a>'],
    ['id', '<p id="root">x</p><a id="nav-inbox" href="/x">y</a><span id="logout">z</span>'],
    ['name', '<a name="x" href="/x">y</a><img name="getElementById" src="data:image/png;base64,AAAA">'],
    ['popover', '<p popover="manual">x</p><span popover>y</span>'],
    ['popovertarget', '<a popovertarget="x" href="/x">y</a>'],
    ['open', '<dialog open>x</dialog><details open>y</details>'],
    ['tabindex', '<span tabindex="1">x</span>'],
    ['hidden', '<p hidden>x</p>'],
    ['width', '<img src="data:image/png;base64,AAAA" width="5000" height="5000">'],
    ['form', '<input type="checkbox" form="f">'],
    ['dir', '<p dir="rtl">x</p>'],
  ])('removes %s wherever it is', (attr, payload) => {
    expect(attrsOf(renderMarkdown(payload)).filter((a) => a.endsWith(`[${attr}]`))).toEqual([])
  })

  it.each([
    ['style', '<style>.md-body{position:fixed}</style>x'],
    ['link', '<link rel="stylesheet" href="/assets/x.css">x'],
    ['base', '<base href="http://phish.example/">x'],
    ['form', '<form action="http://phish.example/"><input type="text" name="password"></form>x'],
    ['dialog', '<dialog open>x</dialog>'],
    ['details', '<details open><summary>s</summary>x</details>'],
    ['svg', '<svg><foreignObject width="9999" height="9999"><div>x</div></foreignObject></svg>'],
    ['foreignobject', '<foreignObject><p>x</p></foreignObject>'],
    ['button', '<button>x</button>'],
    ['textarea', '<textarea>x</textarea>'],
    ['select', '<select><option>x</option></select>'],
    ['label', '<label>x</label>'],
    ['iframe', '<iframe src="/"></iframe>x'],
  ])('removes <%s>', (tag, payload) => {
    host.innerHTML = renderMarkdown(payload)
    expect(host.querySelector(tag)).toBeNull()
  })

  it('keeps only read-only checkboxes of all inputs', () => {
    host.innerHTML = renderMarkdown(
      '<input type="text" value="x"><input type="password"><input type="submit"><input type="image" src="x"><input type="checkbox" checked>',
    )
    const inputs = host.querySelectorAll('input')
    expect(inputs).toHaveLength(1)
    expect(inputs[0].type).toBe('checkbox')
    expect(inputs[0].disabled).toBe(true)
  })

  it('sets target itself: a mail cannot point a link at the page', () => {
    host.innerHTML = renderMarkdown('<a href="/inbox" target="_top">x</a><a href="/inbox" target="_self">y</a><span target="_self">z</span>')
    const links = host.querySelectorAll('a')
    expect(links).toHaveLength(2)
    links.forEach((a) => expect(a.getAttribute('target')).toBe('_blank'))
    expect(host.querySelector('span')?.hasAttribute('target')).toBe(false)
  })

  it('binds attributes to their tags: align on table cells only, with GFM values', () => {
    host.innerHTML = renderMarkdown('| a | b |\n|:-:|--:|\n| 1 | 2 |')
    expect(host.querySelector('th')?.getAttribute('align')).toBe('center')
    expect(host.querySelector('td:last-child')?.getAttribute('align')).toBe('right')
    const attrs = attrsOf(
      renderMarkdown(
        '<table align="left"><tr><td align="justify">x</td></tr></table><p align="center">y</p><img align="left" src="data:image/png;base64,AAAA"><span href="/x" src="/y" type="checkbox" start="3" checked>z</span>',
      ),
    )
    expect(attrs).toEqual(['img[src]'])
  })

  it('keeps the ordered-list start and image alt', () => {
    host.innerHTML = renderMarkdown('3. three\n4. four\n\n<img src="data:image/png;base64,AAAA" alt="pic">')
    expect(host.querySelector('ol')?.getAttribute('start')).toBe('3')
    expect(host.querySelector('img')?.getAttribute('alt')).toBe('pic')
  })
})

// Links are read as the browser reads them: a relative link must stay on the
// page's own origin, so `//host`, `/\host`, `\\host` (with tabs, newlines or
// leading spaces that browsers strip) are links to another host and lose
// their href; http(s), mailto and in-page anchors stay.
describe('links a mail may carry', () => {
  const origin = 'https://mail.example'
  const OFF_ORIGIN = [
    '//evil.example/x',
    '/\\evil.example/x',
    '\\\\evil.example/x',
    '\\/evil.example',
    ' //evil.example',
    '\t//evil.example',
    '\n\\\\evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/\r\n/evil.example',
    '\u0001//evil.example',
    '\u0000/\\evil.example',
    '///evil.example',
  ]
  const OTHER_SCHEMES = ['javascript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,x', 'ftp://evil.example/', 'file:///etc/passwd', 'blob:https://mail.example/1', 'http://[']
  const KEPT = ['https://ok.example/x', 'http://ok.example', 'HTTPS://ok.example', 'mailto:ann@example.org', '#section', '/inbox', './x', '../x', 'x/y', '?q=1', ' /inbox']

  it.each(OFF_ORIGIN)('drops a relative link that leaves the origin: %j', (href) => {
    expect(safeLink(href, origin)).toBe(false)
  })
  it.each(OTHER_SCHEMES)('drops another scheme or an unparsable link: %j', (href) => {
    expect(safeLink(href, origin)).toBe(false)
  })
  it.each(KEPT)('keeps %j', (href) => {
    expect(safeLink(href, origin)).toBe(true)
  })
  it('drops every relative link when the page has no origin to resolve against', () => {
    expect(safeLink('/inbox', 'null')).toBe(false)
    expect(safeLink('https://ok.example/', 'null')).toBe(true)
  })

  // (An HTML attribute cannot carry NUL: the parser makes it U+FFFD.)
  it.each(OFF_ORIGIN.filter((h) => !h.includes('\u0000')))('renders a mail link to %j as text without href', (href) => {
    const attr = href.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;')
    host.innerHTML = renderMarkdown(`<a href="${attr}">the report</a>`)
    const a = host.querySelector('a')
    expect(a?.textContent).toBe('the report')
    expect(a?.hasAttribute('href')).toBe(false)
  })

  it('drops off-origin targets written as Markdown links and images', () => {
    host.innerHTML = renderMarkdown('[a](//evil.example/a) [b](/\\evil.example/b) ![c](//evil.example/c.png)')
    const links = Array.from(host.querySelectorAll('a'))
    expect(links.map((a) => a.textContent)).toEqual(['a', 'b', 'c'])
    // marked writes the backslash of b as %5C: then it is a path on the page's own origin.
    links.forEach((a) => expect(!a.hasAttribute('href') || new URL(a.href).origin === window.location.origin, a.outerHTML).toBe(true))
    expect(links[0].hasAttribute('href')).toBe(false)
    expect(links[2].hasAttribute('href')).toBe(false)
    expect(host.querySelector('img')).toBeNull()
  })

  it('keeps links on the page and to the web', () => {
    host.innerHTML = renderMarkdown('[in](/sessions/1) [anchor](#top) [web](https://ok.example/) [mail](mailto:ann@example.org)')
    expect(Array.from(host.querySelectorAll('a')).map((a) => a.getAttribute('href'))).toEqual([
      '/sessions/1', '#top', 'https://ok.example/', 'mailto:ann@example.org',
    ])
  })
})

describe('renderMarkdown shows direction controls as code points', () => {
  it('writes raw and entity-encoded overrides and zero-width characters visibly', () => {
    const html = renderMarkdown('Look: \u202eevil\u202c and &#x202E;txt.exe &#8203;x **b\u2066old**')
    expect(html).toContain('Look: &lt;U+202E&gt;evil&lt;U+202C&gt;')
    expect(html).toContain('&lt;U+202E&gt;txt.exe')
    expect(html).toContain('&lt;U+200B&gt;x')
    expect(html).toContain('<strong>b&lt;U+2066&gt;old</strong>')
    expect(html).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]/)
  })
  it('does the same in a tooltip and in an image text shown as a link', () => {
    const html = renderMarkdown('[a](https://example.com "t\u202eip") ![x\u202ey](https://example.com/i.png)')
    expect(html).not.toMatch(/[\u202a-\u202e]/)
    expect(html).toContain('title="t&lt;U+202E&gt;ip"')
    expect(html).toContain('x&lt;U+202E&gt;y</a>')
  })
})
