import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of groups of processes, read from /proc (Linux): what a bench charges to the server, the
 * database, Redis and the load generator, whichever process or thread did the work. Counted in clock
 * ticks (utime + stime of /proc/<pid>/stat, every thread included), so a figure is only as fine as a
 * tick (10 ms): benches read it over windows of seconds.
 */

/** USER_HZ: Linux reports /proc times in these ticks, 100 per second on every mainstream build. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  parent: number;
  name: string;
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone between the listing and the read
  }
  // The name sits in parentheses and may hold spaces or parentheses itself: split after the last ')'.
  const close = text.lastIndexOf(')');
  const name = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  // After the name: state(0) ppid(1) … utime(11) stime(12).
  return { pid, parent: Number(fields[1]), name, ticks: Number(fields[11]) + Number(fields[12]) };
}

function allProcesses(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** Which processes a group counts, decided afresh at each sample (children come and go). */
export type GroupMembers = (processes: ReadonlyArray<{ pid: number; parent: number; name: string }>) => Set<number>;

/** A process and every process below it (a server's cluster workers, tsx's esbuild service). */
export function treeOf(root: number): GroupMembers {
  return (processes) => {
    const members = new Set([root]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const p of processes) {
        if (!members.has(p.pid) && members.has(p.parent)) {
          members.add(p.pid);
          grew = true;
        }
      }
    }
    return members;
  };
}

/** Processes by their command name (`postgres`, `redis-server`), less the ones given. */
export function named(name: string, except: () => ReadonlySet<number> = () => new Set()): GroupMembers {
  return (processes) => {
    const skip = except();
    return new Set(processes.filter((p) => p.name === name && !skip.has(p.pid)).map((p) => p.pid));
  };
}

export type CpuSample = Map<string, Map<number, number>>;

/** Each group's members and their ticks now. */
export function sampleCpu(groups: Record<string, GroupMembers>): CpuSample {
  const processes = allProcesses();
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const sample: CpuSample = new Map();
  for (const [group, members] of Object.entries(groups)) {
    const ticks = new Map<number, number>();
    for (const pid of members(processes)) {
      const p = byPid.get(pid);
      if (p) ticks.set(pid, p.ticks);
    }
    sample.set(group, ticks);
  }
  return sample;
}

/**
 * CPU seconds each group spent between two samples. A process that started in between counts from
 * zero; one that ended in between is lost (its last ticks are gone with it), which the benches avoid
 * by keeping their processes and pools alive across the window.
 */
export function cpuSecondsBetween(before: CpuSample, after: CpuSample): Record<string, number> {
  const spent: Record<string, number> = {};
  for (const [group, ticks] of after) {
    let total = 0;
    const earlier = before.get(group) ?? new Map<number, number>();
    for (const [pid, now] of ticks) total += now - (earlier.get(pid) ?? 0);
    spent[group] = total / TICKS_PER_SECOND;
  }
  return spent;
}
