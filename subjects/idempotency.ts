import { z } from 'zod';
import { Done, ProjectId } from './common.js';
import { endpoint } from './contract.js';

/**
 * Idempotency keys of the POST routes that create (docs/api.md, "Idempotency keys"): the edge claims a
 * project's key before it runs the request and records the answer after it, or releases the key
 * when the answer was a 5xx (the client tries again). The edge sends the key's SHA-256, never the
 * key, and the answer sealed with a key derived from it (the workers store bytes they cannot read).
 */
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex');

/** The sealed answer (headers and body), base64. */
const SealedAnswer = z.base64().max(4 * 1024 * 1024);

export const IdempotencyKeyRef = z.object({ project: ProjectId, keyHash: Sha256 });

export const ClaimRequest = IdempotencyKeyRef.extend({
  /** SHA-256 of the method, route, path parameters and canonical body. */
  fingerprint: Sha256,
  /** How long the claim holds before a request with the same fingerprint may take the key over. */
  leaseMs: z.number().int().min(1000).max(3_600_000),
  /**
   * The claim's id, chosen by the edge: the same claim sent again (after a lost NATS node) finds
   * itself holding the key. An edge of an older release sends none; the worker then picks one.
   */
  claim: z.uuid().optional(),
});

export const ClaimOutcomes = ['claimed', 'replay', 'reused', 'inProgress'] as const;

export const ClaimReply = z.discriminatedUnion('outcome', [
  /** The request runs: complete or release with this claim. */
  z.object({ outcome: z.literal('claimed'), claim: z.uuid() }),
  /** The first request with this key and fingerprint was answered: answer the same. */
  z.object({ outcome: z.literal('replay'), status: z.number().int().min(100).max(599), answer: SealedAnswer }),
  /** The key was used with another fingerprint (another body, route or path) within 24 hours. */
  z.object({ outcome: z.literal('reused') }),
  /** The first request with this key is still running. */
  z.object({ outcome: z.literal('inProgress') }),
]);
export type ClaimReply = z.infer<typeof ClaimReply>;

export const idempotency = {
  claim: endpoint('svc.idempotency.claim', ClaimRequest, ClaimReply, { repeatable: (request) => request.claim !== undefined }),
  /** Records the answer of a claimed request (any status below 500). */
  complete: endpoint(
    'svc.idempotency.complete',
    IdempotencyKeyRef.extend({ claim: z.uuid(), status: z.number().int().min(100).max(499), answer: SealedAnswer }),
    Done,
    { repeatable: true },
  ),
  /** Forgets a claimed key whose request failed (5xx): the client's retry runs it again. */
  release: endpoint('svc.idempotency.release', IdempotencyKeyRef.extend({ claim: z.uuid() }), Done, { repeatable: true }),
};
