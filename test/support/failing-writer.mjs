// A writer thread that fails the first batch it is posted, as a thread dying mid-batch does
// (an uncaught exception: the parent sees 'error', then 'exit'). Plain JavaScript, so that it
// starts without a TypeScript loader.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (request) => {
  if (request === 'close') return parentPort.close();
  throw new Error('the writer thread failed mid-batch');
});
