/**
 * Multi-host PostgreSQL locations (src/store/postgres/hosts.ts): split as
 * libpq reads them, and anything libpq would not accept refused, never
 * guessed. Following the leader for real is tests/store/failover.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseHostList } from '../../src/store/postgres/hosts.js';
import { splitSchema } from '../../src/store/open.js';

describe('parseHostList', () => {
  it('splits hosts, keeps user, database and parameters, and drops target_session_attrs from each host URL', () => {
    const l = parseHostList('postgres://app:pw@10.0.0.1:5433,db2/tally?target_session_attrs=read-write&sslmode=disable');
    expect(l?.hosts).toEqual([{ host: '10.0.0.1', port: 5433 }, { host: 'db2', port: 5432 }]);
    expect(l?.readWrite).toBe(true);
    expect(l?.urlFor(l.hosts[1]!)).toBe('postgres://app:pw@db2:5432/tally?sslmode=disable');
    expect(parseHostList('postgresql://h1,h2/d')?.readWrite).toBe(false);
    expect(parseHostList('postgres://h1/d?target_session_attrs=primary')?.hosts).toEqual([{ host: 'h1', port: 5432 }]);
  });

  it('leaves a one-host location to node-postgres', () => {
    expect(parseHostList('postgres://postgres@127.0.0.1:5432/test')).toBeUndefined();
  });

  it.each([
    ['postgres://h1,h2/d?target_session_attrs=standby', /target_session_attrs must be/],
    ['postgres://h1,h2/d?target_session_attrs=read-write&target_session_attrs=any', /more than once/],
    ['postgres://h1,,h2/d', /not host\[:port\]/],
    ['postgres://h1:99999,h2/d', /not host\[:port\]/],
    ['postgres://h1:5x,h2/d', /not host\[:port\]/],
  ])('refuses %s', (url, why) => {
    expect(() => parseHostList(url)).toThrow(why);
  });
});

describe('splitSchema on a multi-host location', () => {
  it('takes ?schema= out and puts the host list back', () => {
    expect(splitSchema('postgres://u@h1:1,h2:2/db?target_session_attrs=read-write&schema=w1')).toEqual({ url: 'postgres://u@h1:1,h2:2/db?target_session_attrs=read-write', schema: 'w1' });
  });
});
