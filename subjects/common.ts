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

export const SelfLinks = z.object({ self: Href });

/** The request of an endpoint that addresses a whole project. */
export const ProjectScoped = z.object({ project: ProjectId });

/** Replies that carry nothing but success. */
export const Done = z.null();
