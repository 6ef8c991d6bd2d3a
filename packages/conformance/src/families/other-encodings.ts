/**
 * Other-encoding family (docs/file-format.md, "The workspace encoding"):
 * a run written by a build of core whose workspace constants differ from
 * this build's is refused with `encoding_mismatch`, read-only and
 * read-write, create or not, and left byte-for-byte as found — for every
 * constant that decides a workspace's stored bytes, one build each.
 *
 * The files are made as another build would make them: the suite copies
 * core's built package, rewrites one constant's declaration in the copy,
 * and a child process writes a run through that copy (its own module
 * instances) on the subject's driver — a directory of 300 files and a file
 * larger than a piece. Core itself has no switch for its constants. So if a
 * constant ever moves without the recorded encoding moving with it (a
 * descriptor written out by hand, a field left out), the copy with that
 * constant changed writes this build's encoding and its file opens: the
 * test for it fails.
 */
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { WORKSPACE_ENCODING_V1 } from "@runledger/core/engine";
import { expect, it } from "vitest";
import type {
  EncodingWriterReport,
  EncodingWriterRequest,
  WrittenRun,
} from "../child/other-encoding-protocol.js";
import { type Fixtures, failureOf, oneShot, subjectChild } from "../fixtures.js";
import { CREATE, fingerprint, raw, runStore } from "./run-fixtures.js";

/** One other build: a constant's declaration as core's bundle holds it, and as that build has it. */
interface OtherBuild {
  readonly constant: string;
  readonly declaration: string;
  readonly other: string;
  /** The same content gets another root id (the tree's own bytes differ, not only rows). */
  readonly otherRoot: boolean;
}

const OTHER_BUILDS: readonly OtherBuild[] = [
  build("CUT_ONE_IN", "32", "12", true),
  build("MAX_NODE_ENTRIES", "128", "16", true),
  build("INLINE_MAX", "256", "32", true),
  build("INLINE_NODE_MAX", "512", "384", true),
  build("NODE_DOMAIN", '"runledger/node/1"', '"runledger/node/2"', true),
  build("FILE", "1", "5", true),
  build("DIRECTORY", "2", "6", false),
  build("INLINE_FILE", "3", "7", true),
  build("INLINE_DIRECTORY", "4", "8", true),
  build("BYTES", "0", "4", false),
  build("CHUNK_LIST", "1", "5", false),
  build("DELTA", "2", "6", false),
  build("CHUNK_SIZE", "256 * 1024", "128 * 1024", false),
  build("MAX_CHAIN", "16", "8", false),
  build("DELTA_FORMAT", "1", "2", false),
  build("OBJECT_KEY_PREFIX_BYTES", "8", "12", false),
];

function build(constant: string, value: string, other: string, otherRoot: boolean): OtherBuild {
  return {
    constant,
    declaration: `var ${constant} = ${value};`,
    other: `var ${constant} = ${other};`,
    otherRoot,
  };
}

const FILES = 300;
/** More than one piece at this build's CHUNK_SIZE (and at the other build's). */
const LARGE_BYTES = 300 * 1024;
/** One process writes every build's run: most of the time is loading the copies and writing. */
const WRITER_TIMEOUT_MS = 240_000;
const writeRuns = oneShot<EncodingWriterRequest, EncodingWriterReport>(
  { file: "other-encoding-writer", name: "other-encoding writer" },
  WRITER_TIMEOUT_MS,
);

/** Core's package directory, as this suite resolves it (the build under test). */
function corePackage(): string {
  const entry = createRequire(import.meta.url).resolve("@runledger/core");
  return dirname(dirname(entry));
}

/** Every .js file below `directory`, relative to it. */
async function scripts(directory: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(join(directory, prefix), { withFileTypes: true })) {
    const path = join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...(await scripts(directory, path)));
    else if (entry.name.endsWith(".js")) found.push(path);
  }
  return found;
}

/** Where Node would find `name` from `directory`: node_modules up the tree. */
async function dependencyOf(directory: string, name: string): Promise<string> {
  for (let dir = directory; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    try {
      await readdir(candidate);
      return candidate;
    } catch {}
    if (dirname(dir) === dir) throw new Error(`cannot find core's dependency ${name}`);
  }
}

/**
 * A copy of core's package in `target` with one declaration rewritten: its
 * package.json, its dist scripts, and links to its dependencies. The
 * declaration must occur exactly once in the bundle, so a change in how it
 * is bundled fails here, by name, rather than building a copy that differs
 * in nothing.
 */
