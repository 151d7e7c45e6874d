import { CreatedPosCredential, PosCredentialInput, PosCredentialList, posCredentials, PosUser } from '../../../subjects/pos-credentials.js';
import type { ServiceClient } from '../../messaging/client.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const manage = { auth: { permissions: ['projectsWrite'] } } as const;
const tags = ['pos'];

/** PoS credentials: Basic authentication for virtual points of sale that cannot mint JWTs. */
export function posCredentialRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/pos/credentials',
    {
      config: { ...manage, idempotent: true },
      schema: {
        tags,
        summary: 'Create a PoS credential (Basic authentication on the PoS routes)',
        description:
          'Answers the user and the password once: the platform keeps only a scrypt hash. The credential carries checkoutRead and/or ' +
          'updatePricingCheckoutProcess, is accepted on the PoS routes only, and its name is the default processedBy.',
        params: ProjectParams,
        body: PosCredentialInput,
        response: { 201: CreatedPosCredential, ...ErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await client.call(posCredentials.create, { project: request.params.project, credential: request.body })),
  );

  app.get(
    '/:project/pos/credentials',
    { config: manage, schema: { tags, summary: 'The PoS credentials of the project, without passwords', params: ProjectParams, response: { 200: PosCredentialList, ...ErrorResponses } } },
    async (request) => client.call(posCredentials.list, { project: request.params.project }),
  );

  app.delete(
    '/:project/pos/credentials/:user',
    {
      config: manage,
      schema: { tags, summary: 'Revoke a PoS credential (at once)', params: ProjectParams.extend({ user: PosUser }), response: { 200: EmptyBody, ...ErrorResponses } },
    },
    async (request, reply) => {
      await client.call(posCredentials.delete, request.params);
      return reply.code(200).send('');
    },
  );
}
