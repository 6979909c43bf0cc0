/**
 * `checkout.line_items` (AP2 docs/ap2/checkout_mandate.md, "Evaluation"): the
 * constraint is met iff the maximal flow from requirements to cart items
 * equals both the requirements' total quantity and the cart's. Tally admits
 * requirements with disjoint acceptable items (shared ones are refused at
 * parse) and checks each requirement's count; this property compares that
 * with a max-flow written here from the spec's five-step graph, on random
 * requirements and carts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateCheckout, parseConstraints } from '../../src/mandates/index.js';

/** The spec's graph: source → requirement (capacity quantity) → cart item (∞, if acceptable) → sink (capacity the cart's quantity). */
function maxFlow(reqs: { acceptable: string[]; quantity: number }[], cart: Map<string, number>): number {
  const items = [...cart.keys()];
  const n = 2 + reqs.length + items.length, S = 0, T = n - 1;
  const cap = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  reqs.forEach((r, i) => {
    cap[S]![1 + i] = r.quantity;
    items.forEach((it, j) => { if (r.acceptable.includes(it)) cap[1 + i]![1 + reqs.length + j] = Infinity; });
  });
  items.forEach((it, j) => { cap[1 + reqs.length + j]![T] = cart.get(it)!; });
  let flow = 0;
  for (;;) {
    const prev = new Array<number>(n).fill(-1);
    prev[S] = S;
    const q = [S];
    while (q.length > 0 && prev[T] === -1) { const u = q.shift()!; for (let v = 0; v < n; v++) if (prev[v] === -1 && cap[u]![v]! > 0) { prev[v] = u; q.push(v); } }
    if (prev[T] === -1) return flow;
    let f = Infinity;
    for (let v = T; v !== S; v = prev[v]!) f = Math.min(f, cap[prev[v]!]![v]!);
    for (let v = T; v !== S; v = prev[v]!) { cap[prev[v]!]![v]! -= f; cap[v]![prev[v]!]! += f; }
    flow += f;
  }
}

const SEED = 0x11e5;
describe(`checkout.line_items against the spec's max-flow (seed ${SEED.toString(16)})`, () => {
  it('the verdict is the max-flow condition on every cart, for disjoint requirements', () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const arb = fc.record({
      owner: fc.array(fc.integer({ min: -1, max: 2 }), { minLength: ids.length, maxLength: ids.length }), // which requirement (or none) accepts each id
      quantities: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 3, maxLength: 3 }),
      cart: fc.array(fc.record({ id: fc.constantFrom(...ids), quantity: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 5 }),
    });
    fc.assert(fc.property(arb, ({ owner, quantities, cart }) => {
      const reqs = quantities.map((quantity, r) => ({ acceptable: ids.filter((_, i) => owner[i] === r), quantity })).filter((r) => r.acceptable.length > 0);
      fc.pre(reqs.length > 0);
      const parsed = parseConstraints([{ type: 'checkout.line_items', items: reqs.map((r, i) => ({ id: `req-${i}`, acceptable_items: r.acceptable.map((id) => ({ id, title: id })), quantity: r.quantity })) }], 'checkout');
      if (!parsed.ok) throw new Error(parsed.code);
      const qty = new Map<string, number>();
      for (const li of cart) qty.set(li.id, (qty.get(li.id) ?? 0) + li.quantity);
      const flow = maxFlow(reqs, qty);
      const met = flow === reqs.reduce((s, r) => s + r.quantity, 0) && flow === [...qty.values()].reduce((s, x) => s + x, 0);
      const violations = evaluateCheckout(parsed.value, { merchant: { id: 'm', name: 'M' }, lineItems: cart });
      expect(violations.length === 0).toBe(met);
    }), { seed: SEED, numRuns: 400 });
  });
});
