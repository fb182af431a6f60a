import { useMemo } from 'react'
import { renderMarkdown } from '../lib/markdown'

/** Markdown renders a mail body; the HTML is sanitised by renderMarkdown before it reaches the DOM. */
export function Markdown({ source, className = '' }: { source: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(source), [source])
  return <div className={`md-body ${className}`} dangerouslySetInnerHTML={{ __html: html }} />
}
