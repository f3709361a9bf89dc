import { isIP } from "node:net";

/**
 * Which IP addresses are public unicast addresses, the only ones the server fetches a URL from
 * by default (docs/server/responses.md, "Images"): an address of a special-purpose block (IANA's IPv4 and
 * IPv6 special-purpose registries) is refused whatever it is written as. IPv6 forms that carry
 * an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`, 6to4 `2002:aabb:ccdd::`) are judged by the IPv4 address they carry.
 */

/** IPv4 blocks that are not public unicast: first address, prefix length, what they are. */
const IPV4_BLOCKS: readonly (readonly [string, number, string])[] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignment"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

const ipv4Number = (text: string): number =>
  text.split(".").reduce((value, part) => value * 256 + Number(part), 0);

const ipv4Blocks = IPV4_BLOCKS.map(([first, bits, kind]) => ({
  first: ipv4Number(first),
  size: 2 ** (32 - bits),
  kind,
}));

function ipv4Kind(value: number): string | undefined {
  return ipv4Blocks.find((block) => value >= block.first && value < block.first + block.size)?.kind;
}

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted IPv4 part allowed). */
function ipv6Words(text: string): number[] {
  const plain = text
    .replace(/%.*$/, "")
    .replace(
      /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
      (_, a: string, b: string, c: string, d: string) =>
        `${(Number(a) * 256 + Number(b)).toString(16)}:${(Number(c) * 256 + Number(d)).toString(16)}`,
    );
  const [head = "", tail] = plain.split("::");
  const words = (part: string) =>
    part === "" ? [] : part.split(":").map((word) => parseInt(word, 16));
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

const carried = (high: number, low: number) => high * 65536 + low;

function ipv6Kind(words: readonly number[]): string | undefined {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const zeroUpTo = (count: number) => words.slice(0, count).every((word) => word === 0);
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && w7 === 1) return "loopback";
  const inner = (kind: string | undefined, form: string) =>
    kind === undefined ? undefined : `${form} ${kind}`;
  if (zeroUpTo(5) && w5 === 0xffff) return inner(ipv4Kind(carried(w6, w7)), "IPv4-mapped");
  if (zeroUpTo(6)) return inner(ipv4Kind(carried(w6, w7)), "IPv4-compatible") ?? "reserved";
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return inner(ipv4Kind(carried(w6, w7)), "NAT64");
  }
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 1) return "local-use NAT64";
  if (w0 === 0x2002) return inner(ipv4Kind(carried(w1, w2)), "6to4");
  if ((w0 & 0xfe00) === 0xfc00) return "unique local";
  if ((w0 & 0xffc0) === 0xfe80) return "link-local";
  if ((w0 & 0xffc0) === 0xfec0) return "site-local";
  if ((w0 & 0xff00) === 0xff00) return "multicast";
  // Global unicast is 2000::/3; inside it a few blocks are not public either.
  if ((w0 & 0xe000) !== 0x2000) return "reserved";
  if (w0 === 0x2001 && w1 < 0x0200) return "IETF protocol assignment or Teredo";
  if (w0 === 0x2001 && w1 === 0x0db8) return "documentation";
  if (w0 === 0x3fff && w1 < 0x1000) return "documentation";
  return undefined;
}

/**
 * What kind of non-public address `address` is ("loopback", "private", "IPv4-mapped
 * link-local", …), or undefined for a public unicast address. Text that is no IP address is
 * "not an IP address".
 */
export function nonPublicAddressKind(address: string): string | undefined {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  switch (isIP(bare.replace(/%.*$/, ""))) {
    case 4:
      return ipv4Kind(ipv4Number(bare));
    case 6:
      return ipv6Kind(ipv6Words(bare));
    default:
      return "not an IP address";
  }
}

/** Whether `address` (IPv4 or IPv6, brackets allowed) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  return nonPublicAddressKind(address) === undefined;
}
