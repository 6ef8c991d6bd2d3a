/**
 * How a list channel's elements are grouped into files. A file per element
 * made a cold read of a 1,000-message list 1,000 scattered object rows
 * (about 15 ms); one file for the whole list would make every step rewrite
 * it. Pages sit between: elements are cut into runs whose bounds depend
 * only on the list's length, so a parent and its child agree on them, and a
 * page whose elements did not change keeps its file.
 *
 * The runs: every full block of BIG elements is one page; what is left
 * after them is cut into pages of SMALL, the last one partial. A list that
 * grows by one element rewrites one small page (at most SMALL elements) and,
 * once every BIG steps, folds its small pages into one big page. A list of
 * n elements is at most n / BIG + BIG / SMALL pages.
 *
 * A page's name is its first and last element's index, eight digits each
 * (`00000000-00000063`), so `ls` shows what a page holds and names sort in
 * list order. Its bytes are, for each element: the serializer's type as a
 * 4-byte big-endian length and its UTF-8 bytes, then the element's bytes
 * as a 4-byte length and the bytes themselves.
 */
import { RunledgerError } from "@runledger/core";
import { sameBytes } from "./channels.js";

/** One serialized list element: the serializer's type and its bytes. */
export interface StoredElement {
  readonly type: string;
  readonly bytes: Uint8Array;
}

/** A page of a list: the elements `start` to `start + count - 1`, in the file `name`. */
export interface Page {
  readonly start: number;
  readonly count: number;
  readonly name: string;
}

export const BIG = 64;
export const SMALL = 8;

/** The pages of a list of `length` elements, in order. */
export function pagesOf(length: number): Page[] {
  const pages: Page[] = [];
  const big = Math.floor(length / BIG) * BIG;
  for (let start = 0; start < big; start += BIG) pages.push(page(start, BIG));
  for (let start = big; start < length; start += SMALL) {
    pages.push(page(start, Math.min(SMALL, length - start)));
  }
  return pages;
}

function page(start: number, count: number): Page {
  const digits = (index: number) => String(index).padStart(8, "0");
  return { start, count, name: `${digits(start)}-${digits(start + count - 1)}` };
}

/**
 * What turns a list stored as `previous` into `next`, page by page: the
 * pages to put (a page of `previous` holding the same elements keeps its
 * file) and the names of `previous`'s pages that `next` has no more.
 */
export function pageChanges(
  previous: readonly StoredElement[],
  next: readonly StoredElement[],
): { put: [string, Uint8Array][]; remove: string[] } {
  const before = new Set(pagesOf(previous.length).map((page) => page.name));
  const after = pagesOf(next.length);
  const put: [string, Uint8Array][] = [];
  for (const page of after) {
    if (before.has(page.name) && samePage(previous, next, page)) continue;
    put.push([page.name, packPage(next.slice(page.start, page.start + page.count))]);
  }
  const kept = new Set(after.map((page) => page.name));
  return { put, remove: [...before].filter((name) => !kept.has(name)) };
}

/** Whether a page holds the same elements in two lists (the same bytes, often the very same array). */
function samePage(a: readonly StoredElement[], b: readonly StoredElement[], page: Page): boolean {
  for (let i = page.start; i < page.start + page.count; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined || x.type !== y.type) return false;
    if (x.bytes !== y.bytes && !sameBytes(x.bytes, y.bytes)) return false;
  }
  return true;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A page's bytes. */
export function packPage(elements: readonly StoredElement[]): Uint8Array {
  const types = elements.map((element) => encoder.encode(element.type));
  let size = 0;
  for (const [i, element] of elements.entries())
    size += 8 + types[i]!.length + element.bytes.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const [i, element] of elements.entries()) {
    for (const part of [types[i]!, element.bytes]) {
      view.setUint32(at, part.length);
      out.set(part, at + 4);
      at += 4 + part.length;
    }
  }
  return out;
}

/** A page's elements; bytes that are not a page of `count` elements are damage, said so. */
export function unpackPage(bytes: Uint8Array, count: number, where: string): StoredElement[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const elements: StoredElement[] = [];
  let at = 0;
  const part = (): Uint8Array => {
    if (at + 4 > bytes.length) throw damaged(where);
    const length = view.getUint32(at);
    if (at + 4 + length > bytes.length) throw damaged(where);
    at += 4 + length;
    return bytes.subarray(at - length, at);
  };
  while (at < bytes.length) {
    let type: string;
    try {
      type = decoder.decode(part());
    } catch (error) {
      throw damaged(where, error);
    }
    elements.push({ type, bytes: part() });
  }
  if (elements.length !== count) throw damaged(where);
  return elements;
}

function damaged(where: string, cause?: unknown): RunledgerError {
  return new RunledgerError(
    "corrupt",
    `the list page ${where} is not a page of its elements (a thread file written by another program, or damaged); runledger verify checks the file`,
    cause === undefined ? {} : { cause },
  );
}
