/**
 * The rule that keeps absolute paths out of vault configs (docs/routing.md,
 * "Vault directories"): each directory setting is stored relative to the
 * datastore's root, and one that names a place outside it is refused with
 * `vault_path_outside_root`. The rule is lexical and pure, so every case —
 * POSIX, Windows-style, `..`, home, a datastore with no root — is checked
 * here directly; the conformance suite checks it through the repository.
 */
import { describe, expect, it } from "vitest";
import type { DatabaseAccess } from "../src/commit-log/context.js";
import { isRunledgerError } from "../src/port/errors.js";
import { Datastore } from "../src/repositories/datastore/datastore.js";
import { relativeDirectory, storedVaultSettings } from "../src/repositories/vault-paths.js";

const ROOT = "/srv/project";

function refusal(directory: string, root: string | undefined): string {
  try {
    relativeDirectory("v", "baseDir", directory, root);
  } catch (error) {
    if (isRunledgerError(error)) return error.code;
    throw error;
  }
  return "stored";
}

describe("vault directories", () => {
  it("an absolute directory inside the root is stored relative to it; the root itself is .", () => {
    expect(relativeDirectory("v", "baseDir", `${ROOT}/keys/v1`, ROOT)).toBe("keys/v1");
    expect(relativeDirectory("v", "baseDir", `${ROOT}/`, ROOT)).toBe(".");
    expect(relativeDirectory("v", "baseDir", ROOT, ROOT)).toBe(".");
    expect(relativeDirectory("v", "baseDir", `${ROOT}/a/../b//c/.`, ROOT)).toBe("b/c");
    expect(relativeDirectory("v", "baseDir", "/anything/below", "/")).toBe("anything/below");
  });

  it("a relative directory is stored normalized, backslashes read as separators", () => {
    expect(relativeDirectory("v", "baseDir", "keys", ROOT)).toBe("keys");
    expect(relativeDirectory("v", "baseDir", "./keys/./v1/", ROOT)).toBe("keys/v1");
    expect(relativeDirectory("v", "baseDir", "a/../b", ROOT)).toBe("b");
    expect(relativeDirectory("v", "baseDir", "keys\\v2", ROOT)).toBe("keys/v2");
    expect(relativeDirectory("v", "baseDir", ".", ROOT)).toBe(".");
    // With no root (a datastore on a server) a relative directory is still stored.
    expect(relativeDirectory("v", "baseDir", "keys/../vault", undefined)).toBe("vault");
  });

  it("every directory that leaves the root is refused with vault_path_outside_root", () => {
    const outside = [
      "/etc/keys",
      "/srv/project-other/keys", // shares the root's spelling, not its directory
      "/srv",
      `${ROOT}/../other`,
      "..",
      "../keys",
      "keys/../../x",
      "a/b/../../../x",
      "..\\keys",
      "C:\\keys",
      "C:/keys",
      "c:keys",
      "\\\\server\\share\\keys",
      "//server/share",
      "\\etc\\keys",
      "~",
      "~/keys",
      "~someone/keys",
    ];
    expect(outside.map((d) => [d, refusal(d, ROOT)])).toEqual(
      outside.map((d) => [d, "vault_path_outside_root"]),
    );
    // A datastore with no root takes no absolute directory at all.
    expect(refusal(`${ROOT}/keys`, undefined)).toBe("vault_path_outside_root");
    expect(refusal("/", undefined)).toBe("vault_path_outside_root");
  });

  it("the refusal says what to do and names the setting", () => {
    try {
      relativeDirectory("team", "baseDir", "/etc/keys", ROOT);
      expect.fail("refused");
    } catch (error) {
      expect(isRunledgerError(error, "vault_path_outside_root")).toBe(true);
      const refused = error as Error & { details?: Record<string, unknown> };
      expect(refused.message).toMatch(/relative to the datastore's root/);
      expect(refused.message).toMatch(/Nothing was stored/);
      expect(refused.details).toEqual({
        vault: "team",
        field: "baseDir",
        directory: "/etc/keys",
        root: ROOT,
      });
    }
  });

  it("only a vault type's directory settings are rewritten; a malformed one is invalid_argument", () => {
    const settings = { baseDir: `${ROOT}/keys`, note: "/not/a/directory/setting", n: 1 };
    expect(storedVaultSettings("v", "local_encryption", settings, ROOT)).toEqual({
      baseDir: "keys",
      note: "/not/a/directory/setting",
      n: 1,
    });
    expect(storedVaultSettings("v", "remote_kms", settings, ROOT)).toBe(settings);
    for (const baseDir of ["", 7, null, "a\u0000b"]) {
      let code = "stored";
      try {
        storedVaultSettings("v", "local_encryption", { baseDir }, ROOT);
      } catch (error) {
        code = isRunledgerError(error) ? error.code : String(error);
      }
      expect(code, JSON.stringify(baseDir)).toBe("invalid_argument");
    }
  });

  it("a datastore's root is the directory of its file; a datastore on a server has none", () => {
    const rootOf = (location: string) => {
      const unused = () => Promise.reject(new Error("not opened"));
      const access: DatabaseAccess = { location, transact: unused, read: unused };
      const opened = { format: 2 as const, marker: undefined };
      return new Datastore(access, opened, {}, async () => {}).root;
    };
    expect(rootOf("/srv/project/data.db")).toBe("/srv/project");
    expect(rootOf("/data.db")).toBe("/");
    for (const url of ["libsql://db.example.com", "http://127.0.0.1:8080", "wss://x/y"]) {
      expect(rootOf(url), url).toBeUndefined();
    }
  });
});
