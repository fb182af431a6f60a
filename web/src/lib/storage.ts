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

/** loadJSON reads a stored JSON value; undefined when missing, unreadable or not JSON. */
export function loadJSON(key: string): unknown {
  try {
    const v = window.localStorage.getItem(PREFIX + key)
    return v === null ? undefined : JSON.parse(v)
  } catch {
    return undefined
  }
}

/** saveJSON stores a value as JSON; failures (storage full or refused) are ignored. */
export function saveJSON(key: string, value: unknown): void {
  save(key, JSON.stringify(value))
}

/** remove deletes a stored value. */
export function remove(key: string): void {
  try {
    window.localStorage.removeItem(PREFIX + key)
  } catch {
    /* storage unavailable */
  }
}
