/**
 * RunledgerSaver: LangGraph's checkpointer interface on the runledger run
 * API. One run per thread; a checkpoint is a workspace root (its channels as
 * files, built by copying its parent's root and putting what changed) named
 * by a keyed journal event; a pending write is a keyed event too. The
 * mapping, and why, is docs/langgraph.md.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  JsonPlusSerializer,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import {
  isRunledgerError,
  type JournalEvent,
  type JsonObject,
  type RunLease,
  RunledgerError,
  type RunSnapshot,
  type RunStore,
  type RunTransaction,
} from "@runledger/core";
import { WriteBatch } from "./batch.js";
import { CHANNELS, type ChannelEntry, channelPath, scalarFile, segment } from "./channels.js";
import { checkpointKey, checkpointPrefix, writeKey, writesPrefix } from "./keys.js";
import { threadLocation } from "./location.js";
import { pageChanges, pagesOf, type StoredElement, unpackPage } from "./pages.js";
import { catalogThreads } from "./threads.js";
import { fromRecord, type StoredValue, toRecord } from "./values.js";

export interface RunledgerSaverOptions {
  /** The store the threads' runs are opened in (its driver decides: a local file, a libSQL server). */
  readonly store: RunStore;
  /**
   * Where the thread runs live: `<directory>/<thread file>.db`. Default: the
   * catalog's directory when `catalog` is given, else "" (the working directory).
   */
  readonly directory?: string;
  /**
   * Where a thread's run lives, for locations a directory cannot name: a
   * database on a libSQL server, one per thread, as
   * `(threadId) => \`http://${threadNamespace(threadId)}.runs.internal:8080\``
   * with a store whose driver has the server's `adminUrl` (it creates each
   * thread's database). It must give each thread id its own location, the
   * same every time. Not with `directory`.
   */
  readonly locate?: (threadId: string) => string;
  /**
   * The location of the run catalog that lists the threads (`list()` without
   * a thread id reads it): the one the store was made with,
   * `new RunStore({ driver, catalog })`, so that every thread the saver
   * writes is noted in it.
   */
  readonly catalog?: string;
  /** The runs' workflow id, and what cross-thread listing asks the catalog for. Default "langgraph". */
  readonly workflowId?: string;
  /** LangGraph's serializer; default its JSON-plus serializer. */
  readonly serde?: SerializerProtocol;
}

const OPTIONS = ["store", "directory", "locate", "catalog", "workflowId", "serde"];

/** The record of a checkpoint's keyed event. */
interface CheckpointRecord {
  readonly kind: "langgraph.checkpoint";
  readonly thread_id: string;
  readonly checkpoint_ns: string;
  readonly checkpoint_id: string;
  readonly parent_checkpoint_id: string | null;
  readonly checkpoint: Omit<Checkpoint, "channel_values">;
  readonly metadata: StoredValue;
  readonly channels: Record<string, ChannelEntry>;
}

/** The record of a pending write's keyed event. */
interface WriteRecord {
  readonly kind: "langgraph.write";
  readonly task_id: string;
  readonly task_path: string;
  readonly idx: number;
  readonly channel: string;
  readonly value: StoredValue;
}

/** A value about to be stored: serialized bytes, or a list's serialized elements. */
type Prepared =
  | { readonly kind: "scalar"; readonly type: string; readonly bytes: Uint8Array }
  | { readonly kind: "list"; readonly elements: StoredElement[] };

/** A stored value's serializer type and bytes. */
type ScalarBytes = StoredElement;

/** A checkpoint read raw inside a snapshot, deserialized outside it. */
interface RawTuple {
  readonly threadId: string;
  readonly record: CheckpointRecord;
  /** The checkpoint's event, as a child's put reads it. */
  readonly event: ParentEvent;
  readonly values: Map<string, ScalarBytes | StoredElement[]>;
  readonly writes: WriteRecord[];
  readonly parentSends: WriteRecord[] | undefined;
}

