// localStorage with a fallback for browsers that refuse it (private mode).

const PREFIX = 'agentmail.'

/** load reads a stored preference, or the fallback when missing or unreadable. */
export function load<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  try {
    const v = window.localStorage.getItem(PREFIX + key)
    if (v !== null && (allowed as readonly string[]).includes(v)) return v as T
  } catch {
    /* storage unavailable */
  }
  return fallback
}

/** save stores a preference; failures are ignored (the choice lasts for this page only). */
export function save(key: string, value: string): void {
  try {
    window.localStorage.setItem(PREFIX + key, value)
  } catch {
    /* storage unavailable */
  }
}
