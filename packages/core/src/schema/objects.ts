/**
 * Builders for manifest entries, so each frozen manifest reads as a list of
 * its objects. `sql` is the CREATE statement exactly as SQLite stores it.
 */
import type { SchemaObject } from "./manifest.js";

export const table = (name: string, sql: string): SchemaObject => ({
  type: "table",
  name,
  tableName: name,
  sql,
});

/** The index SQLite creates by itself for the nth PRIMARY KEY or UNIQUE of a table (no SQL). */
export const autoIndex = (tableName: string, n: number): SchemaObject => ({
  type: "index",
  name: `sqlite_autoindex_${tableName}_${n}`,
  tableName,
  sql: null,
});

export const index = (name: string, tableName: string, sql: string): SchemaObject => ({
  type: "index",
  name,
  tableName,
  sql,
});

export const trigger = (name: string, tableName: string, sql: string): SchemaObject => ({
  type: "trigger",
  name,
  tableName,
  sql,
});

export const view = (name: string, sql: string): SchemaObject => ({
  type: "view",
  name,
  tableName: name,
  sql,
});