/** A checkpoint's stored bytes per channel; `complete` when every channel is there. */
interface Contents {
  readonly channels: Map<string, ScalarBytes | StoredElement[]>;
  readonly complete: boolean;
  /** The checkpoint's event as a child's put needs it (written once, so it stays true). */
  readonly event?: ParentEvent;
}

/** What a child's put reads of its parent's event. */
interface ParentEvent {
  readonly sequence: number;
  readonly rootId: string;
  readonly record: JsonObject;
}

/** How many checkpoints' bytes are kept in memory. */
const CACHE_SIZE = 64;

export class RunledgerSaver extends BaseCheckpointSaver {
  readonly store: RunStore;
  readonly directory: string;
  readonly workflowId: string;
  readonly #locate: ((threadId: string) => string) | undefined;
  readonly #leases = new Map<string, Promise<RunLease>>();
  readonly #batches = new WeakMap<RunLease, WriteBatch>();
  /**
   * The stored bytes of recent checkpoints, by thread, namespace and id: a
   * child diffs its lists against its parent's without reading them, and a
   * checkpoint read again needs no file read. A checkpoint never changes
   * once written (its key is written once), so an entry stays true.
   */
  readonly #contents = new Map<string, Contents>();
  /** The bytes each list element object was serialized to or read from (see docs/langgraph.md). */
  readonly #serialized = new WeakMap<object, { type: string; bytes: Uint8Array }>();

  constructor(options: RunledgerSaverOptions) {
    checkOptions(options);
    super(options.serde);
    this.store = options.store;
    this.directory =
      options.directory ?? (options.catalog === undefined ? "" : directoryOf(options.catalog));
    this.workflowId = options.workflowId ?? "langgraph";
    this.#locate = options.locate;
  }

