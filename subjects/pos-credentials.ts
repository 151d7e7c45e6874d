import { z } from 'zod';
import { Done, ProjectId } from './common.js';
import { endpoint } from './contract.js';

/**
 * PoS credentials: many point-of-sale systems cannot mint JWTs, so a project may create user and
 * password pairs for them (the spec: "the BASIC authentication scheme is additionally accepted for
 * virtual point-of-sale calls"). A credential carries at most the permissions of the PoS routes and
 * is accepted on those routes only. Its password is shown once and stored as a scrypt hash.
 */
export const PosCredentialPermissions = ['checkoutRead', 'updatePricingCheckoutProcess'] as const;
export type PosCredentialPermission = (typeof PosCredentialPermissions)[number];

export const PosUser = z
  .string()
  .regex(/^pos-[A-Za-z0-9_-]{8,64}$/, 'a PoS credential user as the platform made it (pos-...)')
  .describe('The user name of a PoS credential, made by the platform');

export const PosCredentialInput = z
  .object({
    name: z.string().min(1).max(200).describe('Who uses it (a PoS or its vendor); the default processedBy of its checkouts'),
    permissions: z
      .array(z.enum(PosCredentialPermissions))
      .min(1)
      .max(2)
      .refine((p) => new Set(p).size === p.length, 'permissions must not repeat')
      .describe('checkoutRead and/or updatePricingCheckoutProcess'),
  })
  .meta({ id: 'NewPosCredential' });
export type PosCredentialInput = z.infer<typeof PosCredentialInput>;

export const PosCredential = z
  .object({
    user: PosUser,
    name: z.string(),
    permissions: z.array(z.enum(PosCredentialPermissions)),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'PosCredential' });
export type PosCredential = z.infer<typeof PosCredential>;

export const CreatedPosCredential = PosCredential.extend({
  password: z.string().describe('Shown only in this answer: the platform keeps a scrypt hash of it'),
}).meta({ id: 'CreatedPosCredential' });

export const PosCredentialList = z.object({ credentials: z.array(PosCredential) }).meta({ id: 'PosCredentialList' });

export const posCredentials = {
  create: endpoint('svc.posCredentials.create', z.object({ project: ProjectId, credential: PosCredentialInput }), CreatedPosCredential),
  list: endpoint('svc.posCredentials.list', z.object({ project: ProjectId }), PosCredentialList, { repeatable: true }),
  delete: endpoint('svc.posCredentials.delete', z.object({ project: ProjectId, user: PosUser }), Done),
  /** Checks a Basic credential of the project: its user, name and permissions, or 403. */
  verify: endpoint(
    'svc.posCredentials.verify',
    z.object({ project: ProjectId, user: z.string().max(200), password: z.string().max(1000) }),
    z.object({ user: PosUser, name: z.string(), permissions: z.array(z.enum(PosCredentialPermissions)) }),
    { repeatable: true },
  ),
};
