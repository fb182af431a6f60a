// XSS regression test for mail bodies: every payload of the corpus is
// rendered, put into the live document (jsdom runs scripts and inline
// handlers here), poked with the events that trigger handlers, and must
// neither call the canary nor leave anything executable in the DOM.
// A control case inserts one payload unsanitised to prove the harness
// would notice an execution.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { renderMarkdown, sanitizeHtml } from './markdown'

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
