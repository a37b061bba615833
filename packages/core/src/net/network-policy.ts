/** Decides which network addresses tenant-controlled URLs (`rest`, `mcp`) may reach. */
export interface NetworkPolicy {
  /** Why this IP address (v4 or v6 literal) must not be reached, or null when it may. */
  addressProblem(address: string): string | null;
}

/**
 * The SSRF guard's address rules (DESIGN §7): tenant-controlled URLs must not reach loopback,
 * link-local (cloud metadata!), private or otherwise internal addresses unless an explicit
 * allowlist — a development setting — names them. Pure TypeScript so that `core` stays
 * platform-free; the adapters apply the same policy at connect time.
 */

/**
 * The `name` of errors a guarding fetch rejects with when it refuses an address at connect
 * time; the `rest` type reports those as `BlockedAddress` instead of a network failure.
 */
export const BLOCKED_ADDRESS_ERROR_NAME = "BlockedAddressError";

/**
 * The `name` of errors a guarding fetch rejects with when a response body passes its size limit,
 * counted after decompression (DESIGN §7); the `rest` type reports those as `ResponseTooLarge`.
 */
export const RESPONSE_TOO_LARGE_ERROR_NAME = "ResponseTooLargeError";

/** An IP address as 16 bytes; IPv4 is held in its IPv4-mapped form `::ffff:a.b.c.d`. */
type Address = Uint8Array;

interface Range {
  readonly prefix: Address;
  readonly bits: number;
}

interface Rule extends Range {
  readonly what: string;
}

const V4_MAPPED = range("::ffff:0:0/96");

/** IPv4 rules; the metadata address comes before its link-local range so the message names it. */
const V4_RULES: readonly Rule[] = [
  rule("0.0.0.0/8", "an unspecified ('this network') address (0.0.0.0/8)"),
  rule("10.0.0.0/8", "a private address (10.0.0.0/8)"),
  rule("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)"),
  rule("127.0.0.0/8", "a loopback address (127.0.0.0/8)"),
  rule("169.254.169.254/32", "the cloud instance metadata service (link-local 169.254.169.254)"),
  rule("169.254.0.0/16", "a link-local address (169.254.0.0/16)"),
  rule("172.16.0.0/12", "a private address (172.16.0.0/12)"),
  rule("192.0.0.0/24", "an IETF protocol assignment address (192.0.0.0/24)"),
  rule("192.168.0.0/16", "a private address (192.168.0.0/16)"),
  rule("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)"),
  rule("224.0.0.0/4", "a multicast address (224.0.0.0/4)"),
  rule("255.255.255.255/32", "the broadcast address"),
  rule("240.0.0.0/4", "a reserved address (240.0.0.0/4)"),
];

const V6_RULES: readonly Rule[] = [
  rule("::/128", "the unspecified address (::)"),
  rule("::1/128", "the loopback address (::1)"),
  rule("fd00:ec2::254/128", "the cloud instance metadata service (fd00:ec2::254)"),
  rule("fe80::/10", "a link-local address (fe80::/10)"),
  rule("fec0::/10", "a site-local address (fec0::/10)"),
  rule("fc00::/7", "a unique-local address (fc00::/7)"),
  rule("ff00::/8", "a multicast address (ff00::/8)"),
  rule("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)"),
  // Teredo hides an arbitrary IPv4 client address; nothing legitimate needs it from a tool.
  rule("2001::/32", "a Teredo tunnel address (2001::/32)"),
];

/** IPv6 forms that carry an IPv4 address; that address must pass the IPv4 rules. */
const EMBEDDED_V4: readonly { readonly range: Range; readonly offset: number; readonly what: string }[] = [
  { range: range("::/96"), offset: 12, what: "an IPv4-compatible address" },
  { range: range("::ffff:0:0:0/96"), offset: 12, what: "an IPv4-translated address" },
  { range: range("64:ff9b::/96"), offset: 12, what: "a NAT64 address" },
  { range: range("2002::/16"), offset: 2, what: "a 6to4 address" },
];

/**
 * Builds the policy from allowlist entries: single IPs or CIDRs, v4 or v6
 * (e.g. `127.0.0.1`, `10.0.0.0/8`, `::1/128`). An allowlisted address is always allowed.
 *
 * @example createNetworkPolicy(["127.0.0.1"]).addressProblem("10.0.0.1") // "10.0.0.1 is a private address …"
 * @throws Error naming the entry when an allowlist entry is not an IP address or CIDR.
 */
