import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { Sku } from './products.js';
import { ShopId } from './shops.js';

export const AvailabilityValue = z.string().min(1).max(64).describe('inStock, listed, notAvailable, ...');

export const Availability = z.object({ shopID: ShopId, sku: Sku, value: AvailabilityValue });
export type Availability = z.infer<typeof Availability>;

export const StoredAvailability = Availability.extend({ project: ProjectId }).meta({ id: 'Availability' });

/** A line of an availability batch. A delete needs no value. */
export const AvailabilityBatchItem = z.discriminatedUnion('op', [
  z.object({ op: z.literal('put'), availability: Availability }),
  z.object({ op: z.literal('delete'), availability: Availability.extend({ value: AvailabilityValue.optional() }) }),
]);
export type AvailabilityBatchItem = z.infer<typeof AvailabilityBatchItem>;

export const AvailabilityList = z.object({ availabilities: z.array(StoredAvailability) }).meta({ id: 'AvailabilityList' });

export const availabilities = {
  /** Always answers, with an empty list for an unknown project or product. */
  bySku: endpoint('svc.availabilities.bySku', z.object({ project: ProjectId, sku: Sku }), AvailabilityList, { repeatable: true }),
};
