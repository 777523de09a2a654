/**
 * Memory stays flat however many calls have ended (issue 21): the real soak
 * CLI runs Hotline in a process of its own under a churning load — each call
 * greeted, three questions (one runs the order tool), hung up, reported with
 * the model's fields and delivered to a webhook — and compares two heap
 * snapshots taken a thousand calls apart.
 */
import { execFile } from 'node:child_process';
import { expect, test } from 'vitest';
import { childEnv, isolatedCwd, tsxArgs } from './helpers/child-process.js';

interface SoakFigures {
  sinceBaseline: number;
  failed: number;
  lookups: number;
  delivered: number;
  ended: number;
  censusPerCall: number;
  grown: { name: string; grew: number }[];
  flat: boolean;
  baseline: { handles: number };
  end: { handles: number; calls: number };
}

/** The old code kept 4.7 KB and eight objects per ended call; a byte count this far under it is noise, not a leak. */
const MOST_BYTES_PER_CALL = 1024;

test(
  'after a thousand more calls have ended, no kind of object has grown with them and the heap is flat',
  async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        tsxArgs('soak/main.ts', '--calls', '20', '--turns', '3', '--warm-up', '300', '--ended', '1000', '--census', '--json'),
        { cwd: isolatedCwd(), env: childEnv(), timeout: 280_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
        (error, out, err) => {
          if (typeof error?.code === 'string') reject(error);
          else resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout: out, stderr: err });
        },
      );
    });
    const figures = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as SoakFigures;
    expect(figures.failed, stderr).toBe(0);
    expect(figures.sinceBaseline).toBeGreaterThanOrEqual(1000);
    // Every call ran its tool and had its report delivered: the paths a call takes were all under load.
    expect(figures.lookups).toBe(figures.ended);
    expect(figures.delivered).toBe(figures.ended);
    expect(figures.grown, stderr).toEqual([]);
    expect(figures.censusPerCall, stderr).toBeLessThan(MOST_BYTES_PER_CALL);
    expect(figures.end.calls).toBe(0);
    expect(figures.end.handles).toBeLessThanOrEqual(figures.baseline.handles + 5);
    expect(figures.flat).toBe(true);
    expect(code, stderr).toBe(0);
  },
  300_000,
);
