/**
 * Routing family, the vault config at initialisation (docs/routing.md,
 * "Initialising a datastore" and "Vault directories"):
 * - initialising writes the default vault config through the vault
 *   repository: on format 3 one `definition.create` commit in
 *   `config--vault--default`, a read model equal to the documents; on
 *   format 2 a document and its route-1 signal, no builder run, and the
 *   gate's golden recording unchanged after it; never written twice;
 * - a vault's directory settings are stored relative to the datastore's
 *   root, and one outside it is refused before anything is stored, staged or
 *   written;
 * - no byte of the datastore, the commit log or the read model holds the
 *   test's temporary directory after a workload of initialisation and vault
 *   configs given absolute directories inside the root.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { configPartition } from "@runledger/core/commit-log";
import {
  bindUnit,
  type Datastore,
  DEFAULT_VAULT_CONFIG,
  DEFAULT_VAULT_NAME,
  type RouteRecord,
  VaultConfigRepository,
  WorkflowRunRepository,
} from "@runledger/core/datastore";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { newLog, newModel } from "./commit-log-fixtures.js";
import {
  datastoreStore,
  differences,
  MemoryVault,
  ROUTING_GOLDEN,
  RouteRecorder,
  runScenario,
  SECRET_VALUES,
  scanDatabaseFiles,
  spyOnBuilders,
  stageScenarioOnV3,
} from "./routing-fixtures.js";

const DEFAULT_PATH = `${configPartition("vault", DEFAULT_VAULT_NAME)}/definition.json`;
/** The default vault config as the datastore stores it. */
const DEFAULT_DOCUMENT = JSON.stringify({ ...DEFAULT_VAULT_CONFIG, secrets: [] });

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

/** Directories that leave the root, for a datastore whose root is `root`. */
function outsideRoot(root: string): string[] {
  return [
    "/etc/runledger-keys",
    `${root}-other/keys`,
    `${root}/../keys`,
    "../keys",
    "keys/../../keys",
    "C:\\runledger\\keys",
    "\\\\server\\share\\keys",
    "~/keys",
  ];
}

/** The settings of each vault config the datastore holds, by vault name. */
async function storedSettings(datastore: Datastore): Promise<Record<string, unknown>> {
  const settings: Record<string, unknown> = {};
  for (const document of await datastore.documents()) {
    const match = /^config--vault--(.+)\/definition\.json$/.exec(document.path);
    if (match !== null) settings[match[1]!] = JSON.parse(text(document.bytes)).settings;
  }
  return settings;
}

