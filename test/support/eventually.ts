/** Polls until `check` holds; resolves with how long that took, or throws after `withinMs`. */
export async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > withinMs) throw new Error(`not recovered within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
