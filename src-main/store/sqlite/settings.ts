import { decodeSetting, encodeSetting } from '../settings'
import type { SettingsStore } from '../types'
import type { Db } from './db'

/** The settings table: one JSON value per key (see `Settings` for the keys and their types). */
export function sqliteSettings(db: Db): SettingsStore {
  const stmts = {
    getSetting: db.prepare('SELECT value FROM settings WHERE key = ?').pluck(),
    setSetting: db.prepare(
      'INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    ),
  }
  return {
    getSetting(key) {
      const text = stmts.getSetting.get(key) as string | undefined
      return text === undefined ? undefined : decodeSetting(key, text)
    },
    setSetting(key, value) {
      stmts.setSetting.run(key, encodeSetting(value))
    },
  }
}
