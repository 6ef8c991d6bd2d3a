#!/usr/bin/env bash
# Proves that an adapter living in its own repository runs the conformance
# suite from the published packages alone, editing nothing here: it packs
# @runledger/core and @runledger/conformance, makes a project in a temporary
# directory outside this repository whose "adapter" is the built
# adapter-wasm module (node-sqlite3-wasm) and whose one test file calls
# describeConformance, installs the tarballs there and runs vitest.
# Child processes load the adapter by its own package name, resolved from
# the test file (subject.root = import.meta.url).
#
# Usage: npx turbo run build && bash scripts/outside-adapter-check.sh
# Needs the npm registry (vitest, node-sqlite3-wasm); takes a few minutes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/runledger-outside-XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tarballs" "$work/adapter" "$work/test"
for package in core conformance; do
  (cd "$repo/packages/$package" && npm pack --silent --pack-destination "$work/tarballs" >/dev/null)
done
# The adapter: one self-contained module (its source map is left behind).
grep -v '^//# sourceMappingURL=' "$repo/packages/adapter-wasm/dist/index.js" >"$work/adapter/index.js"
wasm_version="$(node -p "require('$repo/packages/adapter-wasm/package.json').dependencies['node-sqlite3-wasm']")"
vitest_version="$(node -p "require('$repo/package.json').devDependencies.vitest")"
cat >"$work/package.json" <<JSON
{
  "name": "outside-adapter",
  "version": "0.0.0",
  "private": true,
  "type": "module",
  "exports": { ".": "./adapter/index.js" },
  "dependencies": {
    "@runledger/core": "file:tarballs/runledger-core-0.1.0.tgz",
    "node-sqlite3-wasm": "$wasm_version"
  },
  "devDependencies": {
    "@runledger/conformance": "file:tarballs/runledger-conformance-0.1.0.tgz",
    "vitest": "$vitest_version"
  }
}
JSON
cat >"$work/vitest.config.js" <<'JS'
import { defineConfig } from "vitest/config";
export default defineConfig({ test: { testTimeout: 60_000, hookTimeout: 60_000 } });
JS
cat >"$work/test/conformance.test.js" <<'JS'
import { describeConformance, temporaryFiles } from "@runledger/conformance";
import { wasmDriver } from "outside-adapter";

describeConformance({
  name: "outside-adapter",
  driver: () => wasmDriver(),
  location: temporaryFiles("outside-adapter-"),
  capabilities: { files: true, childProcesses: true },
  root: import.meta.url,
  child: { module: "outside-adapter", exportName: "wasmDriver" },
});
JS
cd "$work"
npm install --prefer-offline --no-audit --no-fund --silent
npx vitest run
