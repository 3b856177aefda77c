import {
  classifyAddress,
  decideAccountServerAddress,
  decideAddress,
  normaliseHostPort,
  parseFetchUrl,
  parseServerHost,
} from './address-guard';

const NO_ALLOW = { allowHostPorts: [], host: 'example.com', port: 80 };

/** The address the guard would judge for a URL: its host as WHATWG `URL` normalised it. */
function hostOf(url: string): string {
  const parsed = parseFetchUrl(url);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value.host;
}

describe('address guard', () => {
  describe('refuses every non-public address, with the reason', () => {
    it.each([
      // IPv4
      ['127.0.0.1', 'a loopback address'],
      ['127.255.255.254', 'a loopback address'],
      ['10.0.0.1', 'a private address'],
      ['172.16.5.4', 'a private address'],
      ['172.31.255.255', 'a private address'],
      ['192.168.1.10', 'a private address'],
      ['169.254.1.1', 'a link-local address'],
      ['169.254.169.254', 'a cloud metadata address'],
      ['100.64.0.1', 'a carrier-grade NAT (100.64.0.0/10) address'],
      ['100.127.255.254', 'a carrier-grade NAT (100.64.0.0/10) address'],
      ['0.0.0.0', 'an unspecified address'],
      ['0.1.2.3', 'an unspecified address'],
      ['224.0.0.1', 'a multicast address'],
      ['239.255.255.250', 'a multicast address'],
      ['255.255.255.255', 'a broadcast address'],
      ['240.0.0.1', 'a reserved address'],
      ['192.0.0.192', 'a reserved address'],
      ['192.0.2.1', 'a reserved address'],
      ['198.18.0.1', 'a reserved address'],
      ['203.0.113.9', 'a reserved address'],
      // IPv6
      ['::1', 'a loopback address'],
      ['::', 'an unspecified address'],
      ['fe80::1', 'a link-local address'],
      ['fc00::1', 'a unique-local (fc00::/7) address'],
      ['fd12:3456:789a::1', 'a unique-local (fc00::/7) address'],
      ['fd00:ec2::254', 'a cloud metadata address'],
      ['ff02::1', 'a multicast address'],
      ['fec0::1', 'a site-local address'],
      ['2001:db8::1', 'a reserved address'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo tunnel address'],
      ['64:ff9b:1::a00:1', 'a local-use NAT64 (64:ff9b:1::/48) address'],
      ['::7f00:1', 'an IPv4-compatible IPv6 (deprecated) address'],
      ['100::1', 'a discard-only address'],
      ['4000::1', 'a reserved (not global unicast) address'],
      // IPv6 carrying an IPv4 address
      [
        '::ffff:127.0.0.1',
        'an IPv4-mapped IPv6 address of 127.0.0.1 (a loopback address)',
      ],
      [
        '::ffff:a00:1',
        'an IPv4-mapped IPv6 address of 10.0.0.1 (a private address)',
      ],
      [
        '::ffff:169.254.169.254',
        'an IPv4-mapped IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
      [
        '::ffff:0:c0a8:101',
        'an IPv4-translated IPv6 address of 192.168.1.1 (a private address)',
      ],
      [
        '64:ff9b::7f00:1',
        'a NAT64 IPv6 address of 127.0.0.1 (a loopback address)',
      ],
      ['2002:a00:1::1', 'a 6to4 IPv6 address of 10.0.0.1 (a private address)'],
      [
        '2002:a9fe:a9fe::',
        'a 6to4 IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
    ])('%s → %s', (address, text) => {
      expect(decideAddress(address, NO_ALLOW)).toEqual({
        allowed: false,
        address,
        reason: `${address} is ${text}`,
        text,
        listable: !/unspecified|multicast|broadcast|metadata/.test(text),
      });
    });
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82a::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('lets the public address %s through', (address) => {
    expect(classifyAddress(address)).toBeNull();
    expect(decideAddress(address, NO_ALLOW)).toEqual({
      allowed: true,
      address,
    });
  });

  describe('every spelling of a URL host reaches the guard as one address', () => {
    it.each([
      ['http://127.0.0.1/', '127.0.0.1'],
      ['http://2130706433/', '127.0.0.1'],
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://127.0.1/', '127.0.0.1'],
      ['http://017700000001/', '127.0.0.1'],
      ['http://%31%32%37.0.0.1/', '127.0.0.1'],
      ['http://127.0.0.1./', '127.0.0.1'],
      ['http://0/', '0.0.0.0'],
      ['http://[::1]/', '::1'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://[0:0:0:0:0:ffff:7f00:1]/', '::ffff:7f00:1'],
      ['http://[::ffff:a9fe:a9fe]:8080/', '::ffff:a9fe:a9fe'],
      ['http://[0000::1]/', '::1'],
      ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
      ['http://2852039166/', '169.254.169.254'],
      ['http://10.1/', '10.0.0.1'],
      ['HTTP://LOCALHOST./', 'localhost'],
      ['http://xn--bcher-kva.example/', 'xn--bcher-kva.example'],
      ['http://bücher.example/', 'xn--bcher-kva.example'],
    ])('%s → %s', (url, host) => {
      expect(hostOf(url)).toBe(host);
      if (host !== 'localhost' && !host.includes('example'))
        expect(decideAddress(host, NO_ALLOW).allowed).toBe(false);
    });
  });

  it('allows a private address only for an exact host:port the owner listed', () => {
    const allow = ['nas.local:8123', '192.168.1.5:443', '[fd00::7]:80'];
    const decide = (address: string, host: string, port: number) =>
      decideAddress(address, { allowHostPorts: allow, host, port });
    expect(decide('192.168.1.20', 'nas.local', 8123)).toEqual({
      allowed: true,
      address: '192.168.1.20',
      allowedBy: 'nas.local:8123',
    });
    expect(decide('192.168.1.20', 'nas.local', 8124).allowed).toBe(false);
    expect(decide('192.168.1.20', 'other.local', 8123).allowed).toBe(false);
    expect(decide('192.168.1.5', 'printer.lan', 443)).toMatchObject({
      allowed: true,
      allowedBy: '192.168.1.5:443',
    });
    expect(decide('fd00::7', 'fd00::7', 80)).toMatchObject({
      allowed: true,
      allowedBy: '[fd00::7]:80',
    });
    // Never, even when listed: metadata, unspecified, multicast, broadcast.
    for (const [address, port] of [
      ['169.254.169.254', 80],
      ['0.0.0.0', 80],
      ['224.0.0.1', 80],
      ['255.255.255.255', 80],
    ] as const) {
      expect(
        decideAddress(address, {
          allowHostPorts: [`${address}:${port}`],
          host: address,
          port,
        }).allowed,
      ).toBe(false);
    }
  });

  it('parses only http(s) URLs without credentials', () => {
    expect(parseFetchUrl('ftp://example.com/')).toEqual({
      ok: false,
      error: 'Only http and https URLs can be fetched (got ftp)',
    });
    expect(parseFetchUrl('file:///etc/passwd')).toMatchObject({ ok: false });
    expect(parseFetchUrl('not a url')).toEqual({
      ok: false,
      error: "'not a url' is not a valid URL",
    });
    expect(parseFetchUrl('http://user:pw@example.com/')).toMatchObject({
      ok: false,
      error: expect.stringContaining('credentials'),
    });
    expect(parseFetchUrl('https://Example.COM/a?b#c')).toMatchObject({
      ok: true,
      value: { host: 'example.com', port: 443, isIp: false },
    });
    expect(parseFetchUrl('http://[::1]:8080/')).toMatchObject({
      ok: true,
      value: { host: '::1', port: 8080, isIp: true },
    });
  });

  it('normalises allow-list entries and refuses anything but host:port', () => {
    expect(normaliseHostPort('NAS.local:8123')).toBe('nas.local:8123');
    expect(normaliseHostPort('nas.local.:8123')).toBe('nas.local:8123');
    expect(normaliseHostPort('0x7f.1:80')).toBe('127.0.0.1:80');
    expect(normaliseHostPort('[FD00::7]:80')).toBe('[fd00::7]:80');
    for (const bad of [
      'nas.local',
      'http://nas.local:80',
      'nas.local:0',
      'nas.local:70000',
      'nas.local:80/x',
      'user@nas:80',
      ':80',
      'fd00::7:80',
    ])
      expect(normaliseHostPort(bad)).toBeNull();
  });

  describe("accounts' policy: a mail or CalDAV server", () => {
    /** What the guard judges for a host the owner typed: its normalised address. */
    const judged = (host: string) => {
      const parsed = parseServerHost(host);
      if (!parsed.ok) throw new Error(parsed.error);
      return decideAccountServerAddress(parsed.host);
    };

    it.each([
      // Link-local and cloud metadata, every spelling
      ['169.254.169.254', '169.254.169.254', 'a cloud metadata address'],
      ['169.254.0.1', '169.254.0.1', 'a link-local address'],
      ['169.254.170.2', '169.254.170.2', 'a link-local address'],
      ['2852039166', '169.254.169.254', 'a cloud metadata address'],
      ['0xa9fea9fe', '169.254.169.254', 'a cloud metadata address'],
      ['0xA9.0xFE.0xA9.0xFE', '169.254.169.254', 'a cloud metadata address'],
      ['0251.0376.0251.0376', '169.254.169.254', 'a cloud metadata address'],
      ['169.254.43518', '169.254.169.254', 'a cloud metadata address'],
      ['169.254.169.254.', '169.254.169.254', 'a cloud metadata address'],
      ['100.100.100.200', '100.100.100.200', 'a cloud metadata address'],
      ['fd00:ec2::254', 'fd00:ec2::254', 'a cloud metadata address'],
      ['[fd00:ec2:0:0:0:0:0:254]', 'fd00:ec2::254', 'a cloud metadata address'],
      ['fe80::1', 'fe80::1', 'a link-local address'],
      ['[FEBF::ffff]', 'febf::ffff', 'a link-local address'],
      [
        '::ffff:169.254.169.254',
        '::ffff:a9fe:a9fe',
        'an IPv4-mapped IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
      [
        '::ffff:a9fe:1',
        '::ffff:a9fe:1',
        'an IPv4-mapped IPv6 address of 169.254.0.1 (a link-local address)',
      ],
      [
        '64:ff9b::169.254.169.254',
        '64:ff9b::a9fe:a9fe',
        'a NAT64 IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
      [
        '2002:a9fe:a9fe::1',
        '2002:a9fe:a9fe::1',
        'a 6to4 IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
      [
        '::ffff:0:a9fe:a9fe',
        '::ffff:0:a9fe:a9fe',
        'an IPv4-translated IPv6 address of 169.254.169.254 (a cloud metadata address)',
      ],
      [
        '::a9fe:a9fe',
        '::a9fe:a9fe',
        'an IPv4-compatible IPv6 (deprecated) address',
      ],
      // Multicast, broadcast, unspecified, reserved
      ['224.0.0.1', '224.0.0.1', 'a multicast address'],
      ['0xe0000001', '224.0.0.1', 'a multicast address'],
      ['ff02::1', 'ff02::1', 'a multicast address'],
      [
        '::ffff:224.0.0.251',
        '::ffff:e000:fb',
        'an IPv4-mapped IPv6 address of 224.0.0.251 (a multicast address)',
      ],
      ['255.255.255.255', '255.255.255.255', 'a broadcast address'],
      ['4294967295', '255.255.255.255', 'a broadcast address'],
      ['0.0.0.0', '0.0.0.0', 'an unspecified address'],
      ['0', '0.0.0.0', 'an unspecified address'],
      ['::', '::', 'an unspecified address'],
      [
        '[::ffff:0.0.0.0]',
        '::ffff:0:0',
        'an IPv4-mapped IPv6 address of 0.0.0.0 (an unspecified address)',
      ],
      ['240.0.0.1', '240.0.0.1', 'a reserved address'],
      ['fec0::1', 'fec0::1', 'a site-local address'],
    ])('refuses %s (%s): %s', (host, address, text) => {
      expect(judged(host)).toEqual({
        allowed: false,
        address,
        reason: `${address} is ${text}`,
        text,
        listable: false,
      });
    });

    it.each([
      // A local mail bridge, a home server, a server on the owner's VPN, a public provider
      ['127.0.0.1', '127.0.0.1'],
      ['localhost', 'localhost'],
      ['2130706433', '127.0.0.1'],
      ['0x7f.1', '127.0.0.1'],
      ['::1', '::1'],
      ['[::1]', '::1'],
      ['::ffff:127.0.0.1', '::ffff:7f00:1'],
      ['10.0.0.5', '10.0.0.5'],
      ['172.16.0.9', '172.16.0.9'],
      ['192.168.1.20', '192.168.1.20'],
      ['0300.0250.01.024', '192.168.1.20'],
      ['fd12:3456::7', 'fd12:3456::7'],
      ['100.101.102.103', '100.101.102.103'],
      ['93.184.215.14', '93.184.215.14'],
      ['2a00:1450:4001::6d', '2a00:1450:4001::6d'],
    ])('allows %s (%s)', (host, address) => {
      const parsed = parseServerHost(host);
      expect(parsed).toMatchObject({ ok: true, host: address });
      if (parsed.ok && parsed.isIp)
        expect(decideAccountServerAddress(parsed.host)).toEqual({
          allowed: true,
          address,
        });
    });

    it('names the host to resolve, and refuses what is not a host', () => {
      expect(parseServerHost(' IMAP.Example.COM. ')).toEqual({
        ok: true,
        host: 'imap.example.com',
        isIp: false,
      });
      for (const bad of [
        '',
        'imap.example.com:993',
        'imap.example.com/x',
        'user@imap.example.com',
        'imap example.com',
        '[fe80::1%eth0]',
        'http://imap.example.com',
      ])
        expect(parseServerHost(bad)).toMatchObject({ ok: false });
    });
  });
});
