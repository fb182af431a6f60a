import { describe, expect, it } from 'vitest'
import { SHORTCUTS, actionForKey, isEditableTarget } from './shortcuts'

describe('actionForKey', () => {
  it.each([
    ['j', false, 'next'],
    ['k', false, 'prev'],
    ['o', false, 'open'],
    ['Enter', false, 'open'],
    ['u', false, 'back'],
    ['c', false, 'compose'],
    ['r', false, 'reply'],
    ['a', false, 'replyAll'],
    ['f', false, 'forward'],
    ['/', false, 'search'],
    ['I', true, 'markRead'],
    ['U', true, 'markUnread'],
    ['y', false, 'approve'],
    ['n', false, 'deny'],
    ['?', true, 'help'],
    ['Escape', false, 'escape'],
    ['x', false, null],
    ['I', false, null],
  ] as const)('%s (shift %s) → %s', (key, shiftKey, want) => {
    expect(actionForKey({ key, shiftKey })).toBe(want)
  })

  it('lets letters type in text fields, but Escape still closes', () => {
    expect(actionForKey({ key: 'j', inEditable: true })).toBeNull()
    expect(actionForKey({ key: 'Escape', inEditable: true })).toBe('escape')
  })

  it('leaves browser shortcuts alone', () => {
    expect(actionForKey({ key: 'r', ctrlKey: true })).toBeNull()
    expect(actionForKey({ key: 'c', metaKey: true })).toBeNull()
    expect(actionForKey({ key: 'f', altKey: true })).toBeNull()
  })

  it('documents every key it maps', () => {
    for (const s of SHORTCUTS) {
      for (const k of s.keys) {
        const shift = k.startsWith('Shift+')
        const key = shift ? k.slice(6) : k
        expect(actionForKey({ key, shiftKey: shift || key === '?' })).toBe(s.action)
      }
    }
  })
})

describe('isEditableTarget', () => {
  it('knows text fields from buttons', () => {
    const input = document.createElement('input')
    const box = document.createElement('input')
    box.type = 'checkbox'
    expect(isEditableTarget(input)).toBe(true)
    expect(isEditableTarget(box)).toBe(false)
    expect(isEditableTarget(document.createElement('textarea'))).toBe(true)
    expect(isEditableTarget(document.createElement('button'))).toBe(false)
    expect(isEditableTarget(null)).toBe(false)
  })
})
