/**
 * The real browser the page tests drive: Debian's Chromium at
 * /usr/bin/chromium (`.ci/run` installs it when missing), through
 * playwright-core, which downloads no browser of its own. Each session gets
 * a fresh profile under the test's temporary directory.
 */
import { existsSync } from "node:fs";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why the browser tests cannot run here, or undefined when they can. */
export const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `Chromium not installed: ${CHROMIUM} missing; .ci/run installs it`;

/** Flags for a headless Chromium run as root in a container with no network beyond loopback. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A browser with its own profile in `profile`; close it when done. */
export function launch(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
    acceptDownloads: true,
  });
}
