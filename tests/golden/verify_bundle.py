#!/usr/bin/env python3
"""A Tally bundle verifier in another language, written from docs/PROTOCOL.md
(sections 1-6) alone, with Python's standard library only.

Usage: python3 verify_bundle.py <bundle.jsonl>
Prints one JSON line: {"ok": true, "sessionId", "size", "receiptRoot", "entryHashes"}
or {"ok": false, "index", "error"}; exits 0 or 1.
"""
import base64, binascii, hashlib, json, re, sys

HEX64 = re.compile(r'^[0-9a-f]{64}$')
H = lambda *parts: hashlib.sha256(b''.join(parts)).digest()
tagged = lambda tag, data: H(tag.encode('utf-8'), b'\x00', data)

def canon(v, depth=0):
    """Canonical JSON (section 2): sorted by UTF-16 code units, no whitespace, no null/floats.
    `depth` counts the containers around v: the entry object is level 1 (section 2.1), at most 64."""
    if isinstance(v, (list, dict)) and depth >= 64: raise ValueError('too deep')
    if v is None: raise ValueError('null')
    if isinstance(v, bool): return 'true' if v else 'false'
    if isinstance(v, int):
        if abs(v) > 2**53 - 1: raise ValueError('unsafe integer')
        return str(v)
    if isinstance(v, float): raise ValueError('non-integer number')
    if isinstance(v, str):
        for ch in v:
            if 0xD800 <= ord(ch) <= 0xDFFF: raise ValueError('lone surrogate')
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list): return '[' + ','.join(canon(x, depth + 1) for x in v) + ']'
    keys = sorted(v.keys(), key=lambda k: k.encode('utf-16-be'))
    return '{' + ','.join(json.dumps(k, ensure_ascii=False) + ':' + canon(v[k], depth + 1) for k in keys) + '}'

def no_dupes(pairs):
    d = {}
    for k, val in pairs:
        if k in d: raise ValueError('duplicate key')
        d[k] = val
    return d

def mth(leaves):
    """RFC 6962 root (section 6)."""
    if not leaves: return H(b'')
    if len(leaves) == 1: return leaves[0]
    k = 1
    while k * 2 < len(leaves): k *= 2
    return H(b'\x01', mth(leaves[:k]), mth(leaves[k:]))

KEYS = {
    'genesis': ({'kind', 'protocol', 'spec'}, set()),
    'frame': ({'kind', 'session', 'ordinal', 'parent', 'time', 'frameRoot'}, {'data'}),
    'turn': ({'kind', 'session', 'ordinal', 'parent', 'frameRoot', 'body'}, {'ruling'}),
    'finalize': ({'kind', 'session', 'parent', 'size', 'root'}, {'artifacts'}),
}

def verify(data):
    if not data.endswith(b'\n'): return {'ok': False, 'index': 0, 'error': 'no final newline'}
    lines = data[:-1].split(b'\n')
    leaves, hashes = [], []
    sid = prev = None
    expect, pending, last_time, sealed = -1, None, 0, False
    for i, raw in enumerate(lines):
        def fail(msg): return {'ok': False, 'index': i, 'error': msg}
        if sealed: return fail('entry after the seal')
        if len(raw) > 1048576: return fail('too-large')
        try:
            text = raw.decode('utf-8')  # strict, and keeps a BOM (json.loads then refuses it)
            e = json.loads(text, object_pairs_hook=no_dupes, parse_float=lambda s: float(s), parse_constant=lambda s: float(s))
            # Section 2.1: the RAW bytes must be the UTF-8 of the canonical encoding.
            if canon(e).encode('utf-8') != raw: return fail('not canonical')
        except (ValueError, UnicodeDecodeError) as err:
            return fail('unreadable: %s' % err)
        if not isinstance(e, dict) or e.get('kind') not in KEYS: return fail('unknown kind')
        need, opt = KEYS[e['kind']]
        if not need <= set(e) or set(e) - need - opt: return fail('wrong keys')
        leaf = H(b'\x00', raw)
        h = leaf.hex()
        if i == 0:
            if e['kind'] != 'genesis' or e['protocol'] != 'tally/1': return fail('not a tally/1 genesis')
            name = e['spec'].get('name') if isinstance(e['spec'], dict) else None
            if not isinstance(name, str) or not name.strip() or len(name.encode('utf-16-le')) // 2 > 200: return fail('bad spec name')
            sid = h
        else:
            for f in ('session', 'parent') + (('frameRoot',) if 'frameRoot' in e else ()) + (('root',) if 'root' in e else ()):
                if not isinstance(e[f], str) or not HEX64.match(e[f]): return fail('bad digest ' + f)
            if e['kind'] == 'genesis': return fail('second genesis')
            if e['session'] != sid: return fail('wrong session')
            if e['parent'] != prev: return fail('broken link')
            if e['kind'] == 'frame':
                if pending is not None: return fail('frame while a frame is pending')
                if type(e['ordinal']) is not int or e['ordinal'] != expect: return fail('bad ordinal')
                if type(e['time']) is not int or e['time'] < last_time: return fail('bad time')
                content = {'ordinal': e['ordinal'], 'time': e['time']}
                if 'data' in e: content['data'] = e['data']
                root = tagged('tally/v1/frame-root', canon(content).encode('utf-8')).hex()
                if root != e['frameRoot']: return fail('bad frame root')
                pending, last_time = (e['ordinal'], root), e['time']
            elif e['kind'] == 'turn':
                if pending is None or e['ordinal'] != pending[0] or e['frameRoot'] != pending[1]: return fail('turn does not answer the frame')
                b = e['body']
                if not isinstance(b, dict): return fail('bad body')
                if b.get('kind') == 'authored' and set(b) == {'kind', 'bytes', 'hash'}:
                    try: authored = base64.b64decode(b['bytes'], validate=True)
                    except (binascii.Error, TypeError): return fail('bad base64')
                    if base64.b64encode(authored).decode() != b['bytes'] or len(authored) > 262144: return fail('non-canonical base64')
                    if tagged('tally/v1/authored', authored).hex() != b['hash']: return fail('bad authored hash')
                elif not (b.get('kind') == 'stand-down' and set(b) == {'kind', 'failureClass'} and b['failureClass'] in ('provider', 'timeout', 'malformed')):
                    return fail('bad body')
                if 'ruling' in e and not isinstance(e['ruling'], dict): return fail('bad ruling')
                expect, pending = pending[0] + 1, None
            else:
                if pending is not None: return fail('seal with a pending frame')
                if e['size'] != i: return fail('bad seal size')
                if mth(leaves).hex() != e['root']: return fail('bad seal root')
                sealed = True
        leaves.append(leaf); hashes.append(h); prev = h
    if not sealed: return {'ok': False, 'index': len(lines) - 1, 'error': 'not sealed'}
    return {'ok': True, 'sessionId': sid, 'size': len(leaves), 'receiptRoot': mth(leaves).hex(), 'entryHashes': hashes}

if __name__ == '__main__':
    with open(sys.argv[1], 'rb') as fh:
        result = verify(fh.read())
    print(json.dumps(result))
    sys.exit(0 if result['ok'] else 1)
