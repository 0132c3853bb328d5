/**
 * Vectors of text no chunk holds any more. Forget and prune note the texts of the chunks they
 * delete and drop those texts' vectors in the same transaction; an indexing run notes the texts of
 * the chunks its rewrites delete and drops, at its end, the vectors of those no chunk holds again
 * (a rewrite that writes the same text back keeps them, so a re-parse or a move re-embeds
 * nothing). `vacuum` and `forget --all` sweep the whole table, which also catches what a killed
 * run left. The functions throw driver errors: callers wrap them.
 */
import type { Database } from "better-sqlite3"
import { hasLookupIndex } from "./lookup-indexes.js"
import { forgetCodes } from "./vector-code-store.js"

/** Deletes every vector whose text no chunk holds (a whole-table pass: for forgetting all). */
export const dropUnreferencedVectors = (sqlite: Database): void => {
  const embedders = sqlite.prepare("select fingerprint, vec_table from embedders").all() as Array<{
    fingerprint: string
    vec_table: string
  }>
  const orphan =
    "select id from vector_keys where fingerprint = ? and content_hash not in (select content_hash from chunks)"
  for (const e of embedders) {
    forgetCodes(sqlite, e.vec_table, orphan, e.fingerprint)
    sqlite.prepare(`delete from ${e.vec_table} where rowid in (${orphan})`).run(e.fingerprint)
  }
  sqlite
    .prepare("delete from vector_keys where content_hash not in (select content_hash from chunks)")
    .run()
}

/**
 * Notes the content hashes of the chunks `chunkWhere` selects (about to be deleted) in a temp
 * table, for {@link dropVectorsOfGoneText}. Only those texts can lose their last chunk.
 */
export const noteGoneText = (sqlite: Database, chunkWhere: string, ...params: unknown[]): void => {
  sqlite.exec("create temp table if not exists baton_gone_text (h text primary key) without rowid")
  sqlite
    .prepare(
      `insert or ignore into temp.baton_gone_text select content_hash from chunks where ${chunkWhere}`,
    )
    .run(...params)
}

/** Whether {@link noteGoneText} noted texts not yet handled on this connection. */
export const hasGoneTextNote = (sqlite: Database): boolean =>
  sqlite
    .prepare("select 1 from temp.sqlite_master where type = 'table' and name = 'baton_gone_text'")
    .get() !== undefined

/**
 * Deletes the vectors (and search codes) of the texts {@link noteGoneText} noted that no chunk
 * holds any more — forgotten text must not linger — then drops the note. Looks up only those
 * texts: the whole-table pass ({@link dropUnreferencedVectors}) made every prune and forget at
 * 10 000 sessions take 10 s, with nothing to remove. Nothing noted: nothing to do.
 */
export const dropVectorsOfGoneText = (sqlite: Database): void => {
  if (!hasGoneTextNote(sqlite)) return
  // Without the hash index (a deferred lookup index), one pass over the chunks, not one per text.
  const stillHeld = hasLookupIndex(sqlite, "chunks_content_hash")
    ? "exists (select 1 from chunks c where c.content_hash = k.content_hash)"
    : "k.content_hash in (select content_hash from chunks)"
  const embedders = sqlite.prepare("select fingerprint, vec_table from embedders").all() as Array<{
    fingerprint: string
    vec_table: string
  }>
  for (const e of embedders) {
    // `cross join`: from the noted texts into the keys' index, never a pass over every key.
    const gone = sqlite
      .prepare(
        `select k.id from temp.baton_gone_text g
           cross join vector_keys k on k.fingerprint = ? and k.content_hash = g.h
         where not ${stillHeld}`,
      )
      .pluck()
      .all(e.fingerprint) as Array<number>
    if (gone.length === 0) continue
    const ids = JSON.stringify(gone)
    forgetCodes(sqlite, e.vec_table, "select value from json_each(?)", ids)
    const deleteVector = sqlite.prepare(`delete from ${e.vec_table} where rowid = ?`)
    const deleteKey = sqlite.prepare("delete from vector_keys where id = ?")
    for (const id of gone) {
      deleteVector.run(id)
      deleteKey.run(id)
    }
  }
  sqlite.exec("drop table temp.baton_gone_text")
}
