/**
 * The JSON routes the page reads, one function each. Every route that looks
 * at a run opens it read-only for that one request (and releases it before
 * answering), so the file is never written and a run another process is
 * writing shows its newest commits on the next request.
 */
import type { ServerResponse } from "node:http";
import type { RunLease, RunSnapshot, WorkspaceChange } from "@runledger/core";
import { forOperator, type Invocation } from "../operator.js";
import { resolvePoint, resolveRoot } from "../roots.js";
import { readRun } from "../store.js";
import { fileHead } from "./file-head.js";
import { journalKinds, journalPage } from "./journal-page.js";
import { optional, required, whole } from "./query.js";
import { COMMON_HEADERS, sendJson, writeBody } from "./responses.js";
import type { RunSource } from "./sources.js";

/** What a route is handed: the query, the source it serves, and the response to answer on. */
export interface Ask {
  readonly query: URLSearchParams;
  readonly source: RunSource;
  readonly response: ServerResponse;
}

export type Route = (ask: Ask) => Promise<void>;

/** Events a timeline page holds by default, and at most. */
const PAGE_DEFAULT = 25;
const PAGE_MAX = 500;
/** Changes a diff answer lists at most; `truncated` says when there were more. */
const DIFF_MAX = 2_000;
/** Sequences (and `before`) are safe integers. */
const SEQUENCE_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Opens the run the `run` parameter names, read-only, for `fn`; a library
 * error is reworded as the CLI words it (the file, the path, what to run).
 */
async function withRun<T>(
  ask: Ask,
  asked: Omit<Invocation, "file">,
  fn: (lease: RunLease, file: string) => Promise<T>,
): Promise<T> {
  const file = await ask.source.locate(required(ask.query, "run"));
  try {
    return await readRun(file, (lease) => fn(lease, file));
  } catch (error) {
    throw await forOperator(error, { file, ...asked });
  }
}

/** One consistent snapshot of the run the `run` parameter names (see withRun). */
function withSnapshot<T>(
  ask: Ask,
  asked: Omit<Invocation, "file">,
  fn: (r: RunSnapshot) => Promise<T>,
): Promise<T> {
  return withRun(ask, asked, (lease) => lease.read(fn));
}

/** The root the `root` parameter names (an id or a unique prefix), or the current root. */
async function rootOf(r: RunSnapshot, root: string | undefined): Promise<string> {
  return root === undefined ? r.workspace.currentRoot() : resolveRoot(r, root);
}

/** The root id a diff side names: its own, or the one its event recorded (the diff checked it exists). */
async function rootOfPoint(
  r: RunSnapshot,
  point: { sequence: number } | { root: string },
): Promise<string> {
  if ("root" in point) return point.root;
  const [event] = await r.journal.list({ after: point.sequence - 1, limit: 1 });
  return event!.rootId;
}

/** A route answering one JSON document. */
const json =
  (answer: (ask: Ask) => Promise<unknown>): Route =>
  async (ask) =>
    sendJson(ask.response, 200, await answer(ask));

const source: Route = json(async ({ source }) => ({
  mode: source.mode,
  path: source.path,
  catalog: source.catalog ?? null,
  ...(await source.list()),
}));

const run: Route = json((ask) =>
  withRun(ask, {}, (lease, file) =>
    lease.read(async (r) => ({
      key: ask.query.get("run"),
      file,
      run: await r.run.get(),
      counts: await r.counts(),
      currentRoot: await r.workspace.currentRoot(),
    })),
  ),
);

const verify: Route = json((ask) => withRun(ask, {}, (lease) => lease.verify()));

const kinds: Route = json(async (ask) => ({
  kinds: await withSnapshot(ask, {}, (r) => journalKinds(r)),
}));

const journal: Route = json(async (ask) => {
  const { query } = ask;
  const after = whole(query, "after", { min: 0, max: SEQUENCE_MAX });
  const before = whole(query, "before", { min: 1, max: SEQUENCE_MAX });
  const limit = whole(query, "limit", { min: 1, max: PAGE_MAX }) ?? PAGE_DEFAULT;
  const kind = optional(query, "kind");
  return withSnapshot(ask, {}, (r) =>
    journalPage(r, {
      limit,
      ...(after === undefined ? {} : { after }),
      ...(before === undefined ? {} : { before }),
      ...(kind === undefined ? {} : { kind }),
    }),
  );
});

const tree: Route = json(async (ask) => {
  const root = optional(ask.query, "root");
  const directory = optional(ask.query, "dir") ?? "";
  return withSnapshot(
    ask,
    { path: directory, ...(root === undefined ? {} : { root }) },
    async (r) => {
      const at = await rootOf(r, root);
      return { root: at, directory, entries: await r.workspace.list(directory, { root: at }) };
    },
  );
});

const file: Route = json(async (ask) => {
  const root = optional(ask.query, "root");
  const path = required(ask.query, "path");
  return withSnapshot(ask, { path, ...(root === undefined ? {} : { root }) }, async (r) =>
    fileHead(r, path, await rootOf(r, root)),
  );
});

/** A file's bytes as stored, streamed a piece at a time (any size), as a download. */
const raw: Route = async (ask) => {
  const root = optional(ask.query, "root");
  const path = required(ask.query, "path");
  const { response } = ask;
  await withSnapshot(ask, { path, ...(root === undefined ? {} : { root }) }, async (r) => {
    const at = await rootOf(r, root);
    // stat first: a missing path or a directory is a JSON error, before any byte is sent.
    const entry = await r.workspace.stat(path, { root: at });
    if (entry.kind !== "file") await r.workspace.read(path, { root: at });
    const name = encodeURIComponent(entry.name);
    response.writeHead(200, {
      ...COMMON_HEADERS,
      "content-type": "application/octet-stream",
      "content-length": entry.size,
      "content-disposition": `attachment; filename*=UTF-8''${name}`,
    });
    for await (const chunk of r.workspace.stream(path, { root: at })) {
      await writeBody(response, chunk);
    }
    response.end();
  });
};

const diff: Route = json(async (ask) => {
  const from = required(ask.query, "from");
  const to = required(ask.query, "to");
  return withSnapshot(ask, {}, async (r) => {
    const a = await resolvePoint(r, from);
    const b = await resolvePoint(r, to);
    const changes: WorkspaceChange[] = [];
    let truncated = false;
    for await (const change of r.workspace.diff(a, b)) {
      if (changes.length === DIFF_MAX) {
        truncated = true;
        break;
      }
      changes.push(change);
    }
    const at = async (point: typeof a) => ({ ...point, root: await rootOfPoint(r, point) });
    return { from: await at(a), to: await at(b), changes, truncated };
  });
});

/** The routes by path. */
export const ROUTES: Readonly<Record<string, Route>> = {
  "/api/source": source,
  "/api/run": run,
  "/api/verify": verify,
  "/api/kinds": kinds,
  "/api/journal": journal,
  "/api/tree": tree,
  "/api/file": file,
  "/api/raw": raw,
  "/api/diff": diff,
};
