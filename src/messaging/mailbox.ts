/**
 * Mailboxes of the actors living in this process: tasks for one key run one after another, tasks
 * for different keys run side by side. Commands for one checkout process that reach the same worker
 * then queue here instead of each holding a database connection while it waits for the row lock
 * (which still orders commands that reach different worker processes).
 */
export interface Mailboxes {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

export function createMailboxes(): Mailboxes {
  const tails = new Map<string, Promise<void>>();
  return {
    run(key, task) {
      const result = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = result.then(
        () => {},
        () => {},
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
