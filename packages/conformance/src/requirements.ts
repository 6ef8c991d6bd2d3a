/**
 * How a test says what it needs. A family registers every test whatever the
 * subject declared; a test whose needs are not met is registered as skipped
 * with "needs X" in its title, and counted, so the report shows what was not
 * proven and why (never a test silently absent behind a bare `return`).
 */
import { describe, it, type TestFunction } from "vitest";
import type { Capability, ConformanceSubject } from "./subject.js";

/**
 * A capability the subject declares, or:
 * - "peers": at least one other adapter in `subject.peers`;
 * - "local": the database is not remote (`capabilities.remote` is not true).
 */
export type Need = Exclude<Capability, "remote"> | "peers" | "local";

/** Whether the subject meets one need. */
export function meets(subject: ConformanceSubject, need: Need): boolean {
  const declared = subject.capabilities ?? {};
  if (need === "peers") return (subject.peers ?? []).length > 0;
  if (need === "local") return declared.remote !== true;
  return declared[need] === true;
}

const REASON = /\[skipped: needs ([^\]]+)\]/;

/** The parts of a collected vitest task tree that the summary reads. */
export interface TaskTree {
  readonly name: string;
  readonly type: string;
  readonly mode: string;
  readonly tasks?: readonly TaskTree[];
}

/**
 * "12 conformance tests skipped — needs walSharedMemory: 8; needs peers: 4",
 * read from the titles of the skipped tests under `suite` (a test inside a
 * skipped block has its reason in the block's title), or undefined when none.
 */
export function skipSummary(suite: TaskTree): string | undefined {
  const counts = new Map<string, number>();
  const walk = (task: TaskTree, inherited: string | undefined): void => {
    const reason = REASON.exec(task.name)?.[1] ?? inherited;
    if (task.type === "test") {
      if (task.mode === "skip" && reason !== undefined) {
        counts.set(reason, (counts.get(reason) ?? 0) + 1);
      }
      return;
    }
    for (const child of task.tasks ?? []) walk(child, reason);
  };
  walk(suite, undefined);
  if (counts.size === 0) return undefined;
  let total = 0;
  const parts: string[] = [];
  for (const [reason, count] of [...counts].sort((a, b) => b[1] - a[1])) {
    total += count;
    parts.push(`needs ${reason}: ${count}`);
  }
  return `${total} conformance tests skipped — ${parts.join("; ")}`;
}

type TestBody = TestFunction;

/** `it` and `describe` for tests that need `needs`: plain when met, skipped and titled when not. */
export interface Gated {
  it(title: string, body: TestBody, timeout?: number): void;
  describe(title: string, body: () => void): void;
  /** True when every need is met (for a conditional assertion inside a test that runs anyway). */
  readonly met: boolean;
  /**
   * The same gate, saying why these tests need what they need: a skipped
   * title ends in "[skipped: needs local — why]", and the summary counts
   * them under that reason.
   */
  because(why: string): Gated;
}

/**
 * Registers tests that need every one of `needs`. When one is missing the
 * test (or every test of the describe block) is registered as skipped, its
 * title ending in "[skipped: needs a, b]", and counted for the suite's summary.
 */
export function needs(subject: ConformanceSubject, ...needed: Need[]): Gated {
  return gate(
    needed.filter((need) => !meets(subject, need)),
    undefined,
  );
}

/**
 * `it` and `describe` for tests that need something no capability names — the
 * machine or this process lacks it (a kernel counter, a user that permission
 * bits bind) — registered as skipped, "[skipped: needs what — why]", and
 * counted like the others.
 */
export function unavailable(what: string, why: string): Gated {
  return gate([what], why);
}

function gate(missing: readonly string[], why: string | undefined): Gated {
  const because = (reason: string): Gated => {
    // The summary reads the reason up to the first "]".
    if (reason.includes("]")) throw new Error(`a skip reason may not contain "]": ${reason}`);
    return gate(missing, reason);
  };
  if (missing.length === 0) {
    return {
      met: true,
      it: (title, body, timeout) => it(title, body, timeout),
      describe: (title, body) => describe(title, body),
      because,
    };
  }
  const reason = `[skipped: needs ${missing.join(", ")}${why === undefined ? "" : ` — ${why}`}]`;
  return {
    met: false,
    it: (title, body) => it.skip(`${title} ${reason}`, body),
    // Every test inside is skipped; the summary reads the reason from this title.
    describe: (title, body) => describe.skip(`${title} ${reason}`, body),
    because,
  };
}