async function otherBuild(core: string, target: string, change: OtherBuild): Promise<void> {
  const manifest = JSON.parse(await readFile(join(core, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  await mkdir(join(target, "dist"), { recursive: true });
  await copyFile(join(core, "package.json"), join(target, "package.json"));
  let occurrences = 0;
  for (const file of await scripts(join(core, "dist"))) {
    const text = await readFile(join(core, "dist", file), "utf8");
    const parts = text.split(change.declaration);
    occurrences += parts.length - 1;
    await mkdir(dirname(join(target, "dist", file)), { recursive: true });
    await writeFile(join(target, "dist", file), parts.join(change.other));
  }
  expect(
    occurrences,
    `core's bundle declares ${change.constant} as \`${change.declaration}\` exactly once`,
  ).toBe(1);
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const link = join(target, "node_modules", name);
    await mkdir(dirname(link), { recursive: true });
    await symlink(await dependencyOf(core, name), link, "dir");
  }
}

interface Written {
  /** The run this build wrote the same way, through the same process. */
  readonly control: WrittenRun & { readonly location: string };
  readonly runs: ReadonlyMap<string, WrittenRun & { readonly location: string }>;
}

export function describeOtherEncodings(fx: Fixtures): void {
  fx.needs("files", "childProcesses").describe("other workspace encodings", () => {
    let made: Promise<Written> | undefined;
    /** Every build's run, written once per suite by one child process, each a self-contained file. */
    const written = () => {
      made ??= (async () => {
        const scratch = await fx.scratchDirectory();
        const core = corePackage();
        const builds = [{ core, location: join(scratch, "this-build.sqlite") }];
        for (const change of OTHER_BUILDS) {
          const copy = join(scratch, `core-${change.constant}`);
          await otherBuild(core, copy, change);
          await mkdir(join(scratch, change.constant));
          builds.push({ core: copy, location: join(scratch, change.constant, "run.sqlite") });
        }
        const report = await writeRuns(subjectChild(fx.subject), {
          builds,
          create: CREATE,
          files: FILES,
          largeBytes: LARGE_BYTES,
        });
        const runs = report.runs.map((run, i) => ({ ...run, location: builds[i]!.location }));
        for (const { location } of runs) {
          // One file, no side files: what is compared byte for byte below.
          await raw(fx, location, ["PRAGMA journal_mode = DELETE"]);
          expect((await fingerprint(location)).listing).toEqual([basename(location)]);
        }
        return {
          control: runs[0]!,
          runs: new Map(OTHER_BUILDS.map((change, i) => [change.constant, runs[i + 1]!])),
        };
      })();
      return made;
    };

    it(
      "opens the run this build wrote the same way, read-only and read-write",
      async () => {
        const { control } = await written();
        expect(control.encoding).toBe(WORKSPACE_ENCODING_V1);
        expect(control.listed).toBe(FILES);
        for (const options of [{ readOnly: true }, {}]) {
          const lease = await runStore(fx).open(control.location, options);
          const listed = await lease.read((r) => r.workspace.list("dir"));
          expect(listed.length).toBe(FILES);
          expect(await lease.read((r) => r.workspace.currentRoot())).toBe(control.root);
          await lease.release();
        }
      },
      WRITER_TIMEOUT_MS,
    );

    for (const change of OTHER_BUILDS) {
      it(
        `refuses a run written by a build with another ${change.constant} as encoding_mismatch, read-only and read-write, leaving it as found`,
        async () => {
          const { control, runs } = await written();
          const run = runs.get(change.constant)!;
          // That build worked, and its encoding names the change.
          expect(run.listed).toBe(FILES);
          expect(run.encoding).not.toBe(WORKSPACE_ENCODING_V1);
          if (change.otherRoot) expect(run.root).not.toBe(control.root);

          const before = await fingerprint(run.location);
          for (const options of [{ readOnly: true }, {}, { create: CREATE }]) {
            const error = await failureOf(() => runStore(fx).open(run.location, options));
            const what = `${change.constant}, ${JSON.stringify(options)}`;
            expect(error.code, `${what}: ${error.message}`).toBe("encoding_mismatch");
            expect(error.details).toEqual({ found: run.encoding, expected: WORKSPACE_ENCODING_V1 });
            expect(error.message).toContain(run.location);
            expect(error.message).toContain(run.encoding);
            expect(error.message).toContain(WORKSPACE_ENCODING_V1);
            expect(await fingerprint(run.location), what).toEqual(before);
          }
        },
        WRITER_TIMEOUT_MS,
      );
    }
  });
}
