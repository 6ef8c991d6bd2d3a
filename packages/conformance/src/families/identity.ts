/**
 * Identity family (docs/contracts.md): every spelling of one database file —
 * relative, with `..` or `.` segments, through a symlinked directory, through
 * a symlink to the file — canonicalizes to one identity: the real, absolute
 * path. A file that does not exist yet has its identity already, and asking
 * for it creates nothing.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, symlink } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { expect, it } from "vitest";
import type { Fixtures } from "../fixtures.js";

export function describeIdentity(fx: Fixtures): void {
  fx.needs("files").describe("identity", () => {
    /** scratch/real/run.db (created through the driver unless `create` is false). */
    async function layout(create = true) {
      const scratch = await fx.scratchDirectory();
      const directory = join(scratch, "real");
      await mkdir(directory);
      const file = join(directory, "run.db");
      if (create) {
        const db = await fx.open(file);
        await db.executeScript("CREATE TABLE t (x)");
        await db.close();
      }
      return { scratch, directory, file };
    }

    const canonicalize = (location: string) => fx.driver().canonicalize(location);

    it("is the real absolute path of an existing file", async () => {
      const { file } = await layout();
      const identity = await canonicalize(file);
      expect(isAbsolute(identity)).toBe(true);
      expect(identity).toBe(realpathSync(file));
    });

    it("is the same for a relative path and the absolute path", async () => {
      const { file } = await layout();
      const relativePath = relative(process.cwd(), file);
      expect(isAbsolute(relativePath)).toBe(false);
      expect(await canonicalize(relativePath)).toBe(await canonicalize(file));
    });

    it("is the same for dir/../dir/file, ./ segments and doubled slashes", async () => {
      const { directory, file } = await layout();
      const expected = await canonicalize(file);
      expect(await canonicalize(`${directory}/../real/run.db`)).toBe(expected);
      expect(await canonicalize(`${directory}/./run.db`)).toBe(expected);
      expect(await canonicalize(`${directory}//run.db`)).toBe(expected);
    });

    it("is the same through a symlink to the directory", async () => {
      const { scratch, directory, file } = await layout();
      const linked = join(scratch, "linked-dir");
      await symlink(directory, linked, "dir");
      expect(await canonicalize(join(linked, "run.db"))).toBe(await canonicalize(file));
    });

    it("is the same through a symlink to the file", async () => {
      const { scratch, file } = await layout();
      const linked = join(scratch, "linked.db");
      await symlink(file, linked, "file");
      expect(await canonicalize(linked)).toBe(await canonicalize(file));
    });

    it("exists for a file not yet created, is shared by its spellings, and creates nothing", async () => {
      const { scratch, directory, file } = await layout(false);
      const linked = join(scratch, "linked-dir");
      await symlink(directory, linked, "dir");
      const identity = await canonicalize(file);
      expect(identity).toBe(join(realpathSync(directory), "run.db"));
      expect(await canonicalize(join(linked, "run.db"))).toBe(identity);
      expect(await canonicalize(relative(process.cwd(), file))).toBe(identity);
      expect(await canonicalize(`${directory}/../real/run.db`)).toBe(identity);
      expect(existsSync(file), "canonicalize must not create the file").toBe(false);
    });

    it("does not change when the file is created", async () => {
      const { scratch, directory, file } = await layout(false);
      const linked = join(scratch, "linked-dir", "run.db");
      await symlink(directory, join(scratch, "linked-dir"), "dir");
      const before = await canonicalize(linked);
      const db = await fx.open(linked);
      await db.executeScript("CREATE TABLE t (x)");
      await db.close();
      expect(existsSync(file)).toBe(true);
      expect(await canonicalize(linked)).toBe(before);
      expect(await canonicalize(file)).toBe(before);
    });

    it("differs between two files in one directory", async () => {
      const { directory, file } = await layout();
      expect(await canonicalize(join(directory, "other.db"))).not.toBe(await canonicalize(file));
    });
  });
}