export function createNetworkPolicy(allowlist: readonly string[]): NetworkPolicy {
  const allowed = allowlist.map((entry) => {
    const parsed = parseRange(entry.trim());
    if (!parsed) {
      throw new Error(
        `invalid network allowlist entry '${entry}': expected an IP address or CIDR such as 127.0.0.1, 10.0.0.0/8 or ::1/128`,
      );
    }
    return parsed;
  });
  return {
    addressProblem(text: string): string | null {
      const address = parseAddress(text);
      if (!address) {
        return text.includes("%") && parseAddress(text.slice(0, text.indexOf("%")).replace(/^\[/, ""))
          ? `${text} carries an IPv6 zone id, which is not accepted`
          : `'${text}' is not an IP address`;
      }
      if (allowed.some((entry) => contains(entry, address))) return null;
      const problem = problemOf(address);
      return problem === null
        ? null
        : `${text} is ${problem}; tenant tools may not reach it unless the network allowlist includes it`;
    },
  };
}

/** Whether `host` is an IPv4 dotted quad or an IPv6 address, bare or in brackets (`[::1]`). */
export function isIpLiteral(host: string): boolean {
  return parseAddress(host) !== null;
}

/** A URL's `hostname` as resolvers and the policy want it: URLs keep IPv6 in brackets (`[::1]`). */
export function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

function problemOf(address: Address): string | null {
  if (contains(V4_MAPPED, address)) return V4_RULES.find((r) => contains(r, address))?.what ?? null;
  const direct = V6_RULES.find((r) => contains(r, address));
  if (direct) return direct.what;
  for (const form of EMBEDDED_V4) {
    if (!contains(form.range, address)) continue;
    const v4 = address.subarray(form.offset, form.offset + 4);
    const problem = problemOf(mapped(v4));
    if (problem !== null) return `${form.what} embedding ${[...v4].join(".")}, ${problem}`;
  }
  return null;
}

function contains(range: Range, address: Address): boolean {
  const whole = range.bits >> 3;
  for (let i = 0; i < whole; i++) if (range.prefix[i] !== address[i]) return false;
  const rest = range.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((range.prefix[whole] ?? 0) & mask) === ((address[whole] ?? 0) & mask);
}

function parseRange(text: string): Range | null {
  const slash = text.indexOf("/");
  const prefix = parseAddress(slash === -1 ? text : text.slice(0, slash));
  if (!prefix) return null;
  const isV4 = !text.includes(":");
  const max = isV4 ? 32 : 128;
  let bits = max;
  if (slash !== -1) {
    const length = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(length) || Number(length) > max) return null;
    bits = Number(length);
  }
  return { prefix, bits: isV4 ? bits + 96 : bits };
}

function range(cidr: string): Range {
  const parsed = parseRange(cidr);
  if (!parsed) throw new Error(`bad built-in range ${cidr}`);
  return parsed;
}

function rule(cidr: string, what: string): Rule {
  return { ...range(cidr), what };
}

function parseAddress(text: string): Address | null {
  if (text.startsWith("[") && text.endsWith("]")) return parseV6(text.slice(1, -1));
  if (text.includes(":")) return parseV6(text);
  const v4 = parseV4(text);
  return v4 ? mapped(v4) : null;
}

function mapped(v4: Uint8Array | readonly number[]): Address {
  const bytes = new Uint8Array(16);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  bytes.set(v4, 12);
  return bytes;
}

/** Strict dotted quad: leading zeros are refused because resolvers disagree on octal. */
function parseV4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    octets.push(Number(part));
  }
  return octets;
}

function parseV6(text: string): Address | null {
  const gap = text.indexOf("::");
  if (gap !== -1 && text.indexOf("::", gap + 1) !== -1) return null;
  const head = groupsOf(gap === -1 ? text : text.slice(0, gap), gap === -1);
  const tail = gap === -1 ? [] : groupsOf(text.slice(gap + 2), true);
  if (!head || !tail) return null;
  const words =
    gap === -1
      ? head
      : head.length + tail.length <= 7
        ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
        : null;
  if (words?.length !== 8) return null;
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

/** 16-bit words of a colon-separated run; a dotted quad is allowed only at the very end. */
function groupsOf(text: string, mayEndInV4: boolean): number[] | null {
  if (text === "") return [];
  const groups = text.split(":");
  const words: number[] = [];
  for (const [i, group] of groups.entries()) {
    if (mayEndInV4 && i === groups.length - 1 && group.includes(".")) {
      const v4 = parseV4(group);
      if (!v4) return null;
      words.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
    } else if (/^[0-9a-fA-F]{1,4}$/.test(group)) {
      words.push(Number.parseInt(group, 16));
    } else {
      return null;
    }
  }
  return words;
}
