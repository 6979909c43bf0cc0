#!/usr/bin/env python3
"""A Tally bundle verifier in another language, written from docs/PROTOCOL.md
(sections 1-6) alone, with Python's standard library only.

Usage: python3 verify_bundle.py <bundle.jsonl>
Prints one JSON line: {"ok": true, "sessionId", "size", "receiptRoot", "sealed", "entryHashes"}
or {"ok": false, "index", "code", "error"} (the first error, section 14.1); exits 0 or 1.
       python3 verify_bundle.py --corpus docs/vectors/bundles.json
Runs the conformance corpus (section 14.2) and prints one result per case, in order.
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

class Obj(dict): pass

def _undupe(v):
    if isinstance(v, PairList):
        d = Obj()
        for k, val in v:
            if k in d: raise ValueError('duplicate key')
            d[k] = _undupe(val)
        return d
    if isinstance(v, list): return [_undupe(x) for x in v]
    return v

class PairList(list): pass

DIGEST = lambda v: isinstance(v, str) and HEX64.match(v) is not None
INT = lambda v: type(v) is int
SAFE = lambda v: INT(v) and abs(v) <= 2**53 - 1

def structure(e):
    """Section 4 and 5 step 2: exactly the keys of the kind, with their types; None when well formed."""
    if not isinstance(e, dict) or e.get('kind') not in KEYS: return 'unknown kind'
    need, opt = KEYS[e['kind']]
    if not need <= set(e) or set(e) - need - opt: return 'wrong keys'
    k = e['kind']
    if k == 'genesis':
        if e['protocol'] != 'tally/1' or not isinstance(e['spec'], dict): return 'not a tally/1 genesis'
        name = e['spec'].get('name')
        # "not only whitespace" is ECMAScript String.prototype.trim's set (section 4.1).
        if not isinstance(name, str) or not name.strip(ES_WS) or len(name.encode('utf-16-le')) // 2 > 200: return 'bad spec name'
        return None
    if not DIGEST(e['session']) or not DIGEST(e['parent']): return 'bad digest'
    if k == 'frame':
        if not DIGEST(e['frameRoot']) or not SAFE(e['ordinal']) or e['ordinal'] < -1 or not SAFE(e['time']) or e['time'] < 0: return 'bad frame'
    elif k == 'turn':
        if not DIGEST(e['frameRoot']) or not SAFE(e['ordinal']) or e['ordinal'] < -1: return 'bad turn'
        b = e['body']
        if not isinstance(b, dict): return 'bad body'
        if b.get('kind') == 'authored':
            if set(b) != {'kind', 'bytes', 'hash'} or not isinstance(b['bytes'], str) or not DIGEST(b['hash']): return 'bad body'
        elif not (b.get('kind') == 'stand-down' and set(b) == {'kind', 'failureClass'} and b['failureClass'] in ('provider', 'timeout', 'malformed')): return 'bad body'
        if 'ruling' in e and not isinstance(e['ruling'], dict): return 'bad ruling'
    else:
        if not SAFE(e['size']) or e['size'] < 0 or not DIGEST(e['root']): return 'bad seal'
        if 'artifacts' in e and not isinstance(e['artifacts'], dict): return 'bad artifacts'
    return None

# ECMAScript WhiteSpace and LineTerminator (what String.prototype.trim removes): U+FEFF counts,
# U+0085 and U+001C do not (section 4.1).
ES_WS = '\t\n\u000b\u000c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff'

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

def read_line(raw):
    """Section 5 steps 1-2 for one line (after its size): ('code', why) on failure, else (None, entry)."""
    try:
        text = raw.decode('utf-8')  # strict, and keeps a BOM (json.loads then refuses it)
    except UnicodeDecodeError:
        return 'not-utf8', 'not UTF-8'
    try:
        e = json.loads(text, object_pairs_hook=PairList, parse_float=lambda s: float(s), parse_constant=lambda s: float(s))
    except ValueError as err:
        return 'not-json', str(err)
    try:
        # Section 2.1: duplicate keys, lone surrogates and depth fail at the canonical step;
        # the RAW bytes must be the UTF-8 of the canonical encoding.
        e = _undupe(e)
        if canon(e).encode('utf-8') != raw: return 'not-canonical', 'not canonical'
    except (ValueError, RecursionError) as err:
        return 'not-canonical', str(err)
    bad = structure(e)
    if bad: return 'bad-structure', bad
    return None, e

def frame_root(e):
    """Section 3: the frame root of a frame entry's content."""
    content = {'ordinal': e['ordinal'], 'time': e['time']}
    if 'data' in e: content['data'] = e['data']
    return tagged('tally/v1/frame-root', canon(content).encode('utf-8')).hex()

