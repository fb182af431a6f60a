// Mail bodies are Markdown written by people and by agents (which may repeat
// whatever text they were shown), so rendering is the page's main XSS
// surface. Markdown goes to HTML with marked, and the HTML is then cleaned by
// DOMPurify with a closed list of tags and attributes; only the sanitised
// string ever reaches the DOM.

import { Marked } from 'marked'
import DOMPurify from 'dompurify'
import { visibleText } from './text'

const md = new Marked({ gfm: true, breaks: true, async: false })

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'hr', 'i', 'img', 'input', 'li', 'ol', 'p', 'pre', 's', 'span', 'strong', 'sub', 'sup',
  'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
]
// No `class`, `style` or `id`: a mail must not pick up the page's own
// (Tailwind) classes such as `fixed inset-0 z-50`, set its own position or
// look, or be the target of the page's fragment links and labels. Every
// attribute is further bound to the tags it belongs to (ATTR_TAGS).
const ALLOWED_ATTR = ['href', 'title', 'src', 'alt', 'type', 'checked', 'disabled', 'align', 'start']

// ATTR_TAGS names, for each allowed attribute but `title`, the only tags that
// may carry it; anywhere else it is removed.
const ATTR_TAGS: Record<string, string[]> = {
  href: ['A'],
  src: ['IMG'],
  alt: ['IMG'],
  type: ['INPUT'],
  checked: ['INPUT'],
  disabled: ['INPUT'],
  align: ['TH', 'TD'],
  start: ['OL'],
}

// Named again as forbidden so that a later edit of the lists above cannot let
// them through: everything that can restyle, position or overlay page
// elements, submit or capture input, or change where links go.
const FORBID_TAGS = [
  'style', 'link', 'base', 'meta', 'form', 'button', 'select', 'textarea', 'option', 'label',
  'dialog', 'details', 'summary', 'svg', 'math', 'foreignobject', 'iframe', 'frame', 'object',
  'embed', 'template', 'slot', 'portal', 'fencedframe',
]
const FORBID_ATTR = [
  'class', 'style', 'id', 'name', 'target', 'popover', 'popovertarget', 'popovertargetaction',
  'form', 'formaction', 'slot', 'is', 'part', 'exportparts', 'tabindex', 'accesskey', 'autofocus',
  'contenteditable', 'draggable', 'hidden', 'inert', 'open', 'width', 'height', 'background',
  'bgcolor', 'color', 'face', 'size', 'border', 'valign', 'nowrap', 'dir', 'lang',
]

// A first, coarse filter for DOMPurify (tested on the value with whitespace
// removed): an http(s) or mailto scheme, or no scheme at all. Whether a
// link is kept is decided by safeLink below.
const SCHEME_FILTER = /^(?:https?:|mailto:|[^a-z]|[a-z0-9+.-]*(?:[^a-z0-9+.\-:]|$))/i

const LINK_PROTOCOLS = ['http:', 'https:', 'mailto:']

/**
 * safeLink decides whether a mail may link to href, reading it as the
 * browser will: leading and trailing spaces and control characters are
 * dropped and tabs and newlines anywhere removed (WHATWG URL parsing), then
 * the value is resolved against origin (default: the page's own). An
 * absolute link is kept for http:, https: and mailto: only; a relative link
 * (an in-page `#anchor`, `/inbox`, `x/y`) only when it resolves to origin,
 * so `//host`, `/\host`, `\\host` and their variants with tabs, newlines
 * or leading spaces, which browsers read as links to another host, are
 * refused. Anything that does not parse is refused.
 */
export function safeLink(href: string, origin: string = window.location.origin): boolean {
  const v = href.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')
  const absolute = parseURL(v)
  if (absolute) return LINK_PROTOCOLS.includes(absolute.protocol)
  const base = parseURL(origin)
  const resolved = base && parseURL(v, base)
  return !!resolved && resolved.origin === base.origin
}

function parseURL(v: string, base?: URL): URL | null {
  try {
    return new URL(v, base)
  } catch {
    return null
  }
}

let purifier: ReturnType<typeof DOMPurify> | null = null

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier
  const p = DOMPurify(window)
  // Every text the mail shows, written or as an entity (&#x202E;), gets its
  // direction controls and invisible characters written as code points
  // (visibleText), so a body cannot read as other words than it holds.
  p.addHook('beforeSanitizeElements', (node) => {
    if (node.nodeType === 3 && node.textContent) {
      const shown = visibleText(node.textContent)
      if (shown !== node.textContent) node.textContent = shown
    }
  })
  p.addHook('uponSanitizeAttribute', (node, data) => {
    const tags = ATTR_TAGS[data.attrName]
    if (tags && !tags.includes(node.nodeName)) data.keepAttr = false
    // A tooltip or an image's text shown in place of it is text too.
    if (data.attrName === 'title' || data.attrName === 'alt') data.attrValue = visibleText(data.attrValue)
    // Table cells keep GFM's column alignment, nothing else.
    if (data.attrName === 'align' && !/^(?:left|center|right)$/i.test(data.attrValue)) data.keepAttr = false
    // A link keeps its target only where safeLink allows it (an image's
    // data: source is judged below, when it stays an image).
    if (data.attrName === 'href' && !safeLink(data.attrValue)) data.keepAttr = false
    if (data.attrName === 'src' && !/^data:/i.test(data.attrValue.trim()) && !safeLink(data.attrValue)) data.keepAttr = false
  })
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'A') {
      node.setAttribute('target', '_blank')
      node.setAttribute('rel', 'noopener noreferrer nofollow')
    }
    if (node.nodeName === 'INPUT') {
      // Only GFM task-list boxes survive, and they cannot be ticked.
      if (node.getAttribute('type') !== 'checkbox') node.remove()
      else node.setAttribute('disabled', '')
    }
    if (node.nodeName === 'IMG') {
      const src = node.getAttribute('src') ?? ''
      // Remote images would be a tracking beacon (and the CSP blocks them):
      // show the alt text as a link instead of loading anything.
      if (!/^data:image\/(?:png|gif|jpeg|webp);base64,/i.test(src)) {
        const a = node.ownerDocument.createElement('a')
        a.textContent = node.getAttribute('alt') || src
        if (src && safeLink(src)) {
          a.setAttribute('href', src)
          a.setAttribute('target', '_blank')
          a.setAttribute('rel', 'noopener noreferrer nofollow')
        }
        node.replaceWith(a)
      }
    }
  })
  purifier = p
  return p
}

/** sanitizeHtml cleans an HTML string with the page's closed allow-list. */
export function sanitizeHtml(html: string): string {
  return getPurifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    FORBID_TAGS,
    FORBID_ATTR,
    ALLOWED_URI_REGEXP: SCHEME_FILTER,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    KEEP_CONTENT: true,
    RETURN_TRUSTED_TYPE: false,
  }) as string
}

/** renderMarkdown turns a mail body (Markdown) into sanitised HTML. */
export function renderMarkdown(source: string): string {
  const html = md.parse(source ?? '') as string
  return sanitizeHtml(html)
}
