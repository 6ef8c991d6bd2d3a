import { describe, expect, it } from "vitest";
import { RunledgerError } from "../src/port/errors.js";
import {
  canonicalFilePath,
  checkFileOpenable,
  type FileSystemProbe,
  resolvePosix,
  splitPosix,
  syncProbe,
} from "../src/port/files.js";

/**
 * An in-memory file system: entries by absolute path, symlinks as a map from
 * a link path to its target. realpath resolves links component by component,
 * as the real one does.
 */
function fakeFileSystem(options: {
  cwd: string;
  files?: string[];
  directories?: string[];
  links?: Record<string, string>;
  /** Entries this process may not write (every other one it may). */
  readOnly?: string[];
}): FileSystemProbe & { calls: string[] } {
  const files = new Set(options.files ?? []);
  const readOnly = new Set(options.readOnly ?? []);
  const directories = new Set(["/", ...(options.directories ?? [])]);
  const links = options.links ?? {};
  const calls: string[] = [];

  function resolve(path: string): string | undefined {
    let current = "/";
    for (const segment of path.split("/").filter((s) => s !== "")) {
      let next = current === "/" ? `/${segment}` : `${current}/${segment}`;
      for (let hops = 0; links[next] !== undefined; hops++) {
        if (hops > 8) return undefined;
        next = resolvePosix(current, links[next]!);
      }
      if (!files.has(next) && !directories.has(next)) return undefined;
      current = next;
    }
    return current;
  }

  return {
    calls,
    cwd: () => options.cwd,
    async realpath(path) {
      calls.push(`realpath ${path}`);
      return resolve(path);
    },
    async kind(path) {
      calls.push(`kind ${path}`);
      const real = resolve(path);
      if (real === undefined) return undefined;
      return directories.has(real) ? "directory" : "file";
    },
    async writable(path) {
      calls.push(`writable ${path}`);
      const real = resolve(path);
      return real !== undefined && !readOnly.has(real);
    },
  };
}

describe("resolvePosix", () => {
  it("joins a relative path onto the base", () => {
    expect(resolvePosix("/work/app", "data/run.db")).toBe("/work/app/data/run.db");
  });

  it("ignores the base for an absolute path", () => {
    expect(resolvePosix("/work/app", "/srv/run.db")).toBe("/srv/run.db");
  });

  it("removes `.` segments, doubled slashes and a trailing slash", () => {
    expect(resolvePosix("/", "/a/./b//c/")).toBe("/a/b/c");
  });

  it("resolves `..` lexically, never above the root", () => {
    expect(resolvePosix("/work/app", "../other/../run.db")).toBe("/work/run.db");
    expect(resolvePosix("/", "../../etc/x")).toBe("/etc/x");
    expect(resolvePosix("/a", "..")).toBe("/");
  });
});

describe("splitPosix", () => {
  it("splits a path into its directory and base name", () => {
    expect(splitPosix("/a/b/run.db")).toStrictEqual({ directory: "/a/b", base: "run.db" });
    expect(splitPosix("/run.db")).toStrictEqual({ directory: "/", base: "run.db" });
  });
});

describe("canonicalFilePath", () => {
  it("resolves every symlink of an existing file, the file's own included", async () => {
    const fs = fakeFileSystem({
      cwd: "/home/me",
      directories: ["/home", "/home/me", "/data", "/data/runs"],
      files: ["/data/runs/real.db"],
      links: { "/home/me/runs": "/data/runs", "/data/runs/alias.db": "real.db" },
    });
    expect(await canonicalFilePath("runs/alias.db", fs)).toBe("/data/runs/real.db");
    expect(await canonicalFilePath("/home/me/runs/../runs/real.db", fs)).toBe("/data/runs/real.db");
  });

  it("resolves the directory's symlinks for a file that does not exist yet", async () => {
    const fs = fakeFileSystem({
      cwd: "/home/me",
      directories: ["/home", "/home/me", "/data", "/data/runs"],
      links: { "/home/me/runs": "/data/runs" },
    });
    expect(await canonicalFilePath("runs/new.db", fs)).toBe("/data/runs/new.db");
    expect(await canonicalFilePath("./runs//new.db", fs)).toBe("/data/runs/new.db");
  });

  it("keeps the lexical absolute path when the directory is missing", async () => {
    const fs = fakeFileSystem({ cwd: "/home/me", directories: ["/home", "/home/me"] });
    expect(await canonicalFilePath("missing/../missing/run.db", fs)).toBe(
      "/home/me/missing/run.db",
    );
  });

  it("places a new file in the root directory without a doubled slash", async () => {
    const fs = fakeFileSystem({ cwd: "/" });
    expect(await canonicalFilePath("/run.db", fs)).toBe("/run.db");
  });
});

