/**
 * The page of `runledger serve` in a real browser (headless Chromium, the
 * system's, driven by playwright-core): a person's clicks through a demo
 * run — summary, timeline pages and kind filter, an event's tree, a file,
 * a diff, a download, a reload — then a directory's runs, and a run another
 * process writes meanwhile. Screenshots of each step are saved in the
 * test's temporary directory (printed at the end); UPDATE_SCREENSHOT=1
 * also writes the README's docs/serve.png from the same flow.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeDriver } from "@runledger/adapter-node";
import { RunStore } from "@runledger/core";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumMissing, launch } from "./support/browser.js";
import { DETERMINISTIC, runledger, serving, snapshot } from "./support/serve.js";

const SLOW = { timeout: 300_000 };
/** How long the page may take to show something on a loaded machine. */
const WAIT_MS = 60_000;
const readme = fileURLToPath(new URL("../../../docs/serve.png", import.meta.url));

let dir: string;
let shots: string;
let demoDir: string;
let demoFile: string;
let browser: BrowserContext;

/** A new tab that records every script error and failed load, for the end of the test to check. */
async function open(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  await page.goto(url);
  return { page, problems };
}

/** Waits until an element matching `selector` shows `text`, and answers its whole text. */
async function shown(page: Page, selector: string, text: string | RegExp): Promise<string> {
  const found = page.locator(selector).filter({ hasText: text }).first();
  await found.waitFor();
  return (await found.textContent()) ?? "";
}

/** The sequences the timeline lists now. */
function sequences(page: Page): Promise<number[]> {
  return page.$$eval("#timeline tbody tr[data-sequence]", (rows) =>
    rows.map((row) => Number(row.getAttribute("data-sequence"))),
  );
}

