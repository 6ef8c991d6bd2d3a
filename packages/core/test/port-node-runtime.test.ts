import { AsyncLocalStorage } from "node:async_hooks";
import crypto from "node:crypto";
import fs from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toHex } from "../src/port/bytes.js";
import { portableHash } from "../src/port/hash.js";
import { nodeRuntime } from "../src/port/node-runtime.js";
import { isWalHeader } from "../src/port/read-only.js";
import { databaseFiles } from "../src/port/remove-files.js";
import { temporaryDirectory } from "./fixtures.js";

const directory = () => temporaryDirectory("runledger-node-runtime-");

const runtime = (cwd = "/") => nodeRuntime({ fs, crypto, AsyncLocalStorage, cwd: () => cwd });

describe("nodeRuntime", () => {
  it("makes one async context per set-up, Node's own", () => {
    const first = runtime();
    expect(first.asyncContext).toBeInstanceOf(AsyncLocalStorage);
    expect(runtime().asyncContext).not.toBe(first.asyncContext);
  });

  it("hashes with node:crypto when handed it, and leaves hashing to core without it", () => {
    const { hash } = runtime();
    expect(hash?.name).toBe("node:crypto");
    const data = new TextEncoder().encode("runledger");
    expect(toHex(hash!.sha256(data))).toBe(toHex(portableHash.sha256(data)));
    const without = nodeRuntime({ fs, AsyncLocalStorage, cwd: () => "/" });
    expect(without.hash).toBeUndefined();
  });

  it("canonicalizes a relative path from the working directory it was given, symlinks resolved", async () => {
    const real = directory();
    const link = join(directory(), "link");
    fs.symlinkSync(real, link);
    expect(await runtime(link).canonicalize("run.db")).toBe(join(real, "run.db"));
    expect(await runtime().canonicalize(join(link, "run.db"))).toBe(join(real, "run.db"));
  });

  it("removes a database's side files before the file itself, and nothing else", async () => {
    const dir = directory();
    const path = join(dir, "run.db");
    for (const file of [...databaseFiles(path), join(dir, "other.db")]) fs.writeFileSync(file, "");
    const removed: string[] = [];
    const spied = {
      ...fs,
      rmSync: (file: string, options: { force: true }) => {
        removed.push(file);
        fs.rmSync(file, options);
      },
    };
    await nodeRuntime({ fs: spied, AsyncLocalStorage, cwd: () => "/" }).remove(path);
    expect(removed).toStrictEqual(databaseFiles(path));
    expect(fs.readdirSync(dir)).toStrictEqual(["other.db"]);
  });

  it("lists a directory's candidate database files by canonical path, side files left out", async () => {
    const dir = directory();
    for (const name of ["b.db", "a.db", "a.db-wal", "a.db-shm", "b.db-journal"]) {
      fs.writeFileSync(join(dir, name), "");
    }
    fs.mkdirSync(join(dir, "nested"));
    expect(await runtime().listDatabases(dir)).toStrictEqual([
      join(dir, "a.db"),
      join(dir, "b.db"),
    ]);
  });

  it("checks a path before an open with the file system's answers", async () => {
    const dir = directory();
    const node = runtime(dir);
    await node.checkFileOpenable("new.db", { create: true, readOnly: false });
    await expect(
      node.checkFileOpenable("new.db", { create: false, readOnly: false }),
    ).rejects.toMatchObject({ code: "cannot_open", details: { missing: "file" } });
    await expect(
      node.checkFileOpenable("missing/new.db", { create: true, readOnly: false }),
    ).rejects.toMatchObject({ code: "cannot_open", details: { missing: "directory" } });
  });

  it("reads a file's header and side files for a read-only open, writing nothing", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    const header = new Uint8Array(100);
    header.set(new TextEncoder().encode("SQLite format 3\u0000"));
    header[18] = 2;
    header[19] = 2;
    fs.writeFileSync(path, header);
    fs.writeFileSync(`${path}-wal`, new Uint8Array(32));
    const facts = runtime().readOnlyFacts(path);
    expect(isWalHeader(facts.header)).toBe(true);
    expect([facts.header.length, facts.walBytes, facts.shm]).toStrictEqual([100, 32, false]);
    expect(fs.readdirSync(dir).sort()).toStrictEqual(["run.db", "run.db-wal"]);
  });
});
