/**
 * The TypeScript API that dependency-cruiser 18 asks for, on top of the one TypeScript 7.0 ships.
 *
 * dependency-cruiser reads TypeScript through the native compiler's API, which it expects at
 * `typescript/sync` and `typescript/ast` (TypeScript >= 7.1). TypeScript 7.0, the newest release and
 * ours, ships that API as `typescript/unstable/sync` and `typescript/unstable/ast`, without the two
 * calls dependency-cruiser makes to parse one file and to read a tsconfig. This module supplies them:
 * a file is parsed by the compiler as part of its tsconfig's project (every file we cruise is in
 * tsconfig.json's), and the tsconfig is read by the compiler's own parser. scripts/depcruise.mjs
 * points dependency-cruiser here; nothing else imports it.
 *
 * Remove it (and run `depcruise` directly) once TypeScript 7.1 is installed.
 */
import { resolve } from 'node:path';
import { API as CompilerAPI, ModuleKind } from 'typescript/unstable/sync';

export { ModuleKind };

/** @param {readonly { messageText?: unknown }[]} diagnostics */
export function formatDiagnostics(diagnostics) {
  return diagnostics.map((diagnostic) => String(diagnostic.messageText ?? JSON.stringify(diagnostic))).join('\n');
}

/** The files the compiler parsed, for scripts/depcruise.mjs to check that every file was read. */
export const parsed = new Set();
const compilers = new Set();

/** Stops the compiler processes, which would otherwise keep node running. */
export function closeAll() {
  for (const compiler of compilers) compiler.close();
  compilers.clear();
}

export class API {
  /** @type {CompilerAPI} */
  #compiler;
  #cwd;
  /** The tsconfig whose project parses the files: the one dependency-cruiser read, else ./tsconfig.json. */
  #configFileName;
  /** @type {import('typescript/unstable/sync').Project | undefined} */
  #project;

  /** @param {{ cwd?: string }} [options] */
  constructor(options = {}) {
    this.#cwd = options.cwd ?? process.cwd();
    this.#compiler = new CompilerAPI({ cwd: this.#cwd });
    compilers.add(this.#compiler);
    this.#configFileName = resolve(this.#cwd, 'tsconfig.json');
  }

  /** Parses the file as its project does; the text dependency-cruiser read is the file's text on disk. */
  createSourceFile(fileName /* , source */) {
    const sourceFile = this.#openProject().program.getSourceFile(resolve(this.#cwd, fileName));
    if (!sourceFile) {
      throw new Error(`${fileName} is not in the project of ${this.#configFileName}: add it to that tsconfig's "include" to cruise it.`);
    }
    parsed.add(sourceFile.fileName);
    return { sourceFile, dispose() {} };
  }

  /** @param {string} fileName */
  readConfigFile(fileName) {
    this.#configFileName = resolve(this.#cwd, fileName);
    this.#project = undefined;
    return { config: this.#compiler.parseConfigFile(this.#configFileName) };
  }

  /** The config readConfigFile parsed (TypeScript 7.0 parses and flattens in one step). */
  parseJsonConfigFileContent(config) {
    return { options: config.options ?? {}, fileNames: config.fileNames ?? [], errors: [] };
  }

  transpileModule() {
    throw new Error('scripts/typescript-7.0-api.mjs cannot transpile: keep tsPreCompilationDeps on and cruise no .vue files.');
  }

  #openProject() {
    if (!this.#project) {
      const snapshot = this.#compiler.updateSnapshot({ openProjects: [this.#configFileName] });
      this.#project = snapshot.getProject(this.#configFileName) ?? snapshot.getProjects()[0];
      if (!this.#project) throw new Error(`TypeScript opened no project for ${this.#configFileName}`);
    }
    return this.#project;
  }
}
