/**
 * Paths the browser host serves besides the UI and `/ws`. `TOKEN_CHECK_PATH?token=T` answers
 * 204 when T is the running host's token and 401 otherwise: a browser cannot read why a
 * WebSocket upgrade was refused, so a tab whose socket keeps failing asks here whether its
 * link is from an earlier run or the host is simply away (no answer at all).
 */
export const TOKEN_CHECK_PATH = '/token-check'
