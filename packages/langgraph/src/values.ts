/**
 * Values through LangGraph's serializer. Whatever the saver's `serde`
 * produces is what is stored: a workspace file holds its bytes, and a
 * journal record holds a JSON serialization as JSON (so the CLI shows it
 * readably) and any other as base64 beside its type.
 */
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { JsonValue } from "@runledger/core";

/** A serialized value as a journal record carries it. */
export type StoredValue =
  | { readonly type: string; readonly json: JsonValue }
  | { readonly type: string; readonly base64: string };

const decoder = new TextDecoder("utf-8", { fatal: true });

export async function toRecord(serde: SerializerProtocol, value: unknown): Promise<StoredValue> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type === "json") {
    try {
      return { type, json: JSON.parse(decoder.decode(bytes)) as JsonValue };
    } catch {
      // Not JSON text after all: kept as bytes.
    }
  }
  return { type, base64: Buffer.from(bytes).toString("base64") };
}

export function fromRecord(serde: SerializerProtocol, stored: StoredValue): Promise<unknown> {
  if ("json" in stored) return serde.loadsTyped(stored.type, JSON.stringify(stored.json));
  return serde.loadsTyped(stored.type, new Uint8Array(Buffer.from(stored.base64, "base64")));
}
