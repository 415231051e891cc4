#!/usr/bin/env node
// xswarm is written in TypeScript and runs through tsx, which also lets `xswarm serve`
// import a user's .ts module directly.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
