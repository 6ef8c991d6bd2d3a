/**
 * What `runledger serve` shows: one run file, or the runs of a directory —
 * found through a run catalog when one is given, else by looking at each
 * file there. A source answers two questions: which runs it lists, and
 * which file a run key the page sends names. A key is a file name inside
 * the directory (or the one file's name), so the server never opens a file
 * it was not asked to show, whatever the page sends.
 */
import { realpath, stat } from "node:fs/promises";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  type RunEntry,
  RunledgerError,
  type RunStatus,
  RunStore,
  type StopReason,
} from "@runledger/core";
import { nodeDriver } from "../../driver.js";
import { describeError } from "../output.js";
import { readRun } from "../store.js";

/** One run as the runs list shows it. */
export interface ListedRun {
  /** What the page names the run by: its file's path relative to the directory. */
  readonly key: string;
  readonly file: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly status: RunStatus;
  readonly stopReason: StopReason | null;
  readonly updatedAt: number;
  readonly lastSequence: number;
}

/** A file of the directory that is no run this build reads, with its open's code. */
export interface SkippedFile {
  readonly key: string;
  readonly code: string;
  readonly message: string;
}

export interface Listing {
  readonly runs: ListedRun[];
  readonly skipped: SkippedFile[];
}

export interface RunSource {
  readonly mode: "file" | "directory";
  /** The path as given on the command line, resolved. */
  readonly path: string;
  /** The catalog the runs are listed through, when one was given. */
  readonly catalog: string | undefined;
  list(): Promise<Listing>;
  /** The file a key names; `not_found` for a key this source does not show. */
  locate(key: string): Promise<string>;
}

const notServed = (key: string, where: string) =>
  new RunledgerError("not_found", `${where} shows no run ${JSON.stringify(key)}`, {
    details: { key },
  });

/** What a run's own file says of it, read-only: the row and its last sequence. */
async function describeRun(key: string, file: string): Promise<ListedRun> {
  return readRun(file, (lease) =>
    lease.read(async (r) => {
      const run = await r.run.get();
      const [last] = await r.journal.list({ order: "desc", limit: 1 });
      return {
        key,
        file,
        workflowId: run.workflowId,
        runId: run.runId,
        status: run.status,
        stopReason: run.stopReason,
        updatedAt: run.updatedAt,
        lastSequence: last?.sequence ?? 0,
      };
    }),
  );
}

/** One run file: it lists itself, under its file name. */
function fileSource(path: string): RunSource {
  const file = resolve(path);
  const key = basename(file);
  return {
    mode: "file",
    path: file,
    catalog: undefined,
    async list() {
      return { runs: [await describeRun(key, file)], skipped: [] };
    },
    async locate(asked) {
      if (asked !== key) throw notServed(asked, file);
      return file;
    },
  };
}

/** A key that is a plain file name: no directory part, nothing hidden. */
const plainName = (key: string) => key !== "" && !/[/\\]/.test(key) && !key.startsWith(".");

/** The runs of a directory, found by opening each file there read-only. */
function scannedSource(path: string): RunSource {
  const directory = resolve(path);
  return {
    mode: "directory",
    path: directory,
    catalog: undefined,
    async list() {
      const candidates = (await nodeDriver().listDatabases!(directory)).map((file) =>
        basename(file),
      );
      const listing: Listing = { runs: [], skipped: [] };
      for (const key of candidates.filter(plainName)) {
        try {
          listing.runs.push(await describeRun(key, join(directory, key)));
        } catch (error) {
          listing.skipped.push({ key, ...describeError(error) });
        }
      }
      return listing;
    },
    async locate(key) {
      const file = join(directory, key);
      const found = plainName(key) ? await stat(file).catch(() => undefined) : undefined;
      if (found === undefined || !found.isFile()) throw notServed(key, directory);
      return file;
    },
  };
}

/** The path of `file` inside `directory`, or undefined when it lies outside. */
function inside(directory: string, file: string): string | undefined {
  const path = relative(directory, file);
  if (path === "" || path === ".." || path.startsWith(`..${sep}`) || isAbsolute(path)) {
    return undefined;
  }
  return path.split(sep).join("/");
}

/**
 * The runs of a directory as a catalog lists them (`store.list`, every
 * page), keeping those whose file lies in the directory. The catalog is
 * read as `runledger runs` reads it; no run file is opened for the list.
 */
async function catalogSource(path: string, catalogPath: string): Promise<RunSource> {
  // Catalog locations are canonical paths: compare them with the directory's own.
  const directory = await realpath(path);
  const catalog = resolve(catalogPath);
  let known = new Map<string, string>();
  const list = async (): Promise<Listing> => {
    if ((await stat(catalog).catch(() => undefined)) === undefined) {
      throw new RunledgerError(
        "not_found",
        `no run catalog at ${catalog}: a store makes one when given new RunStore({ driver, catalog })`,
      );
    }
    const store = new RunStore({ driver: nodeDriver(), catalog });
    const entries: RunEntry[] = [];
    try {
      let after: string | undefined;
      do {
        const page = await store.list({ limit: 1_000, ...(after === undefined ? {} : { after }) });
        entries.push(...page.runs);
        after = page.next;
      } while (after !== undefined);
    } finally {
      await store.close();
    }
    const runs: ListedRun[] = [];
    for (const entry of entries) {
      const key = inside(directory, entry.location);
      if (key === undefined) continue;
      const { location, createdAt: _, ...rest } = entry;
      runs.push({ key, file: location, ...rest });
    }
    known = new Map(runs.map((run) => [run.key, run.file]));
    return { runs, skipped: [] };
  };
  return {
    mode: "directory",
    path: directory,
    catalog,
    list,
    async locate(key) {
      if (!known.has(key)) await list();
      const file = known.get(key);
      if (file === undefined) throw notServed(key, `the catalog ${catalog} for ${directory}`);
      return file;
    },
  };
}

/** The source for a path given on the command line: a file, or a directory (with its catalog). */
export async function sourceFor(path: string, catalog: string | undefined): Promise<RunSource> {
  const found = await stat(path).catch(() => undefined);
  if (found?.isDirectory() === true) {
    if (catalog === undefined) return scannedSource(path);
    const source = await catalogSource(path, catalog);
    // Listed once now, so a catalog that is missing or no catalog fails at the start.
    await source.list();
    return source;
  }
  if (catalog !== undefined) {
    throw new RunledgerError(
      "usage",
      `--catalog lists the runs of a directory; ${path} is no directory`,
    );
  }
  const source = fileSource(path);
  // Opened once now, so a path that holds no run fails at the start with its code.
  await source.list();
  return source;
}
