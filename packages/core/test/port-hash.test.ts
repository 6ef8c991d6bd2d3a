import crypto, { createHash, hash as oneShot } from "node:crypto";
import { describe, expect, it } from "vitest";
import { fromHex, HEX_PAIRS, toHex } from "../src/port/bytes.js";
import {
  createSha256,
  type NodeCrypto,
  nodeCryptoHash,
  runtimeHash,
  sha256,
  sha256Hex,
} from "../src/port/hash.js";
import { utf8 } from "../src/port/text.js";

// FIPS 180-2 test vectors.
const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const TWO_BLOCKS = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
const TWO_BLOCKS_INPUT = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

describe("sha256", () => {
  it("hashes the empty input to the standard digest", () => {
    expect(sha256Hex("")).toBe(EMPTY);
    expect(sha256Hex(new Uint8Array(0))).toBe(EMPTY);
  });

  it('hashes "abc" to the standard digest', () => {
    expect(sha256Hex("abc")).toBe(ABC);
    expect(sha256Hex(Uint8Array.of(0x61, 0x62, 0x63))).toBe(ABC);
  });

  it("hashes a two-block message to the standard digest", () => {
    expect(sha256Hex(TWO_BLOCKS_INPUT)).toBe(TWO_BLOCKS);
  });

  it("returns 32 raw bytes matching the hex form", () => {
    const digest = sha256("abc");
    expect(digest).toBeInstanceOf(Uint8Array);
    expect(digest.byteLength).toBe(32);
    expect(toHex(digest)).toBe(ABC);
  });

  it("gives the same digest incrementally, whatever the chunking", () => {
    const bytes = utf8(TWO_BLOCKS_INPUT);
    for (const size of [1, 7, 55, 64]) {
      const stream = createSha256();
      for (let i = 0; i < bytes.length; i += size) stream.update(bytes.subarray(i, i + size));
      expect(toHex(stream.digest()), `chunks of ${size}`).toBe(TWO_BLOCKS);
    }
  });
});

describe("runtimeHash (an adapter's native SHA-256)", () => {
  const counted = () => {
    const calls = { created: 0, digested: 0 };
    const hash = runtimeHash(
      "node:crypto",
      () => {
        calls.created++;
        return createHash("sha256");
      },
      (data) => {
        calls.digested++;
        return oneShot("sha256", data, "buffer");
      },
    );
    return { calls, hash };
  };

  it("hashes a whole input with the one-shot digest when the runtime has one, as plain bytes", () => {
    const { calls, hash } = counted();
    const digest = hash.sha256(utf8(TWO_BLOCKS_INPUT));
    expect(toHex(digest)).toBe(TWO_BLOCKS);
    expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype);
    expect(calls).toStrictEqual({ created: 0, digested: 1 });
  });

  it("streams through an incremental state, and hashes whole inputs with one without a one-shot digest", () => {
    const { calls, hash } = counted();
    const stream = hash.createSha256().update(utf8("ab"));
    const copy = stream.copy();
    expect(toHex(stream.update(utf8("c")).digest())).toBe(ABC);
    expect(toHex(copy.update(utf8("c")).digest())).toBe(ABC);
    expect(calls).toStrictEqual({ created: 1, digested: 0 });

    const incremental = runtimeHash("node:crypto", () => createHash("sha256"));
    const digest = incremental.sha256(new Uint8Array(0));
    expect(toHex(digest)).toBe(EMPTY);
    expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype);
  });

  it("views a digest that owns its memory, and copies one cut from a larger pool", () => {
    const owned = oneShot("sha256", utf8("abc"), "buffer");
    const viewed = runtimeHash(
      "owned",
      () => createHash("sha256"),
      () => owned,
    ).sha256(utf8("x"));
    expect(viewed.buffer).toBe(owned.buffer);
    expect(Object.getPrototypeOf(viewed)).toBe(Uint8Array.prototype);

    // A digest that is a slice of a pool: an id kept for long must not keep the pool alive.
    const pool = new Uint8Array(8192);
    pool.set(owned, 64);
    const slice = pool.subarray(64, 96);
    const copied = runtimeHash(
      "pooled",
      () => createHash("sha256"),
      () => slice,
    ).sha256(utf8("x"));
    expect(copied.buffer).not.toBe(pool.buffer);
    expect(copied.buffer.byteLength).toBe(32);
    expect(toHex(copied)).toBe(ABC);
  });
});