  /** The location of a thread's run: `locate(threadId)`, else the thread's file in `directory`. */
  location(threadId: string): string {
    if (this.#locate === undefined) return threadLocation(this.directory, threadId);
    const location = this.#locate(threadId);
    if (typeof location !== "string" || location === "") {
      throw new RunledgerError(
        "invalid_argument",
        `RunledgerSaver's locate gave ${JSON.stringify(location)} for thread ${JSON.stringify(threadId)}: it must return a location (a non-empty string)`,
      );
    }
    return location;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    checkId("thread_id", threadId);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    const lease = await this.#existing(threadId);
    if (lease === undefined) return undefined;
    const raw = await lease.read(async (r) => {
      const event =
        checkpointId !== undefined && checkpointId !== ""
          ? await r.journal.get(checkpointKey(ns, checkpointId))
          : (await r.journal.list({ order: "desc", keyPrefix: checkpointPrefix(ns), limit: 1 }))[0];
      return event === undefined
        ? undefined
        : readRaw(r, threadId, event, this.#cached(threadId, event));
    });
    return raw === undefined ? undefined : this.#tuple(raw);
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const threads =
      threadId === undefined
        ? catalogThreads(this.store, this.workflowId)
        : single({ threadId, location: this.location(threadId) });
    for await (const thread of threads) {
      const lease = await this.#existing(thread.threadId, thread.location);
      if (lease === undefined) continue;
      // Newest first, by reverse reads of the checkpoint keys, a page per snapshot.
      let bound: number | undefined;
      if (beforeId !== undefined) {
        const beforeNs = (before?.configurable?.checkpoint_ns as string | undefined) ?? ns ?? "";
        const event = await lease.read((r) => r.journal.get(checkpointKey(beforeNs, beforeId)));
        if (event !== undefined) bound = event.sequence;
      }
      for (;;) {
        const page = await lease.read(async (r) => {
          const events = await r.journal.list({
            order: "desc",
            keyPrefix: checkpointPrefix(ns),
            limit: 50,
            ...(bound === undefined ? {} : { before: bound }),
          });
          const found: RawTuple[] = [];
          for (const event of events) {
            const record = event.record as unknown as CheckpointRecord;
            if (onlyId !== undefined && record.checkpoint_id !== onlyId) continue;
            if (beforeId !== undefined && !(record.checkpoint_id < beforeId)) continue;
            if (filter !== undefined && !(await this.#matches(record, filter))) continue;
            found.push(
              await readRaw(r, thread.threadId, event, this.#cached(thread.threadId, event)),
            );
          }
          return { events, found };
        });
        for (const raw of page.found) {
          yield await this.#tuple(raw);
          remaining -= 1;
          if (remaining <= 0) return;
        }
        if (page.events.length < 50) break;
        bound = page.events.at(-1)!.sequence;
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) throw missingThread("put a checkpoint");
    checkId("thread_id", threadId);
    checkId("checkpoint id", checkpoint.id);
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const parentId = (config.configurable?.checkpoint_id as string | undefined) || undefined;
    // Serialized before the transaction: only what changed (newVersions).
    const changed = new Map<string, Prepared | undefined>();
    for (const channel of Object.keys(newVersions)) {
      const has = Object.hasOwn(checkpoint.channel_values, channel);
      const value = has
        ? (checkpoint.channel_values as Record<string, unknown>)[channel]
        : undefined;
      changed.set(channel, value === undefined ? undefined : await this.#prepare(value));
    }
    const storedMetadata = await toRecord(this.serde, metadata);
    const { channel_values: _values, ...skeleton } = checkpoint;
    const lease = await this.#lease(threadId, true);
    const result = await this.#batch(lease).write(async (tx) => {
      const key = checkpointKey(ns, checkpoint.id);
      // A parent put by this saver is known without a read: its event never changes.
      const parent: ParentEvent | undefined =
        parentId === undefined
          ? undefined
          : (this.#contents.get(contentsKey(threadId, ns, parentId))?.event ??
            (await tx.journal.get(checkpointKey(ns, parentId))));
      const parentRecord = parent?.record as unknown as CheckpointRecord | undefined;
      // The checkpoint's own record is the event of the apply that builds its root, under its key.
      const recordOf = (channels: Record<string, ChannelEntry>): JsonObject => {
        const record: CheckpointRecord = {
          kind: "langgraph.checkpoint",
          thread_id: threadId,
          checkpoint_ns: ns,
          checkpoint_id: checkpoint.id,
          parent_checkpoint_id: parentId ?? null,
          checkpoint: skeleton,
          metadata: storedMetadata,
          channels,
        };
        return record as unknown as JsonObject;
      };
      // A checkpoint put again (a retry) is refused by its key, nothing written: it is stored already.
      return this.#build(
        tx,
        { threadId, ns, parent, parentRecord, checkpoint, changed },
        recordOf,
        key,
      ).catch((error: unknown) => {
        if (isRunledgerError(error, "idempotency_conflict")) return undefined;
        throw error;
      });
    });
    if (result !== undefined) this.#remember(contentsKey(threadId, ns, checkpoint.id), result);
    return {
      configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id },
    };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) throw missingThread("put writes");
    checkId("thread_id", threadId);
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (checkpointId === undefined || checkpointId === "") {
      throw new RunledgerError(
        "invalid_argument",
        "putWrites needs configurable.checkpoint_id: the checkpoint the writes belong to",
      );
    }
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const records: [string, WriteRecord][] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      const idx = WRITES_IDX_MAP[channel] ?? i;
      records.push([
        writeKey(ns, checkpointId, taskId, idx),
        {
          kind: "langgraph.write",
          task_id: taskId,
          task_path: taskPath,
          idx,
          channel,
          value: await toRecord(this.serde, value),
        },
      ]);
    }
    const lease = await this.#lease(threadId, true);
    await this.#batch(lease).write(async (tx) => {
      for (const [key, record] of records) {
        // Insert or ignore: a write already stored under its key stays as it was
        // (the same record is returned by append; another one is refused, and kept out).
        await tx.journal
          .append(record as unknown as JsonObject, { key })
          .catch((error: unknown) => {
            if (!isRunledgerError(error, "idempotency_conflict")) throw error;
          });
      }
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    checkId("thread_id", threadId);
    const location = this.location(threadId);
    const lease = this.#leases.get(location);
    this.#leases.delete(location);
    if (lease !== undefined) await (await lease.catch(() => undefined))?.release();
    for (const key of this.#contents.keys()) {
      if (key.startsWith(`${threadId}\u0000`)) this.#contents.delete(key);
    }
    await removeRun(this.store, location);
  }

  /** Releases the leases the saver holds (the store stays open: it is the caller's). */
  async close(): Promise<void> {
    const leases = [...this.#leases.values()];
    this.#leases.clear();
    this.#contents.clear();
    for (const lease of leases) await (await lease.catch(() => undefined))?.release();
  }

  /** The write batch of a thread's lease (one per lease). */
  #batch(lease: RunLease): WriteBatch {
    let batch = this.#batches.get(lease);
    if (batch === undefined) {
      batch = new WriteBatch(lease);
      this.#batches.set(lease, batch);
    }
    return batch;
  }

  async #lease(threadId: string, create: boolean, location = this.location(threadId)) {
    const held = this.#leases.get(location);
    if (held !== undefined) return held;
    const opening = this.store.open(
      location,
      create ? { create: { workflowId: this.workflowId, runId: threadId } } : {},
    );
    this.#leases.set(location, opening);
    opening.catch(() => {
      if (this.#leases.get(location) === opening) this.#leases.delete(location);
    });
    return opening;
  }

  /** The thread's run, or undefined when there is none yet. */
  async #existing(threadId: string, location?: string): Promise<RunLease | undefined> {
    try {
      return await this.#lease(threadId, false, location);
    } catch (error) {
      if (isRunledgerError(error, "not_found")) return undefined;
      throw error;
    }
  }

