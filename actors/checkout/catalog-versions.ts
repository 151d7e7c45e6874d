import type { Sql } from '../../src/infra/postgres.js';
import { readCatalogVersions } from './sql.js';

/**
 * Asks the database for projects' current catalog versions, one statement for all the checkouts
 * that wait at once. A checkout always gets an answer read after it arrived: it joins the next
 * statement, never one already running, so a catalog write answered before the checkout was asked
 * for is always seen (see catalog-cache.ts).
 */
export class CatalogVersions {
  private next: Batch | undefined;
  private running = false;

  constructor(private readonly sql: Sql) {}

  current(project: string): Promise<string> {
    if (!this.next) {
      this.next = new Batch();
      // Checkouts that arrive in the same turn (one read of the NATS socket) share the statement.
      if (!this.running) setImmediate(() => this.run());
    }
    return this.next.versionOf(project);
  }

  private run(): void {
    const batch = this.next;
    this.next = undefined;
    if (!batch) return;
    this.running = true;
    readCatalogVersions(this.sql, [...batch.projects])
      .then((versions) => batch.resolve(versions), (err: unknown) => batch.reject(err))
      .finally(() => {
        this.running = false;
        if (this.next) this.run();
      });
  }
}

class Batch {
  readonly projects = new Set<string>();
  private readonly answer: Promise<Map<string, string>>;
  resolve!: (versions: Map<string, string>) => void;
  reject!: (err: unknown) => void;

  constructor() {
    this.answer = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Failures reach every checkout through versionOf; none is left unhandled here.
    this.answer.catch(() => {});
  }

  async versionOf(project: string): Promise<string> {
    this.projects.add(project);
    const versions = await this.answer;
    return versions.get(project)!;
  }
}
