import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo, demoSpec, type DemoReport } from '../../src/demo/run.js';
import { demoRuler } from '../../src/demo/referee.js';
import { driveDay } from '../../src/demo/driver.js';
import { DeskAgent } from '../../src/demo/agent.js';
import { MarketSim } from '../../src/demo/market.js';
import { CLOSING_ACTS, PROBES, TURN_ACTS, planDay, type TurnActDef } from '../../src/demo/script.js';
import { DEMO_JUDGE_TIMEOUT_MS } from '../../src/demo/judges.js';
import { readTimeline } from '../../src/demo/timeline.js';
import { Engine } from '../../src/session/index.js';
import { INTENT_CODES } from '../../src/intent/index.js';
import { FAILURE_CLASSES, SESSION_DIAGNOSTICS } from '../../src/protocol/index.js';
import { SqliteStore, type TranscriptStore } from '../../src/store/index.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'tally-demo-'));

describe('a demo day (seed 1, 48 wakes, in process)', async () => {
  const dir = tmp();
  const report: DemoReport = await runDemo({ seed: 1, wakes: 48, out: dir, db: 'memory:' });
  const timeline = await readTimeline(report.files.bundle);

  it('passes every check: bundle, signed receipt, replay, single-turn receipt', () => {
    for (const c of Object.values(report.checks)) expect(c, c.detail).toMatchObject({ ok: true });
    expect(report.mode).toBe('new');
    expect(report.counts.entries).toBe(report.receipt.size);
    expect(report.counts.frames).toBe(49);
    expect(report.counts.turns).toBe(49);
  });

  it('shows every misbehaviour: each intent code, each stand-down class, each diagnostic, duplicates', () => {
    for (const code of INTENT_CODES) expect(report.counts.rejectedByCode, code).toHaveProperty(code);
    for (const c of FAILURE_CLASSES) expect(report.counts.standDowns, c).toHaveProperty(c);
    for (const d of SESSION_DIAGNOSTICS) expect(report.diagnostics, d).toHaveProperty(d);
    expect(report.diagnostics['duplicate']).toBeGreaterThanOrEqual(2);
    for (const action of ['open', 'modify', 'close', 'transfer']) expect(report.counts.admittedByAction, action).toHaveProperty(action);
  });

  it('runs under the referee: mandate breaches, the quota, the transaction cap, the termination, redemptions, a release, a refused double fill', () => {
    for (const code of ['cap_exceeded', 'market_not_allowed', 'target_not_allowed', 'quota_exhausted', 'tx_cap_reached', 'mandate_terminated', 'judge_rate_limited']) expect(report.counts.rejectedByCode, code).toHaveProperty(code);
    expect(report.referee.transitions).toMatchObject({ release: 1, ticket_not_active: 1, terminate: 1 });
    // The principal's termination rides in the last frame.
    expect(timeline.rows.find((r) => r.kind === 'frame' && r.ordinal === 47)).toMatchObject({ referee: { terminate: true } });
    expect(report.referee.transitions['redeem']).toBeGreaterThan(5);
    // Every admitted order's ticket is settled in the next frame; the close admits nothing.
    expect((report.referee.tickets['REDEEMED'] ?? 0) + (report.referee.tickets['RELEASED'] ?? 0)).toBe(report.counts.admitted);
    // The desk spent its transaction budget exactly by the close.
    expect(report.referee.quota.used_txs + report.referee.quota.locked_txs).toBe(report.referee.quota.tx_cap);
    // Judged but not allowed: the prompt injection (0 of 3) and the trade on a tip (1 of 3).
    expect(report.referee.verdicts.judged - report.referee.verdicts.allowed).toBe(2);
    expect(Number(report.referee.quota.used)).toBeGreaterThan(0);
    expect(report.counts.quota).toMatchObject({ cap: report.referee.quota.cap });
  });

  it('the panel of three splits for real: 2 of 3 admits, 1 of 3 denies; a judge times out, one signs with a stranger key, one garbles', () => {
    expect(report.counts.panels).toMatchObject({ '2 of 3 allow → admitted': 4, '1 of 3 allow → denied': 1, '0 of 3 allow → denied': 1 });
    expect(report.counts.judgeAnswers).toMatchObject({ timeout: 1, judge_untrusted_signer: 1, judge_unparsable: 1 });
    expect(report.counts.judgeAnswers['judge_denied']).toBe(3 + 2 + 1);
    expect(report.counts.rejectedByCode['judge_quorum_not_met']).toBe(2);
    const late = timeline.rows.find((r) => r.kind === 'turn' && r.panel?.answers.some((a) => a.outcome === 'timeout'));
    if (late?.kind !== 'turn' || !late.panel) throw new Error('no timed-out judge');
    expect(late.panel).toMatchObject({ k: 2, n: 3, allow: 2, admitted: true });
    expect(late.panel.answers.find((a) => a.outcome === 'timeout')).toMatchObject({ model: 'tally-local-cautious-v1', message: `no answer within ${DEMO_JUDGE_TIMEOUT_MS} ms` });
  });

  it('each scripted act is recorded at its wake with exactly the ruling it was scripted for', () => {
    const plan = planDay(1, 48);
    for (const [ord, act] of plan.acts) {
      const def: TurnActDef = [...TURN_ACTS, ...CLOSING_ACTS].find((a) => a.name === act)!;
      const turn = timeline.rows.find((r) => r.kind === 'turn' && r.ordinal === ord);
      if (turn?.kind !== 'turn') throw new Error(`no turn at ${ord}`);
      const e: TurnActDef['expect'] = def.expect;
      const panel = 'panel' in e ? e.panel : undefined;
      if (panel) {
        expect(turn.panel, act).toMatchObject({ admitted: panel.admitted, allow: panel.allow, k: 2, n: 3 });
        if (panel.answer !== undefined) expect(turn.panel?.answers.map((a) => a.outcome), act).toContain(panel.answer);
      }
      if ('standDown' in e) expect(turn.failureClass, act).toBe(e.standDown);
      else if ('code' in e) expect(turn.rulings.find((r) => !r.admitted), act).toMatchObject({ admitted: false, code: e.code });
      else if ('panel' in e) expect(turn.rulings.every((r) => r.admitted) && turn.ticket !== undefined, act).toBe(true);
      else {
        // Admitted; the next frame settles its ticket: released, or a transition about it refused.
        expect(turn.rulings.every((r) => r.admitted), act).toBe(true);
        const next = timeline.rows.find((r) => r.kind === 'turn' && r.ordinal === ord + 1);
        const frame = timeline.rows.find((r) => r.kind === 'frame' && r.ordinal === ord + 1);
        if ('released' in e) expect(frame?.kind === 'frame' && frame.referee?.released, act).toEqual([turn.ticket]);
        else expect(next?.kind === 'turn' && next.transitions?.find((t) => !t.ok), act).toMatchObject({ ticket: turn.ticket, code: e.transition });
      }
    }
  });

  it('every ordinary intent of the agents is admitted (only the scripted acts are rejected)', () => {
    const acts = planDay(1, 48).acts;
    for (const r of timeline.rows) if (r.kind === 'turn' && r.body === 'intent' && !acts.has(r.ordinal)) expect(r.rulings[0], `wake ${r.ordinal}`).toMatchObject({ admitted: true });
  });

  it('every probe got the outcome it was scripted for, and wrote nothing', () => {
    const notices = timeline.rows.flatMap((r) => (r.kind === 'frame' || r.kind === 'seal' ? (r.notices ?? []) : []));
    expect(notices.length).toBeGreaterThanOrEqual(PROBES.length);
    for (const n of notices) expect(n.outcome, n.probe).toBe(PROBES.find((p) => p.name === n.probe)?.expect);
    expect(report.diagnostics['sealed']).toBe(1);
  });

  it('writes the files a person expects', () => {
    expect(readFileSync(report.files.checkpoint, 'utf8')).toMatch(/^demo\.tally\.invalid\/[0-9a-f]{64}\n\d+\n/);
    expect(JSON.parse(readFileSync(report.files.receipt, 'utf8'))).toMatchObject({ receiptRoot: report.receipt.receiptRoot, verifierKey: report.verifierKey });
    expect(readFileSync(report.files.proof, 'utf8')).toMatch(/^c2sp\.org\/tlog-proof@v1\nextra /);
    expect(JSON.parse(readFileSync(report.files.summary, 'utf8'))).toMatchObject({ receipt: report.receipt });
  });

  it('is deterministic: another run (other directory) gives the same bundle bytes and receipt root', async () => {
    const again = await runDemo({ seed: 1, wakes: 48, out: tmp(), db: 'memory:' });
    expect(again.receipt).toEqual(report.receipt);
    expect(readFileSync(again.files.bundle)).toEqual(readFileSync(report.files.bundle));
    expect(readFileSync(again.files.proof, 'utf8')).toBe(readFileSync(report.files.proof, 'utf8'));
    const other = await runDemo({ seed: 2, wakes: 48, out: tmp(), db: 'memory:' });
    expect(other.receipt.receiptRoot).not.toBe(report.receipt.receiptRoot);
  });
});

