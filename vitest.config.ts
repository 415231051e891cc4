import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Test artifacts (the inspector page's screenshots, attached with `annotate`) go to the OS
    // temp folder, never into the checkout.
    attachmentsDir: process.env.XSWARM_ARTIFACTS_DIR ?? join(tmpdir(), 'xswarm-test-artifacts'),
  },
});
