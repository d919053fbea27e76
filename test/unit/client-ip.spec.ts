import { networkOf } from '../../src/http/client-ip';

describe('networkOf: the network a per-IP budget counts (contract section 10)', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::ffff:cb00:7107', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['::1', '::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['unknown', 'unknown'],
  ])('%s counts as %s', (ip, network) => {
    expect(networkOf(ip)).toBe(network);
  });

  it('keeps neighbouring /64s apart', () => {
    expect(networkOf('2001:db8:1:2::1')).not.toBe(networkOf('2001:db8:1:3::1'));
  });
});
