import type { Request } from 'express';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { clientIp, clientNetworkTiers, hopAddress, networkTiersOf } from '../../src/http/client-ip';

const behindProxy = (xff: string): Request =>
  ({ socket: { remoteAddress: '10.0.0.1' }, headers: { 'x-forwarded-for': xff } }) as unknown as Request;

describe('X-Forwarded-For hops with a port (contract section 10: one client, one subject)', () => {
  it.each([
    ['203.0.113.7:51234', '203.0.113.7'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:203.0.113.7', '::ffff:203.0.113.7'],
    ['unknown', 'unknown'],
  ])('%s is the address %s', (hop, address) => {
    expect(hopAddress(hop)).toBe(address);
  });

  it('reads the right-most hop without its port', () => {
    expect(clientIp(behindProxy('198.51.100.1, 203.0.113.7:8080'), 1)).toBe('203.0.113.7');
    expect(clientIp(behindProxy('198.51.100.1, [2001:db8:0:1::5]:9'), 1)).toBe('2001:db8:0:1::5');
  });
});

describe('networkTiersOf: the networks a per-network budget counts, finest first', () => {
  it.each([
    [
      '203.0.113.7',
      [
        ['ipv4-32', '203.0.113.7'],
        ['ipv4-24', '203.0.113.0/24'],
      ],
    ],
    [
      '::ffff:203.0.113.7',
      [
        ['ipv4-32', '203.0.113.7'],
        ['ipv4-24', '203.0.113.0/24'],
      ],
    ],
    [
      '2001:db8:abcd:12ff:1:2:3:4',
      [
        ['ipv6-64', '2001:db8:abcd:12ff::/64'],
        ['ipv6-56', '2001:db8:abcd:1200::/56'],
        ['ipv6-48', '2001:db8:abcd::/48'],
      ],
    ],
    [
      '::FFFF:203.0.113.7',
      [
        ['ipv4-32', '203.0.113.7'],
        ['ipv4-24', '203.0.113.0/24'],
      ],
    ],
    [
      '::ffff:cb00:7107',
      [
        ['ipv4-32', '203.0.113.7'],
        ['ipv4-24', '203.0.113.0/24'],
      ],
    ],
    ['::ffff:203.0.113.999', [['other', '::ffff:203.0.113.999']]],
    ['fe80::1%eth-0', [['other', 'fe80::1%eth-0']]],
    ['unknown', [['other', 'unknown']]],
  ])('%s', (ip, tiers) => {
    expect(networkTiersOf(ip).map((t) => [t.tier, t.network])).toEqual(tiers);
  });

  it('counts an IPv4 address alike in every spelling a socket or a proxy gives it', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const plain = networkTiersOf(v4);
        expect(plain[0]).toEqual({ tier: 'ipv4-32', network: v4 });
        expect(networkTiersOf(`::ffff:${v4}`)).toEqual(plain);
        expect(networkTiersOf(`::ffff:${ipaddr.IPv4.parse(v4).toIPv4MappedAddress().toString().slice(7)}`)).toEqual(
          plain,
        );
      }),
    );
  });

  it('gives any IPv6 address its /64, /56 and /48, as ipaddr reads it', () => {
    fc.assert(
      fc.property(fc.ipV6(), (v6) => {
        const addr = ipaddr.IPv6.parse(v6);
        fc.pre(!addr.isIPv4MappedAddress());
        const tiers = networkTiersOf(v6);
        expect(tiers.map((t) => t.tier)).toEqual(['ipv6-64', 'ipv6-56', 'ipv6-48']);
        expect(ipaddr.IPv6.parse(v6).match(ipaddr.parseCIDR(tiers[2]?.network ?? ''))).toBe(true);
        expect(ipaddr.IPv6.parse(v6).match(ipaddr.parseCIDR(tiers[0]?.network ?? ''))).toBe(true);
      }),
    );
  });

  it('puts every /64 of one /48 in one /48', () => {
    const a = networkTiersOf('2001:db8:7:1::1');
    const b = networkTiersOf('2001:db8:7:ff01::1');
    expect(a[0]?.network).not.toBe(b[0]?.network);
    expect(a[1]?.network).not.toBe(b[1]?.network);
    expect(a[2]?.network).toBe(b[2]?.network);
  });
});

describe('TRUST_PROXY_HOPS: the client is that many hops from the right (contract section 10)', () => {
  it('behind a CDN and a load balancer (2 hops) takes the CDN-appended entry, ignoring what the client wrote', () => {
    // client-written, client (appended by the CDN), CDN edge (appended by the load balancer)
    const req = behindProxy('6.6.6.6, 203.0.113.7, 198.51.100.9');
    expect(clientIp(req, 2)).toBe('203.0.113.7');
    expect(clientIp(req, 1)).toBe('198.51.100.9');
  });

  it('drops the port of the chosen hop', () => {
    expect(clientIp(behindProxy('[2001:db8::1]:443, 198.51.100.9:80'), 2)).toBe('2001:db8::1');
  });

  it('takes the left-most entry of a header shorter than the trusted hops (a request that bypassed the CDN)', () => {
    expect(clientIp(behindProxy('203.0.113.7'), 2)).toBe('203.0.113.7');
  });

  it('uses the socket with no trusted hop, whatever the header says', () => {
    expect(clientIp(behindProxy('203.0.113.7'), 0)).toBe('10.0.0.1');
  });

  it('counts the network of the hop it was asked for, not of an earlier call with other hops', () => {
    const req = behindProxy('203.0.113.7, 198.51.100.9');
    expect(clientNetworkTiers(req, 1)[0]?.network).toBe('198.51.100.9');
    expect(clientNetworkTiers(req, 2)[0]?.network).toBe('203.0.113.7');
  });
});