describe("checkFileOpenable", () => {
  const fs = () =>
    fakeFileSystem({
      cwd: "/w",
      directories: ["/w", "/w/dir", "/w/locked"],
      files: ["/w/there.db", "/w/sealed.db", "/w/locked/inside.db"],
      readOnly: ["/w/sealed.db", "/w/locked"],
    });
  const writable = { create: false, readOnly: false };
  const creating = { create: true, readOnly: false };
  const readOnly = { create: false, readOnly: true };

  async function refusal(
    location: string,
    request: { create: boolean; readOnly: boolean },
  ): Promise<RunledgerError> {
    try {
      await checkFileOpenable(location, request, fs());
    } catch (error) {
      expect(error).toBeInstanceOf(RunledgerError);
      return error as RunledgerError;
    }
    return expect.fail(`${location} was accepted`);
  }

  it("refuses a file in a missing directory as cannot_open, with no cause", async () => {
    const error = await refusal("nowhere/run.db", creating);
    expect(error.code).toBe("cannot_open");
    expect(error.sqliteCode).toBe("SQLITE_CANTOPEN");
    expect(error.cause).toBeUndefined();
    expect(error.message).toContain("/w/nowhere");
  });

  it("refuses a directory as cannot_open", async () => {
    expect((await refusal("dir", creating)).code).toBe("cannot_open");
  });

  it("refuses a missing file unless asked to create it, and a read-only open never creates", async () => {
    expect((await refusal("new.db", writable)).details).toEqual({ missing: "file" });
    expect((await refusal("new.db", { create: true, readOnly: true })).code).toBe("cannot_open");
    await expect(checkFileOpenable("new.db", creating, fs())).resolves.toBeUndefined();
  });

  it("accepts an existing file whether or not creation is allowed", async () => {
    await expect(checkFileOpenable("there.db", writable, fs())).resolves.toBeUndefined();
    await expect(checkFileOpenable("/w/there.db", creating, fs())).resolves.toBeUndefined();
  });

  it("refuses a writable open of a file this process may not write as read_only, pointing to readOnly", async () => {
    for (const request of [writable, creating]) {
      const error = await refusal("sealed.db", request);
      expect(error.code).toBe("read_only");
      expect(error.sqliteCode).toBe("SQLITE_READONLY");
      expect(error.details).toEqual({ notWritable: "file" });
      expect(error.message).toContain("{ readOnly: true }");
      expect(error.message).not.toMatch(/exist/);
    }
  });

  it("refuses a writable open of a file in a directory this process may not write as read_only", async () => {
    const error = await refusal("locked/inside.db", writable);
    expect(error.code).toBe("read_only");
    expect(error.sqliteCode).toBe("SQLITE_READONLY_DIRECTORY");
    expect(error.sqlitePrimaryCode).toBe("SQLITE_READONLY");
    expect(error.details).toEqual({ notWritable: "directory" });
    expect(error.message).toContain("/w/locked");
    expect(error.message).toContain("{ readOnly: true }");
  });

  it("accepts a read-only open of a file it may not write, or in a directory it may not write", async () => {
    await expect(checkFileOpenable("sealed.db", readOnly, fs())).resolves.toBeUndefined();
    await expect(checkFileOpenable("locked/inside.db", readOnly, fs())).resolves.toBeUndefined();
  });

  it("probes an existing file once for a read-only open, and its writability for a writable one", async () => {
    const reading = fs();
    await checkFileOpenable("there.db", readOnly, reading);
    expect(reading.calls).toEqual(["kind /w/there.db"]);
    const writing = fs();
    await checkFileOpenable("there.db", writable, writing);
    expect(writing.calls).toEqual(["kind /w/there.db", "writable /w/there.db", "writable /w"]);
    const missing = fs();
    await checkFileOpenable("dir/new.db", creating, missing);
    expect(missing.calls).toEqual(["kind /w/dir/new.db", "kind /w/dir"]);
  });
});

describe("syncProbe", () => {
  const entries: Record<string, "file" | "directory"> = {
    "/data": "directory",
    "/data/a.db": "file",
  };
  const missing = () => {
    throw new Error("ENOENT");
  };
  const probe = syncProbe({
    cwd: () => "/work",
    realpath: (path) => (entries[path] === undefined ? missing() : path),
    isDirectory: (path) => (entries[path] ?? missing()) === "directory",
    checkWritable: (path) => {
      if (path !== "/data/a.db") throw new Error("EACCES");
    },
  });

  it("reports files, directories and real paths from the synchronous calls", async () => {
    expect(probe.cwd()).toBe("/work");
    expect(await probe.kind("/data")).toBe("directory");
    expect(await probe.kind("/data/a.db")).toBe("file");
    expect(await probe.realpath("/data/a.db")).toBe("/data/a.db");
    expect(await probe.writable("/data/a.db")).toBe(true);
  });

  it("reads any failure of a call as nothing there", async () => {
    expect(await probe.kind("/nowhere")).toBeUndefined();
    expect(await probe.realpath("/nowhere")).toBeUndefined();
    expect(await probe.writable("/data")).toBe(false);
  });
});
