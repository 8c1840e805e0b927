import { ref } from 'vue';

/**
 * A form's or a button's request: `busy` while it runs (to disable the control), and
 * `error`, what the last run failed with (shown with `errorText`), cleared by the next.
 */
export function useAction() {
  const busy = ref(false);
  const error = ref<unknown>(null);
  async function run(work: () => Promise<void>): Promise<void> {
    busy.value = true;
    error.value = null;
    try {
      await work();
    } catch (e) {
      error.value = e;
    } finally {
      busy.value = false;
    }
  }
  return { busy, error, run };
}
