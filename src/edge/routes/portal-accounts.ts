import { PortalAccountChange, PortalAccountId, PortalAccountInput, PortalAccountList, PortalAccountWithPassword, portalAccounts } from '../../../subjects/portal-accounts.js';
import type { ServiceClient } from '../../messaging/client.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const manage = { auth: { permissions: ['projectsWrite'] } } as const;
const tags = ['portal'];
const AccountParams = ProjectParams.extend({ id: PortalAccountId });

/**
 * The accounts of the retailer portal, managed by its owners (the role with projectsWrite) in the
 * portal, or by any client with a token holding projectsWrite: the portal is a client of this API.
 */
export function portalAccountRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/portal/accounts',
    { config: manage, schema: { tags, summary: 'The portal accounts of the project', params: ProjectParams, response: { 200: PortalAccountList, ...ErrorResponses } } },
    async (request) => client.call(portalAccounts.list, request.params),
  );

  app.post(
    '/:project/portal/accounts',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a portal account',
        description: 'Answers a one-time password once: signing in with it only allows choosing a new password. 409 `conflict` when the email has an account.',
        params: ProjectParams,
        body: PortalAccountInput,
        response: { 201: PortalAccountWithPassword, ...ErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await client.call(portalAccounts.create, { project: request.params.project, account: request.body })),
  );

  app.patch(
    '/:project/portal/accounts/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: "Change a portal account's role, or reset its password",
        description: '`resetPassword: true` answers a new one-time password once, ends the account\'s sessions and unlocks it. 409 `conflict` for the last owner\'s role.',
        params: AccountParams,
        body: PortalAccountChange,
        response: { 200: PortalAccountWithPassword, ...ErrorResponses },
      },
    },
    async (request) => client.call(portalAccounts.update, { ...request.params, change: request.body }),
  );

  app.delete(
    '/:project/portal/accounts/:id',
    {
      config: manage,
      schema: { tags, summary: 'Delete a portal account (its sessions end at once); 409 for the last owner', params: AccountParams, response: { 200: EmptyBody, ...ErrorResponses } },
    },
    async (request, reply) => {
      await client.call(portalAccounts.delete, request.params);
      return reply.code(200).send('');
    },
  );
}
