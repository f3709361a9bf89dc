import { describe, expect, it } from "vitest";
import { isPublicAddress, nonPublicAddressKind } from "./public-address.js";

describe("public unicast addresses (image URLs are fetched from these only by default)", () => {
  it("refuses every special-purpose IPv4 block, whatever its place in the block", () => {
    const refused: [string, string][] = [
      ["0.0.0.0", "unspecified"],
      ["0.255.1.2", "unspecified"],
      ["10.0.0.1", "private"],
      ["10.255.255.255", "private"],
      ["100.64.0.1", "carrier-grade NAT"],
      ["100.127.255.254", "carrier-grade NAT"],
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["169.254.169.254", "link-local"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.0.0.8", "IETF protocol assignment"],
      ["192.0.2.1", "documentation"],
      ["192.88.99.1", "6to4 relay anycast"],
      ["192.168.1.1", "private"],
      ["198.18.0.1", "benchmarking"],
      ["198.19.255.255", "benchmarking"],
      ["198.51.100.7", "documentation"],
      ["203.0.113.9", "documentation"],
      ["224.0.0.1", "multicast"],
      ["239.255.255.250", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "broadcast"],
    ];
    for (const [address, kind] of refused)
      expect(nonPublicAddressKind(address), address).toBe(kind);
  });

  it("takes public IPv4 addresses, also next to the refused blocks", () => {
    for (const address of [
      "1.1.1.1",
      "8.8.8.8",
      "9.255.255.255",
      "11.0.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "126.255.255.255",
      "128.0.0.0",
      "169.253.255.255",
      "172.15.255.255",
      "172.32.0.0",
      "192.0.1.0",
      "192.167.255.255",
      "192.169.0.0",
      "198.17.255.255",
      "198.20.0.0",
      "223.255.255.255",
    ]) {
      expect(nonPublicAddressKind(address), address).toBeUndefined();
    }
  });

  it("refuses special IPv6 addresses and IPv6 forms carrying a refused IPv4 address", () => {
    const refused: [string, string][] = [
      ["::", "unspecified"],
      ["::1", "loopback"],
      ["[::1]", "loopback"],
      ["0:0:0:0:0:0:0:1", "loopback"],
      ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
      ["::ffff:7f00:1", "IPv4-mapped loopback"],
      ["[::ffff:a9fe:a9fe]", "IPv4-mapped link-local"],
      ["::ffff:10.1.2.3", "IPv4-mapped private"],
      ["::127.0.0.1", "IPv4-compatible loopback"],
      ["::a00:1", "IPv4-compatible private"],
      ["::8.8.8.8", "reserved"],
      ["64:ff9b::127.0.0.1", "NAT64 loopback"],
      ["64:ff9b::a9fe:a9fe", "NAT64 link-local"],
      ["64:ff9b:1::1", "local-use NAT64"],
      ["2002:7f00:1::", "6to4 loopback"],
      ["2002:c0a8:101::1", "6to4 private"],
      ["fc00::1", "unique local"],
      ["fd12:3456::1", "unique local"],
      ["fe80::1", "link-local"],
      ["fe80::1%eth0", "link-local"],
      ["febf::1", "link-local"],
      ["fec0::1", "site-local"],
      ["ff02::1", "multicast"],
      ["100::1", "reserved"],
      ["2001::1", "IETF protocol assignment or Teredo"],
      ["2001:1ff::1", "IETF protocol assignment or Teredo"],
      ["2001:db8::1", "documentation"],
      ["3fff::1", "documentation"],
      ["4000::1", "reserved"],
    ];
    for (const [address, kind] of refused)
      expect(nonPublicAddressKind(address), address).toBe(kind);
  });

  it("takes public IPv6 addresses and IPv6 forms carrying a public IPv4 address", () => {
    for (const address of [
      "2606:4700:4700::1111",
      "[2a00:1450:4001:82b::200e]",
      "2001:200::1",
      "2001:4860:4860::8888",
      "3fff:1000::1",
      "::ffff:8.8.8.8",
      "::ffff:808:808",
      "64:ff9b::8.8.8.8",
      "2002:808:808::1",
    ]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it("text that is not an IP address is not public", () => {
    for (const text of ["localhost", "example.com", "", "1.2.3", "[::1", "::g"]) {
      expect(nonPublicAddressKind(text), text).toBe("not an IP address");
    }
  });
});
