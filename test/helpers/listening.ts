import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The TCP ports a process listens on, from Linux's /proc: the inodes of its socket descriptors,
 * looked up in /proc/net/tcp and tcp6 among sockets in state LISTEN. Whatever it listens on is
 * here, found by the kernel's account, not by asking the process.
 *
 * @example
 * ```ts
 * expect(listeningPorts(relay.child.pid!)).toEqual([port]);
 * ```
 */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // Closed meanwhile.
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is fields[1] (`0100007F:1F90`), st fields[3] (`0A`: LISTEN), inode fields[9].
      if (fields.length < 10 || fields[3] !== '0A' || !inodes.has(fields[9]!)) continue;
      ports.add(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
