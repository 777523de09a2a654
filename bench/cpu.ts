/**
 * Where the machine's CPU time went over a stretch of the bench: all of it, the bench's own
 * process, and on Linux Hotline's processes (when it runs as processes) and PostgreSQL's. On two
 * cores shared with the load, this says whether a figure is Hotline's limit or the machine's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

/** Linux's unit of the times in /proc/<pid>/stat (USER_HZ), the same on every architecture it runs on. */
const TICKS_PER_SECOND = 100;

export interface CpuMark {
  readonly at: number;
  readonly busy: number;
  readonly total: number;
  readonly bench: NodeJS.CpuUsage;
  /** CPU seconds so far of Hotline's and of PostgreSQL's processes; undefined without /proc. */
  readonly hotlineS: number | undefined;
  readonly postgresS: number | undefined;
  readonly hotlinePids: readonly number[];
}

export interface CpuFigures {
  /** Share of all cores' time that was busy (nice included), 0–1. */
  machineBusy: number;
  /** CPU time of the bench's process (callers, LLM server, bookkeeping; Hotline too when on a thread), in cores: 0.4 = 40 % of one. */
  benchCores: number;
  /** Of Hotline's processes (a primary and its workers), in cores; undefined when it runs on a thread or without /proc. */
  hotlineCores?: number | undefined;
  /** Of PostgreSQL's server processes (every database's, not only the bench's), in cores; undefined without /proc. */
  postgresCores?: number | undefined;
  /**
   * Everything else that kept the cores busy, in cores: the kernel's own work, and any other
   * program. Well above a few hundredths, someone else's work competed with the run.
   */
  otherCores?: number | undefined;
}

/** utime + stime of a process (all its threads), in seconds; undefined when it is gone or there is no /proc. */
function processSeconds(pid: number | string): { name: string; seconds: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    // After "pid (name) ": state is field 3, utime and stime fields 14 and 15.
    const fields = stat.slice(close + 2).split(' ');
    return { name: stat.slice(stat.indexOf('(') + 1, close), seconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

function postgresSeconds(): number | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  let seconds = 0;
  for (const pid of pids) {
    const stat = processSeconds(pid);
    if (stat?.name === 'postgres') seconds += stat.seconds;
  }
  return seconds;
}

/** `hotlinePids`: Hotline's processes, when it runs as processes. */
export function cpuMark(hotlinePids: readonly number[] = []): CpuMark {
  let busy = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const { user, nice, sys, irq, idle } = cpu.times;
    busy += user + nice + sys + irq;
    total += user + nice + sys + irq + idle;
  }
  const hotline = hotlinePids.map((pid) => processSeconds(pid)?.seconds);
  return {
    at: performance.now(),
    busy,
    total,
    bench: process.cpuUsage(),
    hotlineS: hotlinePids.length === 0 || hotline.includes(undefined) ? undefined : hotline.reduce((sum: number, s) => sum + (s ?? 0), 0),
    postgresS: postgresSeconds(),
    hotlinePids,
  };
}

export function cpuSince(mark: CpuMark): CpuFigures {
  const now = cpuMark(mark.hotlinePids);
  const wallS = (now.at - mark.at) / 1000;
  const bench = process.cpuUsage(mark.bench);
  const cores = (from: number | undefined, to: number | undefined): number | undefined =>
    from === undefined || to === undefined || wallS <= 0 ? undefined : (to - from) / wallS;
  const machineBusy = now.total > mark.total ? (now.busy - mark.busy) / (now.total - mark.total) : Number.NaN;
  const benchCores = wallS > 0 ? (bench.user + bench.system) / 1e6 / wallS : Number.NaN;
  const hotlineCores = cores(mark.hotlineS, now.hotlineS);
  const postgresCores = cores(mark.postgresS, now.postgresS);
  return {
    machineBusy,
    benchCores,
    hotlineCores,
    postgresCores,
    otherCores:
      postgresCores === undefined || (mark.hotlinePids.length > 0 && hotlineCores === undefined)
        ? undefined
        : machineBusy * os.cpus().length - benchCores - (hotlineCores ?? 0) - postgresCores,
  };
}
