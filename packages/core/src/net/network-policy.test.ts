import { describe, expect, it } from "vitest";
import { createNetworkPolicy, isIpLiteral } from "./network-policy";

const strict = createNetworkPolicy([]);

describe("createNetworkPolicy without an allowlist", () => {
  it.each([
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["::1", /loopback/],
    ["[::1]", /loopback/],
    ["0.0.0.0", /unspecified/],
    ["0.1.2.3", /unspecified/],
    ["::", /unspecified/],
    ["169.254.169.254", /cloud instance metadata service/],
    ["169.254.1.1", /link-local/],
    ["fe80::1", /link-local/],
    ["febf:ffff::1", /link-local/],
    ["10.0.0.1", /private.*10\.0\.0\.0\/8/],
    ["172.16.0.1", /private.*172\.16\.0\.0\/12/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private.*192\.168/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.127.255.255", /carrier-grade NAT/],
    ["fc00::1", /unique-local/],
    ["fd12:3456::1", /unique-local/],
    ["fd00:ec2::254", /metadata/],
    ["224.0.0.1", /multicast/],
    ["239.255.255.250", /multicast/],
    ["ff02::1", /multicast/],
    ["255.255.255.255", /broadcast/],
  ])("refuses %s", (address, reason) => {
    const problem = strict.addressProblem(address);
    expect(problem).toMatch(reason);
    expect(problem).toContain(address);
  });

  it.each([
    ["::ffff:127.0.0.1", /loopback/],
    ["::ffff:7f00:1", /loopback/],
    ["::FFFF:169.254.169.254", /metadata/],
    ["::ffff:10.1.2.3", /private/],
    ["::127.0.0.1", /IPv4-compatible.*127\.0\.0\.1.*loopback/],
    ["64:ff9b::a9fe:a9fe", /NAT64.*169\.254\.169\.254.*metadata/],
    ["64:ff9b::10.0.0.1", /NAT64.*private/],
    ["2002:7f00:1::", /6to4.*127\.0\.0\.1/],
    ["2002:c0a8:0101::1", /6to4.*192\.168\.1\.1/],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", /Teredo/],
  ])("refuses the IPv6 form %s by what it embeds", (address, reason) => {
    expect(strict.addressProblem(address)).toMatch(reason);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "169.255.0.1",
    "2606:2800:220:1:248:1893:25c8:1946",
    "[2606:4700::1111]",
    "::ffff:93.184.216.34",
    "64:ff9b::8.8.8.8",
    "2002:5db8:d822::1",
  ])("allows the public address %s", (address) => {
    expect(strict.addressProblem(address)).toBeNull();
  });

  it.each([
    "localhost",
    "example.com",
    "",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "010.0.0.1",
    "0x7f.0.0.1",
    "2130706433",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::1",
    "::1.2.3.4:5",
    "[1.2.3.4]",
    ":1::",
  ])("treats %j as not an IP address", (text) => {
    expect(strict.addressProblem(text)).toMatch(/not an IP address/);
  });

  it("refuses IPv6 zone ids, even on otherwise public addresses", () => {
    expect(strict.addressProblem("fe80::1%eth0")).toMatch(/zone id/);
    expect(strict.addressProblem("2606:4700::1111%1")).toMatch(/zone id/);
  });
});

describe("createNetworkPolicy with an allowlist", () => {
  it("allows single IPs and CIDRs, v4 and v6, and nothing next to them", () => {
    const policy = createNetworkPolicy(["127.0.0.1", "10.1.0.0/16", "::1/128", "fd00::/8"]);
    expect(policy.addressProblem("127.0.0.1")).toBeNull();
    expect(policy.addressProblem("::ffff:127.0.0.1")).toBeNull();
    expect(policy.addressProblem("127.0.0.2")).toMatch(/loopback/);
    expect(policy.addressProblem("10.1.255.3")).toBeNull();
    expect(policy.addressProblem("10.2.0.1")).toMatch(/private/);
    expect(policy.addressProblem("::1")).toBeNull();
    expect(policy.addressProblem("[::1]")).toBeNull();
    expect(policy.addressProblem("fd12::1")).toBeNull();
    expect(policy.addressProblem("fc00::1")).toMatch(/unique-local/);
    expect(policy.addressProblem("169.254.169.254")).toMatch(/metadata/);
  });

  it("allows a whole range such as 127.0.0.0/8 and tolerates spaces around entries", () => {
    const policy = createNetworkPolicy([" 127.0.0.0/8 "]);
    expect(policy.addressProblem("127.8.9.10")).toBeNull();
    expect(policy.addressProblem("::1")).toMatch(/loopback/);
  });

  it("still says a host name is not an IP address", () => {
    expect(createNetworkPolicy(["0.0.0.0/0", "::/0"]).addressProblem("localhost")).toMatch(
      /not an IP address/,
    );
  });

  it.each(["localhost", "10.0.0.0/33", "::1/129", "10.0.0.0/", "10.0.0.0/x", "1.2.3.4/8/8", ""])(
    "throws at creation for the invalid entry %j, naming it",
    (entry) => {
      expect(() => createNetworkPolicy(["127.0.0.1", entry])).toThrow(
        `invalid network allowlist entry '${entry}'`,
      );
    },
  );
});

describe("isIpLiteral", () => {
  it("recognises v4, v6 and bracketed v6, and nothing else", () => {
    expect(isIpLiteral("93.184.216.34")).toBe(true);
    expect(isIpLiteral("::ffff:1.2.3.4")).toBe(true);
    expect(isIpLiteral("[2001:db8::1]")).toBe(true);
    expect(isIpLiteral("1:2:3:4:5:6:7:8")).toBe(true);
    expect(isIpLiteral("localhost")).toBe(false);
    expect(isIpLiteral("1.2.3.4.nip.io")).toBe(false);
    expect(isIpLiteral("fe80::1%eth0")).toBe(false);
  });
});
