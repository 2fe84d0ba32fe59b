// /proc readers shared by the HTML benchmarks (Linux).
import fs from 'node:fs';

/** Fields of /proc/<pid>/stat after the command name, for every process (Linux). */
export function processTable(): Map<string, string[]> {
  const table = new Map<string, string[]>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      table.set(pid, stat.slice(stat.lastIndexOf(')') + 2).split(' '));
    } catch {
      // the process ended meanwhile
    }
  }
  return table;
}

/** Whether `pid` descends from `root` in a process table. */
export function descendsFrom(table: Map<string, string[]>, pid: string, root: string): boolean {
  for (let p = table.get(pid)?.[1], depth = 0; p && depth < 32; p = table.get(p)?.[1], depth++)
    if (p === root) return true;
  return false;
}