export function describeRoutingVault(fx: Fixtures): void {
  describe("routing: the vault config at initialisation, and vault directories", () => {
    for (const namespace of [undefined, "team-a"]) {
      it(`initialising a v3 datastore${namespace ? " (namespaced)" : ""} commits its default vault config: one definition.create in config--vault--default, no secret, a read model equal to the documents`, async () => {
        const recorder = new RouteRecorder();
        const { log } = await newLog(fx);
        const datastore = await datastoreStore(fx).open(fx.location(), {
          create: { format: 3 },
          observer: recorder,
          initialize: { log },
          ...(namespace === undefined ? {} : { namespace }),
        });
        const documents = await datastore.documents();
        expect(documents.map((d) => [d.path, text(d.bytes)])).toEqual([
          [DEFAULT_PATH, DEFAULT_DOCUMENT],
        ]);
        const stored = await new VaultConfigRepository(datastore, new MemoryVault()).get(
          DEFAULT_VAULT_NAME,
        );
        expect(stored).toEqual({
          type: "local_encryption",
          settings: { baseDir: "vault" },
          secrets: [],
        });

        const commits = await log.read((r) => r.commits());
        expect(commits.map((c) => [c.partition, c.intent, c.opCount])).toEqual([
          [configPartition("vault", DEFAULT_VAULT_NAME), "definition.create", 1],
        ]);
        const [op] = await log.read((r) => r.ops(commits[0]!.commitId));
        expect(op).toMatchObject({ op: "put", key: "definition.json", expect: "absent" });
        expect(op!.sha256).toBe(documents[0]!.sha256);
        const content = await log.read((r) => r.content(op!.sha256!));
        expect(text(content!)).toBe(DEFAULT_DOCUMENT);
        expect(await log.read((r) => r.pendingUnits())).toEqual([]);

        const { model } = await newModel(fx);
        await model.catchUp(log);
        expect(await differences({ datastore, model, recorder })).toEqual([]);
        // Staged, not signalled; and the hook is unbound again: a v3 write now is unscoped.
        expect(recorder.records.filter((r) => r.route === "signal")).toEqual([]);
        expect(await datastore.syncChanges()).toEqual([]);
        const runs = new WorkflowRunRepository(datastore);
        const unscoped = await failureOf(() => runs.create({ workflowId: "wf", runId: "r" }, {}));
        expect(unscoped.code).toBe("unscoped_write_refused");
      });
    }

    it("initialising again (another handle, another store) writes nothing: no commit, no staging, no signal, the documents unchanged", async () => {
      const location = fx.location();
      const { log } = await newLog(fx);
      const firstStore = datastoreStore(fx);
      const first = await firstStore.open(location, {
        create: { format: 3 },
        initialize: { log },
      });
      const documents = await first.documents();
      const lastCommit = (await log.read((r) => r.info())).lastCommitId;
      expect(lastCommit).toBe(1);
      // Another handle of the same store, then a store of its own once the first has
      // closed (a backend without WAL shared memory lets one connection own the file).
      const stores = [firstStore, datastoreStore(fx)];
      for (const store of stores) {
        if (store !== firstStore) await firstStore.close();
        const recorder = new RouteRecorder();
        const spy = spyOnBuilders();
        const again = await store.open(location, {
          create: { format: 3 },
          observer: recorder,
          initialize: { log, builders: spy.builders },
        });
        expect(recorder.records.filter((r) => r.route !== "read")).toEqual([]);
        expect([...spy.calls]).toEqual([]);
        expect(await again.documents()).toEqual(documents);
      }
      expect((await log.read((r) => r.info())).lastCommitId).toBe(lastCommit);
      expect(await log.read((r) => r.pendingUnits())).toEqual([]);
    });

    it("on v2, initialising writes the default vault config and its route-1 signal as any v2 write does; no builder runs; the scenario after it records exactly the golden file", async () => {
      const golden = JSON.parse(await readFile(ROUTING_GOLDEN, "utf8")) as {
        records: RouteRecord[];
      };
      const location = fx.location();
      const recorder = new RouteRecorder();
      const spy = spyOnBuilders();
      const store = datastoreStore(fx);
      const datastore = await store.open(location, {
        create: true,
        observer: recorder,
        initialize: { builders: spy.builders },
      });
      expect(datastore.format).toBe(2);
      expect([...spy.calls], "builders never run on v2").toEqual([]);
      const init = [...recorder.records];
      expect(init).toEqual([
        { route: "read", caller: "vault-definitions.get", kind: "get", key: DEFAULT_PATH },
        { route: "read", caller: "vault-definitions.get", kind: "get", key: DEFAULT_PATH },
        { route: "read", caller: "vault-definitions.create", kind: "digest", key: DEFAULT_PATH },
        { route: "signal", caller: "vault-definitions.create", kind: "write", key: DEFAULT_PATH },
        { route: "stage", caller: "vault-definitions.create", kind: "skipped" },
      ]);
      expect((await datastore.documents()).map((d) => [d.path, text(d.bytes)])).toEqual([
        [DEFAULT_PATH, DEFAULT_DOCUMENT],
      ]);
      expect(await datastore.syncChanges()).toEqual([{ kind: "write", path: DEFAULT_PATH }]);

      // v2 does not change beyond that write: the scenario after it records the golden file.
      await runScenario(datastore, { builders: spy.builders });
      expect([...spy.calls]).toEqual([]);
      expect(recorder.records.slice(init.length)).toEqual(golden.records);
      const signals = recorder.records.filter((r) => r.route === "signal");
      expect((await datastore.syncChanges()).map((s) => [s.kind, s.path])).toEqual(
        signals.map((s) => [s.kind, (s as { key: string }).key]),
      );

      // Initialising again reads the config once, and writes and signals nothing.
      const synced = await datastore.syncChanges();
      await store.close();
      const again = new RouteRecorder();
      const reopened = await datastoreStore(fx).open(location, {
        observer: again,
        initialize: true,
      });
      expect(again.records).toEqual([init[0]]);
      expect(await reopened.syncChanges()).toEqual(synced);
    });

    it("a v3 initialisation with no commit log is refused before anything is written (no file created)", async () => {
      const fresh = fx.location();
      const error = await failureOf(() =>
        datastoreStore(fx).open(fresh, { create: { format: 3 }, initialize: true }),
      );
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toMatch(/initialize: \{ log \}/);
      if (fx.files) expect(existsSync(fresh)).toBe(false);

      const location = fx.location();
      const store = datastoreStore(fx);
      await store.open(location, { create: { format: 3 } });
      const refused = await failureOf(() => store.open(location, { initialize: true }));
      expect(refused.code).toBe("invalid_argument");
      const reopened = await store.open(location);
      expect(await reopened.documents()).toEqual([]);
    });

    it("a default vault config the log never received (its unit never committed) is put back and committed on the next initialisation", async () => {
      const location = fx.location();
      const { log } = await newLog(fx);
      const store = datastoreStore(fx);
      const datastore = await store.open(location, { create: { format: 3 } });
      const unit = await log.begin();
      const unbind = bindUnit(datastore.hook, unit);
      await new VaultConfigRepository(datastore, new MemoryVault()).save(DEFAULT_VAULT_NAME, {
        type: "local_encryption",
        settings: { baseDir: "never-landed" },
      });
      unbind();
      // The unit is neither committed nor abandoned: the document is ahead of the log.
      await datastore.release();
      expect((await log.read((r) => r.info())).lastCommitId).toBe(0);

      const recorder = new RouteRecorder();
      const reopened = await store.open(location, { observer: recorder, initialize: { log } });
      expect((await reopened.documents()).map((d) => [d.path, text(d.bytes)])).toEqual([
        [DEFAULT_PATH, DEFAULT_DOCUMENT],
      ]);
      const commits = await log.read((r) => r.commits());
      expect(commits.map((c) => [c.intent, c.partition])).toEqual([
        ["definition.create", configPartition("vault", DEFAULT_VAULT_NAME)],
      ]);
      const { model } = await newModel(fx);
      await model.catchUp(log);
      expect(await differences({ datastore: reopened, model, recorder })).toEqual([]);
    });

    it("a new datastore initialised against a log that holds the default vault config takes the log's, committing nothing", async () => {
      const { log } = await newLog(fx);
      await datastoreStore(fx).open(fx.location(), {
        create: { format: 3 },
        initialize: { log },
      });
      const recorder = new RouteRecorder();
      const second = await datastoreStore(fx).open(fx.location(), {
        create: { format: 3 },
        observer: recorder,
        initialize: { log },
      });
      expect((await second.documents()).map((d) => [d.path, text(d.bytes)])).toEqual([
        [DEFAULT_PATH, DEFAULT_DOCUMENT],
      ]);
      expect((await log.read((r) => r.info())).lastCommitId).toBe(1);
      expect(recorder.records.filter((r) => r.route !== "read")).toEqual([]);
    });

    // A vault directory is a path relative to the directory the datastore's file is in.
    const onDisk = fx
      .needs("local")
      .because(
        "a vault directory lies beside the datastore's file; a database on a server has no directory",
      );
    for (const format of [3, 2] as const) {
      onDisk.it(
        `on v${format}, a vault directory outside the datastore's root is refused with vault_path_outside_root before any secret, document, staging or signal`,
        async () => {
          const recorder = new RouteRecorder();
          const { log } = await newLog(fx);
          const datastore = await datastoreStore(fx).open(fx.location(), {
            create: format === 3 ? { format: 3 } : true,
            observer: recorder,
            initialize: { log },
          });
          const root = datastore.root!;
          expect(root).toBe(dirname(datastore.location));
          const vault = new MemoryVault();
          const vaults = new VaultConfigRepository(datastore, vault);
          const unit = format === 3 ? await log.begin() : undefined;
          const unbind = unit === undefined ? () => {} : bindUnit(datastore.hook, unit);
          // An existing vault, so the refusal of an edit is checked as well as of a create.
          await vaults.save("kept", { type: "local_encryption", settings: { baseDir: "kept" } });
          const documents = await datastore.documents();
          const signals = await datastore.syncChanges();
          const records = recorder.records.length;
          const codes: [string, string, string][] = [];
          for (const baseDir of outsideRoot(root)) {
            for (const name of ["new", "kept"]) {
              const error = await failureOf(() =>
                vaults.save(name, {
                  type: "local_encryption",
                  settings: { baseDir },
                  secrets: { token: SECRET_VALUES[0]! },
                }),
              );
              codes.push([baseDir, name, error.code]);
              expect(error.message).toMatch(/relative to the datastore's root/);
              expect(error.details).toMatchObject({ field: "baseDir", directory: baseDir });
            }
          }
          expect(codes).toEqual(
            outsideRoot(root).flatMap((d) => [
              [d, "new", "vault_path_outside_root"],
              [d, "kept", "vault_path_outside_root"],
            ]),
          );
          unbind();
          expect(vault.secrets.size, "no secret reached the provider").toBe(0);
          expect(recorder.records.slice(records), "no read, signal or staging").toEqual([]);
          expect(await datastore.documents()).toEqual(documents);
          expect(await datastore.syncChanges()).toEqual(signals);
          if (unit !== undefined) {
            let staged = 0;
            for await (const _ of unit.stagedOps()) staged++;
            expect(staged, "only the kept vault was staged").toBe(1);
            expect((await unit.commit()).refused).toEqual([]);
            expect(await storedSettings(datastore)).toEqual({
              default: { baseDir: "vault" },
              kept: { baseDir: "kept" },
            });
          }
        },
      );
    }

    onDisk.it(
      "a vault directory inside the root is stored relative to it, in the document, the log and the read model",
      async () => {
        const staged = await stageScenarioOnV3(fx, { initialize: true });
        const { datastore, unit, log, recorder } = staged;
        const root = datastore.root!;
        const unbind = bindUnit(datastore.hook, unit);
        const vaults = new VaultConfigRepository(datastore, new MemoryVault());
        const given: Record<string, string> = {
          absolute: `${root}/keys/absolute`,
          root,
          folded: `${root}/a/../keys//folded/.`,
          relative: "./keys/relative",
          windows: "keys\\windows",
        };
        for (const [name, baseDir] of Object.entries(given)) {
          await vaults.save(name, { type: "local_encryption", settings: { baseDir } });
        }
        await vaults.save("renamed-from", {
          type: "local_encryption",
          settings: { baseDir: `${root}/keys/renamed` },
        });
        await vaults.rename("renamed-from", "renamed");
        unbind();
        const expected = {
          default: { baseDir: "vault" },
          absolute: { baseDir: "keys/absolute" },
          root: { baseDir: "." },
          folded: { baseDir: "keys/folded" },
          relative: { baseDir: "keys/relative" },
          windows: { baseDir: "keys/windows" },
          renamed: { baseDir: "keys/renamed" },
          // The scenario's own vault, whose settings hold no directory.
          v2: { keyFile: ".keys/v1", rotated: true },
        };
        expect(await storedSettings(datastore)).toEqual(expected);
        const result = await unit.commit();
        expect(result.refused).toEqual([]);
        const { model } = await newModel(fx);
        await model.catchUp(log);
        expect(await differences({ datastore, model, recorder, result })).toEqual([]);
        // What the log holds for each vault is the document: the relative form.
        for (const document of await datastore.documents()) {
          if (!document.path.startsWith("config--vault--")) continue;
          const [partition, key] = [document.path.split("/")[0]!, "definition.json"];
          const landed = await log.read((r) => r.landed(partition, key));
          const bytes = landed.state === "present" ? landed.bytes : undefined;
          expect(text(bytes!), document.path).toBe(text(document.bytes));
          expect(text(bytes!)).not.toContain(root);
        }
      },
    );

    fx.needs("files").it(
      "no byte of the datastore, the commit log or the read model holds the test's temporary directory, after initialising and writing vault configs given absolute directories",
      async () => {
        // v3: initialised, the scenario, vault configs given absolute directories inside the
        // root, a rename — staged through a unit that spills, committed, caught up.
        const staged = await stageScenarioOnV3(fx, {
          initialize: true,
          unit: { spillOps: 4 },
          vault: new MemoryVault(),
        });
        const root = staged.datastore.root!;
        const temporary = dirname(staged.datastore.location);
        expect(root).toBe(temporary);
        const workload = async (datastore: Datastore) => {
          const vaults = new VaultConfigRepository(datastore, new MemoryVault());
          for (const name of ["alpha", "beta"]) {
            await vaults.save(name, {
              type: "local_encryption",
              settings: { baseDir: `${root}/vaults/${name}` },
              secrets: { token: SECRET_VALUES[0]! },
            });
          }
          await vaults.save("alpha", {
            type: "local_encryption",
            settings: { baseDir: `${root}/vaults/alpha-rotated` },
          });
          await vaults.rename("beta", "gamma");
        };
        const unbind = bindUnit(staged.datastore.hook, staged.unit);
        await workload(staged.datastore);
        unbind();
        expect((await staged.unit.commit()).refused).toEqual([]);
        const { store: models, model, location: modelLocation } = await newModel(fx);
        await model.catchUp(staged.log);
        expect(await differences({ ...staged, model })).toEqual([]);
        // v2: initialised, the scenario, the same vault configs.
        const v2Store = datastoreStore(fx);
        const v2 = await v2Store.open(fx.location(), { create: true, initialize: true });
        await runScenario(v2, { vault: new MemoryVault() });
        await workload(v2);

        // The control: a document stored from an absolute directory, which the scan must see.
        const alpha = (await staged.datastore.documents()).find(
          (d) => d.path === `${configPartition("vault", "alpha")}/definition.json`,
        );
        expect(text(alpha!.bytes)).toContain("vaults/alpha-rotated");
        const locations = [...staged.locations, modelLocation, v2.location];
        await staged.close();
        await models.close();
        await v2Store.close();

        const needles = [...new Set([temporary, root]), ...SECRET_VALUES];
        const scan = await scanDatabaseFiles(locations, needles);
        const control = Buffer.from(alpha!.bytes);
        for (const location of locations) {
          expect(scan.bytes.get(location)!.includes(control), `control in ${location}`).toBe(true);
        }
        expect(scan.found).toEqual([]);
      },
    );
  });
}
