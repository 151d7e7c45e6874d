import { Permissions, type Permission } from '../../subjects/formats/permissions.js';

/** The permission names (subjects/formats/permissions.ts) and what the edge asks of them. */
export { Permissions, type Permission };

const known: ReadonlySet<string> = new Set(Permissions);

export function isPermission(name: string): name is Permission {
  return known.has(name);
}
