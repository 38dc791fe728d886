/** Small SQLite databases whose rows carry a tag, so a test can tell which copy a file holds (snapshot, current, root's). */
import fs from 'node:fs';
import Database from 'better-sqlite3';

/** A new database at `file` (replacing what is there) with `rows` rows tagged `tag`, mode 0600, owned by `owner`. */
export function makeTaggedDb(file: string, tag: string, rows: number, owner: { uid: number; gid: number }): void {
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  db.exec('CREATE TABLE steps (n INTEGER, tag TEXT)');
  const ins = db.prepare('INSERT INTO steps VALUES (?, ?)');
  for (let i = 0; i < rows; i++) ins.run(i, tag);
  db.close();
  fs.chmodSync(file, 0o600);
  fs.lchownSync(file, owner.uid, owner.gid);
}

/** The distinct tags in a database made by makeTaggedDb. */
export function tagsOf(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT DISTINCT tag FROM steps').all() as Array<{ tag: string }>).map((r) => r.tag);
  } finally {
    db.close();
  }
}
