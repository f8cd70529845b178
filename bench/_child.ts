/**
 * Timing one side of a pair alone in a fresh child process (see `Pair.selfTimed`). In one process,
 * what one side leaves in memory slows the other: a raw parse timed right after a trace fold of a
 * 244 MB log took 1.36 s instead of 0.85 s (even after a full collection), which made the fold look
 * 1.5x better than it is. The child runs `script` with `env` set and prints `{"ms": …}`.
 */
export async function childTime(script: string, env: Record<string, string>): Promise<number> {
  const p = Bun.spawn([process.execPath, script], {
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`bench child (${JSON.stringify(env)}) failed: ${err}`);
  return (JSON.parse(out) as { ms: number }).ms;
}
