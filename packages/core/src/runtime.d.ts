/**
 * The few web-standard globals core relies on. Every target runtime (Node,
 * Deno, Bun, browsers, workers) has them; declaring them here keeps core's
 * type check free of both the DOM and Node type libraries.
 */
declare class TextEncoder {
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  decode(input?: Uint8Array): string;
}
type TimerHandle = { readonly __timer?: never } | number;
declare function setTimeout(callback: () => void, ms?: number): TimerHandle;
declare function clearTimeout(handle: TimerHandle | undefined): void;
declare const crypto: { getRandomValues<T extends Uint8Array>(array: T): T };