  async #prepare(value: unknown): Promise<Prepared> {
    if (Array.isArray(value) && value.length > 0) {
      const elements: { type: string; bytes: Uint8Array }[] = [];
      for (const element of value) {
        const object =
          typeof element === "object" && element !== null && !ArrayBuffer.isView(element);
        const known = object ? this.#serialized.get(element) : undefined;
        if (known !== undefined) {
          elements.push(known);
          continue;
        }
        const [type, bytes] = await this.serde.dumpsTyped(element);
        const serialized = { type, bytes: ownBytes(bytes, element) };
        if (object) this.#serialized.set(element, serialized);
        elements.push(serialized);
      }
      return { kind: "list", elements };
    }
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { kind: "scalar", type, bytes: ownBytes(bytes, value) };
  }

  /**
   * Makes the checkpoint's root current: its parent's `channels/` by
   * reference, the changed channels put, the dropped ones deleted.
   */
  async #build(
    tx: RunTransaction,
    input: {
      threadId: string;
      ns: string;
      parent: ParentEvent | undefined;
      parentRecord: CheckpointRecord | undefined;
      checkpoint: Checkpoint;
      changed: Map<string, Prepared | undefined>;
    },
    recordOf: (channels: Record<string, ChannelEntry>) => JsonObject,
    key: string,
  ): Promise<Contents> {
    const { parent, parentRecord, checkpoint, changed } = input;
    const base: Record<string, ChannelEntry> = { ...(parentRecord?.channels ?? {}) };
    const fromParent = parent !== undefined && Object.keys(base).length > 0;
    const put: Record<string, Uint8Array> = {};
    const remove: string[] = [];
    const channels: Record<string, ChannelEntry> = {};
    const elements = new Map<string, ScalarBytes | StoredElement[]>();
    let complete = true;
    const parentContents =
      parentRecord === undefined
        ? undefined
        : this.#contents.get(contentsKey(input.threadId, input.ns, parentRecord.checkpoint_id))
            ?.channels;
    for (const [channel, entry] of Object.entries(base)) {
      const keep = Object.hasOwn(checkpoint.channel_versions, channel) && !changed.has(channel);
      if (keep) {
        channels[channel] = entry;
        const carried = parentContents?.get(channel);
        if (carried !== undefined) elements.set(channel, carried);
        else complete = false;
      } else if (!("dir" in entry && changed.get(channel)?.kind === "list")) {
        remove.push(channelPath(entry));
      }
    }
    for (const [channel, prepared] of changed) {
      if (prepared === undefined) continue;
      if (prepared.kind === "scalar") {
        const file = scalarFile(channel, prepared.type);
        const old = base[channel];
        if (old !== undefined && "file" in old && old.file === file) {
          const at = remove.indexOf(channelPath(old));
          if (at >= 0) remove.splice(at, 1);
        }
        put[`${CHANNELS}/${file}`] = prepared.bytes;
        channels[channel] = { file, type: prepared.type };
        elements.set(channel, { type: prepared.type, bytes: prepared.bytes });
        continue;
      }
      const dir = segment(channel);
      const old = base[channel];
      const stored = prepared.elements;
      let previous: readonly StoredElement[] = [];
      if (fromParent && old !== undefined && "dir" in old && old.dir === dir) {
        const known = parentContents?.get(channel);
        previous = Array.isArray(known)
          ? known
          : await readElements(tx, `${CHANNELS}/${dir}`, old.list, parent!.rootId);
      } else if (old !== undefined && "dir" in old) {
        remove.push(channelPath(old));
      }
      const pages = pageChanges(previous, stored);
      for (const [name, bytes] of pages.put) put[`${CHANNELS}/${dir}/${name}`] = bytes;
      for (const name of pages.remove) remove.push(`${CHANNELS}/${dir}/${name}`);
      channels[channel] = { dir, list: stored.length };
      elements.set(channel, stored);
    }
    const event = recordOf(channels);
    const published = await publishRoot(
      tx,
      { parent: fromParent ? parent : undefined, put, remove },
      event,
      key,
      checkpoint.id,
    );
    return {
      channels: elements,
      complete,
      event: { sequence: published.sequence, rootId: published.rootId, record: event },
    };
  }

  #remember(key: string, contents: Contents): void {
    this.#contents.delete(key);
    this.#contents.set(key, contents);
    while (this.#contents.size > CACHE_SIZE) {
      this.#contents.delete(this.#contents.keys().next().value!);
    }
  }

  /** The checkpoint's bytes when every channel is in memory. */
  #cached(threadId: string, event: JournalEvent): Contents | undefined {
    const record = event.record as unknown as CheckpointRecord;
    const found = this.#contents.get(
      contentsKey(threadId, record.checkpoint_ns, record.checkpoint_id),
    );
    return found?.complete === true ? found : undefined;
  }

  /**
   * A list's elements, deserialized. With LangGraph's JSON-plus serializer
   * and every element JSON, the elements are parsed as one JSON array (one
   * parse instead of one per element; its reviver treats an array element by
   * element). Each element object is remembered with its bytes, so putting it
   * again in a child checkpoint does not serialize it again.
   */
  async #loadList(stored: readonly StoredElement[]): Promise<unknown[]> {
    const types = stored.map((element) => element.type);
    let list: unknown[];
    if (this.serde instanceof JsonPlusSerializer && types.every((type) => type === "json")) {
      list = (await this.serde.loadsTyped("json", jsonArray(stored))) as unknown[];
    } else {
      list = [];
      for (const [i, element] of stored.entries()) {
        list.push(await this.serde.loadsTyped(types[i]!, element.bytes));
      }
    }
    for (const [i, element] of list.entries()) {
      if (typeof element === "object" && element !== null && !ArrayBuffer.isView(element)) {
        this.#serialized.set(element, { type: types[i]!, bytes: stored[i]!.bytes });
      }
    }
    return list;
  }

  async #matches(record: CheckpointRecord, filter: Record<string, unknown>): Promise<boolean> {
    const metadata = (await fromRecord(this.serde, record.metadata)) as Record<string, unknown>;
    return Object.entries(filter).every(([key, value]) => metadata?.[key] === value);
  }

  async #tuple(raw: RawTuple): Promise<CheckpointTuple> {
    const { record, threadId } = raw;
    const ns = record.checkpoint_ns;
    const channelValues: Record<string, unknown> = {};
    for (const [channel, stored] of raw.values) {
      channelValues[channel] = Array.isArray(stored)
        ? await this.#loadList(stored)
        : await this.serde.loadsTyped(
            stored.type,
            // The serializer may hand these very bytes back: the caller gets its own.
            stored.type === "bytes" ? stored.bytes.slice() : stored.bytes,
          );
    }
    // A child diffs against these bytes, and a second read of it reads no file.
    this.#remember(contentsKey(threadId, ns, record.checkpoint_id), {
      channels: raw.values,
      complete: true,
      event: raw.event,
    });
    const checkpoint: Checkpoint = {
      ...(record.checkpoint as Omit<Checkpoint, "channel_values">),
      channel_versions: { ...record.checkpoint.channel_versions },
      channel_values: channelValues,
    };
    if (raw.parentSends !== undefined) {
      // Checkpoints before format 4 kept pending sends as their parent's TASKS writes.
      const sends = [];
      for (const write of sortWrites(raw.parentSends)) {
        sends.push(await fromRecord(this.serde, write.value));
      }
      checkpoint.channel_values[TASKS] = sends;
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] =
        versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const pendingWrites: CheckpointPendingWrite[] = [];
    for (const write of sortWrites(raw.writes)) {
      pendingWrites.push([write.task_id, write.channel, await fromRecord(this.serde, write.value)]);
    }
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: ns,
          checkpoint_id: record.checkpoint_id,
        },
      },
      checkpoint,
      metadata: (await fromRecord(this.serde, record.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (record.parent_checkpoint_id !== null) {
      tuple.parentConfig = {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: ns,
          checkpoint_id: record.parent_checkpoint_id,
        },
      };
    }
    return tuple;
  }
}

