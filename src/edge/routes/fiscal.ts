import { FiscalRegisters, fiscal } from '../../../subjects/fiscal.js';
import type { ServiceClient } from '../../messaging/client.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const tags = ['fiscalization'];

export function fiscalRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/fiscalization/registers',
    {
      // What the project's administrators report to the tax office: the same permission that sets the TSE up.
      config: { auth: { permissions: ['projectsWrite'] } },
      schema: {
        tags,
        summary: 'What to register with the tax office (§ 146a AO): the TSE (serial, algorithm, provider, whether certified) and the cash registers, one per shop',
        params: ProjectParams,
        response: { 200: FiscalRegisters, ...ErrorResponses },
      },
    },
    async (request) => client.call(fiscal.registers, { project: request.params.project }),
  );
}
