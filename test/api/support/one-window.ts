/**
 * Runs a scenario that must happen within one window of a per-second rate limit, with
 * each of `inputs` in turn (e.g. pairs of tokens whose allowances are still untouched),
 * until one run takes under `withinMs`; returns that run's result. A run that straddles
 * two windows on a slow machine proves nothing either way, so it is not judged: the
 * next input runs afresh. Throws when no run was quick enough.
 */
export async function withinOneWindow<In, Out>(inputs: readonly In[], scenario: (input: In) => Promise<Out>, withinMs = 800): Promise<Out> {
  for (const input of inputs) {
    const started = Date.now();
    const result = await scenario(input);
    if (Date.now() - started <= withinMs) return result;
  }
  throw new Error(`no run of the scenario took under ${withinMs} ms (${inputs.length} tried)`);
}
