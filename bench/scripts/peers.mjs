#!/usr/bin/env node
// Installs the bench-only contenders whose engines need a newer Node than the
// project supports (bench/peers, with its own lock file) and links them into
// bench/node_modules, where the compiled suites resolve them. Kept out of the
// root workspace so that `npm ci` there prints no EBADENGINE warning on Node 20.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const bench = join(dirname(fileURLToPath(import.meta.url)), "..");
const peers = join(bench, "peers");
const { dependencies } = JSON.parse(readFileSync(join(peers, "package.json"), "utf8"));
const installed = join(peers, "node_modules", ".package-lock.json");

const stale =
  !existsSync(installed) ||
  statSync(installed).mtimeMs < statSync(join(peers, "package-lock.json")).mtimeMs;
if (stale) {
  console.error("bench: installing the bench-only contenders (bench/peers) …");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: peers,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    console.error("bench: could not install bench/peers; the suites that need them print NOT RUN");
    process.exit(0);
  }
}
for (const name of Object.keys(dependencies)) {
  const link = join(bench, "node_modules", name);
  rmSync(link, { recursive: true, force: true });
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(relative(dirname(link), join(peers, "node_modules", name)), link, "dir");
}
