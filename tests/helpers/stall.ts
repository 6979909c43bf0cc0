/**
 * Slow clients, for every server's timeout tests (`tally serve`, `tally judge
 * serve`, `tally witness serve`): one copy, so the three are held to the same test.
 */
import { connect, type Socket } from 'node:net';

/**
 * Opens a socket, sends `first`, then nothing: resolves with the order in
 * which the server's answer/close and two timers (at the setting, at twice
 * it) happened, and what the server sent.
 */
export function stall(port: number, first: string, settingMs: number): Promise<{ order: string[]; got: string }> {
  return new Promise((resolve) => {
    const order: string[] = [];
    let got = '';
    const s: Socket = connect(port, '127.0.0.1', () => {
      s.write(first);
      const atSetting = setTimeout(() => order.push('setting'), settingMs);
      const atTwice = setTimeout(() => {
        order.push('twice');
        s.destroy();
      }, 2 * settingMs);
      s.on('close', () => {
        order.push('closed');
        clearTimeout(atSetting);
        clearTimeout(atTwice);
        resolve({ order, got });
      });
    });
    s.on('data', (c: Buffer) => (got += c.toString('latin1')));
    s.on('error', () => undefined);
  });
}

/** The port of a `http://host:port` URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}
