// Mail bodies are Markdown written by people and by agents (which may repeat
// whatever text they were shown), so rendering is the page's main XSS
// surface. Markdown goes to HTML with marked, and the HTML is then cleaned by
// DOMPurify with a closed list of tags and attributes; only the sanitised
// string ever reaches the DOM.

import { Marked } from 'marked'
import DOMPurify from 'dompurify'

const md = new Marked({ gfm: true, breaks: true, async: false })

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'hr', 'i', 'img', 'input', 'li', 'ol', 'p', 'pre', 's', 'span', 'strong', 'sub', 'sup',
  'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
]
const ALLOWED_ATTR = ['href', 'title', 'src', 'alt', 'class', 'type', 'checked', 'disabled', 'align', 'start']

// Links: http(s), mailto and same-page/relative targets only.
const SAFE_URL = /^(?:https?:|mailto:|#|\/(?!\/)|\.{0,2}\/|[^:/?#]*(?:[/?#]|$))/i

let purifier: ReturnType<typeof DOMPurify> | null = null

function getPurifier(): ReturnType<typeof DOMPurify> {
  if (purifier) return purifier
  const p = DOMPurify(window)
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
        if (SAFE_URL.test(src)) {
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
    ALLOWED_URI_REGEXP: SAFE_URL,
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