def authored_code(b):
    """Section 4.3: None when an authored body's bytes and hash hold, else the error code."""
    try: authored = base64.b64decode(b['bytes'], validate=True)
    except (binascii.Error, TypeError): return 'bad-authored-bytes'
    if base64.b64encode(authored).decode() != b['bytes'] or len(authored) > 262144: return 'bad-authored-bytes'
    if tagged('tally/v1/authored', authored).hex() != b['hash']: return 'bad-authored-hash'
    return None

def verify(data, require_sealed=True, pin=None):
    """Section 5; the first failing check decides the reported index and code (section 14.1)."""
    if not data: return {'ok': False, 'index': 0, 'code': 'empty', 'error': 'empty bundle'}
    lines = data.split(b'\n')
    tail = lines.pop()  # b'' when the bundle ends with 0x0A
    if tail: lines.append(tail)
    leaves, hashes = [], []
    sid = prev = None
    expect, pending, last_time, sealed = -1, None, 0, False
    for i, raw in enumerate(lines):
        def fail(code, msg=''): return {'ok': False, 'index': i, 'code': code, 'error': msg or code}
        if len(raw) > 1048576: return fail('too-large')
        if tail and i == len(lines) - 1 and not sealed: return fail('missing-newline')
        if sealed: return fail('after-seal')
        code, e = read_line(raw)
        if code: return fail(code, e)
        leaf = H(b'\x00', raw)
        h = leaf.hex()
        if i == 0:
            if e['kind'] != 'genesis': return fail('not-genesis')
            sid = h
        else:
            if e['kind'] == 'genesis': return fail('unexpected-entry', 'second genesis')
            if e['session'] != sid: return fail('wrong-session')
            if e['parent'] != prev: return fail('broken-link')
            if e['kind'] == 'frame':
                if pending is not None: return fail('unexpected-entry', 'frame while a frame is pending')
                if e['ordinal'] != expect: return fail('bad-ordinal')
                if e['time'] < last_time: return fail('time-regressed')
                root = frame_root(e)
                if root != e['frameRoot']: return fail('bad-frame-root')
                pending, last_time = (e['ordinal'], root), e['time']
            elif e['kind'] == 'turn':
                if pending is None: return fail('unexpected-entry', 'turn without a pending frame')
                if e['ordinal'] != pending[0]: return fail('bad-ordinal')
                if e['frameRoot'] != pending[1]: return fail('bad-frame-root')
                b = e['body']
                if b['kind'] == 'authored' and authored_code(b): return fail(authored_code(b))
                expect, pending = pending[0] + 1, None
            else:
                if pending is not None: return fail('unexpected-entry', 'seal with a pending frame')
                if e['size'] != i: return fail('bad-seal-size')
                if mth(leaves).hex() != e['root']: return fail('bad-seal-root')
                sealed = True
        leaves.append(leaf); hashes.append(h); prev = h
    # Section 14.1: a missing seal is reported at index n, where the seal should be.
    if require_sealed and not sealed: return {'ok': False, 'index': len(lines), 'code': 'not-sealed', 'error': 'not sealed'}
    root = mth(leaves).hex()
    pin = pin or {}
    if 'sessionId' in pin and pin['sessionId'] != sid: return {'ok': False, 'index': 0, 'code': 'pin-mismatch', 'error': 'session id'}
    for k, val in (('size', len(leaves)), ('receiptRoot', root)):
        if k in pin and pin[k] != val: return {'ok': False, 'index': len(leaves) - 1, 'code': 'pin-mismatch', 'error': k}
    return {'ok': True, 'sessionId': sid, 'size': len(leaves), 'receiptRoot': root, 'sealed': sealed, 'entryHashes': hashes}

def corpus(path):
    """Runs docs/vectors/bundles.json (section 14): one result per case, in order."""
    with open(path, 'rb') as fh: cases = json.load(fh)['cases']
    out = []
    for c in cases:
        data = b''.join(bytes.fromhex(p['hex']) if 'hex' in p else (p['repeat'] * p['times']).encode('utf-8') for p in c['parts'])
        o = c.get('options', {})
        r = verify(data, o.get('requireSealed', True), o.get('pin'))
        r.pop('entryHashes', None); r.pop('error', None)
        out.append(r)
    return out

if __name__ == '__main__' and sys.argv[1:2] == ['--corpus']:
    print(json.dumps(corpus(sys.argv[2])))
    sys.exit(0)

if __name__ == '__main__':
    with open(sys.argv[1], 'rb') as fh:
        result = verify(fh.read())
    print(json.dumps(result))
    sys.exit(0 if result['ok'] else 1)
