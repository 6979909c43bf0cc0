#!/usr/bin/env python3
"""Signed Intents and judge verdict signatures in another language, written from
docs/PROTOCOL.md (sections 9 and 10) with Python's standard library only:
Keccak-256 (the original padding, not SHA-3's), secp256k1 public-key recovery,
EIP-191 personal_sign, EIP-55 addresses, the canonical payload and the
validation order (stages a to f).

Usage: python3 verify_intent.py --corpus docs/vectors/intents.json
Prints {"signed": [{payload, intentHash, eip191Digest, signer}], "validations": [result]}.
       python3 verify_intent.py --verdicts docs/vectors/verdicts.json
Prints, per verdict, {"signer": <recovered address, lowercase, or null>, "trusted": bool}.
"""
import datetime, hashlib, json, re, sys
from decimal import Decimal

# ---- Keccak-256 (Keccak-f[1600], rate 136 bytes, padding 0x01 ... 0x80)
M64 = (1 << 64) - 1
RC = [0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000, 0x000000000000808B, 0x0000000080000001,
      0x8000000080008081, 0x8000000000008009, 0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
      0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003, 0x8000000000008002, 0x8000000000000080,
      0x000000000000800A, 0x800000008000000A, 0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008]
ROT = [[0, 36, 3, 41, 18], [1, 44, 10, 45, 2], [62, 6, 43, 15, 61], [28, 55, 25, 21, 56], [27, 20, 39, 8, 14]]
rol = lambda x, n: ((x << n) | (x >> (64 - n))) & M64 if n else x

def keccak_f(A):
    for rc in RC:
        C = [A[x][0] ^ A[x][1] ^ A[x][2] ^ A[x][3] ^ A[x][4] for x in range(5)]
        D = [C[(x - 1) % 5] ^ rol(C[(x + 1) % 5], 1) for x in range(5)]
        A = [[A[x][y] ^ D[x] for y in range(5)] for x in range(5)]
        B = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5): B[y][(2 * x + 3 * y) % 5] = rol(A[x][y], ROT[x][y])
        A = [[B[x][y] ^ (~B[(x + 1) % 5][y] & B[(x + 2) % 5][y] & M64) for y in range(5)] for x in range(5)]
        A[0][0] ^= rc
    return A

