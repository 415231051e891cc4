/**
 * The in-memory store held to the listing contract the durable stores are held to in their own
 * files (sqlite-store, jetstream-store).
 */
import { describe, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import { expectNotHeldByFilter } from '../support/store-fixtures.js';

describe('memoryStore', () => {
  it('a listing can leave out the swarms an owner holds (what an adoption scan need not read)', async () => {
    await expectNotHeldByFilter(memoryStore());
  });
});