const textDecoder = new TextDecoder();

/** The text of a JSON array of elements that are JSON texts: one decoding of their bytes, comma-joined. */
function jsonArray(elements: readonly StoredElement[]): string {
  let size = 1 + elements.length;
  for (const element of elements) size += element.bytes.length;
  const bytes = new Uint8Array(Math.max(size, 2));
  bytes[0] = 0x5b; // [
  let at = 1;
  for (const [i, element] of elements.entries()) {
    if (i > 0) bytes[at++] = 0x2c; // ,
    bytes.set(element.bytes, at);
    at += element.bytes.length;
  }
  bytes[at] = 0x5d; // ]
  return textDecoder.decode(bytes);
}

/** How long deleteThread waits for this process's closed connections to let go of a file. */
const REMOVE_PATIENCE_MS = 3000;

/**
 * Removes a thread's run; none there is already done. A driver whose closed
 * connection keeps its file open until garbage collection (adapter-libsql on
 * a local file, docs/architecture.md) answers run_in_use right after the
 * saver released it: the removal is retried for a while, collecting garbage
 * first when the process exposes `gc` (node --expose-gc).
 */
async function removeRun(store: RunStore, location: string): Promise<void> {
  const deadline = Date.now() + REMOVE_PATIENCE_MS;
  for (;;) {
    // Finalizers run from the event loop's check phase, after a collection.
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setImmediate(resolve));
    try {
      await store.remove(location);
      return;
    } catch (error) {
      if (isRunledgerError(error, "not_found")) return;
      if (!isRunledgerError(error, "run_in_use") || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Publishes a checkpoint's root with its event: its parent's `channels/` by
 * reference with `put` and `remove` applied, or — with no parent to build on
 * — `channels/` made anew.
 */
async function publishRoot(
  tx: RunTransaction,
  changes: { parent: ParentEvent | undefined; put: Record<string, Uint8Array>; remove: string[] },
  event: JsonObject,
  key: string,
  checkpointId: string,
): Promise<{ sequence: number; rootId: string }> {
  const { parent, put, remove } = changes;
  if (parent !== undefined) {
    return tx.workspace.apply(
      {
        copy: { [CHANNELS]: { from: CHANNELS, at: { sequence: parent.sequence } } },
        put,
        delete: remove,
      },
      { event, key, missing: "ignore" },
    );
  } else if (Object.keys(put).length === 0) {
    return tx.workspace.apply({ delete: [CHANNELS] }, { event, key, missing: "ignore" });
  } else {
    // Another checkpoint's channels may be current: cleared first, since one
    // apply cannot delete a directory and put inside it.
    const current = await tx.workspace.stat(CHANNELS, { missing: "undefined" });
    if (current !== undefined) {
      // Cleared only for a checkpoint not stored yet (its keyed apply below would refuse a retry).
      if ((await tx.journal.get(key)) !== undefined) {
        throw new RunledgerError("idempotency_conflict", "this checkpoint is stored already");
      }
      await tx.workspace.apply(
        { delete: [CHANNELS] },
        { event: { kind: "langgraph.cleared", checkpoint_id: checkpointId } },
      );
    }
    return tx.workspace.apply({ put }, { event, key });
  }
}

/** A checkpoint's event, its files at the event's root and its writes, in one snapshot. */
async function readRaw(
  r: RunSnapshot,
  threadId: string,
  event: JournalEvent,
  cached: Contents | undefined,
): Promise<RawTuple> {
  const record = event.record as unknown as CheckpointRecord;
  const ns = record.checkpoint_ns;
  const values = cached?.channels ?? new Map<string, ScalarBytes | StoredElement[]>();
  for (const [channel, entry] of cached === undefined ? Object.entries(record.channels) : []) {
    if ("dir" in entry) {
      values.set(channel, await readElements(r, channelPath(entry), entry.list, event.rootId));
    } else {
      const bytes = await r.workspace.read(channelPath(entry), { root: event.rootId });
      values.set(channel, { type: entry.type, bytes });
    }
  }
  const writes = await readWrites(r, ns, record.checkpoint_id);
  const parentSends =
    record.checkpoint.v < 4 && record.parent_checkpoint_id !== null
      ? (await readWrites(r, ns, record.parent_checkpoint_id)).filter((w) => w.channel === TASKS)
      : undefined;
  const held = { sequence: event.sequence, rootId: event.rootId, record: event.record };
  return { threadId, record, event: held, values, writes, parentSends };
}

async function readWrites(
  r: RunSnapshot,
  ns: string,
  checkpointId: string,
): Promise<WriteRecord[]> {
  const out: WriteRecord[] = [];
  for await (const event of r.journal.stream({ keyPrefix: writesPrefix(ns, checkpointId) })) {
    out.push(event.record as unknown as WriteRecord);
  }
  return out;
}

/** A list's elements at a root: its pages, read together and unpacked. */
async function readElements(
  r: RunSnapshot | RunTransaction,
  dir: string,
  length: number,
  root: string,
): Promise<StoredElement[]> {
  const pages = pagesOf(length);
  const contents = await r.workspace.readMany(
    pages.map((page) => `${dir}/${page.name}`),
    { root },
  );
  return pages.flatMap((page, i) => unpackPage(contents[i]!, page.count, `${dir}/${page.name}`));
}

function sortWrites(writes: readonly WriteRecord[]): WriteRecord[] {
  return writes
    .map((write) => ({ write, key: writesSortKey(write.task_path, write.task_id, write.idx) }))
    .sort((a, b) => compareWritesSortKeys(a.key, b.key))
    .map(({ write }) => write);
}

function contentsKey(threadId: string, ns: string, checkpointId: string): string {
  return `${threadId}\u0000${ns}\u0000${checkpointId}`;
}

async function* single<T>(value: T): AsyncGenerator<T> {
  yield value;
}

function checkOptions(options: RunledgerSaverOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new RunledgerError(
      "invalid_argument",
      "RunledgerSaver takes { store, directory?, locate?, catalog?, workflowId?, serde? }",
    );
  }
  for (const name of Object.keys(options)) {
    if (!OPTIONS.includes(name)) {
      throw new RunledgerError(
        "invalid_argument",
        `RunledgerSaver's options have no option ${JSON.stringify(name)}; the known names are ${OPTIONS.join(", ")}`,
        { details: { name, known: OPTIONS } },
      );
    }
  }
  if (typeof options.store?.open !== "function") {
    throw new RunledgerError("invalid_argument", "RunledgerSaver needs store: a RunStore");
  }
  if (options.directory !== undefined && typeof options.directory !== "string") {
    throw new RunledgerError("invalid_argument", "RunledgerSaver's directory is a string");
  }
  if (options.locate !== undefined) {
    if (typeof options.locate !== "function") {
      throw new RunledgerError(
        "invalid_argument",
        "RunledgerSaver's locate is a function from a thread id to its run's location",
      );
    }
    if (options.directory !== undefined) {
      throw new RunledgerError(
        "invalid_argument",
        "RunledgerSaver takes directory or locate, not both: locate names every thread's location itself",
      );
    }
  }
  const { catalog } = options;
  if (catalog !== undefined) {
    if (typeof catalog !== "string" || catalog === "") {
      throw new RunledgerError(
        "invalid_argument",
        `RunledgerSaver's catalog is the location of the store's run catalog; got ${JSON.stringify(catalog)}`,
      );
    }
    if (options.store.catalog !== catalog) {
      throw new RunledgerError(
        "invalid_argument",
        `RunledgerSaver's catalog is ${JSON.stringify(catalog)}, but the store ${
          options.store.catalog === undefined
            ? "has no catalog"
            : `notes its runs in ${JSON.stringify(options.store.catalog)}`
        }: make the store with new RunStore({ driver, catalog: ${JSON.stringify(catalog)} }), so every thread the saver writes is listed`,
        { details: { catalog, storeCatalog: options.store.catalog ?? null } },
      );
    }
  }
}

/**
 * The directory a catalog location names its file in: the threads live
 * beside their catalog. A libSQL URL names no directory (its databases are
 * names on one server): "".
 */
function directoryOf(catalog: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(catalog)) return "";
  const slash = catalog.lastIndexOf("/");
  return slash < 0 ? "" : catalog.slice(0, slash);
}

function checkId(what: string, value: unknown): void {
  if (typeof value !== "string" || value === "") {
    throw new RunledgerError(
      "invalid_argument",
      `the ${what} must be a non-empty string; got ${JSON.stringify(value)}`,
    );
  }
}

function missingThread(what: string): RunledgerError {
  return new RunledgerError(
    "invalid_argument",
    `cannot ${what}: the config has no configurable.thread_id. Pass one, as in ` +
      'graph.invoke(input, { configurable: { thread_id: "thread-1" } })',
  );
}

/**
 * A value's serialized bytes, ours to keep: the serializer may hand back the
 * value itself (a Uint8Array), which the caller may change afterwards, so it
 * is copied — by the constructor, since a Buffer's slice is a view of the
 * same memory.
 */
function ownBytes(bytes: Uint8Array, value: unknown): Uint8Array {
  return bytes === value ? new Uint8Array(bytes) : bytes;
}
