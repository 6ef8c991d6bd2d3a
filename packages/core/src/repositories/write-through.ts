/**
 * The two document writes every repository makes, each followed by its
 * route-1 signal (typed: skipped while a typed stager is bound), plus the
 * refusals they share. Repositories stage their typed changes themselves,
 * after these, in the same datastore write.
 */

import { RunledgerError } from "../port/errors.js";
import { utf8 } from "../port/text.js";
import type { ChangeHook } from "../routing/hook.js";
import { signalChange } from "../routing/route.js";
import type { DocumentWriter } from "./datastore/documents.js";

export async function writeDocument(
  writer: DocumentWriter,
  hook: ChangeHook,
  path: string,
  bytes: Uint8Array,
): Promise<void> {
  await writer.put(path, bytes);
  await signalChange(hook, { kind: "write", path }, { typed: true });
}

export async function deleteDocument(
  writer: DocumentWriter,
  hook: ChangeHook,
  path: string,
): Promise<boolean> {
  const deleted = await writer.delete(path);
  if (deleted) await signalChange(hook, { kind: "delete", path }, { typed: true });
  return deleted;
}

/** Text is stored as UTF-8; bytes as given. */
export function contentBytes(content: Uint8Array | string): Uint8Array {
  return typeof content === "string" ? utf8(content) : content;
}

export function documentExists(what: string): RunledgerError {
  return new RunledgerError(
    "document_exists",
    `${what} already exists; edit it, or choose another name`,
    {
      details: { what },
    },
  );
}

export function documentNotFound(what: string): RunledgerError {
  return new RunledgerError("document_not_found", `${what} does not exist; create it first`, {
    details: { what },
  });
}