describe('re-running into the same store', () => {
  /** Records seed 5 on a SQLite file until the store fails on its `failAt`-th append (a crash). */
  async function interrupted(failAt: number): Promise<{ dir: string; sessionId: string }> {
    const dir = tmp();
    const sqlite = new SqliteStore(join(dir, 'tally.db'));
    let appends = 0;
    const store: TranscriptStore = Object.assign(Object.create(sqlite) as SqliteStore, {
      append: (req: Parameters<TranscriptStore['append']>[0]) => (++appends === failAt ? Promise.reject(new Error('crash')) : sqlite.append(req)),
    });
    const market = new MarketSim(5);
    const engine = new Engine({ store, ruler: demoRuler(store) });
    const spec = demoSpec(5, 30, market);
    const o = await engine.open(spec);
    if (!o.ok) throw new Error(o.message);
    const instance = (spec['mandate'] as { instance: string }).instance;
    const day = driveDay({ engine, sessionId: o.sessionId, wakes: 30, plan: planDay(5, 30), market, desk: new DeskAgent(5, o.sessionId, market), instance, recordedThrough: -2 });
    await expect(day).rejects.toThrow('crash');
    await sqlite.close();
    return { dir, sessionId: o.sessionId };
  }

  it('resumes a day interrupted anywhere (after a frame, after a turn) and reaches the clean receipt root; then reuses it', async () => {
    const clean = await runDemo({ seed: 5, wakes: 30, out: tmp(), db: 'memory:' });
    for (const failAt of [23, 34]) {
      const { dir, sessionId } = await interrupted(failAt);
      const resumed = await runDemo({ seed: 5, wakes: 30, out: dir });
      expect(resumed.mode, `crash at append ${failAt}`).toBe('resumed');
      expect(resumed.sessionId).toBe(sessionId);
      expect(resumed.receipt, `crash at append ${failAt}`).toEqual(clean.receipt);
      if (failAt !== 34) continue;
      const reused = await runDemo({ seed: 5, wakes: 30, out: dir });
      expect(reused.mode).toBe('reused');
      expect(reused.receipt).toEqual(clean.receipt);
      expect(readFileSync(reused.files.bundle)).toEqual(readFileSync(clean.files.bundle));
      for (const c of Object.values(reused.checks)) expect(c.ok, c.detail).toBe(true);
      // Another day (another seed) in the same store is another session; its nonces never collide with this one's.
      const other = await runDemo({ seed: 6, wakes: 30, out: dir });
      expect(other.mode).toBe('new');
      expect(other.counts.rejectedByCode['replayed_nonce']).toBe(1);
      expect(other.counts.admitted).toBeGreaterThan(2);
    }
  });

  it('refuses bad options with a TallyError', async () => {
    await expect(runDemo({ seed: -1, out: tmp(), db: 'memory:' })).rejects.toThrow('seed');
    await expect(runDemo({ wakes: 1.5, out: tmp(), db: 'memory:' })).rejects.toThrow('wakes');
  });

  it('a day of 0 wakes is just the OPEN frame, its answer and the seal', async () => {
    const r = await runDemo({ seed: 1, wakes: 0, out: tmp(), db: 'memory:' });
    expect(r.counts).toMatchObject({ entries: 4, frames: 1, turns: 1 });
    for (const c of Object.values(r.checks)) expect(c.ok, c.detail).toBe(true);
  });
});