def keccak256(data):
    msg = bytearray(data) + b'\x01'
    while len(msg) % 136: msg += b'\x00'
    msg[-1] |= 0x80
    A = [[0] * 5 for _ in range(5)]
    for off in range(0, len(msg), 136):
        for i in range(17): A[i % 5][i // 5] ^= int.from_bytes(msg[off + 8 * i:off + 8 * i + 8], 'little')
        A = keccak_f(A)
    return b''.join(A[i % 5][i // 5].to_bytes(8, 'little') for i in range(4))

# ---- secp256k1 recovery (Jacobian coordinates)
P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798, 0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8, 1)

def jdouble(p):
    x, y, z = p
    if y == 0: return (0, 0, 0)
    s, m = 4 * x * y * y % P, 3 * x * x % P
    nx = (m * m - 2 * s) % P
    return (nx, (m * (s - nx) - 8 * pow(y, 4, P)) % P, 2 * y * z % P)

def jadd(p, q):
    if p[2] == 0: return q
    if q[2] == 0: return p
    u1, u2 = p[0] * q[2] ** 2 % P, q[0] * p[2] ** 2 % P
    s1, s2 = p[1] * q[2] ** 3 % P, q[1] * p[2] ** 3 % P
    if u1 == u2: return jdouble(p) if s1 == s2 else (0, 0, 0)
    h, r = u2 - u1, s2 - s1
    h2, h3 = h * h % P, h * h * h % P
    nx = (r * r - h3 - 2 * u1 * h2) % P
    return (nx, (r * (u1 * h2 - nx) - s1 * h3) % P, h * p[2] * q[2] % P)

def jmul(k, p):
    acc = (0, 0, 0)
    while k:
        if k & 1: acc = jadd(acc, p)
        p, k = jdouble(p), k >> 1
    return acc

def recover(digest, sig):
    """The address (20 bytes) that signed `digest`, under section 9's rules (low s, v in {27, 28}), or None."""
    if not re.fullmatch(r'0x[0-9a-fA-F]{130}', sig or ''): return None
    raw = bytes.fromhex(sig[2:])
    r, s, v = int.from_bytes(raw[:32], 'big'), int.from_bytes(raw[32:64], 'big'), raw[64]
    if v not in (27, 28) or not 1 <= r < N or not 1 <= s <= N // 2: return None
    y2 = (pow(r, 3, P) + 7) % P
    y = pow(y2, (P + 1) // 4, P)
    if y * y % P != y2: return None
    if y % 2 != v - 27: y = P - y
    rinv, e = pow(r, N - 2, N), int.from_bytes(digest, 'big')
    q = jadd(jmul(-e * rinv % N, G), jmul(s * rinv % N, (r, y, 1)))
    if q[2] == 0: return None
    zi = pow(q[2], P - 2, P)
    x, yy = q[0] * zi * zi % P, q[1] * zi * zi * zi % P
    return keccak256(x.to_bytes(32, 'big') + yy.to_bytes(32, 'big'))[12:]

def eip55(addr):
    h = keccak256(addr.hex().encode()).hex()
    return '0x' + ''.join(c.upper() if c.isalpha() and int(h[i], 16) >= 8 else c for i, c in enumerate(addr.hex()))

def eip191(text):
    body = text.encode('utf-8')
    return keccak256(b'\x19Ethereum Signed Message:\n' + str(len(body)).encode() + body)

# ---- Section 9: normalisation, canonical payload, validation order
TOKEN = re.compile(r'^[\x21-\x7e]{1,128}$')
MARKET = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._/:-]{0,63}$')
DECIMAL = re.compile(r'^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$')
TTL = re.compile(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,3})?)?(?:Z|[+-][0-9]{2}:[0-9]{2})$')
POSITION = {'agent_id', 'nonce', 'ttl', 'size', 'market', 'side', 'leverage', 'max_slippage'}
SHAPES = {  # action: (required, optional), besides action and signature
    'open': (POSITION, {'tp', 'sl', 'target_address'}), 'modify': (POSITION, {'tp', 'sl', 'target_address'}),
    'close': ({'agent_id', 'nonce', 'ttl', 'size', 'market', 'max_slippage'}, {'target_address'}),
    'transfer': ({'agent_id', 'nonce', 'ttl', 'size'}, {'target_address'}),
}
DECIMALS = {'size', 'leverage', 'max_slippage', 'tp', 'sl'}

def canon_decimal(v):
    if isinstance(v, bool) or not isinstance(v, (int, str)) or (isinstance(v, str) and not DECIMAL.match(v)): return None
    d = Decimal(v)
    if d == 0: return '0'
    t = format(abs(d), 'f')
    ip, _, fp = t.partition('.')
    fp = fp.rstrip('0')
    return ('-' if d < 0 else '') + (ip.lstrip('0') or '0') + ('.' + fp if fp else '')

def ttl_ms(v):
    if isinstance(v, int) and not isinstance(v, bool): return v
    if not isinstance(v, str) or not TTL.match(v): return None
    try: t = datetime.datetime.fromisoformat(v)
    except ValueError: return None
    return round(t.timestamp() * 1000)

def normalise(i):
    """Stage a: the normalised Intent (every value a string), or None."""
    if not isinstance(i, dict) or i.get('action') not in SHAPES: return None
    need, opt = SHAPES[i['action']]
    if not need <= set(i) - {'action', 'signature'} or set(i) - need - opt - {'action', 'signature'}: return None
    if not isinstance(i.get('signature'), str) or not re.fullmatch(r'0x[0-9a-fA-F]{130}', i['signature']): return None
    out = {'action': i['action']}
    for k, v in i.items():
        if k in ('action', 'signature'): continue
        if k in DECIMALS: v = canon_decimal(v)
        elif k == 'ttl':
            ms = ttl_ms(v)
            v = None if ms is None else datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (ms % 1000)
        elif k == 'nonce': v = str(v) if isinstance(v, int) and not isinstance(v, bool) else v if isinstance(v, str) and TOKEN.match(v) else None
        elif k == 'agent_id': v = v if isinstance(v, str) and TOKEN.match(v) else None
        elif k == 'market': v = v if isinstance(v, str) and MARKET.match(v) else None
        elif k == 'side': v = v if v in ('long', 'short') else None
        elif k == 'target_address': v = v.lower() if isinstance(v, str) and re.fullmatch(r'0x[0-9a-fA-F]{40}', v) else None
        if v is None: return None
        out[k] = v
    return out

