/**
 * The repository's root folder, wherever the file asking sits under `test/`: the tests spawn
 * the CLI, the examples and the fixtures with it as their working directory, and read the
 * documentation and the package from it.
 */
import { fileURLToPath } from 'node:url';

/** The repository root, as an absolute path ending in `/`. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
