// The files and queries the Chromium retrieval test runs in the page and again in Node.

export const RETRIEVAL_FILES: Record<string, string> = {
  'src/server.ts':
    'export function stopServer(server) {\n  // teardown: release every socket\n  server.listener.dispose()\n}\n',
  'src/db.ts': 'export function openDatabase() { return sql.table("rows") }\n',
  'app/Shop.java': 'class Shop {\n  public void restock() {}\n}\n',
  'src/notes.ts': '// the function restock moved to Shop.java\nexport const note = 1\n',
  'README.md': '# Demo\nA small demo project about colour and database rows.\n',
  '.env': 'SECRET_TOKEN=do-not-embed-me\n',
}

export const RETRIEVAL_QUERIES: Record<string, Record<string, unknown>> = {
  semantic: { mode: 'semantic', query: 'shutdown' },
  hybrid: { mode: 'hybrid', query: 'restock' },
  'hybrid identifier': { mode: 'hybrid', query: 'stopServer' },
  'bad limit': { mode: 'semantic', query: 'x', limit: 26 },
}