def payload_of(n):
    return json.dumps({k: v for k, v in n.items() if k != 'signature'}, sort_keys=True, separators=(',', ':'))

def shape(v):
    s = v.lstrip('-')
    ip, _, fp = s.partition('.')
    return v.startswith('-'), s == '0', 0 if ip == '0' else len(ip), len(fp)

def validate(intent, registry, used, now, options):
    n = normalise(intent)
    if n is None: return {'ok': False, 'stage': 'schema', 'code': 'invalid_schema'}
    payload = payload_of(n)
    h = '0x' + keccak256(payload.encode()).hex()
    fail = lambda stage, code: {'ok': False, 'stage': stage, 'code': code}
    expected = registry.get(n['agent_id'])
    if expected is None: return fail('signature', 'unknown_signer')
    got = recover(eip191(payload), intent['signature'])
    if got is None or '0x' + got.hex() != expected.lower(): return fail('signature', 'bad_signature')
    if [n['agent_id'], n['nonce']] in used: return fail('nonce', 'replayed_nonce')
    skew, horizon, t = options.get('clockSkewMs', 0), options.get('maxTtlHorizonMs'), ttl_ms(n['ttl'])
    if t + skew < now: return fail('ttl', 'expired')
    if horizon is not None and t - skew > now + horizon: return fail('ttl', 'ttl_too_far')
    fields = [(k, n[k]) for k in ('size', 'leverage', 'max_slippage', 'tp', 'sl') if k in n]
    for k, v in fields:
        neg, zero, _, _ = shape(v)
        if k == 'max_slippage':
            if neg or Decimal(v) > 1: return fail('bounds', 'slippage_out_of_range')
        elif neg or zero: return fail('bounds', {'size': 'nonpositive_size', 'leverage': 'nonpositive_leverage', 'tp': 'nonpositive_tp', 'sl': 'nonpositive_sl'}[k])
    limits = options.get('limits', {})
    if any(shape(v)[2] > limits.get('maxIntegerDigits', 18) for _, v in fields): return fail('bounds', 'magnitude_exceeded')
    if any(shape(v)[3] > limits.get('maxFractionDigits', 18) for _, v in fields): return fail('bounds', 'scale_exceeded')
    if n['action'] == 'transfer' and 'target_address' not in n: return fail('target', 'target_required_on_transfer')
    if n['action'] != 'transfer' and 'target_address' in n: return fail('target', 'target_only_on_transfer')
    return {'ok': True, 'intentHash': h, 'signer': eip55(got)}

def corpus(path):
    with open(path, encoding='utf-8') as fh: v = json.load(fh)
    signed = []
    for c in v['signed']:
        n = normalise(c['intent'])
        p = payload_of(n)
        got = recover(eip191(p), c['intent']['signature'])
        signed.append({'payload': p, 'intentHash': '0x' + keccak256(p.encode()).hex(), 'eip191Digest': '0x' + eip191(p).hex(), 'signer': got and eip55(got)})
    vals = [validate(c['intent'], v['registry'], c.get('usedNonces', []), v['now'], c.get('options', {})) for c in v['validations']]
    return {'signed': signed, 'validations': vals}

def verdicts(path):
    """Section 10: the signed text is <model>:<sha256(request)>:<sha256(response)>, EIP-191."""
    with open(path, encoding='utf-8') as fh: v = json.load(fh)
    out = []
    import base64
    for c in v['verdicts']:
        text = '%s:%s:%s' % (c['model'], c['requestSha256'], hashlib.sha256(base64.b64decode(c['response'])).hexdigest())
        got = recover(eip191(text), c['signature'])
        signer = got and '0x' + got.hex()
        out.append({'signer': signer, 'trusted': signer in c['trusted']})
    return out

if __name__ == '__main__':
    mode, path = sys.argv[1:3]
    print(json.dumps(corpus(path) if mode == '--corpus' else verdicts(path)))