/** The diff view's rows as [change, path], once the row of `path` is shown. */
async function diffChanges(page: Page, path: string): Promise<(string | null)[][]> {
  await page.locator(`#diff-result tr[data-path="${path}"]`).waitFor();
  return page.$$eval("#diff-result tr", (rows) =>
    rows.map((row) => [row.getAttribute("data-change"), row.getAttribute("data-path")]),
  );
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe.skipIf(chromiumMissing !== undefined)(
  `runledger serve in Chromium${chromiumMissing === undefined ? "" : ` (skipped: ${chromiumMissing})`}`,
  SLOW,
  () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "runledger-serve-browser-"));
      shots = join(dir, "screenshots");
      mkdirSync(shots);
      demoDir = join(dir, "demo");
      demoFile = join(demoDir, "demo.db");
      expect(runledger(["demo", demoDir], DETERMINISTIC).code).toBe(0);
      browser = await launch(join(dir, "profile"));
    }, SLOW.timeout);

    afterAll(async () => {
      await browser?.close();
      // The screenshots stay for a look (a failure's especially); the runs and the profile go.
      for (const name of readdirSync(dir)) {
        if (name !== "screenshots") rmSync(join(dir, name), { recursive: true, force: true });
      }
      console.info(`runledger serve screenshots: ${shots}`);
    });

    it("a click through a demo run: summary, timeline, tree, file, diff, download, reload; the file stays byte-identical", async () => {
      const before = snapshot(demoDir);
      await serving([demoFile], async (server) => {
        const { page, problems } = await open(server.url);

        // The run: status, stop reason, and the deep check's result.
        expect(await shown(page, "#status", "completed")).toBe("completed");
        expect(await shown(page, "#stop-reason", /./)).toBe("stopped by journal event 39");
        expect(await shown(page, "#verify", /^ok/)).toBe(
          "ok (39 events, 49 objects, 0 pieces, 38 roots)",
        );
        await shown(page, "#page-position", "events 1–25");
        expect(await sequences(page)).toStrictEqual(range(1, 25));
        await screenshot(page, "1-run");

        // Paging, then the kind filter and the page size.
        await page.click("#page-next");
        await shown(page, "#page-position", "events 26–39");
        expect(await sequences(page)).toStrictEqual(range(26, 39));
        expect(await page.isDisabled("#page-next")).toBe(true);
        await page.click("#page-first");
        await shown(page, "#page-position", "events 1–25");
        await page
          .locator('#kind-filter option[value="run.completed"]')
          .waitFor({ state: "attached" });
        await page.selectOption("#kind-filter", "run.completed");
        await shown(page, "#page-position", "events 39–39");
        expect(await sequences(page)).toStrictEqual([39]);
        await screenshot(page, "2-filtered");
        await page.selectOption("#kind-filter", "*");
        await page.selectOption("#page-size", "10");
        await shown(page, "#page-position", "events 1–10");
        expect(await sequences(page)).toStrictEqual(range(1, 10));

        // An event: the tree at its root, and what its step changed.
        await page.click('#timeline tr[data-sequence="4"]');
        expect(await shown(page, "#tree-at", "after event 4")).toMatch(
          /^after event 4 — root [0-9a-f]{12}$/,
        );
        const top = await page.$$eval("#tree .tree > li", (items) =>
          items.map((item) => item.getAttribute("data-path")),
        );
        expect(top).toStrictEqual(["analysis", "inputs", "plan.json"]);
        expect(await diffChanges(page, "tmp/doc-01.tokens")).toStrictEqual([
          ["added", "analysis/doc-01.json"],
          ["removed", "tmp/doc-01.tokens"],
        ]);

        // A file in that tree, pretty-printed.
        await page.click('#tree li[data-path="analysis"] > button');
        await page.click('#tree li[data-path="analysis/doc-01.json"] button');
        expect(await shown(page, "#file-path", "analysis/doc-01.json")).toBe(
          "analysis/doc-01.json",
        );
        const analysis = await shown(page, "#file-content", '"document": "doc-01"');
        expect(JSON.parse(analysis)).toMatchObject({ document: "doc-01", lines: 6 });
        expect(analysis.split("\n").length).toBeGreaterThan(5);
        await screenshot(page, "3-event-tree-file");
        if (process.env.UPDATE_SCREENSHOT === "1")
          await page.screenshot({ path: readme, fullPage: true });

        // Two clicks in quick succession: the last one is what the tree and the diff show.
        await Promise.all([
          page.click('#timeline tr[data-sequence="5"]'),
          page.click('#timeline tr[data-sequence="7"]'),
        ]);
        await shown(page, "#tree-at", "after event 7");
        await page.locator('#diff-result tr[data-path="tmp/doc-02.tokens"]').waitFor();
        expect(await page.inputValue("#diff-from")).toBe("6");
        expect(
          await page.$$eval("#timeline tr.selected", (rows) =>
            rows.map((row) => row.getAttribute("data-sequence")),
          ),
        ).toStrictEqual(["7"]);

        // A diff between any two events, and a file opened from it.
        await page.fill("#diff-from", "1");
        await page.fill("#diff-to", "39");
        await page.click("#diff-show");
        expect(await shown(page, "#diff-count", "25 file(s) differ")).toBe("25 file(s) differ");
        const added = await page.$$eval(
          '#diff-result tr[data-change="added"]',
          (rows) => rows.length,
        );
        expect(added).toBe(25);
        await page.click('#diff-result tr[data-path="report.md"] button');
        expect(await shown(page, "#file-content", "# Demo report")).toMatch(
          /^# Demo report\n\n\| document \|/,
        );
        await screenshot(page, "4-diff-file");

        // The download is the file's bytes as stored.
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.click("#file-download"),
        ]);
        expect(download.suggestedFilename()).toBe("report.md");
        const downloaded = readFileSync((await download.path())!);
        expect(
          downloaded.equals(Buffer.from(runledger(["cat", demoFile, "report.md"]).stdout)),
        ).toBe(true);

        // A reload shows the same place: the event, the diff, the file, the page size.
        await page.reload();
        await shown(page, "#file-path", "report.md");
        await shown(page, "#diff-count", "25 file(s) differ");
        await shown(page, "#tree-at", "after event 7");
        await shown(page, "#page-position", "events 1–10");
        expect(problems).toStrictEqual([]);
        await page.close();
      });
      expect(snapshot(demoDir)).toStrictEqual(before);
    });

    it("a directory: its runs listed, each opened by a click, and back to the list", async () => {
      const home = mkdtempSync(join(dir, "runs-"));
      copyFileSync(demoFile, join(home, "first.db"));
      const store = new RunStore({ driver: nodeDriver() });
      const lease = await store.open(join(home, "second.db"), {
        create: { workflowId: "second-flow", runId: "second" },
      });
      await lease.transact((tx) => tx.workspace.apply({ put: { "only.txt": "one file" } }));
      await lease.release();
      await store.close();
      const before = snapshot(home);
      await serving([home], async (server) => {
        const { page, problems } = await open(server.url);
        await page.locator('#runs tr[data-key="second.db"]').waitFor();
        const keys = await page.$$eval("#runs tbody tr", (rows) =>
          rows.map((row) => row.getAttribute("data-key")),
        );
        expect(keys.sort()).toStrictEqual(["first.db", "second.db"]);
        expect(await shown(page, '#runs tr[data-key="second.db"]', "running")).toContain(
          "second-flow / second",
        );
        await screenshot(page, "5-directory");
        await page.click('#runs a[href="#run=second.db"]');
        expect(await shown(page, "#status", "running")).toBe("running");
        expect(await shown(page, "#stop-reason", /./)).toBe("no stop reason");
        await page.locator('#tree li[data-path="only.txt"]').waitFor();
        await page.click("#home");
        await page.locator('#runs tr[data-key="first.db"]').waitFor();
        await page.click('#runs a[href="#run=first.db"]');
        expect(await shown(page, "#status", "completed")).toBe("completed");
        expect(problems).toStrictEqual([]);
        await page.close();
      });
      expect(snapshot(home)).toStrictEqual(before);
    });

    it("a run another process is writing shows its new events on refresh and on reload", async () => {
      const home = mkdtempSync(join(dir, "live-"));
      const file = join(home, "live.db");
      const store = new RunStore({ driver: nodeDriver() });
      const lease = await store.open(file, { create: { workflowId: "live", runId: "live-1" } });
      try {
        await lease.transact((tx) =>
          tx.workspace.apply(
            { put: { "state.json": '{"turn":1}' } },
            { event: { kind: "turn", turn: 1 } },
          ),
        );
        await serving([file], async (server) => {
          const { page, problems } = await open(server.url);
          await shown(page, "#page-position", "events 1–1");
          await lease.transact((tx) =>
            tx.workspace.apply(
              { put: { "state.json": '{"turn":2}', "notes.txt": "turn two" } },
              { event: { kind: "turn", turn: 2 } },
            ),
          );
          await page.click("#refresh");
          await shown(page, "#page-position", "events 1–2");
          expect(await sequences(page)).toStrictEqual([1, 2]);
          await lease.transact((tx) => tx.journal.append({ kind: "note", text: "third" }));
          await page.reload();
          await shown(page, "#page-position", "events 1–3");
          expect(await shown(page, '#timeline tr[data-sequence="3"] .kind', "note")).toBe("note");
          await page.click('#timeline tr[data-sequence="2"]');
          expect(await diffChanges(page, "state.json")).toStrictEqual([
            ["added", "notes.txt"],
            ["modified", "state.json"],
          ]);
          expect(await shown(page, "#status", "running")).toBe("running");
          await screenshot(page, "6-live");
          expect(problems).toStrictEqual([]);
          await page.close();
        });
      } finally {
        await lease.release();
        await store.close();
      }
    });
  },
);
