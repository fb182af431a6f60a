// Dates and sizes for display.

/** formatWhen shows a time of today as HH:MM, else a short date (with the year when not this year). */
export function formatWhen(iso: string | null | undefined, lang: string, now: Date = new Date()): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const sameDay = d.toDateString() === now.toDateString()
  if (sameDay) return d.toLocaleTimeString(lang, { hour: '2-digit', minute: '2-digit' })
  if (d.getFullYear() === now.getFullYear()) return d.toLocaleDateString(lang, { month: 'short', day: 'numeric' })
  return d.toLocaleDateString(lang, { year: 'numeric', month: 'short', day: 'numeric' })
}

/** formatFull shows a full local date and time. */
export function formatFull(iso: string | null | undefined, lang: string): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  return d.toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' })
}

/** formatBytes shows a byte count with a binary unit. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return ''
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** formatDuration shows milliseconds as "1m 05s" / "4.2s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return ''
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`
  const m = Math.floor(ms / 60000)
  const s = Math.floor((ms % 60000) / 1000)
  return `${m}m ${String(s).padStart(2, '0')}s`
}
