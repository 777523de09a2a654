/**
 * Every read of an environment variable in a tree of TypeScript files, found in the syntax tree (not by
 * grepping, so comments and strings do not count): `env.NAME`, `process.env.NAME`, `env['NAME']`,
 * `const { NAME } = env`, on any object named `env` or `…Env` (the code's convention for environments).
 * A read whose name is computed (`env[name]`, `Object.entries(env)`) cannot be resolved here: it is
 * reported as it is written, for the test to account for.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface NamedRead {
  name: string;
  /** Path from the root, with `/`. */
  file: string;
}

export interface ComputedRead {
  file: string;
  /** The name's expression as written (`RETENTION_VARIABLES[kind]`), or the whole call (`Object.entries(process.env)`). */
  expression: string;
}

const VARIABLE_NAME = /^[A-Z][A-Z0-9_]*$/;

/** `env`, `process.env`, `options.env`, `rawEnv`, `agentEnv`: what the code calls an environment. */
function isEnvironment(node: ts.Expression, source: ts.SourceFile): boolean {
  return /(?:^|\.)(?:env|[A-Za-z]+Env)$/.test(node.getText(source));
}

/** `env[x] = …` and `env.X = …` build an environment; they read nothing. */
function isAssignedTo(node: ts.Node): boolean {
  const parent = node.parent;
  return ts.isBinaryExpression(parent) && parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
}

function readsOf(file: string, text: string): { named: NamedRead[]; computed: ComputedRead[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const named: NamedRead[] = [];
  const computed: ComputedRead[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && isEnvironment(node.expression, source) && VARIABLE_NAME.test(node.name.text) && !isAssignedTo(node)) {
      named.push({ name: node.name.text, file });
    } else if (ts.isElementAccessExpression(node) && isEnvironment(node.expression, source) && !isAssignedTo(node)) {
      const key = node.argumentExpression;
      if (ts.isStringLiteralLike(key)) named.push({ name: key.text, file });
      else computed.push({ file, expression: key.getText(source) });
    } else if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer && isEnvironment(node.initializer, source)) {
      for (const element of node.name.elements) {
        const key = element.propertyName ?? element.name;
        if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) named.push({ name: key.text, file });
        else computed.push({ file, expression: element.getText(source) });
      }
    } else if (
      ts.isCallExpression(node) &&
      /^Object\.(entries|keys|values)$/.test(node.expression.getText(source)) &&
      node.arguments[0] !== undefined &&
      isEnvironment(node.arguments[0], source)
    ) {
      computed.push({ file, expression: node.getText(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { named, computed };
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** The reads in `dirs` (relative to `root`). */
export function environmentReads(root: string, dirs: readonly string[]): { named: NamedRead[]; computed: ComputedRead[] } {
  const named: NamedRead[] = [];
  const computed: ComputedRead[] = [];
  for (const dir of dirs) {
    for (const file of typeScriptFiles(path.join(root, dir))) {
      const reads = readsOf(path.relative(root, file).split(path.sep).join('/'), readFileSync(file, 'utf8'));
      named.push(...reads.named);
      computed.push(...reads.computed);
    }
  }
  return { named, computed };
}
