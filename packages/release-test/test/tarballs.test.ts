/**
 * docs/packages.md lists what each published tarball holds; this test packs
 * each package (`npm pack --dry-run --json`, from the built dist/) and holds
 * the list to it, both ways: nothing ships that the docs do not name, and
 * nothing the docs name is missing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ok } from "./npm.js";

const repo = fileURLToPath(new URL("../../..", import.meta.url));
const docs = readFileSync(join(repo, "docs", "packages.md"), "utf8");

/** The documented entries of one package's tarball (`*` matches a chunk hash). */
function documented(name: string): string[] {
  const heading = `### \`${name}\` tarball\n\n\`\`\`text\n`;
  const start = docs.indexOf(heading);
  if (start === -1) throw new Error(`docs/packages.md has no "${name}" tarball section`);
  const body = docs.slice(start + heading.length, docs.indexOf("```", start + heading.length));
  return body.split("\n").filter((line) => line.trim() !== "");
}

const matcher = (entry: string) =>
  new RegExp(
    `^${entry
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join("[A-Za-z0-9_-]+")}$`,
  );

describe("docs/packages.md names every file of every tarball", () => {
  it.each(["core", "adapter-node", "adapter-libsql", "conformance", "langgraph"])(
    "@runledger/%s",
    async (dir) => {
      const packed = await ok("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: join(repo, "packages", dir),
      });
      const [report] = JSON.parse(packed.stdout) as [{ name: string; files: { path: string }[] }];
      const files = report.files.map((file) => file.path).sort();
      const entries = documented(report.name);
      const unlisted = files.filter((file) => !entries.some((entry) => matcher(entry).test(file)));
      const absent = entries.filter((entry) => !files.some((file) => matcher(entry).test(file)));
      expect({ unlisted, absent }).toEqual({ unlisted: [], absent: [] });
    },
  );
});
