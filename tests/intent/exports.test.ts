import { expect, test } from 'vitest';
import * as intent from '../../src/intent/index.js';

test('the public surface of agent-tally/intent is deliberate', () => {
  expect(Object.keys(intent).sort()).toEqual([
    'DECIMAL_LITERAL_PATTERN',
    'DEFAULT_INTENT_LIMITS',
    'EIP191_PREFIX',
    'INTENT_ACTIONS',
    'INTENT_CODES',
    'INTENT_CODE_STAGE',
    'INTENT_RULING_CATALOGUE',
    'INTENT_STAGES',
    'MAX_CANONICAL_FRACTION_DIGITS',
    'MAX_CANONICAL_INTEGER_DIGITS',
    'MAX_DECIMAL_EXPONENT',
    'MAX_DECIMAL_LITERAL_LENGTH',
    'MAX_TOKEN_LENGTH',
    'canonicalDecimal',
    'canonicalPayload',
    'carriedIntent',
    'createIntentPool',
    'createNonceGuard',
    'createSignerCache',
    'eip191Digest',
    'hashCanonicalPayload',
    'intentHash',
    'intentJsonSchema',
    'intentSchema',
    'normalizeTtl',
    'recoverIntentSigner',
    'signIntent',
    'unsignedIntentJsonSchema',
    'unsignedIntentSchema',
    'validateIntent',
    'verifyIntentSignature',
  ]);
});

