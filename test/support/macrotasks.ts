/** Counting the event loop's turns while asynchronous work runs (a block shows as one turn). */

/** How many macrotasks ran while `work` did (1 when it never let the event loop run). */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  const value = await work();
  counting = false;
  return { value, turns };
}
