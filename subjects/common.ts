import { z } from 'zod';

/** Field schemas that several domains share. */

export const ProjectId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'a project id is 1-64 letters, digits, "-" or "_"')
  .describe('Project id, of the form `<brand>-<randomId>`');

/** An id that travels in paths as it is: letters, digits and . _ ~ - (shop ids, category ids). */
export function pathSafeId(what: string) {
  return z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9._~-]+$/, `${what} is letters, digits and . _ ~ -`);
}

export const Href = z.object({ href: z.string() });
/** Where a paged list's answer stands. */
export const Pagination = z.object({ page: z.int(), perPage: z.int(), totalPages: z.int(), totalItems: z.int() });

export const SelfLinks = z.object({ self: Href });

/** The request of an endpoint that addresses a whole project. */
export const ProjectScoped = z.object({ project: ProjectId });

/** Replies that carry nothing but success. */
export const Done = z.null();

/**
 * An id as one token of a NATS subject (`events.<project>.<domain>.<id>.<event>`): a subject token
 * cannot hold `.`, `*`, `>` or whitespace, and `%` starts an escape, so those are percent-encoded
 * (`shop.1` → `shop%2E1`). Ids without them (UUIDs, most shop ids) stay as they are.
 */
export function subjectToken(id: string): string {
  return id.replace(/[.*>%\s]/gu, (c) => `%${c.codePointAt(0)!.toString(16).toUpperCase().padStart(2, '0')}`);
}