describe("nodeCryptoHash (node:crypto as an adapter hands it over)", () => {
  /** node:crypto with its calls counted; `hash`, its one-shot hash (none: an older runtime). */
  const counted = (hash?: (data: Uint8Array, encoding: "binary") => string) => {
    const calls = { hash: 0, createHash: 0 };
    const node: NodeCrypto = {
      createHash: (algorithm) => {
        calls.createHash++;
        return crypto.createHash(algorithm);
      },
      ...(hash === undefined
        ? {}
        : {
            hash: (_algorithm: "sha256", data: Uint8Array, encoding: "binary") => {
              calls.hash++;
              return hash(data, encoding);
            },
          }),
    };
    return { calls, hash: nodeCryptoHash(node) };
  };

  it("hashes whole inputs with crypto.hash where it exists, and streams with createHash", () => {
    const { calls, hash } = counted((data, encoding) => {
      expect(encoding).toBe("binary");
      return crypto.hash("sha256", data, encoding);
    });
    expect(hash.name).toBe("node:crypto");
    expect(toHex(hash.sha256(utf8("abc")))).toBe(ABC);
    expect(toHex(hash.createSha256().update(utf8("abc")).digest())).toBe(ABC);
    expect(calls, "crypto.hash: the known answer, then the input").toStrictEqual({
      hash: 2,
      createHash: 1,
    });
  });

  it("hashes through createHash where crypto.hash's binary string is not a byte a character", () => {
    // Another runtime's mistake: the digest's bytes read as UTF-8.
    const { calls, hash } = counted((data) =>
      crypto.hash("sha256", data, "buffer").toString("utf8"),
    );
    expect(calls.hash, "asked once, for the known answer").toBe(1);
    expect(toHex(hash.sha256(utf8(TWO_BLOCKS_INPUT)))).toBe(TWO_BLOCKS);
    expect(calls).toStrictEqual({ hash: 1, createHash: 1 });
  });

  it("reads a one-shot digest given as a binary string into exactly its 32 bytes, as a plain array", () => {
    const hash = nodeCryptoHash(crypto);
    // Digests with bytes above 0x7f, where a text encoding other than latin1 would change them.
    for (const input of ["abc", "", TWO_BLOCKS_INPUT, "\u00ff\u0000\u20ac", "x".repeat(1000)]) {
      const digest = hash.sha256(utf8(input));
      expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype);
      expect(digest.byteLength).toBe(32);
      expect(toHex(digest), JSON.stringify(input)).toBe(
        createHash("sha256").update(input).digest("hex"),
      );
    }
    expect(toHex(hash.sha256(utf8("abc")))).toBe(ABC);
  });

  it("hashes whole inputs through createHash on a runtime without crypto.hash", () => {
    const { calls, hash } = counted();
    const digest = hash.sha256(utf8(TWO_BLOCKS_INPUT));
    expect(toHex(digest)).toBe(TWO_BLOCKS);
    expect(Object.getPrototypeOf(digest)).toBe(Uint8Array.prototype);
    expect(calls.createHash).toBe(1);
  });
});

describe("utf8 and toHex", () => {
  it("encodes an astral character as four UTF-8 bytes", () => {
    expect(toHex(utf8("😀"))).toBe("f09f9880");
    expect(toHex(utf8("é"))).toBe("c3a9");
  });

  it("writes two lower-case digits per byte, zero-padded", () => {
    expect(toHex(Uint8Array.of(0, 1, 15, 16, 171, 255))).toBe("00010f10abff");
    expect(toHex(new Uint8Array(0))).toBe("");
  });

  it("writes inputs shorter than, as long as and longer than a digest as the table's pairs", () => {
    for (const length of [1, 31, 32, 33, 64, 256, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 37 + length) & 0xff);
      const pairwise = Array.from(bytes, (byte) => HEX_PAIRS[byte]).join("");
      expect(toHex(bytes), `${length} bytes`).toBe(pairwise);
    }
  });

  it("gives strings that stay as they were after later calls", () => {
    const first = toHex(new Uint8Array(32).fill(0xab));
    const second = toHex(new Uint8Array(32).fill(0x01));
    const short = toHex(Uint8Array.of(0xff));
    expect([first, second, short]).toStrictEqual(["ab".repeat(32), "01".repeat(32), "ff"]);
  });

  it("fromHex reads back every byte value toHex writes, in either case", () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(fromHex(toHex(every))).toStrictEqual(every);
    expect(fromHex("00010F10ABff")).toStrictEqual(Uint8Array.of(0, 1, 15, 16, 171, 255));
    expect(fromHex("")).toStrictEqual(new Uint8Array(0));
  });
});
