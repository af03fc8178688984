export { exportChat, exportChatParts } from './export'
export { discardImport, importChat } from './import'
export { CHAT_FILE_FORMAT, CHAT_FILE_VERSION } from './format'
