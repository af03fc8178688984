/**
 * Versioned schema migrations, run in order on open inside one transaction each.
 * `PRAGMA user_version` records the last applied version. Never edit a shipped migration:
 * append a new one.
 */
export const migrations: Array<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'sessions, messages, snapshots, commands, turns, interactions',
    sql: `
      CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;

      CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        archived INTEGER NOT NULL DEFAULT 0,
        -- A removed session whose rows are still inherited by forks stays as a tombstone.
        removed INTEGER NOT NULL DEFAULT 0,
        paused INTEGER NOT NULL DEFAULT 0,
        model TEXT NOT NULL,
        security TEXT NOT NULL,
        env TEXT NOT NULL DEFAULT '{}',
        plugins TEXT NOT NULL DEFAULT '[]',
        allowed_tools TEXT NOT NULL DEFAULT '[]',
        parent_session_id TEXT,
        fork_seq INTEGER NOT NULL DEFAULT 0,
        fork_message_id TEXT,
        fork_snapshot_id TEXT,
        fork_operation_id TEXT,
        -- clear_messages hides history below this seq without deleting rows forks inherit.
        visible_from_seq INTEGER NOT NULL DEFAULT 0,
        -- compact(): the model context starts at this seq (a summary message).
        context_from_seq INTEGER NOT NULL DEFAULT 0,
        last_seq INTEGER NOT NULL DEFAULT 0,
        message_count INTEGER NOT NULL DEFAULT 0,
        head_snapshot_id TEXT
      );
      CREATE UNIQUE INDEX sessions_fork_operation
        ON sessions(parent_session_id, fork_operation_id) WHERE fork_operation_id IS NOT NULL;
      CREATE INDEX sessions_parent ON sessions(parent_session_id);

      -- Copy-on-write history: a fork stores only its own rows; older ones are read from
      -- its ancestors up to the fork point. seq continues across the lineage.
      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        turn_id TEXT,
        revision INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        error_code TEXT,
        parts TEXT NOT NULL
      );
      CREATE UNIQUE INDEX messages_seq ON messages(session_id, seq);
      CREATE UNIQUE INDEX messages_id ON messages(message_id);

      -- Immutable, content-hashed checkpoints. Never updated after insert.
      CREATE TABLE snapshots (
        snapshot_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        parent_snapshot_id TEXT,
        head_seq INTEGER NOT NULL,
        -- The message at head_seq when the snapshot was taken: pins the history it covers.
        head_message_id TEXT,
        reason TEXT NOT NULL,
        step INTEGER,
        turn_id TEXT,
        -- sha256 of the canonical state: states repeat, so each is stored once (below).
        state_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      -- Content-addressed session states (model, security, env, ...) that snapshots name.
      CREATE TABLE snapshot_states (state_hash TEXT PRIMARY KEY, state TEXT NOT NULL) WITHOUT ROWID;
      CREATE INDEX snapshots_session ON snapshots(session_id, created_at);

      -- The durable per-session FIFO of prompt / set / compact / steer.
      CREATE TABLE commands (
        pos INTEGER PRIMARY KEY AUTOINCREMENT,
        command_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        turn_id TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX commands_queue ON commands(session_id, status, pos);

      CREATE TABLE turns (
        turn_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        command_id TEXT,
        status TEXT NOT NULL,
        run_id TEXT,
        runs TEXT NOT NULL DEFAULT '[]',
        steps INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        result TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX turns_session ON turns(session_id, status);

      CREATE TABLE interactions (
        interaction_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        turn_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        status TEXT NOT NULL,
        part TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX interactions_session ON interactions(session_id, status);
    `,
  },
  {
    version: 2,
    name: 'full-text search over message text',
    sql: `
      -- Contentless: the text lives once, in messages; the index maps words to messages.id.
      -- detail=none keeps no positions (a third of the size); search splits the query into
      -- words itself, so no phrase queries are needed.
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        text, content = '', contentless_delete = 1, detail = none, tokenize = 'unicode61 remove_diacritics 2'
      );
    `,
  },
  {
    version: 3,
    name: 'search finds emoji',
    sql: `
      -- unicode61 splits on symbols, so an emoji was never a word. The index now keeps symbols
      -- (So) as words too; its text has a space put around each symbol first (indexText), so
      -- "party🎉" is the two words "party" and "🎉". The old index is dropped and every message
      -- indexed again in the background, in small chunks (fts_live_from / fts_indexed_upto are
      -- set again on open, as for a database from before write-time indexing).
      DROP TABLE messages_fts;
      CREATE VIRTUAL TABLE messages_fts USING fts5(
        text, content = '', contentless_delete = 1, detail = none,
        tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co So'"
      );
      DELETE FROM settings WHERE key IN ('fts_live_from', 'fts_indexed_upto');
    `,
  },
  {
    version: 4,
    name: 'model and token usage per reply',
    sql: `
      -- JSON {model?, usage?} of an assistant reply; NULL for every other message.
      ALTER TABLE messages ADD COLUMN meta TEXT;
    `,
  },
  {
    version: 5,
    name: 'trash: removed chats kept for a while, restorable',
    sql: `
      -- When the chat was moved to the Trash (NULL: it is not there). A trashed chat is hidden
      -- everywhere a live one shows; its rows stay until it is restored or purged.
      ALTER TABLE sessions ADD COLUMN trashed_at INTEGER;
      CREATE INDEX sessions_trashed ON sessions(trashed_at) WHERE trashed_at IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: 'chats imported a chunk at a time',
    sql: `
      -- A chat being imported: its messages are written a chunk (one transaction) at a time,
      -- under session ids that have no session row yet, so nothing lists, opens or finds them;
      -- the last transaction creates the sessions and deletes this row. A row still here at
      -- open is an import that never finished (a crash, a failed write): its messages are
      -- deleted then, a chunk at a time. session_ids (JSON) are reserved until the row goes.
      CREATE TABLE imports (
        import_id TEXT PRIMARY KEY,
        session_ids TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 7,
    name: 'snapshots found by their state',
    sql: `
      -- Erasing a removed chat drops the states none of the other snapshots names: looked up by
      -- hash here. Without it every chat erased scanned every snapshot (220 ms at 500,000).
      CREATE INDEX snapshots_state ON snapshots(state_hash);
    `,
  },
  {
    version: 8,
    name: 'long messages indexed a piece at a time',
    sql: `
      -- A message whose text is longer than LONG_TEXT_CHARS is not indexed in the transaction
      -- that writes it (a megabyte-long reply's index held the event loop for hundreds of ms):
      -- it is queued here and indexed in pieces (PIECE_CHARS), a transaction each, just after.
      -- A piece's rowid is its message's id * 65536 + its number; long_texts says how far the
      -- indexing got (indexed_chars) and how many pieces there are, to delete them.
      CREATE VIRTUAL TABLE message_pieces_fts USING fts5(
        text, content = '', contentless_delete = 1, detail = none,
        tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co So'"
      );
      CREATE TABLE long_texts (
        message_id INTEGER PRIMARY KEY,
        indexed_chars INTEGER NOT NULL,
        total_chars INTEGER NOT NULL,
        pieces INTEGER NOT NULL
      );
    `,
  },
]
