/** Electron IPC channel names (the preload and main must agree; nothing else uses them). */
export const INVOKE_CHANNEL = 'arbor:invoke'
export const EVENT_CHANNEL = 'arbor:event'
